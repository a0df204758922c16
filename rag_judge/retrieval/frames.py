"""Qrels and runs from pandas DataFrames, with the common column spellings accepted."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from rag_judge.core.errors import InputError

QUERY_COLUMNS = ("query_id", "qid", "query-id", "query")
DOC_COLUMNS = ("doc_id", "docno", "docid", "corpus-id", "doc", "chunk_id")
GRADE_COLUMNS = ("relevance", "grade", "gain", "rel", "label", "score")
SCORE_COLUMNS = ("score", "sim")
RANK_COLUMNS = ("rank",)
FILE_SUFFIX = " (file)"
"""Appended to ``source`` by the file readers: row labels are then file line numbers."""


MAX_GRADE = 2**31 - 1
"""The largest grade (in absolute value) qrels may give: trec_eval reads grades as C longs;
beyond this a grade is a typo, and one beyond 2^63 cannot be ranked at all."""


def pick_column(columns: Sequence[str], wanted: Sequence[str], *, what: str, source: str) -> str:
    """The first of ``wanted`` present in ``columns`` (case-insensitive), or a clear error."""
    lowered = {str(c).lower(): str(c) for c in columns}
    for name in wanted:
        if name in lowered:
            return lowered[name]
    raise InputError(
        f"no {what} column: expected one of {', '.join(wanted)}; "
        f"found {', '.join(map(str, columns))}",
        source=source,
    )


def qrels_from_frame(
    frame: pd.DataFrame, *, source: str = "qrels DataFrame"
) -> dict[str, dict[str, int]]:
    """``{qid: {doc_id: grade}}`` from a frame with query, document and grade columns."""
    cols = list(map(str, frame.columns))
    q = pick_column(cols, QUERY_COLUMNS, what="query id", source=source)
    d = pick_column(cols, DOC_COLUMNS, what="document id", source=source)
    g = pick_column(cols, GRADE_COLUMNS, what="relevance grade", source=source)
    out: dict[str, dict[str, int]] = {}
    for row, qid, doc, grade in zip(_rows(frame), frame[q], frame[d], frame[g], strict=True):
        value = _as_int(grade, source=source, row=row, field=g)
        docs = out.setdefault(str(qid), {})
        if str(doc) in docs:
            raise InputError(
                f"document '{doc}' judged twice for query '{qid}'", **_where(source, row)
            )
        docs[str(doc)] = value
    return out


def run_from_frame(
    frame: pd.DataFrame, *, source: str = "run DataFrame"
) -> dict[str, dict[str, float]] | dict[str, list[str]]:
    """A run from a frame with query and document columns plus a score or a rank column.

    With a score column the run is ``{qid: {doc: score}}`` (ranked by score, trec_eval ties);
    with only a rank column it is ``{qid: [doc, ...]}`` ordered by rank ascending.
    """
    cols = list(map(str, frame.columns))
    q = pick_column(cols, QUERY_COLUMNS, what="query id", source=source)
    d = pick_column(cols, DOC_COLUMNS, what="document id", source=source)
    lowered = {c.lower() for c in cols}
    if any(name in lowered for name in SCORE_COLUMNS):
        s = pick_column(cols, SCORE_COLUMNS, what="score", source=source)
        scored: dict[str, dict[str, float]] = {}
        rows = _rows(frame)
        for row, qid, doc, score in zip(rows, frame[q], frame[d], frame[s], strict=True):
            value = _as_float(score, source=source, row=row, field=s)
            _put(scored.setdefault(str(qid), {}), str(doc), value, qid, source, row)
        return scored
    r = pick_column(cols, RANK_COLUMNS, what="score or rank", source=source)
    by_rank: dict[str, list[tuple[float, str]]] = {}
    for row, qid, doc, rank in zip(_rows(frame), frame[q], frame[d], frame[r], strict=True):
        value = _as_float(rank, source=source, row=row, field=r)
        by_rank.setdefault(str(qid), []).append((value, str(doc)))
    return {qid: [doc for _, doc in sorted(pairs)] for qid, pairs in by_rank.items()}


def _rows(frame: pd.DataFrame) -> list[Any]:
    """Row labels for messages: file line numbers when read from a file, else index labels."""
    return list(frame.index)


def _where(source: str, row: Any) -> dict[str, Any]:
    """Point at a file line (frames the file readers built) or at a DataFrame row label."""
    if source.endswith(FILE_SUFFIX):
        return {"source": source.removesuffix(FILE_SUFFIX), "line": int(row)}
    return {"source": source, "row": row}


def _put(docs: dict[str, float], doc: str, value: float, qid: Any, source: str, row: Any) -> None:
    if doc in docs:
        raise InputError(f"document '{doc}' listed twice for query '{qid}'", **_where(source, row))
    docs[doc] = value


def _as_int(value: Any, *, source: str, row: Any, field: str) -> int:
    try:
        number = float(value)
        if not math.isfinite(number) or number != int(number):
            raise ValueError
        return int(number)
    except (TypeError, ValueError):
        raise InputError(
            f"{value!r} is not an integer grade", field=field, **_where(source, row)
        ) from None


def _as_float(value: Any, *, source: str, row: Any, field: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{value!r} is not a number", field=field, **_where(source, row)) from None
    if not math.isfinite(number):
        raise InputError(f"{value!r} is not a finite number", field=field, **_where(source, row))
    return number
