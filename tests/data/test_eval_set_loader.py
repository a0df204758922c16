"""The bundled retrieval eval sets load with their documented counts; bad sets fail clearly."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rag_judge.core.errors import InputError
from rag_judge.data.eval_sets import EvalSet, available_eval_sets, load_eval_set
from rag_judge.pipeline.build import eval_set_chunks

REPO = Path(__file__).parents[2]
SHARED_DATA = REPO.parent / "shared" / "data"
BUILT = (
    "cmrc2018_zh",
    "cranfield",
    "cmrc_short_answers",
    "cmrc2018_zh_chunked",
    "squad2_en_chunked",
)
MEASURED = "bm25"
"""A manifest entry measured at build time with BM25 (numpy sums): equal within rounding, not
byte for byte, on another CPU."""


@pytest.fixture(scope="module")
def cmrc() -> EvalSet:
    return load_eval_set("cmrc2018_zh")


@pytest.fixture(scope="module")
def cranfield() -> EvalSet:
    return load_eval_set("cranfield")


def test_available_sets_are_the_retrieval_sets() -> None:
    assert available_eval_sets() == [
        "cmrc2018_zh",
        "cmrc2018_zh_chunked",
        "cranfield",
        "squad2_en_chunked",
    ]


@pytest.mark.parametrize(
    ("name", "documents", "queries", "qrels"),
    [
        ("cmrc2018_zh", 848, 3219, 3219),
        ("cmrc2018_zh_chunked", 848, 3219, 3219),
        ("cranfield", 1400, 225, 1837),
        ("squad2_en_chunked", 173, 1406, 704),  # 702 unanswerable questions have no qrels
    ],
)
def test_bundled_sets_load_with_documented_counts(
    name: str, documents: int, queries: int, qrels: int
) -> None:
    loaded = load_eval_set(name)
    counts = loaded.manifest["counts"]
    assert (len(loaded.documents), len(loaded.queries)) == (documents, queries)
    assert sum(len(docs) for docs in loaded.qrels.values()) == qrels
    assert (counts["documents"], counts["queries"], counts["qrels"]) == (documents, queries, qrels)
    doc_ids = {d.id for d in loaded.documents}
    for query in loaded.queries:
        if not query.answerable:
            assert query.id not in loaded.qrels
            continue
        relevant = [d for d, grade in loaded.qrels[query.id].items() if grade >= 1]
        assert relevant, query.id
        assert set(loaded.qrels[query.id]) <= doc_ids


def test_cmrc_has_answers_and_a_varied_first_subset(cmrc: EvalSet) -> None:
    assert cmrc.has_reference_answers
    assert cmrc.manifest["language"] == "zh"
    assert cmrc.not_applicable == {}
    assert cmrc.warnings == ()
    assert all(q.answers and len(set(q.answers)) == len(q.answers) for q in cmrc.queries)
    small = cmrc.limit(30)
    assert len(small.queries) == 30
    assert set(small.qrels) == {q.id for q in small.queries}
    assert len({doc for docs in small.qrels.values() for doc in docs}) == 30
    assert small.documents == cmrc.documents
    assert {q.type for q in cmrc.queries} <= {
        *("what", "who", "which", "where", "when", "number", "why", "how", "other")
    }


def test_cranfield_has_graded_qrels_and_no_answers(cranfield: EvalSet) -> None:
    assert not cranfield.has_reference_answers
    assert all(q.answers == () for q in cranfield.queries)
    assert {"completeness", "context_recall", "text_relevance"} <= set(cranfield.not_applicable)
    assert "faithfulness" not in cranfield.not_applicable
    assert "no reference answers" in cranfield.not_applicable["completeness"]
    # cranqrel "1 184 2": Cleverdon code 2 -> grade 5 - 2 = 3.
    assert cranfield.qrels["1"]["184"] == 3
    assert {g for docs in cranfield.qrels.values() for g in docs.values()} == {0, 1, 2, 3, 4}
    assert cranfield.queries[2].extra == {"source_id": "004"}
    assert cranfield.warnings == ("2 documents have no text: 471, 995",)


def test_limit_keeps_order_and_rejects_zero(cranfield: EvalSet) -> None:
    assert [q.id for q in cranfield.limit(3).queries] == ["1", "2", "3"]
    assert len(cranfield.limit(10_000).queries) == 225
    with pytest.raises(InputError, match="field 'limit'"):
        cranfield.limit(0)


def test_unknown_name_lists_the_available_sets() -> None:
    expected = (
        r"no eval set 'msmarco'; bundled sets: cmrc2018_zh, cmrc2018_zh_chunked, cranfield, "
        r"squad2_en_chunked"
    )
    with pytest.raises(InputError, match=expected):
        load_eval_set("msmarco")


def test_judge_demo_is_not_a_retrieval_set() -> None:
    with pytest.raises(InputError, match=r"does not list corpus\.jsonl"):
        load_eval_set(REPO / "eval_sets" / "judge_demo")


# --- malformed sets in tmp_path ------------------------------------------------------------

CORPUS = [
    {"doc_id": "d1", "title": "One", "text": "first"},
    {"doc_id": "d2", "title": "", "text": "second"},
]
QUERIES = [
    {"query_id": "q1", "question": "first?", "answers": ["first"], "type": "what"},
    {"query_id": "q2", "question": "none?", "answers": [], "type": "what", "note": "x"},
]
QRELS = "query_id\tdoc_id\trelevance\nq1\td1\t2\nq1\td2\t0\n"


def _write_set(folder: Path, corpus: str, queries: str, qrels: str) -> Path:
    """A set folder whose manifest matches the files (so only the content is wrong)."""
    folder.mkdir(exist_ok=True)
    files: dict[str, Any] = {}
    for name, text in (("corpus.jsonl", corpus), ("queries.jsonl", queries), ("qrels.tsv", qrels)):
        (folder / name).write_text(text, encoding="utf-8")
        files[name] = {"sha256": hashlib.sha256(text.encode()).hexdigest(), "fields": "test"}
    manifest = {"name": "tiny", "has_reference_answers": True, "files": files}
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return folder


def _lines(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


def test_a_good_tiny_set_loads_with_warnings(tmp_path: Path) -> None:
    loaded = load_eval_set(_write_set(tmp_path / "tiny", _lines(CORPUS), _lines(QUERIES), QRELS))
    assert loaded.name == "tiny"
    assert loaded.qrels == {"q1": {"d1": 2, "d2": 0}}
    assert loaded.documents[1].title is None
    assert loaded.queries[1].extra == {"note": "x"}
    assert loaded.warnings == (
        "1 queries have no relevant document: q2",
        "1 queries have no reference answer: q2",
    )
    assert loaded.limit(1).warnings == ()


def test_an_unanswerable_question_loads_without_answers_or_a_warning(tmp_path: Path) -> None:
    unanswerable = {**QUERIES[1], "answerable": False, "plausible_answers": ["second"]}
    queries = _lines([QUERIES[0], unanswerable])
    loaded = load_eval_set(_write_set(tmp_path / "tiny", _lines(CORPUS), queries, QRELS))
    assert [q.answerable for q in loaded.queries] == [True, False]
    assert loaded.queries[1].answers == ()
    assert loaded.queries[1].extra == {"note": "x", "plausible_answers": ["second"]}
    # It has no relevant document (said), but lacks no reference answer (not said).
    assert loaded.warnings == ("1 queries have no relevant document: q2",)


def test_a_synth_set_written_before_the_flag_marks_its_unanswerable_questions(
    tmp_path: Path,
) -> None:
    legacy = {**QUERIES[1], "type": "unanswerable", "answers": []}  # no "answerable" field
    queries = _lines([QUERIES[0], legacy])
    loaded = load_eval_set(_write_set(tmp_path / "tiny", _lines(CORPUS), queries, QRELS))
    assert [q.answerable for q in loaded.queries] == [True, False]


def _broken(**change: str) -> dict[str, str]:
    files = {"corpus": _lines(CORPUS), "queries": _lines(QUERIES), "qrels": QRELS}
    return files | change


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (
            _broken(corpus='{"doc_id": "d1", "text": "a"}\n{"doc_id": "d2", "text": \n'),
            r"corpus\.jsonl:2: invalid JSON",
        ),
        (
            _broken(corpus='{"doc_id": "d1", "title": "t"}\n'),
            r"corpus\.jsonl:1, field 'text': missing",
        ),
        (
            _broken(corpus=_lines([*CORPUS, CORPUS[0]])),
            r"corpus\.jsonl:3, field 'doc_id': duplicate id 'd1' \(first on line 1\)",
        ),
        (
            _broken(queries=_lines([QUERIES[0], {**QUERIES[1], "answers": "x"}])),
            r"queries\.jsonl:2, field 'answers': must be a list",
        ),
        (
            _broken(queries=_lines([{**QUERIES[0], "question": " "}])),
            r"queries\.jsonl:1, field 'question': must not be empty",
        ),
        (
            _broken(queries=_lines([QUERIES[0], {**QUERIES[1], "query_id": 7}])),
            r"queries\.jsonl:2, field 'query_id': must be a string, got int",
        ),
        (
            _broken(queries=_lines([QUERIES[0], {**QUERIES[1], "answerable": "no"}])),
            r"queries\.jsonl:2, field 'answerable': must be true or false, got 'no'",
        ),
        (
            _broken(queries=_lines([{**QUERIES[0], "answerable": False}])),
            r"queries\.jsonl:1, field 'answers': an unanswerable question \(answerable: false\) "
            r"must have answers: \[\]",
        ),
        (_broken(qrels=QRELS + "q9\td1\t1\n"), r"qrels\.tsv:4, field 'query_id': unknown query"),
        (_broken(qrels=QRELS + "q2\td9\t1\n"), r"qrels\.tsv:4, field 'doc_id': unknown document"),
        (_broken(qrels=QRELS + "q1\td1\t1\n"), r"qrels\.tsv:4, field 'doc_id': document 'd1' judg"),
        (_broken(qrels=QRELS + "q2\td1\thigh\n"), r"qrels\.tsv:4, field 'relevance': 'high'"),
        (_broken(qrels="qid doc rel\n"), r"qrels\.tsv:1: the first line must be the header"),
    ],
)
def test_malformed_files_name_file_line_and_field(
    tmp_path: Path, files: dict[str, str], expected: str
) -> None:
    folder = _write_set(tmp_path / "bad", files["corpus"], files["queries"], files["qrels"])
    with pytest.raises(InputError, match=expected):
        load_eval_set(folder)


def test_a_modified_file_fails_the_sha256_check(tmp_path: Path) -> None:
    folder = _write_set(tmp_path / "tiny", _lines(CORPUS), _lines(QUERIES), QRELS)
    (folder / "qrels.tsv").write_text(QRELS + "q2\td1\t1\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"qrels\.tsv, field 'sha256': the file was modified; re"):
        load_eval_set(folder)


# --- reproducibility -----------------------------------------------------------------------


@pytest.mark.slow  # rebuilds every bundled set from the source data (~40 s on 2 cores)
@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason="source data (../shared/data) not present")
def test_build_script_writes_exactly_the_bundled_files(tmp_path: Path) -> None:
    script = REPO / "eval_sets" / "build.py"
    args = [sys.executable, str(script), "--source", str(SHARED_DATA), "--out", str(tmp_path)]
    subprocess.run(args, check=True, capture_output=True, timeout=300)
    for name in BUILT:
        built = sorted(p.name for p in (tmp_path / name).iterdir())
        assert built == sorted(p.name for p in (REPO / "eval_sets" / name).iterdir())
        for file in built:
            bundled = (REPO / "eval_sets" / name / file).read_bytes()
            rebuilt = (tmp_path / name / file).read_bytes()
            if file == "manifest.json":
                bundled, rebuilt = _measured_apart(bundled, rebuilt)
            assert rebuilt == bundled, f"{name}/{file}"


def _measured_apart(bundled: bytes, rebuilt: bytes) -> tuple[bytes, bytes]:
    """Both manifests without their measured entry, once its figures agree to 0.002."""
    old, new = json.loads(bundled), json.loads(rebuilt)
    a, b = old.pop(MEASURED, {}), new.pop(MEASURED, {})
    assert a.keys() == b.keys()
    for key, value in a.items():
        if isinstance(value, float):
            assert abs(value - b[key]) <= 0.002, key
        else:
            assert value == b[key], key
    return json.dumps(old).encode(), json.dumps(new).encode()


# --- the chunked set ---------------------------------------------------------------------------


def test_the_chunked_set_is_cut_by_its_manifest_and_k_matters_there() -> None:
    chunked = load_eval_set("cmrc2018_zh_chunked")
    chunks = eval_set_chunks(chunked)
    assert len(chunks) == chunked.manifest["counts"]["chunks"]
    assert len(chunks) > 3 * len(chunked.documents)  # ~4 passages compete per paragraph
    assert {c.doc_id for c in chunks} == {d.id for d in chunked.documents}
    texts = {d.id: d.text for d in chunked.documents}
    assert all(c.text == texts[c.doc_id][c.start : c.end] for c in chunks)
    measured = chunked.manifest["bm25"]
    assert measured["questions"] == len(chunked.queries)
    assert measured["text_hit_rate@1"] < measured["text_hit_rate@10"] - 0.1
    left_out = chunked.manifest["gold_coverage"]["left_out"]
    assert not {q.id for q in chunked.queries} & set(left_out)  # listed, never kept
    whole = load_eval_set("cmrc2018_zh")
    assert len(eval_set_chunks(whole)) < len(chunks)  # the same corpus, cut coarser by default


def test_a_bad_chunking_entry_names_the_manifest_and_the_field(tmp_path: Path) -> None:
    chunked = load_eval_set("cmrc2018_zh_chunked")
    spec = {"chunker": "sentence_windows", "min_chars": 100, "max_chars": "200"}
    bad = dataclasses.replace(chunked, manifest=chunked.manifest | {"chunking": spec})
    with pytest.raises(InputError, match=r"manifest\.json, field 'chunking\.max_chars'"):
        eval_set_chunks(bad)
