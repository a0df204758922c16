"""Read and write qrels and runs: TREC text files, delimited files with a header, and JSON.

TREC qrels lines are ``qid iter doc_id grade``; TREC run lines are
``qid Q0 doc_id rank score run_tag`` (anything after the tag is ignored). Like trec_eval, the
rank column of a run is ignored and documents are ranked by score. Lines whose first
non-blank character is ``#`` are comments. Every error names the file, the line and the field.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from rag_judge.core import json_text
from rag_judge.core.errors import InputError
from rag_judge.core.text_files import read_text
from rag_judge.retrieval.frames import FILE_SUFFIX, MAX_GRADE, qrels_from_frame, run_from_frame
from rag_judge.retrieval.ranking import RunEntry, rank_documents

RunDict = dict[str, dict[str, float]] | dict[str, list[str]]


def read_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """Qrels from a TREC qrels file, a CSV/TSV with a header, or JSON ``{qid: {doc: grade}}``."""
    path = Path(path)
    text = read_text(path)
    if path.suffix.lower() == ".json":
        return _qrels_from_json(text, str(path))
    first = _first_data_line(text)
    if first is not None and _looks_like_header(first):
        return qrels_from_frame(_read_delimited(path, text), source=str(path) + FILE_SUFFIX)
    return _parse_trec_qrels(text, str(path))


def read_run(path: str | Path) -> RunDict:
    """A run from a TREC run file, a CSV/TSV with a header, or JSON (scores or ranked lists)."""
    path = Path(path)
    text = read_text(path)
    if path.suffix.lower() == ".json":
        return _run_from_json(text, str(path))
    first = _first_data_line(text)
    if first is not None and _looks_like_header(first):
        return run_from_frame(_read_delimited(path, text), source=str(path) + FILE_SUFFIX)
    return _parse_trec_run(text, str(path))


def write_run(run: Mapping[str, RunEntry], path: str | Path, *, tag: str = "rag_judge") -> None:
    """Write a TREC run file; ranked lists get scores n, n-1, ... so rank order survives."""
    lines = []
    for qid in sorted(run):
        entry = run[qid]
        ranked = rank_documents(entry, query_id=qid)
        for rank, doc in enumerate(ranked, start=1):
            score = entry[doc] if isinstance(entry, Mapping) else float(len(ranked) - rank + 1)
            lines.append(f"{qid} Q0 {doc} {rank} {score!r} {tag}\n")
    Path(path).write_text("".join(lines), encoding="utf-8")


def write_qrels(qrels: Mapping[str, Mapping[str, int]], path: str | Path) -> None:
    """Write a TREC qrels file (iteration column 0)."""
    lines = [
        f"{qid} 0 {doc} {grade}\n" for qid in sorted(qrels) for doc, grade in qrels[qid].items()
    ]
    Path(path).write_text("".join(lines), encoding="utf-8")


def _data_lines(text: str) -> list[tuple[int, list[str]]]:
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            out.append((number, stripped.split()))
    return out


def _first_data_line(text: str) -> str | None:
    for line in text.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return stripped
    return None


def _looks_like_header(line: str) -> bool:
    """A header names its columns (query_id, qid, query ...) and holds no number: a TREC line
    whose first query id happens to be ``query`` still has its iteration and grade."""
    fields = [f.strip().lower() for f in line.replace(",", "\t").split("\t")]
    if any(_is_number(f) for f in fields):
        return False
    return any(f in ("query_id", "qid", "query-id", "query") for f in fields)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _read_delimited(path: Path, text: str) -> pd.DataFrame:
    sep = "\t" if path.suffix.lower() in (".tsv", ".tab") or "\t" in text.split("\n", 1)[0] else ","
    rows = list(csv.reader(text.splitlines(), delimiter=sep))
    header, body = rows[0], [r for r in rows[1:] if r]
    for number, row in enumerate(body, start=2):
        if len(row) != len(header):
            raise InputError(
                f"expected {len(header)} fields like the header, got {len(row)}",
                source=str(path),
                line=number,
            )
    frame = pd.DataFrame(body, columns=header, dtype=str)
    frame.index = pd.RangeIndex(2, len(body) + 2)
    return frame


def _parse_trec_qrels(text: str, source: str) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for number, fields in _data_lines(text):
        if len(fields) != 4:
            raise InputError(
                f"expected 4 fields 'query_id iteration doc_id grade', got {len(fields)}",
                source=source,
                line=number,
            )
        qid, _, doc, grade_text = fields
        try:
            grade = int(grade_text)
        except ValueError:
            raise InputError(
                f"'{grade_text}' is not an integer", source=source, line=number, field="grade"
            ) from None
        if abs(grade) > MAX_GRADE:
            raise InputError(
                f"grade {grade_text} is out of range (at most {MAX_GRADE} either way)",
                source=source,
                line=number,
                field="grade",
            )
        docs = qrels.setdefault(qid, {})
        if doc in docs:
            raise InputError(
                f"document '{doc}' judged twice for query '{qid}'",
                source=source,
                line=number,
                field="doc_id",
            )
        docs[doc] = grade
    if not qrels:
        raise InputError("no qrels lines found", source=source)
    return qrels


def _parse_trec_run(text: str, source: str) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = {}
    for number, fields in _data_lines(text):
        if len(fields) < 6:  # trec_eval ignores anything after the tag
            raise InputError(
                f"expected 6 fields 'query_id Q0 doc_id rank score tag', got {len(fields)}",
                source=source,
                line=number,
            )
        qid, _, doc, _, score_text = fields[:5]
        try:
            score = float(score_text)
        except ValueError:
            raise InputError(
                f"'{score_text}' is not a number", source=source, line=number, field="score"
            ) from None
        if not math.isfinite(score):
            raise InputError(
                f"'{score_text}' is not a finite number", source=source, line=number, field="score"
            )
        docs = run.setdefault(qid, {})
        if doc in docs:
            raise InputError(
                f"document '{doc}' retrieved twice for query '{qid}'",
                source=source,
                line=number,
                field="doc_id",
            )
        docs[doc] = score
    if not run:
        raise InputError("no run lines found", source=source)
    return run


def _load_json(text: str, source: str) -> dict[str, object]:
    try:
        data = json_text.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"invalid JSON: {error.msg}", source=source, line=error.lineno) from None
    if not isinstance(data, dict):
        raise InputError("expected a JSON object keyed by query id", source=source)
    return data


def _qrels_from_json(text: str, source: str) -> dict[str, dict[str, int]]:
    data = _load_json(text, source)
    frame_rows: list[tuple[str, object, object]] = []
    for qid, docs in data.items():
        if not isinstance(docs, dict):
            raise InputError("expected {doc_id: grade}", source=f"{source} query '{qid}'")
        frame_rows.extend((qid, doc, grade) for doc, grade in docs.items())
    frame = pd.DataFrame(frame_rows, columns=["query_id", "doc_id", "relevance"], dtype=object)
    return qrels_from_frame(frame, source=source)


def _run_from_json(text: str, source: str) -> RunDict:
    data = _load_json(text, source)
    scored: dict[str, dict[str, float]] = {}
    ranked: dict[str, list[str]] = {}
    for qid, entry in data.items():
        if isinstance(entry, list) and all(isinstance(d, str) for d in entry):
            ranked[qid] = rank_documents(entry, query_id=qid)
        elif isinstance(entry, dict):
            rows = pd.DataFrame(
                [(qid, d, s) for d, s in entry.items()], columns=["query_id", "doc_id", "score"]
            )
            scored.update(run_from_frame(rows, source=f"{source} query '{qid}'"))  # type: ignore[arg-type]
        else:
            raise InputError(
                "expected a list of doc ids or {doc_id: score}", source=f"{source} query '{qid}'"
            )
    if scored and ranked:
        raise InputError("mixes ranked lists and score maps; use one form", source=source)
    return scored or ranked
