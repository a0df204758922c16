"""Reading and writing qrels and runs; every error names file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag_judge.core.errors import InputError
from rag_judge.retrieval import evaluate, read_qrels, read_run, write_qrels, write_run


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_trec_files_round_trip(tmp_path: Path) -> None:
    qrels = {"q1": {"a": 2, "b": 0}, "q2": {"c": 1}}
    run = {"q1": {"a": 0.5, "b": 1.5}, "q2": ["x", "c"]}
    write_qrels(qrels, tmp_path / "qrels.txt")
    write_run(run, tmp_path / "run.txt", tag="mine")
    assert read_qrels(tmp_path / "qrels.txt") == qrels
    loaded = read_run(tmp_path / "run.txt")
    assert loaded["q1"] == {"a": 0.5, "b": 1.5}
    before = evaluate(qrels, run, ["ndcg", "mrr"]).per_query()
    assert evaluate(qrels, loaded, ["ndcg", "mrr"]).per_query() == before
    assert (tmp_path / "run.txt").read_text().splitlines()[0] == "q1 Q0 b 1 1.5 mine"


def test_comments_and_trailing_fields(tmp_path: Path) -> None:
    qrels = _write(tmp_path, "q.txt", "# judged by hand\n1 0 d#1 1\n  # indented comment\n")
    run = _write(tmp_path, "r.txt", "1 Q0 d#1 1 3.0 tag anything after the tag\n")
    assert read_qrels(qrels) == {"1": {"d#1": 1}}
    assert read_run(run) == {"1": {"d#1": 3.0}}


def test_delimited_files_with_header(tmp_path: Path) -> None:
    qrels = _write(tmp_path, "q.tsv", "query_id\tdoc_id\tcranfield_code\tgain\n1\t184\t2\t3\n")
    assert read_qrels(qrels) == {"1": {"184": 3}}
    run = _write(tmp_path, "r.csv", "query_id,doc_id,rank\nq,b,2\nq,a,1\n")
    assert read_run(run) == {"q": ["a", "b"]}


def test_json_files(tmp_path: Path) -> None:
    qrels = _write(tmp_path, "q.json", json.dumps({"q": {"a": 1}}))
    scored = _write(tmp_path, "s.json", json.dumps({"q": {"a": 0.2, "b": 0.7}}))
    ranked = _write(tmp_path, "l.json", json.dumps({"q": ["a", "b"]}))
    assert read_qrels(qrels) == {"q": {"a": 1}}
    assert read_run(scored) == {"q": {"a": 0.2, "b": 0.7}}
    assert read_run(ranked) == {"q": ["a", "b"]}


@pytest.mark.parametrize(
    ("reader", "text", "expected"),
    [
        (read_run, "q Q0 a 1 0.5 t\nq Q0 b 2 abc t\n", r"r\.txt:2, field 'score': 'abc' is not"),
        (read_run, "q Q0 a 1 nan t\n", r"r\.txt:1, field 'score': 'nan' is not a finite"),
        (read_run, "q Q0 a 1\n", r"r\.txt:1: expected 6 fields"),
        (read_run, "q Q0 a 1 1 t\nq Q0 a 2 0.5 t\n", r"r\.txt:2, field 'doc_id': .*twice"),
        (read_run, "# only a comment\n", r"r\.txt: no run lines"),
        (read_qrels, "q 0 a one\n", r"r\.txt:1, field 'grade': 'one' is not an integer"),
        (read_qrels, "q 0 a\n", r"r\.txt:1: expected 4 fields"),
        (read_qrels, "q 0 a 1\nq 0 a 0\n", r"r\.txt:2, field 'doc_id': .*judged twice"),
        (read_qrels, "query_id,doc_id,relevance\nq,a,x\n", r"r\.txt:2, field 'relevance'"),
        (read_qrels, "query_id,doc_id\nq,a\n", r"no relevance grade column"),
        (read_qrels, "query_id,doc_id,relevance\nq,a\n", r"r\.txt:2: expected 3 fields"),
    ],
)
def test_bad_lines_name_file_line_and_field(
    tmp_path: Path, reader: object, text: str, expected: str
) -> None:
    path = _write(tmp_path, "r.txt", text)
    with pytest.raises(InputError, match=expected):
        reader(path)  # type: ignore[operator]


def test_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file not found"):
        read_run(tmp_path / "nope.txt")
    (tmp_path / "bin.txt").write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(InputError, match="not UTF-8"):
        read_qrels(tmp_path / "bin.txt")
    with pytest.raises(InputError, match=r"bad\.json:1.*invalid JSON"):
        read_run(_write(tmp_path, "bad.json", "{not json"))


BOM = "\ufeff"


def test_a_byte_order_mark_is_not_part_of_the_first_query_id(tmp_path: Path) -> None:
    """Windows editors and spreadsheets start files with a BOM: the scores must not change."""
    qrels = _write(tmp_path, "qb.txt", BOM + "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n")
    run = _write(tmp_path, "rb.txt", BOM + "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\nq2 Q0 d3 1 1.0 t\n")
    assert set(read_qrels(qrels)) == {"q1", "q2"}
    assert set(read_run(run)) == {"q1", "q2"}
    per_query = evaluate(read_qrels(qrels), read_run(run), ["mrr"]).per_query()
    assert per_query["q1"]["mrr"] == 1.0


def test_a_delimited_file_with_a_byte_order_mark_reads_its_header(tmp_path: Path) -> None:
    qrels = _write(tmp_path, "q.csv", BOM + "query_id,doc_id,relevance\nq1,d1,1\n")
    assert read_qrels(qrels) == {"q1": {"d1": 1}}


def test_a_directory_is_not_a_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="is a directory"):
        read_qrels(tmp_path)
