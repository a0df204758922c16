"""Prediction-powered inference (PPI) of the mean human label, as ARES uses it.

Humans label a small set of n rows; the judge scores those and a large set of N unlabelled
rows from the same distribution (the two sets disjoint). With f the judge's prediction and y
the human label (Angelopoulos et al. 2023, "Prediction-powered inference", Science 382):

    θ̂_PP = mean(f(U)) − mean(f(L) − y(L))

    θ̂_PP ± z_{1−α/2} · √( s²(f(U)) / N + s²(f(L) − y(L)) / n )

The second term, the *rectifier*, removes the judge's bias as measured on the labelled rows;
the interval is the normal (CLT) interval of the sum of two independent means, with sample
variances s² (ddof = 1). The classical, human-only interval is
mean(y(L)) ± z_{1−α/2} · s(y(L)) / √n. PPI's interval is narrower when the judge's errors
f − y vary less than the labels y do. Intervals are not clipped to the label range.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
from numpy.typing import ArrayLike

from rag_judge.calibration._inputs import as_pair, as_values
from rag_judge.core.errors import InputError
from rag_judge.core.stats import ConfidenceInterval, check_confidence


@dataclass(frozen=True)
class PpiResult:
    """The PPI estimate of the mean human label and, for comparison, the human-only one."""

    ppi: ConfidenceInterval
    """θ̂_PP with its CLT interval; ``n`` counts labelled plus unlabelled rows."""
    classical: ConfidenceInterval
    """mean(y(L)) with its CLT interval from the labelled rows only."""
    rectifier: float
    """mean(f(L) − y(L)): how much the judge overstates the label mean on the labelled rows."""
    n_labelled: int
    """Rows with a human label (and a judge prediction)."""
    n_unlabelled: int
    """Rows with only a judge prediction."""


def ppi_mean(
    labelled_human: ArrayLike,
    labelled_judge: ArrayLike,
    unlabelled_judge: ArrayLike,
    *,
    confidence: float = 0.95,
) -> PpiResult:
    """PPI estimate and interval of the mean human label (formulas in the module docstring).

    Args:
        labelled_human: Human labels y(L) (0/1 for a pass rate, or any numbers).
        labelled_judge: Judge predictions f(L) on the same rows, in the same order.
        unlabelled_judge: Judge predictions f(U) on rows no human labelled.
        confidence: Nominal coverage, strictly between 0 and 1.

    Returns:
        The PPI interval, the classical interval, the rectifier and the two sample sizes.

    Raises:
        InputError: If an input is empty or not finite, the labelled inputs differ in length,
            either set has fewer than 2 rows (no variance), or ``confidence`` is out of range.
    """
    check_confidence(confidence)
    y, f_labelled = as_pair(labelled_human, labelled_judge, ("labelled_human", "labelled_judge"))
    f_unlabelled = as_values(unlabelled_judge, "unlabelled_judge")
    for size, field in ((y.size, "labelled_human"), (f_unlabelled.size, "unlabelled_judge")):
        if size < 2:
            raise InputError(
                f"need at least 2 rows to estimate a variance, got {size}", field=field
            )
    n, big_n = int(y.size), int(f_unlabelled.size)
    z = NormalDist().inv_cdf(1.0 - (1.0 - confidence) / 2.0)
    errors = f_labelled - y
    rectifier = float(np.mean(errors))
    estimate = float(np.mean(f_unlabelled)) - rectifier
    half = z * math.sqrt(
        float(np.var(f_unlabelled, ddof=1)) / big_n + float(np.var(errors, ddof=1)) / n
    )
    human_mean = float(np.mean(y))
    human_half = z * math.sqrt(float(np.var(y, ddof=1)) / n)
    return PpiResult(
        ppi=ConfidenceInterval(
            estimate=estimate,
            low=estimate - half,
            high=estimate + half,
            confidence=float(confidence),
            n=n + big_n,
            method=f"prediction-powered inference, CLT interval ({n} labelled, {big_n} unlabelled)",
        ),
        classical=ConfidenceInterval(
            estimate=human_mean,
            low=human_mean - human_half,
            high=human_mean + human_half,
            confidence=float(confidence),
            n=n,
            method=f"classical CLT interval of the human label mean ({n} labelled)",
        ),
        rectifier=rectifier,
        n_labelled=n,
        n_unlabelled=big_n,
    )
