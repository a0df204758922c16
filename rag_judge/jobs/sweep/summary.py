"""Per-k aggregates with bootstrap CIs: every measure's mean over the questions it scored.

A judge's mean is over the answers it could score at that k (missing values are left out,
never zeroed) and says how many (``n_scored``); it describes the judge. The decision's objective
is not averaged this way: it counts every question at every k
(:mod:`~rag_judge.jobs.sweep.decision.outcomes`).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from rag_judge.core.stats import bootstrap_mean_ci

SUMMARY_COLUMNS = ("k", "metric", "mean", "ci_low", "ci_high", "n_scored", "n_questions")


def summarise(
    frame: pd.DataFrame,
    metrics: Sequence[str],
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> pd.DataFrame:
    """One row per (k, metric): mean, bootstrap CI, questions scored and questions in all."""
    rows = []
    for k, group in frame.groupby("k", sort=True):
        for metric in metrics:
            scored = group[metric].dropna().to_numpy(dtype=float)
            ci = (
                bootstrap_mean_ci(scored, confidence=confidence, n_resamples=n_resamples, seed=seed)
                if len(scored)
                else None
            )
            rows.append(
                {
                    "k": k,
                    "metric": metric,
                    "mean": None if ci is None else ci.estimate,
                    "ci_low": None if ci is None else ci.low,
                    "ci_high": None if ci is None else ci.high,
                    "n_scored": len(scored),
                    "n_questions": len(group),
                }
            )
    out = pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))
    return out.astype(dict.fromkeys(("mean", "ci_low", "ci_high"), "Float64"))
