"""Build the bundled human-labelled calibration sets ``wice_dev``, ``begin_dev``, ``alce_utility``.

Usage::

    python eval_sets/build_calibration.py [--source /work/shared/data] [--out eval_sets]
                                          [--only NAME] [--wice-cap 8000]

Reads the upstream files as fetched (``<source>/wice_dev/claim_dev.jsonl``,
``<source>/begin_attribution/begin_dev_{cmu,tc,wow}.tsv``,
``<source>/alce_human_utility/human_eval_utility_completed.json`` and their licence files) and
writes ``samples.jsonl`` (rows the judges score), ``labels.jsonl`` (the human label of each
row), ``LICENSE.md``, verbatim copies of the source's licence files and ``manifest.json`` into
``<out>/<name>/``. Deterministic: the same sources give byte-identical files, in a fixed order
(``tests/data/test_calibration_sets.py`` checks it when the sources are present). The format is
described in ``rag_judge/calibration_sets.py``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from itertools import zip_longest
from pathlib import Path
from typing import Any

Row = dict[str, Any]
Files = dict[str, bytes]

DEFAULT_SOURCE = Path("/work/shared/data")
DEFAULT_OUT = Path(__file__).resolve().parent
WICE_COMMIT = "ddeb6c183665e2a20c5f03c5aa07f03888b9870f"
BEGIN_COMMIT = "6e65f0d5a1ed1b9574643a7640ff1678d4e979b5"
ALCE_COMMIT = "246c476a4edfc564266b7346b6e29ef4861ae937"
WICE_CAP = 8000
"""Default evidence cap in characters: ~2,600 Qwen2.5 tokens at worst on WiCE's web text."""
VERBATIM = "licence text as distributed with the source, copied byte for byte"
SAMPLE_FIELDS = (
    "id, question (absent when there is none), contexts (list of passages; absent when the "
    "source has none), answer (the text being judged), language, metadata"
)
LABEL_FIELDS = "id, label, label_kind, source_label (the label exactly as in the source)"


def jsonl(rows: Iterable[Row]) -> bytes:
    """One compact JSON object per line, UTF-8 characters kept as they are."""
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode("utf-8")


def sample(
    row_id: str,
    answer: str,
    metadata: Row,
    question: str | None = None,
    contexts: list[str] | None = None,
) -> Row:
    """A samples.jsonl row in our field order; a question or contexts given as None is left out."""
    row = {"id": row_id, "question": question, "contexts": contexts, "answer": answer}
    present = {k: v for k, v in row.items() if v is not None}
    return present | {"language": "en", "metadata": metadata}


def label_row(row_id: str, label: int | None, kind: str, source_label: str | int) -> Row:
    """A labels.jsonl row."""
    return {"id": row_id, "label": label, "label_kind": kind, "source_label": source_label}


def length_summary(lengths: Sequence[int]) -> dict[str, int]:
    """Nearest-rank percentiles (no interpolation) of character counts."""
    ordered = sorted(lengths)

    def rank(p: int) -> int:
        return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]

    points = {"min": ordered[0], "p25": rank(25), "median": rank(50), "p75": rank(75)}
    return points | {"p90": rank(90), "p95": rank(95), "p99": rank(99), "max": ordered[-1]}


def label_counts(labels: Iterable[Row], key: str = "label") -> dict[str, int]:
    """How many rows carry each value of ``key`` (``null`` for None), in sorted key order."""
    counts = Counter("null" if r[key] is None else str(r[key]) for r in labels)
    return dict(sorted(counts.items()))


def round_robin(groups: Sequence[Sequence[Row]], rotate: bool = False) -> list[Row]:
    """One item from each group in turn; ``rotate`` starts the i-th group at its i-th item."""
    if rotate:
        groups = [[*g[i % len(g) :], *g[: i % len(g)]] for i, g in enumerate(groups)]
    return [row for layer in zip_longest(*groups) for row in layer if row is not None]


# --- WiCE ----------------------------------------------------------------------------------

WICE_LABELS = {"supported": 1, "partially_supported": 0, "not_supported": 0}
WICE_TITLE_LINE = "(meta data) TITLE:"


def wice_passages(sentences: list[str]) -> tuple[list[str], list[int]]:
    """One passage per cited article (a ``(meta data) TITLE:`` line starts one), lines joined."""
    starts = [i for i, s in enumerate(sentences) if i == 0 or s.startswith(WICE_TITLE_LINE)]
    ends = [*starts[1:], len(sentences)]
    return ["\n".join(sentences[a:b]) for a, b in zip(starts, ends, strict=True)], starts


def build_wice(source: Path, cap: int = WICE_CAP) -> tuple[Files, Row]:
    """The wice_dev files and manifest (without ``files``) from WiCE's claim-level dev split."""
    lines = (source / "claim_dev.jsonl").read_text(encoding="utf-8").splitlines()
    samples, labels, excluded, all_lengths = [], [], [], []
    for number, line in enumerate(lines, start=1):
        item = json.loads(line)
        meta = item["meta"]
        if item["label"] not in WICE_LABELS:
            raise SystemExit(f"claim_dev.jsonl:{number}: unknown label {item['label']!r}")
        passages, starts = wice_passages(item["evidence"])
        chars = sum(len(p) for p in passages)
        all_lengths.append(chars)
        if chars > cap:
            excluded.append({"id": meta["id"], "label": item["label"], "evidence_chars": chars})
            continue
        metadata = {
            "claim_title": meta["claim_title"],
            "claim_section": meta["claim_section"],
            "claim_context": meta["claim_context"],
            "supporting_sentences": item["supporting_sentences"],
            "passage_starts": starts,
        }
        question = f"What does Wikipedia say about {meta['claim_title']}?"
        samples.append(sample(meta["id"], item["claim"], metadata, question, passages))
        labels.append(label_row(meta["id"], WICE_LABELS[item["label"]], "binary", item["label"]))
    kept = [sum(len(p) for p in s["contexts"]) for s in samples]
    files = {
        "samples.jsonl": jsonl(samples),
        "labels.jsonl": jsonl(labels),
        "LICENSE.wice.md": (source / "LICENSE.md").read_bytes(),
        "LICENSE.md": _wice_licence().encode("utf-8"),
    }
    lengths = {"source": length_summary(all_lengths), "kept": length_summary(kept)}
    return files, _wice_manifest(samples, labels, excluded, lengths, cap)


def _wice_manifest(
    samples: list[Row], labels: list[Row], excluded: list[Row], lengths: Row, cap: int
) -> Row:
    n_passages = Counter(str(len(s["contexts"])) for s in samples)
    total = len(samples) + len(excluded)
    blank = sum(line == "" for s in samples for p in s["contexts"] for line in p.split("\n"))
    mixed = sum(
        1
        for s, lab in zip(samples, labels, strict=True)
        if lab["source_label"] == "not_supported" and any(s["metadata"]["supporting_sentences"])
    )
    spaced = sum(s["answer"] != s["answer"].strip() for s in samples)
    return {
        "name": "wice_dev",
        "description": (
            f"WiCE dev (claim level): {len(samples)} Wikipedia claim sentences, each with the "
            "web article(s) it cites as evidence and a human entailment label (supported / "
            "partially_supported / not_supported). Rows for the faithfulness judge: answer = "
            "the claim, contexts = the cited articles. Claims whose evidence exceeds "
            f"{cap:,} characters are excluded (see 'excluded')."
        ),
        "source": (
            f"https://github.com/ryokamoi/wice, commit {WICE_COMMIT}, "
            "data/entailment_retrieval/claim/dev.jsonl (Kamoi et al., EMNLP 2023); built by "
            "eval_sets/build_calibration.py. Only the claim-level dev split is in the shared "
            "copy; train and the sub-claim files (>= 4 MiB) are absent."
        ),
        "licence": (
            "Annotations: ODC-BY 1.0. Claims and claim contexts: Wikipedia text, CC BY-SA. "
            "Evidence: web pages archived by Common Crawl, bound by the Common Crawl terms of "
            "use and the publishers' rights. See LICENSE.md and LICENSE.wice.md (verbatim)."
        ),
        "language": "en",
        "label_kind": "binary",
        "label_mapping": {
            "binary": "supported -> 1; partially_supported -> 0; not_supported -> 0",
            "rule": (
                "1 only when the evidence supports every part of the claim, as a faithfulness "
                "verdict of 'supported' requires. The 3-way label is kept in source_label; it "
                "is ordinal: not_supported < partially_supported < supported."
            ),
        },
        "calibrates": [
            {
                "metric": "faithfulness",
                "how": (
                    "answer = the claim, contexts = the cited articles; compare the score "
                    "(or 'all claims supported') with the binary label, e.g. by AUC"
                ),
            }
        ],
        "question": (
            "Not from the source: the template 'What does Wikipedia say about <claim_title>?', "
            "which names the article the claim comes from (so claim extraction can resolve "
            "pronouns). Do not calibrate answer_relevancy on it. The Wikipedia text just "
            "before the claim is metadata.claim_context."
        ),
        "contexts": (
            "One passage per cited article: the source's evidence sentences, in order, joined "
            "with newlines; a new passage starts at each '(meta data) TITLE:' sentence. Text "
            f"unchanged (web boilerplate and {blank} blank sentences included, as annotated). "
            "Source sentence i is line i - s of the passage whose start s "
            "(metadata.passage_starts) is the largest s <= i, so metadata.supporting_sentences "
            "(the source's alternative sets of supporting sentence indices) can be located."
        ),
        "excluded": {
            "rule": (
                f"evidence longer than {cap:,} characters (sum of the passage lengths): the "
                "local judge has a 4,096-8,192 token window, and WiCE's web text runs at "
                "1.9-5.5 characters per Qwen2.5 token (median 4.2, measured once on the whole "
                "split), so the default cap of 8,000 characters is at most ~2,600 tokens, "
                "leaving room for the prompt, claims and reply. Evidence "
                "is excluded whole, never cut: cutting could drop the sentences that decided "
                "the label. Rebuild with --wice-cap to choose another cap."
            ),
            "count": len(excluded),
            "by_source_label": label_counts(excluded),
            "ids": [e["id"] for e in excluded],
        },
        "evidence_chars": {
            "rule": "nearest-rank percentiles of the sum of passage lengths per claim",
            **lengths,
        },
        "counts": {
            "source_rows": total,
            "samples": len(samples),
            "labels": label_counts(labels),
            "source_labels": label_counts(labels, "source_label"),
            "passages_per_sample": dict(sorted(n_passages.items(), key=lambda kv: int(kv[0]))),
        },
        "notes": [
            "No duplicate claims or ids; every row has evidence.",
            "Order: as in claim_dev.jsonl (ids are WiCE's, not sorted).",
            "Claims are raw Wikipedia sentences, not decontextualised: some use pronouns or "
            f"'the couple' whose referent is in metadata.claim_context. {spaced} claims carry "
            "leading/trailing spaces, kept as in the source.",
            f"{mixed} not_supported claims list supporting sentences from some annotators "
            "(e.g. [[], [20]]): the label is the aggregated one, kept as given.",
            "The evidence is web text with navigation lines ('Skip to content', menus): "
            "realistic retrieved noise, and kept, because the labels were given on it.",
        ],
    }


def _wice_licence() -> str:
    return (
        "# Licence of wice_dev\n\n"
        "Derived from WiCE: Ryo Kamoi, Tanya Goyal, Juan Diego Rodriguez, Greg Durrett. "
        '"WiCE: Real-World Entailment for Claims in Wikipedia". EMNLP 2023, pages 7561-7583, '
        "https://aclanthology.org/2023.emnlp-main.470.\n"
        f"Data: https://github.com/ryokamoi/wice (commit {WICE_COMMIT}, "
        "data/entailment_retrieval/claim/dev.jsonl).\n\n"
        "The set holds three kinds of content under different terms, as WiCE's licence file "
        "(copied verbatim in `LICENSE.wice.md`) says:\n\n"
        "- the annotations (labels, supporting sentence indices): Open Data Commons "
        "Attribution License (ODC-BY 1.0), https://opendatacommons.org/licenses/by/1-0/;\n"
        "- the claims, titles, sections and claim contexts: text from Wikipedia, Creative "
        "Commons Attribution-ShareAlike (CC BY-SA), "
        "https://en.wikipedia.org/wiki/Wikipedia:Reusing_Wikipedia_content (the article is "
        "named in `metadata.claim_title`);\n"
        "- the evidence passages: web pages archived by Common Crawl; use is bound by the "
        "Common Crawl terms of use (https://commoncrawl.org/terms-of-use) and the rights of "
        "the original publishers.\n\n"
        "This set is not covered by rag_judge's Apache-2.0 licence.\n\n"
        "Changes made by rag_judge (eval_sets/build_calibration.py): each claim became a row "
        "(answer = claim, contexts = one passage per cited article, its evidence sentences "
        "joined with newlines, question = a template naming the Wikipedia article); the label "
        "was mapped to binary (supported -> 1, else 0) and kept as given; claims with more "
        "than the cap of evidence characters were left out (listed in manifest.json). No "
        "text was edited.\n"
    )


# --- BEGIN ---------------------------------------------------------------------------------

BEGIN_FILES = (
    ("cmu", "begin_dev_cmu.tsv"),
    ("tc", "begin_dev_tc.tsv"),
    ("wow", "begin_dev_wow.tsv"),
)
BEGIN_HEADER = ["model_name", "data_source", "knowledge", "message", "response", "begin_label"]
BEGIN_LABELS = {"Fully attributable": 1, "Not fully attributable": 0, "Generic": None}
BEGIN_LICENCES = ("wow", "cmu-dog", "topicalchat")


def read_begin_tsv(path: Path, data_source: str) -> list[Row]:
    """The rows of one BEGIN TSV (CRLF lines, no quoting, no tab or newline inside a field)."""
    text = path.read_bytes().decode("utf-8")  # not read_text: it would turn CRLF into LF
    lines = text.removesuffix("\r\n").split("\r\n")
    if lines[0].split("\t") != BEGIN_HEADER:
        raise SystemExit(f"{path.name}:1: unexpected header {lines[0][:80]!r}")
    rows = []
    for number, line in enumerate(lines[1:], start=2):
        row = dict(zip(BEGIN_HEADER, line.split("\t"), strict=False))
        bad = line.count("\t") != 5 or "\r" in line or "\n" in line
        if bad or row["begin_label"] not in BEGIN_LABELS:
            raise SystemExit(f"{path.name}:{number}: unexpected line {line[:80]!r}")
        if row["data_source"] != data_source:
            raise SystemExit(f"{path.name}:{number}: data_source {row['data_source']!r}")
        rows.append(row)
    return rows


def _begin_row(data_source: str, n: int, row: Row) -> Row:
    row_id = f"{data_source}-{n:03d}"
    message = row["message"] if row["message"].strip() else None
    metadata = {"model_name": row["model_name"], "data_source": data_source}
    item = sample(row_id, row["response"], metadata, message, [row["knowledge"]])
    label = BEGIN_LABELS[row["begin_label"]]
    return {"sample": item, "label": label_row(row_id, label, "binary", row["begin_label"])}


def build_begin(source: Path) -> tuple[Files, Row]:
    """The begin_dev files and manifest (without ``files``) from BEGIN's three dev TSVs."""
    groups = []
    for data_source, name in BEGIN_FILES:
        rows = read_begin_tsv(source / name, data_source)
        groups.append([_begin_row(data_source, n, r) for n, r in enumerate(rows, start=1)])
    ordered = round_robin(groups)
    samples = [r["sample"] for r in ordered]
    labels = [r["label"] for r in ordered]
    files = {"samples.jsonl": jsonl(samples), "labels.jsonl": jsonl(labels)}
    for name in BEGIN_LICENCES:
        for kind in ("LICENSE", "NOTICE"):
            files[f"{kind}.{name}"] = (source / f"{kind}.{name}").read_bytes()
    files["LICENSE.md"] = _begin_licence().encode("utf-8")
    return files, _begin_manifest(samples, labels)


def _begin_manifest(samples: list[Row], labels: list[Row]) -> Row:
    by_source: dict[str, dict[str, int]] = {}
    for item, lab in zip(samples, labels, strict=True):
        counts = by_source.setdefault(item["metadata"]["data_source"], {})
        counts[lab["source_label"]] = counts.get(lab["source_label"], 0) + 1
    knowledge = [len(s["contexts"][0]) for s in samples]
    spaced = sum(s["contexts"][0] != s["contexts"][0].strip() for s in samples)
    no_message = [s["id"] for s in samples if "question" not in s]
    return {
        "name": "begin_dev",
        "description": (
            f"BEGIN dev: {len(samples):,} knowledge-grounded dialogue responses (from GPT-2, "
            "T5, CTRL-Dialog and DoHA trained on Wizard of Wikipedia, CMU-DoG and "
            "Topical-Chat) with a human attribution label: is the response fully attributable "
            "to the knowledge snippet? Rows for the faithfulness judge: answer = the response, "
            "contexts = [the knowledge snippet], question = the previous dialogue turn."
        ),
        "source": (
            f"https://github.com/google/BEGIN-dataset, commit {BEGIN_COMMIT}, "
            "cmu-dog/begin_dev_cmu.tsv, topicalchat/begin_dev_tc.tsv, wow/begin_dev_wow.tsv "
            "(Dziri et al., TACL 2022, https://arxiv.org/abs/2105.00071); built by "
            "eval_sets/build_calibration.py. Only the dev split is used."
        ),
        "licence": (
            "wow rows: CC BY 4.0; cmu rows: CC BY 4.0; tc rows: Community Data License "
            "Agreement - Sharing 1.0. See LICENSE.md and the verbatim LICENSE.* and NOTICE.* "
            "files."
        ),
        "language": "en",
        "label_kind": "binary",
        "label_mapping": {
            "binary": "Fully attributable -> 1; Not fully attributable -> 0; Generic -> null",
            "rule": (
                "Generic responses ('i agree.', 'yeah!', 'Hello') make no statement to "
                "attribute: they get no binary label (null) rather than a guessed one; a "
                "faithfulness judge should give them status no_claims. The source label is "
                "kept in source_label."
            ),
        },
        "calibrates": [
            {
                "metric": "faithfulness",
                "how": (
                    "answer = the response, contexts = [knowledge]; compare with the binary "
                    "label (Generic rows apart: check they get no_claims)"
                ),
            }
        ],
        "question": (
            "The source's 'message' column: the previous turn of the dialogue (not a question "
            f"in most rows). Absent for {len(no_message)} rows whose message is empty: "
            f"{', '.join(no_message)}."
        ),
        "contexts": "[knowledge]: the knowledge snippet the response should be grounded in.",
        "excluded": {"rule": "none: every dev row is kept", "count": 0},
        "evidence_chars": {
            "rule": "nearest-rank percentiles of the knowledge snippet's length",
            "source": length_summary(knowledge),
        },
        "counts": {
            "source_rows": len(samples),
            "samples": len(samples),
            "labels": label_counts(labels),
            "source_labels": label_counts(labels, "source_label"),
            "by_data_source": {k: dict(sorted(v.items())) for k, v in sorted(by_source.items())},
        },
        "notes": [
            "ids: <data_source>-<n>, n = the row's position in its TSV (TSV line n + 1).",
            "Order: round-robin over the three files (cmu-001, tc-001, wow-001, cmu-002, ...), "
            "so any prefix mixes the three sources.",
            "No duplicate (knowledge, message, response) triples.",
            "Label balance differs by data source (counts.by_data_source): Topical-Chat is "
            "mostly 'Not fully attributable', CMU-DoG holds most Generic rows, Wizard of "
            "Wikipedia has none. Report calibration per data_source as well as overall.",
            "CMU-DoG knowledge is tokenised text ('Falcone 's', spaces before punctuation); "
            f"all text is kept as in the source ({spaced} knowledge snippets have leading or "
            "trailing spaces).",
            f"The longest knowledge snippet is {max(knowledge):,} characters (~1,100 Qwen2.5 "
            "tokens, measured once): no cap was needed.",
        ],
    }


def _begin_licence() -> str:
    return (
        "# Licence of begin_dev\n\n"
        "Derived from BEGIN: Nouha Dziri, Hannah Rashkin, Tal Linzen, David Reitter. "
        '"Evaluating Attribution in Dialogue Systems: The BEGIN Benchmark". TACL 2022, '
        "https://arxiv.org/abs/2105.00071.\n"
        f"Data: https://github.com/google/BEGIN-dataset (commit {BEGIN_COMMIT}).\n\n"
        "Each row keeps the licence of the BEGIN file it comes from (`metadata.data_source`), "
        "as BEGIN's per-folder LICENSE and NOTICE files say (copied verbatim here):\n\n"
        "- `wow` (Wizard of Wikipedia, Dinan et al., Facebook): Creative Commons Attribution "
        "4.0 International (CC BY 4.0): `LICENSE.wow`, `NOTICE.wow`.\n"
        "- `cmu` (CMU Document Grounded Conversations, Zhou, Prabhumoye, Black): CC BY 4.0: "
        "`LICENSE.cmu-dog`, `NOTICE.cmu-dog` (the NOTICE quotes the original data's "
        "licence).\n"
        "- `tc` (Topical-Chat, Gopalakrishnan et al., Amazon): Community Data License "
        "Agreement - Sharing, Version 1.0 (CDLA-Sharing-1.0): `LICENSE.topicalchat`, "
        "`NOTICE.topicalchat`. The reformatted `tc` rows are shared under the same "
        "agreement.\n\n"
        "This set is not covered by rag_judge's Apache-2.0 licence.\n\n"
        "Changes made by rag_judge (eval_sets/build_calibration.py): the three dev TSVs were "
        "interleaved into one list of rows (answer = response, contexts = [knowledge], "
        "question = message, model_name and data_source kept as metadata) and the label was "
        "mapped to binary (Fully attributable -> 1, Not fully attributable -> 0, Generic -> "
        "null) and kept as given. No text was edited.\n"
    )


# --- ALCE ----------------------------------------------------------------------------------


def _alce_groups(data: Row) -> tuple[list[list[Row]], list[Row]]:
    """Per (dataset, system): the rated rows in source order; and the per-system systems list."""
    groups, systems = [], []
    for dataset, by_system in data.items():
        for index, (system, items) in enumerate(by_system.items(), start=1):
            systems.append({"dataset": dataset, "system": index, "source_key": system})
            group = []
            for qid, item in items.items():
                if qid == "overall_results":
                    continue
                score = item["utility_score"]
                if type(score) is not int or not 1 <= score <= 5 or item["id"] != qid:
                    raise SystemExit(f"{dataset}/{system}/{qid}: unexpected item")
                group.append(_alce_row(dataset, index, system, item))
            groups.append(group)
    return groups, systems


def _alce_row(dataset: str, index: int, system: str, item: Row) -> Row:
    row_id = f"{dataset}/{index}/{item['id']}"
    metadata = {
        "dataset": dataset,
        "system": system,
        "question_id": item["id"],
        "automatic_correctness_scores": item["automatic_correctness_scores"],
    }
    row = sample(row_id, item["output"], metadata, item["question"])
    score = item["utility_score"]
    return {"sample": row, "label": label_row(row_id, score, "ordinal", score)}


def build_alce(source: Path) -> tuple[Files, Row]:
    """The alce_utility files and manifest (without ``files``) from ALCE's utility ratings."""
    path = source / "human_eval_utility_completed.json"
    groups, systems = _alce_groups(json.loads(path.read_text(encoding="utf-8")))
    ordered = round_robin(groups, rotate=True)
    kept = [r for r in ordered if r["sample"]["answer"].strip()]
    empty = [r["label"] for r in ordered if not r["sample"]["answer"].strip()]
    samples = [r["sample"] for r in kept]
    labels = [r["label"] for r in kept]
    files = {
        "samples.jsonl": jsonl(samples),
        "labels.jsonl": jsonl(labels),
        "LICENSE.alce": (source / "LICENSE").read_bytes(),
        "LICENSE.md": _alce_licence().encode("utf-8"),
    }
    return files, _alce_manifest(samples, labels, empty, systems)


def _identical_outputs(samples: list[Row], labels: list[Row]) -> tuple[int, int]:
    """Groups of identical outputs to one question from several systems; how many agree."""
    scores: dict[tuple[str, str, str], list[int]] = {}
    for item, lab in zip(samples, labels, strict=True):
        key = (item["metadata"]["dataset"], item["metadata"]["question_id"], item["answer"])
        scores.setdefault(key, []).append(lab["label"])
    repeated = [s for s in scores.values() if len(s) > 1]
    return len(repeated), sum(len(set(s)) == 1 for s in repeated)


def _alce_manifest(
    samples: list[Row], labels: list[Row], empty: list[Row], systems: list[Row]
) -> Row:
    by_dataset: dict[str, Counter[str]] = {}
    for item, lab in zip(samples, labels, strict=True):
        by_dataset.setdefault(item["metadata"]["dataset"], Counter())[str(lab["label"])] += 1
    repeated, agreeing = _identical_outputs(samples, labels)
    return {
        "name": "alce_utility",
        "description": (
            f"ALCE human evaluation, utility: {len(samples)} answers from 4 systems to 100 ASQA "
            "and 100 ELI5 questions, each rated 1-5 by a human for how useful it is to the "
            "question. Rows for answer_relevancy (question and answer only): the retrieved "
            "documents and reference answers are not in the file, so faithfulness and "
            "reference-based judges cannot run on it."
        ),
        "source": (
            f"https://github.com/princeton-nlp/ALCE, commit {ALCE_COMMIT}, "
            "human_eval/human_eval_utility_completed.json (Gao et al., EMNLP 2023); built by "
            "eval_sets/build_calibration.py. human_eval_citations_completed.json (citation "
            "support labels, >= 4 MiB) is absent from the shared copy."
        ),
        "licence": (
            "MIT (ALCE repository, Copyright (c) 2023 Princeton Natural Language Processing); "
            "questions from ASQA and ELI5; answers generated by gpt-3.5-turbo and Vicuna-13B. "
            "See LICENSE.md and LICENSE.alce (verbatim)."
        ),
        "language": "en",
        "label_kind": "ordinal",
        "label_mapping": {
            "ordinal": "utility_score 1..5 as given (5 = most useful); no binary mapping",
            "rule": (
                "ALCE's README says only that utility_score is rated from 1-5; the annotator "
                "instruction is in the paper. Use rank correlation (Spearman, Kendall) rather "
                "than a threshold."
            ),
        },
        "calibrates": [
            {
                "metric": "answer_relevancy",
                "how": (
                    "rank correlation between the score and utility; utility is broader than "
                    "relevancy (a relevant but wrong answer is not useful), so expect a "
                    "moderate ceiling"
                ),
            }
        ],
        "question": "The source's question (ASQA: ambiguous factoid; ELI5: Reddit ELI5 post).",
        "contexts": "None: the documents the systems retrieved are not in the file.",
        "systems": systems,
        "excluded": {
            "rule": (
                "empty outputs: there is no answer to judge (every one was rated 1); plus the "
                "per-system 'overall_results' entries, which are aggregates, not items"
            ),
            "count": len(empty),
            "by_source_label": label_counts(empty),
            "ids": [e["id"] for e in empty],
        },
        "evidence_chars": {
            "rule": "no contexts; nearest-rank percentiles of the answer's length instead",
            "answers": length_summary([len(s["answer"]) for s in samples]),
        },
        "counts": {
            "source_rows": len(samples) + len(empty),
            "samples": len(samples),
            "labels": label_counts(labels),
            "source_labels": label_counts(labels, "source_label"),
            "by_dataset": {k: dict(sorted(v.items())) for k, v in sorted(by_dataset.items())},
        },
        "notes": [
            "ids: <dataset>/<system>/<question id>, system = 1..4, the system's position in "
            "the source (see 'systems' for the source keys).",
            "Order: round-robin with rotation over the 8 (dataset, system) groups, round r "
            "taking question (i + r) mod 100 of the i-th group, so the first 8 rows are 8 "
            "systems on 8 different questions.",
            "Every question appears up to 4 times (once per system): resample by "
            "metadata.question_id, not by row, when computing confidence intervals.",
            f"{repeated} groups of identical (non-empty) outputs to the same question from "
            f"different systems; only {agreeing} got the same score from every rating: the "
            "ratings are noisy, which bounds any judge's agreement.",
            "Answers carry no citation markers and some questions have leading or trailing "
            "spaces; text is kept as in the source. metadata.automatic_correctness_scores is "
            "ALCE's automatic correctness per item (ASQA: per short answer; ELI5: per claim).",
        ],
    }


def _alce_licence() -> str:
    return (
        "# Licence of alce_utility\n\n"
        'Derived from ALCE: Tianyu Gao, Howard Yen, Jiatong Yu, Danqi Chen. "Enabling Large '
        'Language Models to Generate Text with Citations". EMNLP 2023, '
        "https://arxiv.org/abs/2305.14627.\n"
        f"Data: https://github.com/princeton-nlp/ALCE (commit {ALCE_COMMIT}, "
        "human_eval/human_eval_utility_completed.json).\n\n"
        "The ALCE repository is released under the MIT License (copied verbatim in "
        "`LICENSE.alce`). The questions come from ASQA (Stelmakh et al., 2022) and ELI5 "
        "(Fan et al., 2019), whose own terms are not part of the shared copy; the answers "
        "were generated by gpt-3.5-turbo and Vicuna-13B for ALCE's experiments.\n\n"
        "Changes made by rag_judge (eval_sets/build_calibration.py): each rated answer became "
        "a row (question, answer, dataset/system/question id and ALCE's automatic correctness "
        "as metadata), rows were interleaved over the eight (dataset, system) groups, empty "
        "answers and the aggregate entries were left out, and the 1-5 utility score became "
        "the label. No text was edited.\n"
    )


# --- writing -------------------------------------------------------------------------------


def write_set(out: Path, files: Files, manifest: Row, fields: dict[str, str]) -> None:
    """Write the files and a manifest listing every file but LICENSE.md with sha256 and fields."""
    out.mkdir(parents=True, exist_ok=True)
    listed = {}
    for name, data in files.items():
        (out / name).write_bytes(data)
        if name != "LICENSE.md":
            digest = hashlib.sha256(data).hexdigest()
            listed[name] = {"sha256": digest, "fields": fields.get(name, VERBATIM)}
    text = json.dumps(manifest | {"files": listed}, ensure_ascii=False, indent=2) + "\n"
    (out / "manifest.json").write_bytes(text.encode("utf-8"))


FIELDS = {
    "wice_dev": {
        "samples.jsonl": SAMPLE_FIELDS + "; metadata: claim_title, claim_section, "
        "claim_context, supporting_sentences, passage_starts",
        "labels.jsonl": LABEL_FIELDS + "; label 1 = supported, 0 = partially/not supported",
    },
    "begin_dev": {
        "samples.jsonl": SAMPLE_FIELDS + "; metadata: model_name, data_source",
        "labels.jsonl": LABEL_FIELDS + "; label 1 = fully attributable, 0 = not, null = generic",
    },
    "alce_utility": {
        "samples.jsonl": SAMPLE_FIELDS + "; no contexts; metadata: dataset, system, "
        "question_id, automatic_correctness_scores",
        "labels.jsonl": LABEL_FIELDS + "; label = utility 1..5 (ordinal)",
    },
}
SOURCES = {
    "wice_dev": "wice_dev",
    "begin_dev": "begin_attribution",
    "alce_utility": "alce_human_utility",
}


def main(argv: Sequence[str] | None = None) -> None:
    """Parse arguments and build the chosen sets."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE, help="shared data dir")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where the sets go")
    parser.add_argument("--only", choices=sorted(SOURCES), action="append", help="one set")
    parser.add_argument("--wice-cap", type=int, default=WICE_CAP, help="max evidence chars")
    args = parser.parse_args(argv)
    builders: dict[str, Callable[[Path], tuple[Files, Row]]] = {
        "wice_dev": lambda source: build_wice(source, args.wice_cap),
        "begin_dev": build_begin,
        "alce_utility": build_alce,
    }
    for name in args.only or sorted(SOURCES):
        files, manifest = builders[name](args.source / SOURCES[name])
        write_set(args.out / name, files, manifest, FIELDS[name])
        counts = manifest["counts"]
        print(f"{name}: {counts['samples']} samples, labels {counts['labels']}")


if __name__ == "__main__":
    main()
