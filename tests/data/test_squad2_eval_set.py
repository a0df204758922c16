"""The bundled squad2_en_chunked set: English passages, answerable questions with one relevant
paragraph, unanswerable ones marked and judged against nothing, a varied first few."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rag_judge.data.eval_sets import EvalQuery, EvalSet, load_eval_set
from rag_judge.pipeline.build import eval_set_chunks

REPO = Path(__file__).parents[2]
SHARED_DATA = REPO.parent / "shared" / "data"
NAME = "squad2_en_chunked"
SOURCE_QUESTIONS, SOURCE_UNANSWERABLE = 1407, 702
"""SQuAD 2.0 dev's first 5 articles, as the shared copy's SOURCE.txt counts them."""


@pytest.fixture(scope="module")
def squad2() -> EvalSet:
    return load_eval_set(NAME)


def _article(query: EvalQuery) -> str:
    """The article a question was asked on (``asked_on`` is ``<article>_<paragraph>``)."""
    return str(query.extra["asked_on"]).split("_")[0]


def test_it_loads_every_question_but_those_left_out(squad2: EvalSet) -> None:
    counts = squad2.manifest["counts"]
    left_out = squad2.manifest["gold_coverage"]["left_out"]
    assert squad2.language == "en"
    assert squad2.has_reference_answers
    assert len(squad2.documents) == counts["documents"] == 173
    assert len(squad2.queries) + len(left_out) == SOURCE_QUESTIONS
    assert len(squad2.queries) == counts["queries"] == counts["answerable"] + counts["unanswerable"]
    assert counts["unanswerable"] == SOURCE_UNANSWERABLE  # the check leaves out answerable only
    assert not {q.id for q in squad2.queries} & set(left_out)  # listed, never kept
    assert all("_" not in (d.title or "") for d in squad2.documents)


def test_unanswerable_questions_have_no_answers_and_no_qrels(squad2: EvalSet) -> None:
    unanswerable = [q for q in squad2.queries if not q.answerable]
    assert len(unanswerable) == SOURCE_UNANSWERABLE
    for query in unanswerable:
        assert query.answers == ()
        assert query.id not in squad2.qrels
        plausible = query.extra["plausible_answers"]
        assert plausible, query.id
        assert len(set(plausible)) == len(plausible)
    assert squad2.warnings == (
        f"{SOURCE_UNANSWERABLE} queries have no relevant document: "
        + ", ".join(q.id for q in unanswerable[:5])
        + f" and {SOURCE_UNANSWERABLE - 5} more",
    )  # and none "have no reference answer": answerable: false says why


def test_answerable_questions_have_answers_and_one_relevant_paragraph(squad2: EvalSet) -> None:
    answerable = [q for q in squad2.queries if q.answerable]
    assert len(answerable) == squad2.manifest["counts"]["answerable"]
    doc_ids = {d.id for d in squad2.documents}
    for query in answerable:
        assert query.answers, query.id
        assert len(set(query.answers)) == len(query.answers)  # deduplicated
        assert "plausible_answers" not in query.extra
        ((doc, grade),) = squad2.qrels[query.id].items()
        assert (doc in doc_ids, grade) == (True, 1)
    assert len(squad2.qrels) == len(answerable)


def test_the_first_questions_vary_across_articles_and_kinds(squad2: EvalSet) -> None:
    first = squad2.limit(20).queries
    assert {q.answerable for q in first} == {True, False}
    assert {_article(q) for q in first} == {"0", "1", "2", "3", "4"}
    # The articles take turns: any 5 consecutive questions of the first rounds span all 5.
    rounds = [_article(q) for q in squad2.queries[:1000]]
    assert all(len(set(rounds[i : i + 5])) == 5 for i in range(len(rounds) - 4))
    # An answerable question was asked on its relevant paragraph.
    assert all(q.extra["asked_on"] in squad2.qrels[q.id] for q in squad2.queries if q.answerable)


def test_the_corpus_is_cut_into_a_few_passages_per_paragraph(squad2: EvalSet) -> None:
    chunks = eval_set_chunks(squad2)
    assert squad2.manifest["chunking"]["chunker"] == "sentence_windows"
    assert len(chunks) == squad2.manifest["counts"]["chunks"]
    assert 2 <= len(chunks) / len(squad2.documents) <= 4
    texts = {d.id: d.text for d in squad2.documents}
    assert all(c.text == texts[c.doc_id][c.start : c.end] for c in chunks)
    measured = squad2.manifest["bm25"]
    assert measured["questions"] == squad2.manifest["counts"]["answerable"]
    assert measured["text_hit_rate@1"] < measured["text_hit_rate@10"] - 0.1


@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason="source data (../shared/data) not present")
def test_the_build_script_writes_exactly_the_bundled_files(tmp_path: Path) -> None:
    script = REPO / "eval_sets" / "build.py"
    args = [sys.executable, str(script), "--source", str(SHARED_DATA), "--out", str(tmp_path)]
    subprocess.run([*args, "--only", NAME], check=True, capture_output=True, timeout=120)
    bundled, rebuilt = REPO / "eval_sets" / NAME, tmp_path / NAME
    assert sorted(p.name for p in rebuilt.iterdir()) == sorted(p.name for p in bundled.iterdir())
    for file in (p.name for p in bundled.iterdir() if p.name != "manifest.json"):
        assert (rebuilt / file).read_bytes() == (bundled / file).read_bytes(), file
    old = json.loads((bundled / "manifest.json").read_bytes())
    new = json.loads((rebuilt / "manifest.json").read_bytes())
    old_bm25, new_bm25 = old.pop("bm25"), new.pop("bm25")  # numpy sums: equal within rounding
    assert old == new
    assert old_bm25.keys() == new_bm25.keys()
    for key, value in old_bm25.items():
        assert value == pytest.approx(new_bm25[key], abs=0.002), key
