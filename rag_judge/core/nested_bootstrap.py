"""Intervals for rows judged several times: a two-level bootstrap (rows, then repeats).

With ``--repeats N`` every row has N judge values. Their spread within a row is the judge's own
noise; the spread of the row means is the sample's. Resampling rows with replacement and then,
within each chosen row, its repeats with replacement gives an interval that carries both
(Davison & Hinkley 1997, §3.8, "resample both stages"). It errs on the wide side: its variance
is about σ²_rows/n + (2 − 1/R)·σ²_judge/(nR) against the true σ²_rows/n + σ²_judge/(nR), so a
gate built on it fails a build less often, never more. Rows may have different numbers of
repeats (a failed repeat is left out, not counted as 0).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rag_judge.core.errors import InputError
from rag_judge.core.stats import ConfidenceInterval

Groups = Sequence[Sequence[float]]
"""Per row, its values over the repeats (at least one each)."""

_BATCH = 250
"""Resamples drawn at once (bounds memory at batch × rows × repeats floats)."""


@dataclass(frozen=True)
class Spread:
    """The judge's own run-to-run spread on one metric."""

    sd: float
    """Pooled within-row standard deviation of the repeats."""
    n_rows: int
    """Rows with at least two repeats (the others say nothing of the spread)."""


def _matrix(groups: Groups, name: str) -> tuple[np.ndarray, np.ndarray]:
    if not groups:
        raise InputError("no rows", field=name)
    counts = np.array([len(g) for g in groups])
    if (counts < 1).any():
        raise InputError("every row needs at least one value", field=name)
    padded = np.zeros((len(groups), int(counts.max())))
    for i, group in enumerate(groups):
        values = np.asarray(group, dtype=float)
        if not np.isfinite(values).all():
            raise InputError(f"row {i} holds a value that is not finite", field=name)
        padded[i, : len(values)] = values
    return padded, counts


def _resampled_row_means(
    x: np.ndarray, counts: np.ndarray, rows: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """(batch, n) means of each chosen row's repeats, themselves resampled."""
    chosen = counts[rows]  # (batch, n)
    width = x.shape[1]
    draws = np.floor(rng.random((*rows.shape, width)) * chosen[..., None]).astype(int)
    picked = x[rows[..., None], draws]
    mask = np.arange(width) < chosen[..., None]
    return np.asarray((picked * mask).sum(axis=-1) / chosen, dtype=float)


def two_level_bootstrap_ci(
    groups: Groups, *, confidence: float = 0.95, n_resamples: int = 2000, seed: int = 0
) -> ConfidenceInterval:
    """The mean of the row means, with a two-level percentile-bootstrap interval."""
    x, counts = _matrix(groups, "values")
    rng = np.random.default_rng(seed)
    n = len(counts)
    means = []
    for start in range(0, n_resamples, _BATCH):
        rows = rng.integers(0, n, size=(min(_BATCH, n_resamples - start), n))
        means.append(_resampled_row_means(x, counts, rows, rng).mean(axis=1))
    estimate = float(np.mean([x[i, : counts[i]].mean() for i in range(n)]))
    return _interval(estimate, np.concatenate(means), confidence, n, n_resamples, seed)


def paired_two_level_bootstrap_ci(
    a: Groups, b: Groups, *, confidence: float = 0.95, n_resamples: int = 2000, seed: int = 0
) -> ConfidenceInterval:
    """mean(a − b) of the paired rows' means: rows resampled together, each side's repeats
    resampled within its row."""
    xa, ca = _matrix(a, "a")
    xb, cb = _matrix(b, "b")
    if len(ca) != len(cb):
        raise InputError(f"{len(ca)} rows against {len(cb)}: rows must pair", field="b")
    rng = np.random.default_rng(seed)
    n = len(ca)
    diffs = []
    for start in range(0, n_resamples, _BATCH):
        rows = rng.integers(0, n, size=(min(_BATCH, n_resamples - start), n))
        left = _resampled_row_means(xa, ca, rows, rng)
        right = _resampled_row_means(xb, cb, rows, rng)
        diffs.append((left - right).mean(axis=1))
    estimate = float(np.mean([xa[i, : ca[i]].mean() - xb[i, : cb[i]].mean() for i in range(n)]))
    return _interval(estimate, np.concatenate(diffs), confidence, n, n_resamples, seed)


def within_spread(groups: Groups) -> Spread | None:
    """The pooled within-row SD over rows with two or more repeats (None when none has)."""
    squares, freedom, rows = 0.0, 0, 0
    for group in groups:
        if len(group) >= 2:
            values = np.asarray(group, dtype=float)
            squares += float(((values - values.mean()) ** 2).sum())
            freedom += len(values) - 1
            rows += 1
    if not freedom:
        return None
    return Spread(math.sqrt(squares / freedom), rows)


def _interval(
    estimate: float, resampled: np.ndarray, confidence: float, n: int, n_resamples: int, seed: int
) -> ConfidenceInterval:
    if not 0.0 < confidence < 1.0:
        raise InputError(f"must be strictly between 0 and 1, got {confidence}", field="confidence")
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(resampled, [tail, 1.0 - tail])
    return ConfidenceInterval(
        estimate=estimate,
        low=min(float(low), estimate),
        high=max(float(high), estimate),
        confidence=confidence,
        n=n,
        method=f"two-level percentile bootstrap, rows then repeats ({n_resamples} resamples, "
        f"seed {seed})",
    )
