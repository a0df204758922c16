"""Compare two runs on the same queries: both means, the paired difference with its CI, tests."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from rag_judge.core.errors import InputError
from rag_judge.core.stats import (
    ConfidenceInterval,
    TestResult,
    mcnemar_exact,
    paired_bootstrap_ci,
    paired_randomization_test,
)
from rag_judge.retrieval.evaluate import evaluate
from rag_judge.retrieval.measure import Measure
from rag_judge.retrieval.ranking import Qrels, Run
from rag_judge.retrieval.result import EvalResult


@dataclass(frozen=True)
class MeasureComparison:
    """One measure compared between run A and run B over the same queries."""

    measure: Measure
    """The measure."""
    mean_a: float
    """Mean of run A over the compared queries."""
    mean_b: float
    """Mean of run B over the compared queries."""
    difference: ConfidenceInterval
    """mean(B - A) with its paired-bootstrap confidence interval."""
    randomization: TestResult
    """Paired randomization (sign-flip) test of mean(B - A) = 0."""
    mcnemar: TestResult | None
    """Exact McNemar test, for binary per-query measures (hit_rate@k, joint_recall@k)."""


@dataclass(frozen=True)
class RunComparison:
    """The comparison of two runs, measure by measure, on one shared set of queries."""

    rows: tuple[MeasureComparison, ...]
    """One row per measure, in the order asked for."""
    query_ids: tuple[str, ...]
    """The queries both runs were scored on."""
    dropped: Mapping[str, str] = field(default_factory=dict)
    """Query id -> why it is not in the comparison (evaluated for only one run, ...)."""

    def to_records(self) -> list[dict[str, Any]]:
        """One dict per measure; ``p_mcnemar`` is None where McNemar does not apply."""
        return [
            {
                "measure": row.measure.name,
                "mean_a": row.mean_a,
                "mean_b": row.mean_b,
                "diff_b_minus_a": row.difference.estimate,
                "ci_low": row.difference.low,
                "ci_high": row.difference.high,
                "confidence": row.difference.confidence,
                "p_randomization": row.randomization.p_value,
                "p_mcnemar": row.mcnemar.p_value if row.mcnemar else None,
                "n": row.difference.n,
            }
            for row in self.rows
        ]

    def to_dataframe(self) -> pd.DataFrame:
        """:meth:`to_records` as a frame; ``p_mcnemar`` stays an object column holding None."""
        records = self.to_records()
        frame = pd.DataFrame.from_records(records)
        frame["p_mcnemar"] = pd.Series([r["p_mcnemar"] for r in records], dtype=object)
        return frame


def compare_runs(
    qrels: Qrels | pd.DataFrame,
    run_a: Run | pd.DataFrame,
    run_b: Run | pd.DataFrame,
    measures: Iterable[str | Measure],
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
    **settings: Any,
) -> RunComparison:
    """Evaluate both runs with the same settings and compare them query by query.

    ``settings`` are passed to :func:`evaluate` (rel_level, missing, ...). Only queries
    evaluated for both runs are compared; the others are listed in ``dropped``.
    """
    measures = tuple(measures)
    a = evaluate(qrels, run_a, measures, **settings)
    b = evaluate(qrels, run_b, measures, **settings)
    shared, dropped = _shared_queries(a, b)
    if not shared:
        raise InputError("the two runs share no evaluated query; nothing to compare")
    rows = []
    for measure in a.measures:
        va, vb = _aligned(a, measure, shared), _aligned(b, measure, shared)
        rows.append(
            MeasureComparison(
                measure=measure,
                mean_a=float(va.mean()),
                mean_b=float(vb.mean()),
                difference=paired_bootstrap_ci(
                    vb, va, confidence=confidence, n_resamples=n_resamples, seed=seed
                ),
                randomization=paired_randomization_test(vb, va, seed=seed),
                mcnemar=mcnemar_exact(vb, va) if measure.is_binary else None,
            )
        )
    return RunComparison(rows=tuple(rows), query_ids=tuple(shared), dropped=dropped)


def _shared_queries(a: EvalResult, b: EvalResult) -> tuple[list[str], dict[str, str]]:
    in_b = set(b.query_ids)
    in_a = set(a.query_ids)
    shared = [q for q in a.query_ids if q in in_b]
    dropped = {q: f"run A: {a.excluded.get(q, 'not evaluated')}" for q in in_b - in_a}
    dropped |= {q: f"run B: {b.excluded.get(q, 'not evaluated')}" for q in in_a - in_b}
    return shared, dict(sorted(dropped.items()))


def _aligned(result: EvalResult, measure: Measure, query_ids: list[str]) -> Any:
    position = {q: i for i, q in enumerate(result.query_ids)}
    values = result.values[measure.name]
    return values[[position[q] for q in query_ids]]
