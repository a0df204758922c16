"""Loading judge input rows: every source, both column conventions, every bad-input error."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import datasets
import numpy as np
import pandas as pd
import pytest

from rag_judge.core.errors import InputError
from rag_judge.core.types import RagSample
from rag_judge.data.samples import (
    COLUMN_ALIASES,
    SAMPLE_FIELDS,
    SUPPORTED_SUFFIXES,
    load_samples,
    samples_to_records,
)

DATA = Path(__file__).parents[1] / "fixtures" / "samples"

EXPECTED = [
    RagSample(
        id="q1",
        question="What is the capital of France?",
        contexts=("Paris is the capital of France.", "France is in Europe."),
        answer="Paris.",
        reference="Paris",
        metadata={"topic": "geo"},
    ),
    RagSample(
        id="q2",
        question="NBA的创始人是谁?",
        contexts=(),
        language="zh",
        metadata={"topic": "sport"},
    ),
]

RAGAS_ROWS: list[dict[str, Any]] = [
    {
        "user_input": "What is the capital of France?",
        "retrieved_contexts": ["Paris is the capital of France.", "France is in Europe."],
        "response": "Paris.",
        "reference": "Paris",
        "sample_id": "q1",
        "lang": None,  # Dataset.from_list takes its columns from the first row
        "topic": "geo",
    },
    {
        "user_input": "NBA的创始人是谁?",
        "retrieved_contexts": [],
        "response": None,
        "reference": None,
        "sample_id": "q2",
        "lang": "zh",
        "topic": "sport",
    },
]


def _parquet(tmp_path: Path) -> Path:
    path = tmp_path / "rows.parquet"
    pd.DataFrame(RAGAS_ROWS).to_parquet(path)
    return path


SOURCES: dict[str, Callable[[Path], Any]] = {
    "jsonl, our names": lambda _: DATA / "ours.jsonl",
    "json, ragas names": lambda _: str(DATA / "ragas.json"),
    "csv, our names, contexts as JSON": lambda _: DATA / "ours.csv",
    "tsv, ragas names": lambda _: DATA / "ragas.tsv",
    "parquet (numpy arrays)": _parquet,
    "DataFrame": lambda _: pd.DataFrame(RAGAS_ROWS),
    "datasets.Dataset": lambda _: datasets.Dataset.from_list(RAGAS_ROWS),
    "list of dicts": lambda _: RAGAS_ROWS,
    "generator of dicts": lambda _: (dict(row) for row in RAGAS_ROWS),
}


@pytest.mark.parametrize("make", SOURCES.values(), ids=SOURCES.keys())
def test_every_source_gives_the_same_samples(tmp_path: Path, make: Callable[[Path], Any]) -> None:
    assert load_samples(make(tmp_path)) == EXPECTED


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _jsonl(tmp_path: Path, rows: list[dict[str, Any]], name: str = "rows.jsonl") -> Path:
    return _write(tmp_path, name, "".join(json.dumps(row) + "\n" for row in rows))


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ({"query": "q", "ground_truths": ["a", "b"]}, {"question": "q", "reference": "a\nb"}),
        ({"question": "q", "ground_truth": "a", "reference": "a"}, {"reference": "a"}),
        ({"question": "q", "user_input": ""}, {"question": "q"}),
        ({"question": " ", "answer": "", "reference": None}, {"question": None}),
        ({"question": "q", "qid": 7}, {"id": "7"}),
        ({"answer": 42, "reference": 4.5}, {"answer": "42", "reference": "4.5"}),
        ({"contexts": None}, {"contexts": None}),
        ({"contexts": ["a"], "retrieved_contexts": []}, {"contexts": ("a",)}),
        ({"contexts": "['a', \"b's\"]"}, {"contexts": ("a", "b's")}),
    ],
)
def test_cell_values(row: dict[str, Any], expected: dict[str, Any]) -> None:
    sample = load_samples([row])[0]
    assert {field: getattr(sample, field) for field in expected} == expected


def test_explicit_columns_override_aliases() -> None:
    row = {"question": "original", "rewritten": "better", "gold": "g", "answer": "a"}
    sample = load_samples([row], columns={"question": "rewritten", "reference": "gold"})[0]
    assert (sample.question, sample.reference, sample.answer) == ("better", "g", "a")
    assert sample.metadata == {"question": "original"}
    swapped = load_samples([row], columns={"reference": "answer"})[0]
    assert (swapped.reference, swapped.answer) == ("a", None)
    assert swapped.metadata == {"rewritten": "better", "gold": "g"}


def test_nan_never_gets_through() -> None:
    frame = pd.DataFrame(
        {
            "id": [5, np.nan],
            "question": ["q", np.nan],
            "contexts": [["c"], None],
            "answer": [np.nan, "a"],
            "score": [np.float32("nan"), np.inf],
            "flag": pd.array([True, pd.NA], dtype="boolean"),
            "when": [pd.Timestamp("2024-05-01"), pd.NaT],
        }
    )
    first, second = load_samples(frame)
    assert (first.id, first.answer, first.metadata) == (
        "5",
        None,
        {"score": None, "flag": True, "when": "2024-05-01T00:00:00"},
    )
    assert (second.id, second.question, second.contexts) == ("1", None, None)
    assert second.metadata == {"score": None, "flag": None, "when": None}
    json.dumps(samples_to_records([first, second]), allow_nan=False)


def test_csv_lines_count_quoted_newlines_and_blank_lines(tmp_path: Path) -> None:
    text = 'id,question,contexts\na,"two\nlines","[""x""]"\n\nb,q,not a list\n'
    path = _write(tmp_path, "rows.csv", text)
    with pytest.raises(InputError, match=r"rows\.csv:5, field 'contexts': expected a list of st"):
        load_samples(path)
    assert load_samples(path, limit=1)[0].question == "two\nlines"


def test_text_files_tolerate_bom_crlf_and_unicode_line_separators(tmp_path: Path) -> None:
    csv_path = _write(tmp_path, "excel.csv", "\ufeffquestion,answer\r\nq,a\r\n")
    assert load_samples(csv_path) == [RagSample(id="0", question="q", answer="a")]
    line = json.dumps({"question": "a\u2028b"}, ensure_ascii=False)
    jsonl_path = _write(tmp_path, "r.jsonl", line + "\r\n")
    assert load_samples(jsonl_path)[0].question == "a\u2028b"


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        (
            [{"contexts": "just text"}],
            r"row 0, field 'contexts': expected a list of strings \(a JSON",
        ),
        ([{"contexts": 5}], r"row 0, field 'contexts': expected a list of strings.*got int 5"),
        ([{"q": 1}, {"contexts": ["a", 3]}], r"row 1, field 'contexts': element 1 is int 3"),
        ([{"retrieved_contexts": [None]}], r"field 'retrieved_contexts': element 0 is None"),
        ([{"contexts": ["a", np.nan]}], r"element 1 is float nan"),
        ([{"question": ["a"]}], r"row 0, field 'question': expected a string, got list"),
        ([{"question": "a", "user_input": "b"}], r"row 0.*'question' and 'user_input' give diff"),
        ([{"answer": "a", "response": "b"}], r"row 0, field 'answer': columns 'answer' and 'resp"),
        (
            [{"id": "a", "question": "q"}, {"id": "a"}],
            r"row 1, field 'id': duplicate id 'a', .*row 0",
        ),
        ([{"question": "q"}, {"id": "0"}], r"row 1, field 'id': duplicate id '0'"),
        (
            [{"text": "q", "label": 1}],
            r"no question, contexts, answer or reference column.*user_in",
        ),
        ([{"question": "q"}, "not a row"], r"list, row 1: expected an object of columns, got str"),
        ([], r"list: no rows found"),
    ],
)
def test_bad_rows_name_row_and_field(rows: list[Any], expected: str) -> None:
    with pytest.raises(InputError, match=expected):
        load_samples(rows)


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("r.jsonl", '{"question": "a"}\n\n{"question": "b",}\n', r"r\.jsonl:3: invalid JSON"),
        ("r.jsonl", '{"question": "a"}\n[1]\n', r"r\.jsonl:2: expected an object of columns"),
        (
            "r.jsonl",
            '{"id": "a", "question": "q"}\n{"id": "a"}\n',
            r"r\.jsonl:2, .*first at line 1",
        ),
        ("r.json", '{"question": "a"}', r"r\.json: expected a JSON array of objects"),
        ("r.json", '[{"question": "a"},\n]', r"r\.json:2: invalid JSON"),
        ("r.csv", "question,answer\nq\n", r"r\.csv:2: expected 2 fields like the header, got 1"),
        ("r.csv", "question,question\nq,q\n", r"r\.csv:1: repeated column names"),
        ("r.csv", "question,contexts\nq,[1]\n", r"r\.csv:2, field 'contexts': element 0 is int 1"),
        ("r.tsv", "question\tid\nq\tx\nr\tx\n", r"r\.tsv:3, field 'id': .*first at line 2"),
        (
            "r.txt",
            "question\nq\n",
            r"r\.txt: unknown file type '\.txt': use one of \.jsonl, \.json",
        ),
        ("r.parquet", "not parquet", r"r\.parquet: cannot read as Parquet"),
        ("r.jsonl", '{"question": Infinity}\n', r"r\.jsonl:1, field 'question': .* number inf"),
        ("r.jsonl", '{"answer": -Infinity}\n', r"r\.jsonl:1, field 'answer': .* number -inf"),
    ],
)
def test_bad_files_name_file_and_line(tmp_path: Path, name: str, text: str, expected: str) -> None:
    with pytest.raises(InputError, match=expected):
        load_samples(_write(tmp_path, name, text))


def test_missing_file_and_odd_sources(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"nope\.jsonl: file not found"):
        load_samples(tmp_path / "nope.jsonl")
    splits = datasets.DatasetDict({"test": datasets.Dataset.from_list(RAGAS_ROWS)})
    with pytest.raises(InputError, match=r"DatasetDict: expected rows, got a mapping"):
        load_samples(splits)
    with pytest.raises(InputError, match="cannot read rows"):
        load_samples(42)  # type: ignore[arg-type]


def test_columns_argument_is_checked() -> None:
    with pytest.raises(InputError, match=r"columns= maps fields \(id, question"):
        load_samples([{"q": "a"}], columns={"questions": "q"})
    with pytest.raises(InputError, match=r"no column 'text' \(for question\); found q"):
        load_samples([{"q": "a"}], columns={"question": "text"})


def test_limit_keeps_the_first_rows_and_reads_no_further(tmp_path: Path) -> None:
    path = _write(tmp_path, "r.jsonl", '{"question": "a"}\n{"question": "b"}\nbroken\n')
    assert [s.question for s in load_samples(path, limit=2)] == ["a", "b"]
    assert load_samples(path, limit=0) == []
    with pytest.raises(InputError, match=r"r\.jsonl:3"):
        load_samples(path, limit=3)
    with pytest.raises(InputError, match="limit must be 0 or more"):
        load_samples(path, limit=-1)


def test_metadata_is_carried_through_and_round_trips(tmp_path: Path) -> None:
    rows = [
        {
            "question": "q",
            "contexts": ["c"],
            "metadata": {"source": "wiki", "tags": ("a", "b")},
            "difficulty": np.int64(3),
            "scores": np.array([0.5, np.nan]),
        }
    ]
    sample = load_samples(rows)[0]
    assert sample.metadata == {
        "source": "wiki",
        "tags": ["a", "b"],
        "difficulty": 3,
        "scores": [0.5, None],
    }
    records = samples_to_records([sample])
    assert list(records[0]) == [*SAMPLE_FIELDS, "metadata"]
    assert load_samples(_jsonl(tmp_path, records)) == [sample]
    assert load_samples(samples_to_records(EXPECTED)) == EXPECTED


def test_alias_table_is_consistent() -> None:
    assert set(COLUMN_ALIASES) == set(SAMPLE_FIELDS) == set(RagSample.model_fields) - {"metadata"}
    names = [name for aliases in COLUMN_ALIASES.values() for name in aliases]
    assert len(names) == len(set(names))
    assert SUPPORTED_SUFFIXES == (".jsonl", ".json", ".csv", ".tsv", ".parquet")


@pytest.mark.parametrize(
    ("depth", "message"), [(100_000, "nested too deeply"), (200, "nested deeper than 64 levels")]
)
def test_deeply_nested_rows_are_one_error_naming_the_line(
    tmp_path: Path, depth: int, message: str
) -> None:
    path = tmp_path / "deep.jsonl"
    nested = "[" * depth + "]" * depth
    path.write_text(f'{{"id": "1", "answer": "A", "x": {nested}}}\n', encoding="utf-8")
    with pytest.raises(InputError, match=rf"deep\.jsonl:1.*{message}"):
        load_samples(path)


def test_a_csv_cell_over_128_kib_is_read_like_jsonl(tmp_path: Path) -> None:
    answer = "word " * 60_000  # ~300 KB: over the csv module's default field limit
    path = tmp_path / "long.csv"
    pd.DataFrame([{"id": "1", "question": "Q?", "answer": answer}]).to_csv(path, index=False)
    [sample] = load_samples(path)
    assert sample.answer == answer.strip() or sample.answer == answer
