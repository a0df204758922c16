"""Why neither fewer nor more passages: the two sides of the best k, read from the sweep's means.

Below the best k the answer is often not among the passages: the share of questions with a
relevant passage in the top k (hit rate) and the judges that need the answer in the context
(``moved_by="missing_passages"``: completeness, context recall) say how often. Above it the
extra passages mostly do not answer: precision says how many of the k do, and the judges that
noise can mislead (``moved_by="noise"``: faithfulness, answer relevancy, noise sensitivity) say
what the answers did with them. Each sentence states measured means at the two ks it compares,
and only for measures the sweep has.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from rag_judge.judges import JUDGES

HIT_RATE = ("text_hit_rate", "doc_hit_rate")
"""Relevance by answer text first (what the generator needs), else by document id."""
PRECISION = ("text_precision", "doc_precision")
Means = dict[int, dict[str, float]]
"""``k -> {metric: mean}``, measured values only."""


def _moved_by(cause: str) -> tuple[str, ...]:
    """The judges that ``cause`` moves (``missing_passages`` or ``noise``), in registry order."""
    return tuple(name for name, judge in JUDGES.items() if judge.moved_by == cause)


def read_sides(summary: pd.DataFrame, best_k: int) -> list[str]:
    """At most two sentences: the smallest k against ``best_k``, and the largest against it.

    ``summary`` has one row per (k, metric) with its ``mean`` (``SweepResult.summary()``).

    >>> summary = pd.DataFrame(
    ...     [(k, m, v) for k, row in {
    ...         1: {"text_hit_rate": 0.6, "text_precision": 0.6, "completeness": 0.5},
    ...         3: {"text_hit_rate": 0.9, "text_precision": 0.4, "completeness": 0.8},
    ...         10: {"text_hit_rate": 1.0, "text_precision": 0.15, "completeness": 0.7},
    ...     }.items() for m, v in row.items()],
    ...     columns=["k", "metric", "mean"],
    ... )
    >>> for sentence in read_sides(summary, 3):
    ...     print(sentence)
    Fewer passages (k=1): a relevant passage was among them for 60% of the questions (90% at k=3); completeness 0.50 (0.80 at k=3).
    More passages (k=10): 0.15 of them were relevant (0.40 at k=3), so about 8.5 of the 10 held no answer; completeness 0.70 (0.80 at k=3).
    """  # noqa: E501
    means = _means(summary)
    ks = sorted(means)
    sentences = []
    if ks and ks[0] < best_k:
        sentences.append(_small(means, ks[0], best_k))
    if ks and ks[-1] > best_k:
        sentences.append(_large(means, ks[-1], best_k))
    return [s for s in sentences if s]


def _means(summary: pd.DataFrame) -> Means:
    out: Means = {}
    for k, metric, value in zip(summary["k"], summary["metric"], summary["mean"], strict=True):
        if value is None or pd.isna(value):
            continue
        out.setdefault(int(k), {})[str(metric)] = float(value)
    return out


def _pair(means: Means, names: Sequence[str], k: int, best: int) -> str | None:
    """The first of ``names`` measured at both ks."""
    return next((n for n in names if n in means[k] and n in means.get(best, {})), None)


def _judges(means: Means, names: Sequence[str], k: int, best: int) -> str:
    parts = [
        f"{JUDGES[n].label} {means[k][n]:.2f} ({means[best][n]:.2f} at k={best})"
        for n in names
        if n in means[k] and n in means.get(best, {})
    ]
    return "; ".join(parts)


def _small(means: Means, k: int, best: int) -> str:
    clauses = []
    if (hit := _pair(means, HIT_RATE, k, best)) is not None:
        clauses.append(
            f"a relevant passage was among them for {means[k][hit]:.0%} of the questions "
            f"({means[best][hit]:.0%} at k={best})"
        )
    if judges := _judges(means, _moved_by("missing_passages"), k, best):
        clauses.append(judges)
    return f"Fewer passages (k={k}): {'; '.join(clauses)}." if clauses else ""


def _large(means: Means, k: int, best: int) -> str:
    clauses = []
    if (precision := _pair(means, PRECISION, k, best)) is not None:
        share = means[k][precision]
        clauses.append(
            f"{share:.2f} of them were relevant ({means[best][precision]:.2f} at k={best}), so "
            f"about {k * (1 - share):.1f} of the {k} held no answer"
        )
    if judges := _judges(means, (*_moved_by("noise"), *_moved_by("missing_passages")), k, best):
        clauses.append(judges)
    return f"More passages (k={k}): {'; '.join(clauses)}." if clauses else ""
