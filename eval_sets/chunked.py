"""cmrc2018_zh_chunked: CMRC 2018 dev cut as a RAG would, so that k matters.

The corpus, questions and qrels are cmrc2018_zh's; what differs is how the corpus is cut. The
manifest's ``chunking`` names overlapping sentence windows of about 100-200 characters (one
sentence of overlap), which the k-sweep and the retriever comparison apply when they index the
set, so each paragraph becomes ~4 passages that compete for the top k. Every chunk keeps its
paragraph as ``doc_id``, so the id qrels stay the paragraph; relevance by answer text marks the
passages that hold the answer.

The gold-coverage check runs here, at build time, with the same chunker and the sweep's rule
(the first reference answer, n-gram coverage 0.5): questions whose answer no passage covers are
left out of ``queries.jsonl`` and listed in the manifest with the reason, never kept silently.
BM25 (the sweep's default retriever) is then run over the passages for every kept question, and
its recall by id and by text at k = 1, 3, 5 and 10 go into the manifest: how much k matters here.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

from rag_judge.core.types import Document
from rag_judge.pipeline.bm25 import BM25Retriever
from rag_judge.pipeline.chunking import chunk_corpus, chunker_from_spec
from rag_judge.retrieval.by_k import id_metrics, text_metrics
from rag_judge.retrieval.gold_coverage import check_gold_coverage
from rag_judge.retrieval.text_relevance import ChunkIndex

NAME = "cmrc2018_zh_chunked"
CHUNKING = {"chunker": "sentence_windows", "min_chars": 100, "max_chars": 200, "overlap": 1}
"""How the sweep cuts this set's corpus (pipeline.chunking.SentenceWindows)."""
MEASURED_KS = (1, 3, 5, 10)
TEXT_SHOWN = ("text_hit_rate", "text_recall")
Row = dict[str, Any]


def build_chunked(files: dict[str, str], manifest: Row) -> tuple[dict[str, str], Row]:
    """This set's files and manifest (without ``files``) from cmrc2018_zh's."""
    corpus = [json.loads(line) for line in files["corpus.jsonl"].splitlines()]
    queries = [json.loads(line) for line in files["queries.jsonl"].splitlines()]
    documents = [Document(d["doc_id"], d["text"], d["title"] or None) for d in corpus]
    chunks = chunk_corpus(chunker_from_spec(CHUNKING), documents)
    texts = {c.id: c.text for c in chunks}
    index = ChunkIndex(texts)
    report = check_gold_coverage({q["query_id"]: q["answers"][0] for q in queries}, index)
    kept = [q for q in queries if q["query_id"] not in report.uncovered]
    kept_ids = {q["query_id"] for q in kept}
    qrels_lines = files["qrels.tsv"].splitlines()
    qrels = [qrels_lines[0], *(ln for ln in qrels_lines[1:] if ln.split("\t")[0] in kept_ids)]
    out = {
        "corpus.jsonl": files["corpus.jsonl"],
        "queries.jsonl": "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in kept),
        "qrels.tsv": "\n".join(qrels) + "\n",
        "LICENSE.md": files["LICENSE.md"].replace(
            "# Licence of cmrc2018_zh", f"# Licence of {NAME}"
        ),
    }
    doc_of = {c.id: c.doc_id for c in chunks}
    own = {ln.split("\t")[0]: ln.split("\t")[1] for ln in qrels[1:]}
    bm25 = _bm25_figures(chunks, kept, texts, doc_of, own)
    counts = dict(manifest["counts"])
    counts.update(queries=len(kept), qrels=len(qrels) - 1, relevant_judgements=len(qrels) - 1)
    counts.update(queries_with_relevant=len(kept), queries_with_answers=len(kept))
    counts["types"] = _types(kept)
    counts["chunks"] = len(chunks)
    return out, {
        **manifest,
        "name": NAME,
        "description": (
            "CMRC 2018 dev cut as a RAG would: cmrc2018_zh's 848 paragraphs, questions and "
            "qrels, with the corpus chunked into overlapping sentence windows of about 100-200 "
            f"characters ({len(chunks):,} passages, ~{len(chunks) / len(corpus):.1f} per "
            "paragraph; see 'chunking'), so the passages of one paragraph compete for the top k "
            "and k matters. Questions whose first reference answer no passage covers are left "
            "out (see 'gold_coverage'). The order is cmrc2018_zh's: a small --limit is varied."
        ),
        "chunking": CHUNKING,
        "relevance": (
            "binary by id: 1 = the paragraph the question was asked on (each passage keeps its "
            "paragraph as doc_id); by answer text (the sweep's text_* measures): a passage "
            "covering the first reference answer's n-grams at 0.5"
        ),
        "gold_coverage": {
            "rule": (
                "the first reference answer, split into fragments, each covered at n-gram "
                "coverage >= 0.5 by some passage (rag_judge.retrieval.gold_coverage)"
            ),
            "left_out": dict(sorted(report.uncovered.items())),
        },
        "bm25": bm25,
        "counts": counts,
    }


def _bm25_figures(
    chunks: Sequence[Any],
    kept: list[Row],
    texts: dict[str, str],
    doc_of: dict[str, str],
    own: dict[str, str],
) -> Row:
    """BM25's mean recall by id and by answer text at MEASURED_KS over every kept question,
    computed by the sweep's own per-k measures (its ``doc_*`` and ``text_*`` columns)."""
    retriever = BM25Retriever.build(list(chunks))
    hits = asyncio.run(retriever.search([q["question"] for q in kept], max(MEASURED_KS)))
    rankings = {
        q["query_id"]: [h.chunk_id for h in found] for q, found in zip(kept, hits, strict=True)
    }
    references = {q["query_id"]: q["answers"][0] for q in kept}
    by_text, excluded = text_metrics(rankings, texts, references, MEASURED_KS)
    by_id = id_metrics(rankings, doc_of, {q: {d: 1} for q, d in own.items()}, MEASURED_KS)
    figures: Row = {
        "retriever": "rag_judge BM25 (the sweep's default), top 10 passages per question",
        "questions": len(kept),
    }
    for k in MEASURED_KS:
        for measure, values in (("doc_recall", by_id), *((m, by_text) for m in TEXT_SHOWN)):
            at_k = [row[measure] for (_, at), row in values.items() if at == k]
            figures[f"{measure}@{k}"] = round(sum(at_k) / len(at_k), 3)
    figures["text_excluded"] = len(excluded)
    return figures


def _types(queries: list[Row]) -> dict[str, int]:
    found: dict[str, int] = {}
    for q in queries:
        found[q["type"]] = found.get(q["type"], 0) + 1
    return dict(sorted(found.items(), key=lambda item: (-item[1], item[0])))
