"""Build the bundled retrieval eval sets (``cmrc2018_zh``, ``cranfield``, ...) from their sources.

Usage::

    python eval_sets/build.py [--source /work/shared/data] [--out eval_sets] [--only NAME]

Reads the upstream files as fetched (``<source>/cmrc2018_zh/raw/cmrc2018_dev.json`` and
``LICENCE``; ``<source>/cranfield/raw/cran.all.1400``, ``cran.qry``, ``cranqrel``;
``<source>/squad2_dev_excerpt/raw/dev-v2.0-excerpt.json`` and ``LICENCE``) and writes
``corpus.jsonl``, ``queries.jsonl``, ``qrels.tsv``, ``LICENSE.md`` and ``manifest.json`` into
``<out>/<name>/``. Deterministic: the same sources give byte-identical files, so the bundled
files are exactly what this script writes (``tests/data/test_eval_set_loader.py`` checks it when the
sources are present). The format is described in ``rag_judge/eval_sets.py``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

# question_types.py and set_files.py sit beside this script.
from question_types import EN_TYPE_RULE_TEXT, ZH_TYPE_RULE_TEXT, en_question_type, zh_question_type
from set_files import Files, Row, interleave, jsonl, qrels_tsv, set_counts

DEFAULT_SOURCE = Path("/work/shared/data")
DEFAULT_OUT = Path(__file__).resolve().parent
SHORT = "cmrc_short_answers"
CHUNKED = "cmrc2018_zh_chunked"
SQUAD2 = "squad2_en_chunked"
CMRC_COMMIT = "c0eb1b6ba219847457e6af3180da722bbeb656af"
CRAN_COMMIT = "4ea1b8e02da1db64b68b0364d50620b3c95528dc"
QRELS_FIELDS = "query_id, doc_id, relevance (tab-separated, header line)"

NO_REFERENCE = "no reference answers: Cranfield queries are information needs, judged by document"
CRANFIELD_NOT_APPLICABLE = (
    ("completeness", f"{NO_REFERENCE}; completeness compares the answer with a reference"),
    ("context_recall", f"{NO_REFERENCE}; context recall needs reference claims"),
    ("context_precision", f"{NO_REFERENCE}; context precision judges contexts by the reference"),
    ("context_utilization", f"{NO_REFERENCE}; it needs the reference claims"),
    ("noise_sensitivity", f"{NO_REFERENCE}; it needs the reference claims"),
    ("text_relevance", f"{NO_REFERENCE}; relevance by answer text (evaluate_by_text) needs one"),
    ("gold_coverage", f"{NO_REFERENCE}; the gold coverage check looks for the reference text"),
)


# --- CMRC 2018 -----------------------------------------------------------------------------


def _cmrc_paragraphs(source: Path) -> list[Row]:
    data = json.loads((source / "raw" / "cmrc2018_dev.json").read_text(encoding="utf-8"))
    return [p | {"title": entry["title"]} for entry in data["data"] for p in entry["paragraphs"]]


def _cmrc_question(qa: Row) -> Row:
    answers = list(dict.fromkeys(a["text"] for a in qa["answers"] if a["text"].strip()))
    question = qa["question"]
    return {
        "query_id": qa["id"],
        "question": question,
        "answers": answers,
        "type": zh_question_type(question),
    }


def _cmrc_checks(paragraphs: list[Row], questions: list[Row]) -> dict[str, Any]:
    """What the multi-source and ambiguity checks found, for the manifest."""
    by_id = {q["query_id"]: q for q in questions}
    everything = "\0".join(p["context"] for p in paragraphs)
    outside_own = other_too = 0
    for paragraph in paragraphs:
        own = paragraph["context"]
        for qa in paragraph["qas"]:
            answers = by_id[qa["id"]]["answers"]
            outside_own += not any(a in own for a in answers)
            other_too += any(everything.count(a) > own.count(a) for a in answers)
    asked = Counter(q["question"] for q in questions)
    return {
        "answer_outside_own_paragraph": outside_own,
        "answer_also_in_other_paragraph": other_too,
        "repeated_questions": sorted(text for text, n in asked.items() if n > 1),
    }


def build_cmrc(source: Path) -> tuple[Files, Row]:
    """The cmrc2018_zh files and manifest (without ``files``) from the CMRC 2018 dev split."""
    paragraphs = _cmrc_paragraphs(source)
    corpus = [{"doc_id": p["id"], "title": p["title"], "text": p["context"]} for p in paragraphs]
    groups = [[_cmrc_question(qa) for qa in p["qas"]] for p in paragraphs]
    questions = [q for group in groups for q in group]
    qrels = [(qa["id"], p["id"], 1) for p in paragraphs for qa in p["qas"]]
    checks = _cmrc_checks(paragraphs, questions)
    if checks["answer_outside_own_paragraph"]:
        raise SystemExit("cmrc2018_zh: a question has no answer in its paragraph: check the source")
    files = {
        "corpus.jsonl": jsonl(corpus),
        "queries.jsonl": jsonl(interleave(groups)),
        "qrels.tsv": qrels_tsv(qrels),
        "LICENSE.md": _cmrc_licence(source),
    }
    return files, _cmrc_manifest(corpus, questions, qrels, checks)


def _cmrc_manifest(corpus: list[Row], questions: list[Row], qrels: list[Any], checks: Row) -> Row:
    repeated = "; ".join(checks["repeated_questions"])
    return {
        "name": "cmrc2018_zh",
        "description": (
            "CMRC 2018 dev split as a retrieval eval set: the 848 Wikipedia paragraphs are the "
            "corpus, the 3,219 questions keep their reference answers (the 3 annotator answers, "
            "deduplicated in order), and each question's relevant document is the paragraph it "
            "was asked on. Queries are interleaved round-robin over paragraphs in source order, "
            "round r taking question (i + r) mod n_i of the i-th paragraph (n_i questions), so "
            "the first 848 come from 848 different paragraphs and from all positions in them: "
            "a small --limit is varied."
        ),
        "source": (
            f"https://github.com/ymcui/cmrc2018, commit {CMRC_COMMIT}, "
            "squad-style-data/cmrc2018_dev.json (built by eval_sets/build.py). Present in the "
            "shared copy: the dev and trial splits, LICENCE, README.md; the train split "
            "(>= 4 MiB) is absent and the test set is hidden. Only dev is used."
        ),
        "licence": "CC BY-SA 4.0 (CMRC 2018, Cui et al., EMNLP-IJCNLP 2019), see LICENSE.md",
        "language": "zh",
        "has_reference_answers": True,
        "not_applicable": [],
        "relevance": "binary: 1 = the paragraph the question was asked on; no other judgements",
        "multi_source": (
            "None. CMRC 2018 is span extraction: each question was written on one paragraph and "
            "at least one of its reference answers is a span of that paragraph (build.py checks "
            f"all {len(questions):,}: {checks['answer_outside_own_paragraph']} exceptions), so "
            "no question needs two paragraphs and none were invented; joint recall over ids "
            "equals recall here."
        ),
        "question_types": {"rule": ZH_TYPE_RULE_TEXT, "heuristic": True},
        "counts": set_counts(corpus, questions, qrels),
        "notes": [
            f"For {checks['answer_also_in_other_paragraph']} questions a reference answer also "
            "occurs verbatim in another paragraph (mostly short answers: numbers, names, "
            "dates); relevance by answer text can count such paragraphs, the id qrels do not.",
            f"Questions asked on more than one paragraph with different answers: {repeated}. "
            "They are ambiguous without their paragraph and are kept as in the source.",
            "Questions were written for reading comprehension with the paragraph in view; some "
            "are underspecified without it (e.g. '铁路沿线设有哪些站点？'), which lowers "
            "retrieval scores for reasons that are not the retriever's fault.",
            f"Paragraphs with an empty title in the source: {', '.join(_empty(corpus, 'title'))}.",
        ],
    }


def _cmrc_licence(source: Path) -> str:
    terms = (source / "LICENCE").read_text(encoding="utf-8")
    return (
        "# Licence of cmrc2018_zh\n\n"
        "Derived from CMRC 2018: Yiming Cui, Ting Liu, Wanxiang Che, Li Xiao, Zhipeng Chen, "
        'Wentao Ma, Shijin Wang, Guoping Hu. "A Span-Extraction Dataset for Chinese Machine '
        'Reading Comprehension". EMNLP-IJCNLP 2019, pages 5886-5891, '
        "https://www.aclweb.org/anthology/D19-1600, doi:10.18653/v1/D19-1600.\n"
        f"Data: https://github.com/ymcui/cmrc2018 (commit {CMRC_COMMIT}, "
        "squad-style-data/cmrc2018_dev.json).\n\n"
        "Licensed under Creative Commons Attribution-ShareAlike 4.0 International "
        "(CC BY-SA 4.0), https://creativecommons.org/licenses/by-sa/4.0/. This derived set is "
        "shared under the same licence.\n\n"
        "Changes made by rag_judge (eval_sets/build.py): the SQuAD-style JSON was split into a "
        "corpus (paragraphs), queries (questions with their answers deduplicated, in a "
        "rotating round-robin order over paragraphs, plus a heuristic question-type label) "
        "and qrels (the paragraph each question was asked on); answer offsets were dropped. "
        "No text was edited.\n\n"
        "The licence terms, as distributed with the data (LICENCE):\n\n"
        "```text\n" + terms.rstrip("\n") + "\n```\n"
    )


# --- Cranfield -----------------------------------------------------------------------------


def parse_smart(text: str) -> list[tuple[str, dict[str, str]]]:
    """Records of a SMART-format file: ``.I id`` then ``.X`` fields; lines joined by spaces."""
    records: list[tuple[str, dict[str, str]]] = []
    key = ""
    for line in text.splitlines():
        if line.startswith(".I "):
            records.append((line[3:].strip(), {}))
        elif re.fullmatch(r"\.[A-Z]\s*", line):
            key = line[1]
            records[-1][1].setdefault(key, "")
        elif line.strip():
            fields = records[-1][1]
            fields[key] = f"{fields[key]} {line.strip()}".strip()
    return records


def _cranfield_qrels(text: str, doc_ids: set[str], n_queries: int) -> list[tuple[str, str, int]]:
    """Cleverdon codes 1 (complete answer) .. 4 (minimum interest) -> grade 5 - code; -1 -> 0."""
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        qid, doc, code = line.split()
        if code not in ("-1", "1", "2", "3", "4") or doc not in doc_ids:
            raise SystemExit(f"cranqrel:{number}: unexpected line {line!r}")
        if not 1 <= int(qid) <= n_queries:
            raise SystemExit(f"cranqrel:{number}: query {qid} outside 1..{n_queries}")
        rows.append((qid, doc, 0 if code == "-1" else 5 - int(code)))
    return rows


def build_cranfield(source: Path) -> tuple[Files, Row]:
    """The cranfield files and manifest (without ``files``) from the classic Cranfield files."""
    raw = source / "raw"
    docs = parse_smart((raw / "cran.all.1400").read_text(encoding="utf-8"))
    corpus = [{"doc_id": i, "title": f.get("T", ""), "text": f.get("W", "")} for i, f in docs]
    # cranqrel numbers the queries 1..225 in file order, not by their .I numbers.
    raw_queries = parse_smart((raw / "cran.qry").read_text(encoding="utf-8"))
    queries = [
        {
            "query_id": str(n),
            "question": f["W"],
            "answers": [],
            "type": en_question_type(f["W"]),
            "source_id": i,
        }
        for n, (i, f) in enumerate(raw_queries, start=1)
    ]
    doc_ids = {d["doc_id"] for d in corpus}
    qrels = _cranfield_qrels((raw / "cranqrel").read_text(encoding="utf-8"), doc_ids, len(queries))
    files = {
        "corpus.jsonl": jsonl(corpus),
        "queries.jsonl": jsonl(queries),
        "qrels.tsv": qrels_tsv(qrels),
        "LICENSE.md": _cranfield_licence(source),
    }
    return files, _cranfield_manifest(corpus, queries, qrels)


def _empty(corpus: list[Row], key: str) -> list[str]:
    return [d["doc_id"] for d in corpus if not d[key].strip()]


def _cranfield_manifest(corpus: list[Row], queries: list[Row], qrels: list[Any]) -> Row:
    empty = _empty(corpus, "text")
    judged = "; ".join(f"{d} relevant to query {q}" for q, d, g in qrels if g and d in empty)
    empty_list = ", ".join(empty)
    return {
        "name": "cranfield",
        "description": (
            "The Cranfield collection (aeronautics): 1,400 abstracts, 225 queries and graded "
            "relevance judgements. No reference answers: use it for id-based retrieval metrics "
            "and the reference-free judges (faithfulness, answer_relevancy)."
        ),
        "source": (
            f"https://github.com/noramtboraas/information-retrieval, commit {CRAN_COMMIT}, "
            "files cran.all.1400, cran.qry, cranqrel, cranqrel.readme (a course repository "
            "carrying the classic Cranfield-1400 files); built by eval_sets/build.py."
        ),
        "licence": _CRANFIELD_LICENCE,
        "language": "en",
        "has_reference_answers": False,
        "not_applicable": [{"metric": m, "reason": r} for m, r in CRANFIELD_NOT_APPLICABLE],
        "relevance": (
            "graded, relevance = 5 - Cleverdon code: code 1 (complete answer) -> 4, 2 (high "
            "relevance) -> 3, 3 (useful background) -> 2, 4 (minimum interest) -> 1. Every "
            "query also has one line with code -1, undefined in cranqrel.readme, kept as 0 "
            "(judged, not relevant). Same mapping as the shared qrels.tsv."
        ),
        "multi_source": (
            "None. A query's relevant documents are alternatives judged one by one; no "
            "judgement says a document is needed together with another."
        ),
        "question_types": {"rule": EN_TYPE_RULE_TEXT, "heuristic": True},
        "counts": set_counts(corpus, queries, qrels),
        "notes": [
            "query_id is the query's position (1..225) in cran.qry, as cranqrel numbers them; "
            "source_id is the query's .I number in cran.qry.",
            "title is the .T field; text is the .W field (which repeats the title), source "
            "lines joined with single spaces; authors (.A) and bibliography (.B) are dropped.",
            f"Documents with an empty abstract in the source: {empty_list}; judged: {judged} "
            "(no text retriever can find an empty document).",
        ],
    }


_CRANFIELD_LICENCE = (
    "No explicit license; the Cranfield collection is distributed freely for research by the "
    "Glasgow IR group (ir.dcs.gla.ac.uk/resources/test_collections/cran/). Research use. "
    "(quoted from the source notes; see LICENSE.md)"
)


def _cranfield_licence(source: Path) -> str:
    readme = (source / "raw" / "cranqrel.readme").read_text(encoding="utf-8").rstrip("\n")
    return (
        "# Licence of cranfield\n\n"
        "The source carries no licence file. The note recorded when the files were fetched "
        "says, verbatim:\n\n"
        "> License: No explicit license; the Cranfield collection is distributed freely for "
        "research by the Glasgow IR group (ir.dcs.gla.ac.uk/resources/test_collections/cran/). "
        "Research use.\n\n"
        "Treat this set as research-use data: it is not covered by rag_judge's Apache-2.0 "
        "licence.\n\n"
        "Credits: the Cranfield collection, Cyril Cleverdon and colleagues, Cranfield College "
        "of Aeronautics (the Cranfield experiments, 1960s). Files from "
        f"https://github.com/noramtboraas/information-retrieval (commit {CRAN_COMMIT}). "
        "Changes made by rag_judge (eval_sets/build.py): SMART-format files converted to JSON "
        "lines, authors and bibliography dropped, relevance codes mapped to grades "
        "(5 - code; -1 -> 0), a heuristic question-type label added.\n\n"
        "The qrels notes distributed with the data (cranqrel.readme):\n\n"
        "```text\n" + readme + "\n```\n"
    )


# --- writing -------------------------------------------------------------------------------


def write_set(out: Path, files: Files, manifest: Row, fields: dict[str, str]) -> None:
    """Write the files and a manifest listing each data file with its sha256 and fields."""
    out.mkdir(parents=True, exist_ok=True)
    listed = {}
    for name, text in files.items():
        data = text.encode("utf-8")
        (out / name).write_bytes(data)
        if name in fields:
            listed[name] = {"sha256": hashlib.sha256(data).hexdigest(), "fields": fields[name]}
    manifest = manifest | {"files": listed}
    text = json.dumps(manifest, ensure_ascii=False, indent=2) + "\n"
    (out / "manifest.json").write_bytes(text.encode("utf-8"))


FIELDS = {
    "cmrc2018_zh": {
        "corpus.jsonl": "doc_id (DEV_n), title, text: one CMRC 2018 dev paragraph per line",
        "queries.jsonl": "query_id, question, answers (deduplicated, non-empty), type",
        "qrels.tsv": QRELS_FIELDS + "; relevance 1, one paragraph per question",
    },
    CHUNKED: {
        "corpus.jsonl": "doc_id (DEV_n), title, text: one CMRC 2018 dev paragraph per line "
        "(cut into passages by the manifest's chunking when indexed)",
        "queries.jsonl": "query_id, question, answers (deduplicated, non-empty), type; "
        "questions the gold-coverage check leaves out are absent",
        "qrels.tsv": QRELS_FIELDS + "; relevance 1, one paragraph per question",
    },
    SQUAD2: {
        "corpus.jsonl": "doc_id (<article>_<paragraph>, from 0), title (the article), text: one "
        "SQuAD 2.0 dev paragraph per line (cut into passages by the manifest's chunking when "
        "indexed)",
        "queries.jsonl": "query_id (SQuAD's id), question, answers (deduplicated, non-empty; [] "
        "when unanswerable), type, answerable, asked_on (the doc_id of the paragraph it was "
        "written on), plausible_answers (unanswerable only); answerable questions the "
        "gold-coverage check leaves out are absent",
        "qrels.tsv": QRELS_FIELDS + "; relevance 1, one paragraph per answerable question, "
        "none for an unanswerable one",
    },
    SHORT: {
        "samples.jsonl": "id, question, contexts, answer, reference, references, language, "
        "metadata (kind, split, cmrc_id, answer_from)",
        "labels.jsonl": "id, label, label_kind, source_label (right | wrong:KIND)",
    },
    "cranfield": {
        "corpus.jsonl": "doc_id (1..1400), title (.T), text (.W, repeats the title)",
        "queries.jsonl": "query_id (1..225), question, answers (always []), type, source_id",
        "qrels.tsv": QRELS_FIELDS + "; relevance 0..4 = 5 - Cleverdon code (-1 -> 0)",
    },
}


def build_cmrc_short_answers(source: Path) -> tuple[Files, Row]:
    """The cmrc_short_answers calibration set (see ``eval_sets/short_answers.py``)."""
    from short_answers import build_short_answers  # beside this script

    licence = _cmrc_licence(source).replace("# Licence of cmrc2018_zh", "# Licence of " + SHORT)
    licence = licence.replace(
        "Changes made by rag_judge (eval_sets/build.py): the SQuAD-style JSON was split into a "
        "corpus (paragraphs), queries (questions with their answers deduplicated, in a "
        "rotating round-robin order over paragraphs, plus a heuristic question-type label) "
        "and qrels (the paragraph each question was asked on); answer offsets were dropped. "
        "No text was edited.",
        "Changes made by rag_judge (eval_sets/build.py, eval_sets/short_answers.py): questions "
        "were paired with their reference span and with a wrong answer made from the data "
        "(another question's answer, the reference with one digit changed, or its Latin word "
        "swapped for one from another paragraph); contexts are the paragraph and chunks of "
        "other paragraphs. Paragraph and question text was not edited.",
    )
    return build_short_answers(source, licence)


def build_cmrc_chunked(source: Path) -> tuple[Files, Row]:
    """The cmrc2018_zh_chunked retrieval set (see ``eval_sets/chunked.py``)."""
    from chunked import build_chunked  # beside this script

    return build_chunked(*build_cmrc(source))


def build_squad2_chunked(source: Path) -> tuple[Files, Row]:
    """The squad2_en_chunked retrieval set (see ``eval_sets/squad2.py``)."""
    from squad2 import build_squad2  # beside this script

    return build_squad2(source)


BUILDERS: dict[str, Callable[[Path], tuple[Files, Row]]] = {
    "cmrc2018_zh": build_cmrc,
    CHUNKED: build_cmrc_chunked,
    "cranfield": build_cranfield,
    SHORT: build_cmrc_short_answers,
    SQUAD2: build_squad2_chunked,
}
SOURCE_FOLDER = {SHORT: "cmrc2018_zh", CHUNKED: "cmrc2018_zh", SQUAD2: "squad2_dev_excerpt"}
"""Sets built from another set's source folder."""


def main(argv: Sequence[str] | None = None) -> None:
    """Parse arguments and build the chosen sets."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE, help="shared data dir")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where the sets go")
    parser.add_argument("--only", choices=sorted(BUILDERS), action="append", help="one set")
    args = parser.parse_args(argv)
    for name in args.only or sorted(BUILDERS):
        files, manifest = BUILDERS[name](args.source / SOURCE_FOLDER.get(name, name))
        write_set(args.out / name, files, manifest, FIELDS[name])
        counts = manifest["counts"]
        if "samples" in counts:
            print(f"{name}: {counts['samples']} samples {counts['by_kind']}")
        else:
            print(f"{name}: {counts['documents']} documents, {counts['queries']} queries")


if __name__ == "__main__":
    main()
