"""Which judged rows a person should label: a seeded sample of a score file's rows.

Every strategy offers scored rows only (a row whose value is None has nothing to calibrate
against) and is reproducible: the same rows, ``n``, strategy and seed give the same ids in the
same order (``numpy.random.default_rng(seed)``).

- ``random``: ``n`` rows uniformly, without replacement. Each row has the same chance, so the
  labelled rows are a simple random sample of the scored rows: every figure ``calibrate``
  reports (accuracy, κ, AUC, the mean human label, the prediction-powered estimate with
  ``--unlabelled``) estimates the whole file's, and its interval is valid.
- ``stratified``: the judge's value cut into equal-width bins over [0, 1] (5 by default) and
  as many rows from each bin as it has, up to an equal share (a bin's unused share is spread
  over the others), in shuffled order. Rare values (a judge that says 1.0 nine times in ten)
  get labelled too, which helps the reliability diagram, thresholds and AUC; but rows of sparse
  bins are over-represented, so a mean over the labelled rows (accuracy, the mean label, PPI)
  is biased towards them unless each row is weighted by its bin's share of the population.
- ``uncertain``: the rows whose probability (the claims' mean ``support_probability``, else
  the value) lies nearest the threshold, nearest first (ties broken by the seeded generator).
  Labels where the judge hesitates are the most informative for choosing a threshold or
  finding the judge's blind spots, but the sample is the hardest rows, not the file: every
  agreement figure is biased low and no population estimate (PPI included) is valid from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, get_args

import numpy as np

from rag_judge.core.errors import InputError
from rag_judge.data.score_file import JudgeRow

Strategy = Literal["random", "stratified", "uncertain"]
"""How :func:`sample_rows` picks rows."""

STRATEGIES: tuple[str, ...] = get_args(Strategy)
"""The strategies, in the order the command line lists them."""

BINS = 5
"""Equal-width bins of the judge's value over [0, 1] for ``stratified``."""


def scored(rows: Sequence[JudgeRow]) -> list[JudgeRow]:
    """The rows that have a value, in order: the only rows a sample offers."""
    return [row for row in rows if row.value is not None]


def sample_rows(
    rows: Sequence[JudgeRow],
    n: int,
    strategy: Strategy,
    seed: int,
    threshold: float = 0.5,
    *,
    bins: int = BINS,
) -> list[str]:
    """The ids of ``n`` scored rows picked by ``strategy`` (see the module docstring); all of
    them, in the strategy's order, when fewer than ``n`` rows are scored.

    Raises:
        InputError: ``n`` below 1, an unknown strategy, a threshold outside [0, 1], fewer than
            one bin, or no scored row at all.
    """
    if n < 1:
        raise InputError(f"the sample needs at least 1 row, got {n}", field="sample")
    if strategy not in STRATEGIES:
        raise InputError(
            f"unknown sampling strategy {strategy!r}: use {', '.join(STRATEGIES)}",
            field="strategy",
        )
    if not 0.0 <= threshold <= 1.0:
        raise InputError(f"the threshold lies in [0, 1], got {threshold}", field="threshold")
    if bins < 1:
        raise InputError(f"stratified sampling needs at least 1 bin, got {bins}", field="bins")
    offered = scored(rows)
    if not offered:
        raise InputError("no row has a value: there is nothing to sample", field="sample")
    rng = np.random.default_rng(seed)
    n = min(n, len(offered))
    if strategy == "random":
        picked = rng.choice(len(offered), size=n, replace=False)
    elif strategy == "stratified":
        picked = _stratified(offered, n, rng, bins)
    else:
        picked = _nearest(offered, n, rng, threshold)
    return [offered[int(i)].id for i in picked]


def bin_of(value: float, bins: int = BINS) -> int:
    """The 0-based equal-width bin of a value in [0, 1] (1.0 falls in the last bin)."""
    return min(int(value * bins), bins - 1)


def _stratified(rows: list[JudgeRow], n: int, rng: np.random.Generator, bins: int) -> np.ndarray:
    members: list[list[int]] = [[] for _ in range(bins)]
    for i, row in enumerate(rows):
        members[bin_of(row.value or 0.0, bins)].append(i)
    quota = bin_quotas([len(m) for m in members], n, rng)
    picked = [
        int(i)
        for bin_members, k in zip(members, quota, strict=True)
        for i in rng.choice(np.array(bin_members, dtype=int), size=k, replace=False)
    ]
    return rng.permutation(np.array(picked, dtype=int))


def bin_quotas(sizes: Sequence[int], n: int, rng: np.random.Generator) -> list[int]:
    """How many rows each bin gives: an equal share of ``n`` among the bins that still have
    rows, a bin's unused share spread over the others, the last few rows to bins drawn at
    random (so no bin is favoured by its position). ``n`` is at most ``sum(sizes)``."""
    quota = [0] * len(sizes)
    left = n
    while left > 0:
        open_bins = [b for b, size in enumerate(sizes) if quota[b] < size]
        share = left // len(open_bins)
        if share == 0:
            for b in rng.choice(np.array(open_bins, dtype=int), size=left, replace=False):
                quota[int(b)] += 1
            break
        for b in open_bins:
            given = min(share, sizes[b] - quota[b])
            quota[b] += given
            left -= given
    return quota


def _nearest(
    rows: list[JudgeRow], n: int, rng: np.random.Generator, threshold: float
) -> np.ndarray:
    probability = [row.value if row.probability is None else row.probability for row in rows]
    # rounded, so that 0.4 and 0.6 are equally near 0.5 despite floating point
    distance = np.round(np.abs(np.array(probability, dtype=float) - threshold), 12)
    tie_break = rng.random(len(rows))
    return np.lexsort((tie_break, distance))[:n]
