"""squad2_en_chunked: SQuAD 2.0 dev's first 5 articles cut as a RAG would, unanswerables marked.

English beside cmrc2018_zh_chunked, and the one bundled set where "I don't know" is sometimes
the right reply. The corpus is the excerpt's 173 paragraphs, cut by the manifest's
``chunking`` (overlapping sentence windows of about 200-400 characters) when indexed, so the
passages of one paragraph compete for the top k. Answerable questions keep their reference
spans (deduplicated in order) and their paragraph as the one relevant document; unanswerable
ones (SQuAD's ``is_impossible``) get ``"answers": []``, ``"answerable": false``, their
``plausible_answers`` as an extra field, and no qrels line: no passage is relevant to them.

As in chunked.py, the gold-coverage check runs at build time over the answerable questions
(first reference answer, n-gram coverage 0.5): those no passage covers are left out and listed
with the reason, and BM25's recall by id and by answer text at k = 1, 3, 5, 10 over the kept
answerable questions goes into the manifest.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

# chunked.py, question_types.py and set_files.py sit beside this script.
from chunked import _bm25_figures
from question_types import EN_TYPE_RULE_TEXT, en_question_type
from set_files import Row, interleave, jsonl, qrels_tsv, set_counts

from rag_judge.core.types import Document
from rag_judge.pipeline.chunking import chunk_corpus, chunker_from_spec
from rag_judge.retrieval.gold_coverage import check_gold_coverage
from rag_judge.retrieval.text_relevance import ChunkIndex

NAME = "squad2_en_chunked"
RAW = "raw/dev-v2.0-excerpt.json"
RAW_SHA256 = "db71d0a19c3f656b1ebefafce642b828cfab269f0d906312dfb0efdc7173b31a"
"""The shared copy's sha256 (SOURCE.txt); another file is refused, not silently built."""
COPY_COMMIT = "e2b92bf2c37efe3d7349a1d3518aa67d5619c09a"
CHUNKING = {"chunker": "sentence_windows", "min_chars": 200, "max_chars": 400, "overlap": 1}
"""How the sweep cuts this set's corpus (pipeline.chunking.SentenceWindows): ~2.4 passages a
paragraph; 150-300 would give ~3.2, 250-500 ~1.9 (measured on this excerpt)."""


def build_squad2(source: Path) -> tuple[dict[str, str], Row]:
    """This set's files and manifest (without ``files``) from the SQuAD 2.0 dev excerpt."""
    raw = (source / RAW).read_bytes()
    if (digest := hashlib.sha256(raw).hexdigest()) != RAW_SHA256:
        raise SystemExit(f"{NAME}: {RAW} has sha256 {digest}, expected {RAW_SHA256}")
    articles = json.loads(raw)["data"]
    _check_spans(articles)
    corpus = _corpus(articles)
    documents = [Document(d["doc_id"], d["text"], d["title"]) for d in corpus]
    chunks = chunk_corpus(chunker_from_spec(CHUNKING), documents)
    texts = {c.id: c.text for c in chunks}
    groups, left_out = _kept_questions(articles, ChunkIndex(texts))
    paragraph_of = {q["query_id"]: q["asked_on"] for ps in groups for g in ps for q in g}
    queries = interleave([interleave([g for g in paragraphs if g]) for paragraphs in groups])
    kept = [q for q in queries if q["answerable"]]
    own = {q["query_id"]: paragraph_of[q["query_id"]] for q in kept}
    qrels = [(qid, doc, 1) for qid, doc in paragraph_of.items() if qid in own]  # source order
    bm25 = _bm25_figures(chunks, kept, texts, {c.id: c.doc_id for c in chunks}, own)
    files = {
        "corpus.jsonl": jsonl(corpus),
        "queries.jsonl": jsonl(queries),
        "qrels.tsv": qrels_tsv(qrels),
        "LICENSE.md": _licence(source),
    }
    counts = set_counts(corpus, queries, qrels) | {
        "answerable": len(kept),
        "unanswerable": len(queries) - len(kept),
        "left_out": len(left_out),
        "articles": len(articles),
        "chunks": len(chunks),
    }
    per_doc = Counter(c.doc_id for c in chunks)
    checks = _checks(corpus, queries, paragraph_of) | {
        "round_robin_span": len(groups) * min(sum(map(len, g)) for g in groups),
        "passages": (min(per_doc.values()), max(per_doc.values())),
        "one_passage": sum(n == 1 for n in per_doc.values()),
    }
    return files, _manifest(counts, checks, left_out, bm25, raw)


def _corpus(articles: list[Row]) -> list[Row]:
    """One document per paragraph: ``<article>_<paragraph>``, the article title, the text."""
    return [
        {"doc_id": f"{a}_{p}", "title": article["title"].replace("_", " "), "text": para["context"]}
        for a, article in enumerate(articles)
        for p, para in enumerate(article["paragraphs"])
    ]


def _kept_questions(
    articles: list[Row], index: ChunkIndex
) -> tuple[list[list[list[Row]]], dict[str, str]]:
    """The question rows by article and paragraph, without the answerable ones whose first
    reference answer no passage covers; and those left out, with the reason."""
    rows = [
        [[_question(qa, f"{a}_{p}") for qa in para["qas"]] for p, para in enumerate(art)]
        for a, art in enumerate(article["paragraphs"] for article in articles)
    ]
    references = {
        q["query_id"]: q["answers"][0]
        for paragraphs in rows
        for group in paragraphs
        for q in group
        if q["answerable"]
    }
    left_out = check_gold_coverage(references, index).uncovered
    kept = [
        [[q for q in group if q["query_id"] not in left_out] for group in paragraphs]
        for paragraphs in rows
    ]
    return kept, left_out


def _spans(answers: list[Row]) -> list[str]:
    """The answer texts, deduplicated in order (SQuAD repeats a span across annotators)."""
    return list(dict.fromkeys(a["text"] for a in answers if a["text"].strip()))


def _question(qa: Row, paragraph: str) -> Row:
    """A query row; ``asked_on`` names the paragraph the question was written on, which is
    its relevant document when it is answerable (an unanswerable one has none)."""
    impossible = bool(qa["is_impossible"])
    question = qa["question"]
    row: Row = {
        "query_id": qa["id"],
        "question": question,
        "answers": [] if impossible else _spans(qa["answers"]),
        "type": en_question_type(question),
        "answerable": not impossible,
        "asked_on": paragraph,
    }
    if impossible:
        row["plausible_answers"] = _spans(qa["plausible_answers"])
    return row


def _check_spans(articles: list[Row]) -> None:
    """Every answer and plausible answer is the span its ``answer_start`` points at, every
    answerable question has one and no unanswerable one has any: else the source is not the
    SQuAD 2.0 file this builder was written for."""
    for article in articles:
        for para in article["paragraphs"]:
            for qa in para["qas"]:
                spans = [*qa["answers"], *qa.get("plausible_answers", [])]
                offsets_ok = all(
                    para["context"][s["answer_start"] : s["answer_start"] + len(s["text"])]
                    == s["text"]
                    for s in spans
                )
                kinds_ok = bool(qa["answers"]) != bool(qa["is_impossible"])
                if not (offsets_ok and kinds_ok):
                    raise SystemExit(f"{NAME}: question {qa['id']}: bad answers, check the source")


def _checks(corpus: list[Row], queries: list[Row], paragraph_of: dict[str, str]) -> Row:
    """What the notes report: answers found elsewhere, questions asked twice."""
    text_of = {d["doc_id"]: d["text"] for d in corpus}
    everything = "\0".join(text_of.values())
    elsewhere = sum(
        any(
            everything.count(a) > text_of[paragraph_of[q["query_id"]]].count(a)
            for a in q["answers"]
        )
        for q in queries
        if q["answerable"]
    )
    asked = Counter(q["question"].strip() for q in queries)
    return {
        "answer_also_in_other_paragraph": elsewhere,
        "repeated_questions": sorted(text for text, n in asked.items() if n > 1),
        "untrimmed_questions": sum(q["question"] != q["question"].strip() for q in queries),
        "request": sum(q["type"] == "request" for q in queries),
    }


def _manifest(counts: Row, checks: Row, left_out: dict[str, str], bm25: Row, raw: bytes) -> Row:
    per_paragraph = counts["chunks"] / counts["documents"]
    repeated = "; ".join(checks["repeated_questions"]) or "none"
    return {
        "name": NAME,
        "description": (
            "SQuAD 2.0 dev's first 5 articles (Normans, Computational complexity theory, "
            "Southern California, Sky (United Kingdom), Victoria (Australia)) as an English "
            f"RAG eval set: the {counts['documents']} paragraphs are the corpus, chunked into "
            "overlapping sentence windows of about 200-400 characters when indexed "
            f"({counts['chunks']} passages, ~{per_paragraph:.1f} per paragraph, "
            f"{checks['passages'][0]} to {checks['passages'][1]}; {checks['one_passage']} "
            "short paragraphs are one passage; see 'chunking'), so the passages of one "
            "paragraph compete for the top k. "
            f"{counts['queries']:,} questions: {counts['answerable']} answerable, with their "
            "reference spans and their paragraph as the relevant document, and "
            f"{counts['unanswerable']} unanswerable (answerable: false, answers [], "
            "plausible_answers kept, no relevant passage), where a refusal is the right reply. "
            "Answerable questions whose first reference answer no passage covers are left out "
            "(see 'gold_coverage'). Order: build.py's rotating round-robin at two levels: "
            "within an article its paragraphs take turns (round r takes question (i + r) mod "
            "n_i of the i-th paragraph), then the 5 articles take turns the same way over "
            f"those lists, so any 5 consecutive questions among the first "
            f"{checks['round_robin_span']:,} come from the 5 articles, and a small --limit "
            "mixes answerable and unanswerable questions."
        ),
        "source": (
            "SQuAD 2.0 dev (dev-v2.0.json, https://rajpurkar.github.io/SQuAD-explorer/), its "
            "first 5 articles, as copied from https://github.com/VinACE/san_mrc at commit "
            f"{COPY_COMMIT}, path dev-v1.1.json (its version field says v2.0; ids and offsets "
            f"intact); shared copy squad2_dev_excerpt/{RAW}, sha256 "
            f"{hashlib.sha256(raw).hexdigest()} (built by eval_sets/build.py and "
            "eval_sets/squad2.py)."
        ),
        "licence": (
            "CC BY-SA 4.0 (SQuAD 2.0, Rajpurkar, Jia and Liang, ACL 2018; passages from "
            "Wikipedia), see LICENSE.md"
        ),
        "language": "en",
        "has_reference_answers": True,
        "not_applicable": [],
        "relevance": (
            "binary by id: 1 = the paragraph an answerable question was asked on (each passage "
            "keeps its paragraph as doc_id); by answer text (the sweep's text_* measures): a "
            "passage covering the first reference answer's n-grams at 0.5. Unanswerable "
            "questions have no qrels line and no reference: no passage is relevant to them, "
            "the loader lists them under 'queries have no relevant document', and the "
            "retrieval measures (by id and by text) leave them out."
        ),
        "unanswerable": (
            "SQuAD 2.0's is_impossible questions, written by crowdworkers against one "
            "paragraph to look answerable from it; plausible_answers are the spans that look "
            "right but are not. They were judged unanswerable from their own paragraph, not "
            "from the whole corpus; another paragraph of the same article may bear on some."
        ),
        "multi_source": (
            "None. SQuAD is span extraction: each answerable question was written on one "
            "paragraph and every reference span is a span of it (build checks every "
            "answer_start), so no question needs two paragraphs."
        ),
        "question_types": {"rule": EN_TYPE_RULE_TEXT, "heuristic": True},
        "counts": counts,
        "notes": _notes(checks, repeated),
        "chunking": CHUNKING,
        "gold_coverage": {
            "rule": (
                "answerable questions only: the first reference answer, split into fragments, "
                "each covered at n-gram coverage >= 0.5 by some passage "
                "(rag_judge.retrieval.gold_coverage)"
            ),
            "left_out": dict(sorted(left_out.items())),
        },
        "bm25": bm25 | {"questions_are": "the kept answerable questions"},
    }


def _notes(checks: Row, repeated: str) -> list[str]:
    return [
        "doc_id is '<article>_<paragraph>', both counted from 0 in source order; title is the "
        "article title with underscores as spaces; query_id is SQuAD's question id.",
        "English sentences are cut at '.', '!' or '?' followed by whitespace, with no "
        "abbreviation list: 'U.S.', 'D.C.', 'L.A.', 'i.e.' end a sentence there, so a few "
        "windows start mid-sentence. A sentence over 400 characters (a few long "
        "enumerations) is cut every 400 characters, which can split a name and leave its "
        "question out (see 'gold_coverage').",
        f"For {checks['answer_also_in_other_paragraph']} answerable questions a reference span "
        "also occurs verbatim in another paragraph (mostly one or two words: names, "
        "numbers, topic terms such as 'Sky' or 'complexity classes'); "
        "relevance by answer text can count such passages, the id qrels do not.",
        f"Question texts asked more than once: {repeated}.",
        f"{checks['request']} questions are typed 'request' by the English rule: in SQuAD "
        "these are mostly questions whose wh-word comes late ('Turing machines are commonly "
        "employed to define what?'), not requests.",
        f"{checks['untrimmed_questions']} question texts carry leading or trailing spaces in "
        "the source; kept as they are (no text was edited).",
        "Questions were written with the paragraph in view; many are underspecified without "
        "it, which lowers retrieval scores for reasons that are not the retriever's fault.",
    ]


def _licence(source: Path) -> str:
    terms = (source / "LICENCE").read_text(encoding="utf-8")
    return (
        f"# Licence of {NAME}\n\n"
        'Derived from SQuAD 2.0: Pranav Rajpurkar, Robin Jia, Percy Liang. "Know What You '
        "Don't Know: Unanswerable Questions for SQuAD\". ACL 2018, pages 784-789, "
        "https://aclanthology.org/P18-2124, doi:10.18653/v1/P18-2124. Passages: Wikipedia "
        "contributors.\n"
        "Data: https://rajpurkar.github.io/SQuAD-explorer/ (dev-v2.0.json), its first 5 "
        f"articles, as copied in https://github.com/VinACE/san_mrc (commit {COPY_COMMIT}, "
        "dev-v1.1.json).\n\n"
        "Licensed under Creative Commons Attribution-ShareAlike 4.0 International "
        "(CC BY-SA 4.0), https://creativecommons.org/licenses/by-sa/4.0/. This derived set is "
        "shared under the same licence.\n\n"
        "Changes made by rag_judge (eval_sets/build.py, eval_sets/squad2.py): the SQuAD-style "
        "JSON was split into a corpus (paragraphs, titles with underscores as spaces), queries "
        "(questions with their answers deduplicated, unanswerable ones marked answerable: "
        "false with their plausible answers kept, in a rotating round-robin order over "
        "articles and paragraphs, plus a heuristic question-type label) and qrels (the "
        "paragraph each answerable question was asked on); answer offsets were dropped, and "
        "answerable questions whose answer no passage covers were left out. No text was "
        "edited.\n\n"
        "The licence terms, as distributed with the data (LICENCE):\n\n"
        "```text\n" + terms.rstrip("\n") + "\n```\n"
    )
