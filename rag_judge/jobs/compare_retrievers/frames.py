"""The frames of a retriever comparison: means with CIs, paired tests, per type, exclusions.

Pure functions from per-question values (one array per measure, aligned with the questions of
one relevance) to pandas frames; the statistics are :mod:`rag_judge.core.stats`'. Missing values
are ``<NA>`` in nullable columns (``Float64``, ``Int64``, ``boolean``), never NaN.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from rag_judge.core.stats import (
    bootstrap_mean_ci,
    mcnemar_exact,
    paired_bootstrap_ci,
    paired_randomization_test,
)

Values = dict[str, npt.NDArray[np.float64]]
"""Measure -> per-question values, aligned with the questions of one relevance."""
Scored = Mapping[tuple[str, str], Values]
"""``(retriever, relevance) -> Values``; a pair is absent when nothing could be scored."""
RELEVANCE: Final = ("id", "text")

SUMMARY_COLUMNS: Final = ["retriever", "relevance", "measure", "mean", "ci_low", "ci_high", "n"]
PAIRED_COLUMNS: Final = [
    *("retriever", "baseline", "relevance", "measure", "mean_baseline", "mean", "difference"),
    *("ci_low", "ci_high", "p_randomization", "binary", "p_mcnemar", "n"),
]
EXCLUDED_COLUMNS: Final = ["relevance", "query_id", "type", "reason", "detail"]
_FLOATS: Final = frozenset(
    {"mean", "ci_low", "ci_high", "mean_baseline", "difference", "p_randomization", "p_mcnemar"}
)


def summary_frame(
    names: Sequence[str],
    measures: Sequence[str],
    scored: Scored,
    not_applicable: str | None,
    *,
    confidence: float,
    n_resamples: int,
    seed: int,
) -> pd.DataFrame:
    """Mean and bootstrap CI per retriever, relevance and measure, with a status.

    The status is ``ok``, ``not applicable`` (text measures of a set without reference
    answers) or ``no questions`` (every question excluded); the numbers are NA unless ``ok``.
    """
    rows: list[dict[str, Any]] = []
    for name in names:
        for relevance in RELEVANCE:
            values = scored.get((name, relevance))
            status = "ok" if values else "no questions"
            if not values and relevance == "text" and not_applicable is not None:
                status = "not applicable"
            for measure in measures:
                row: dict[str, Any] = {"retriever": name, "relevance": relevance}
                row |= {"measure": measure, "n": 0, "status": status}
                if values:
                    ci = bootstrap_mean_ci(
                        values[measure], confidence=confidence, n_resamples=n_resamples, seed=seed
                    )
                    row |= {"mean": ci.estimate, "ci_low": ci.low, "ci_high": ci.high, "n": ci.n}
                rows.append(row)
    return typed_frame(rows, [*SUMMARY_COLUMNS, "status"], measures)


def paired_frame(
    names: Sequence[str],
    baseline: str,
    measures: Sequence[str],
    scored: Scored,
    *,
    confidence: float,
    n_resamples: int,
    seed: int,
) -> pd.DataFrame:
    """Each retriever minus the baseline on the same questions, measure by measure.

    Paired bootstrap CI of the mean difference, paired randomization (sign-flip) test, and
    McNemar's exact test when every value of both is 0 or 1 (``binary``; else p_mcnemar NA).
    """
    rows: list[dict[str, Any]] = []
    for name in names:
        for relevance in RELEVANCE:
            if name == baseline or (name, relevance) not in scored:
                continue
            for measure in measures:
                a, b = scored[baseline, relevance][measure], scored[name, relevance][measure]
                diff = paired_bootstrap_ci(
                    b, a, confidence=confidence, n_resamples=n_resamples, seed=seed
                )
                binary = is_binary(a) and is_binary(b)
                rows.append(
                    {
                        "retriever": name,
                        "baseline": baseline,
                        "relevance": relevance,
                        "measure": measure,
                        "mean_baseline": float(a.mean()),
                        "mean": float(b.mean()),
                        "difference": diff.estimate,
                        "ci_low": diff.low,
                        "ci_high": diff.high,
                        "p_randomization": paired_randomization_test(b, a, seed=seed).p_value,
                        "binary": binary,
                        "p_mcnemar": mcnemar_exact(b, a).p_value if binary else None,
                        "n": diff.n,
                    }
                )
    return typed_frame(rows, PAIRED_COLUMNS, measures)


def is_binary(values: npt.NDArray[np.float64]) -> bool:
    """True when every value is 0 or 1 (McNemar applies)."""
    return bool(np.isin(values, (0.0, 1.0)).all())


def per_query_frame(
    measures: Sequence[str],
    scored: Scored,
    question_ids: Mapping[str, Sequence[str]],
    types: Mapping[str, str],
) -> pd.DataFrame:
    """One row per retriever, relevance and scored question: its type and every value."""
    rows = [
        {"retriever": name, "relevance": relevance, "query_id": q, "type": types[q]}
        | {m: float(values[m][i]) for m in measures}
        for (name, relevance), values in scored.items()
        for i, q in enumerate(question_ids[relevance])
    ]
    return typed_frame(rows, ["retriever", "relevance", "query_id", "type", *measures], measures)


def by_type_frame(per_query: pd.DataFrame, measures: Sequence[str]) -> pd.DataFrame:
    """Mean of each measure and n per retriever, relevance and question type.

    Rows: by id first, then by text; within each, types by their number of questions
    (largest first, then by name), retrievers in their given order.
    """
    keys = ["retriever", "relevance", "type"]
    if per_query.empty:
        return typed_frame([], [*keys, "n", *measures], measures)
    grouped = per_query.groupby(keys, sort=False)
    frame = grouped[list(measures)].mean().reset_index()
    frame.insert(3, "n", grouped.size().to_numpy())
    sizes = per_query.drop_duplicates(["relevance", "query_id"])
    size = sizes.groupby(["relevance", "type"]).size()
    names = list(dict.fromkeys(per_query["retriever"]))
    frame["_order"] = [
        (RELEVANCE.index(r), -int(size[r, t]), t, names.index(n))
        for n, r, t in zip(frame["retriever"], frame["relevance"], frame["type"], strict=True)
    ]
    frame = frame.sort_values("_order").drop(columns="_order")
    records = [{str(k): v for k, v in row.items()} for row in frame.to_dict("records")]
    return typed_frame(records, [*keys, "n", *measures], measures)


def excluded_frame(
    excluded: Mapping[str, Mapping[str, tuple[str, str]]], types: Mapping[str, str]
) -> pd.DataFrame:
    """One row per excluded question and relevance: its reason and any detail."""
    rows = [
        {"relevance": relevance, "query_id": q, "type": types[q], "reason": why, "detail": detail}
        for relevance in RELEVANCE
        for q, (why, detail) in excluded.get(relevance, {}).items()
    ]
    return typed_frame(rows, EXCLUDED_COLUMNS, ())


def typed_frame(
    rows: Sequence[Mapping[str, Any]], columns: Sequence[str], measures: Sequence[str]
) -> pd.DataFrame:
    """Rows as a frame: ``n`` Int64, ``binary`` boolean, numbers Float64 (missing: NA)."""
    frame = pd.DataFrame.from_records(list(rows), columns=list(columns))
    for column in frame.columns:
        if column == "n":
            frame[column] = frame[column].astype("Int64")
        elif column == "binary":
            frame[column] = frame[column].astype("boolean")
        elif column in _FLOATS or column in measures:
            cells = [None if v is None or pd.isna(v) else float(v) for v in frame[column]]
            frame[column] = pd.array(cells, dtype="Float64")
    return frame
