"""NEW against BASE, per metric, over the rows both scored: a paired comparison.

Rows are joined by id. Only rows scored on both sides (``status == "ok"`` in each) are
compared; the rest are listed with their statuses (present in one file only, or scored on one
side only), never dropped silently. Per metric: both means over the paired rows, NEW − BASE
with a paired-bootstrap CI and a paired randomization p, McNemar on the pass/fail verdicts
(value >= threshold), and the rows that changed most with their claims side by side.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rag_judge.calibration.judge_scores import ClaimScore, JudgeRow
from rag_judge.core.errors import InputError
from rag_judge.core.nested_bootstrap import Spread, paired_two_level_bootstrap_ci, within_spread
from rag_judge.core.stats import (
    ConfidenceInterval,
    TestResult,
    bootstrap_mean_ci,
    mcnemar_exact,
    paired_bootstrap_ci,
    paired_randomization_test,
)
from rag_judge.data import score_file
from rag_judge.jobs.compare_scores.files import ScoreFile

DEFAULT_THRESHOLD = 0.5
"""A row passes a metric when its value is at least this (McNemar's verdicts)."""


@dataclass(frozen=True)
class Unpaired:
    """A row that could not be compared on a metric, and why."""

    id: str
    base_status: str | None
    """Its status in BASE; None when BASE has no such row (or no result for the metric)."""
    new_status: str | None
    """Its status in NEW; None when NEW has no such row (or no result for the metric)."""


@dataclass(frozen=True)
class RowChange:
    """One paired row whose value moved, with what the judge found on each side."""

    id: str
    question: str
    base: float
    new: float
    base_claims: tuple[ClaimScore, ...]
    new_claims: tuple[ClaimScore, ...]
    base_answer: str = ""
    """The row's answer in BASE ("" when it has none): what a metric with no claims, such as
    exact match, compared."""
    new_answer: str = ""
    """The row's answer in NEW."""

    @property
    def change(self) -> float:
        """NEW − BASE."""
        return self.new - self.base


@dataclass(frozen=True)
class Mean:
    """One side's mean over every row it scored (paired or not), with its CI."""

    mean: float | None
    ci: ConfidenceInterval | None
    n_scored: int
    n: int


@dataclass(frozen=True)
class MetricComparison:
    """One metric: BASE and NEW over their paired rows, and what could not be paired."""

    metric: str
    n_paired: int
    base_mean: float | None
    """BASE's mean over the paired rows (None when none paired)."""
    new_mean: float | None
    difference: ConfidenceInterval | None
    """mean(NEW − BASE) over the paired rows, with its paired-bootstrap CI."""
    randomization: TestResult | None
    """Paired randomization (sign-flip) test of mean(NEW − BASE) = 0."""
    mcnemar: TestResult | None
    """Exact McNemar on pass/fail at ``threshold`` (NEW as ``a``): :attr:`fixed` and
    :attr:`broken` are its discordant counts."""
    threshold: float
    unpaired: tuple[Unpaired, ...]
    changed: tuple[RowChange, ...]
    """The paired rows that moved, largest change first (at most ``top``)."""
    base_all: Mean
    new_all: Mean
    base_spread: Spread | None = None
    """BASE's judge run-to-run spread, when it was judged with repeats."""
    new_spread: Spread | None = None
    """NEW's judge run-to-run spread, when it was judged with repeats (then, with BASE's,
    :attr:`difference` is a two-level bootstrap: rows, then repeats)."""

    @property
    def fixed(self) -> int:
        """Paired rows that fail in BASE and pass in NEW."""
        return 0 if self.mcnemar is None or self.mcnemar.b is None else self.mcnemar.b

    @property
    def broken(self) -> int:
        """Paired rows that pass in BASE and fail in NEW."""
        return 0 if self.mcnemar is None or self.mcnemar.c is None else self.mcnemar.c


@dataclass(frozen=True)
class ScoreComparison:
    """NEW against BASE on every compared metric."""

    base: str
    new: str
    metrics: tuple[MetricComparison, ...]
    only_base: tuple[str, ...]
    """Row ids in BASE only."""
    only_new: tuple[str, ...]
    """Row ids in NEW only."""
    confidence: float

    def metric(self, name: str) -> MetricComparison:
        """The comparison of one metric."""
        for found in self.metrics:
            if found.metric == name:
                return found
        raise KeyError(name)


def compare_scores(
    base: ScoreFile,
    new: ScoreFile,
    metrics: Sequence[str] | None = None,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    top: int = 10,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> ScoreComparison:
    """Compare NEW with BASE on ``metrics`` (default: every metric both files hold).

    Raises:
        InputError: a metric that one of the files does not hold, no metric in common, a
            threshold outside [0, 1], or a malformed row (naming the file, line and field).
    """
    if not 0.0 <= threshold <= 1.0:
        raise InputError(f"must be in [0, 1], got {threshold!r}", field="threshold")
    names = _metrics(base, new, metrics)
    base_ids = [str(r.get(score_file.ID)) for _, r in base.rows]
    new_ids = [str(r.get(score_file.ID)) for _, r in new.rows]
    questions = {**base.questions(), **new.questions()}
    answers = (base.texts(score_file.ANSWER), new.texts(score_file.ANSWER))
    options = {"confidence": confidence, "n_resamples": n_resamples, "seed": seed}
    compared = tuple(
        _compare_metric(base, new, name, (questions, answers), threshold, top, options)
        for name in names
    )
    return ScoreComparison(
        base=base.source,
        new=new.source,
        metrics=compared,
        only_base=tuple(i for i in base_ids if i not in set(new_ids)),
        only_new=tuple(i for i in new_ids if i not in set(base_ids)),
        confidence=confidence,
    )


def side_mean(rows: Sequence[JudgeRow], *, confidence: float, n_resamples: int, seed: int) -> Mean:
    """The mean of the scored rows with its bootstrap CI (None when none was scored)."""
    values = [r.value for r in rows if r.value is not None]
    if not values:
        return Mean(None, None, 0, len(rows))
    ci = bootstrap_mean_ci(values, confidence=confidence, n_resamples=n_resamples, seed=seed)
    return Mean(ci.estimate, ci, len(values), len(rows))


def _metrics(base: ScoreFile, new: ScoreFile, asked: Sequence[str] | None) -> list[str]:
    if asked:
        for name in asked:
            for side in (base, new):
                if name not in side.metrics:
                    raise InputError(
                        f"no row has results for metric '{name}' (metrics found: "
                        f"{', '.join(side.metrics) or 'none'})",
                        source=side.source,
                        field="metrics",
                    )
        return list(asked)
    common = [m for m in base.metrics if m in new.metrics]
    if not common:
        raise InputError(
            f"the files share no metric ({base.source}: {', '.join(base.metrics) or 'none'}; "
            f"{new.source}: {', '.join(new.metrics) or 'none'})",
            field="metrics",
        )
    return common


def _compare_metric(
    base: ScoreFile,
    new: ScoreFile,
    name: str,
    texts: tuple[dict[str, str], tuple[dict[str, str], dict[str, str]]],
    threshold: float,
    top: int,
    options: dict[str, float | int],
) -> MetricComparison:
    questions, (base_answers, new_answers) = texts
    before, after = base.scores(name), new.scores(name)
    old_rows, new_rows = before.by_id(), after.by_id()
    ids = list(dict.fromkeys([*old_rows, *new_rows]))
    paired: list[tuple[JudgeRow, JudgeRow]] = []
    unpaired: list[Unpaired] = []
    for id_ in ids:
        old, now = old_rows.get(id_), new_rows.get(id_)
        if old is not None and now is not None and old.value is not None and now.value is not None:
            paired.append((old, now))
        else:
            unpaired.append(
                Unpaired(
                    id_, None if old is None else old.status, None if now is None else now.status
                )
            )
    confidence, n_resamples, seed = (
        float(options["confidence"]),
        int(options["n_resamples"]),
        int(options["seed"]),
    )
    base_all = side_mean(before.rows, confidence=confidence, n_resamples=n_resamples, seed=seed)
    new_all = side_mean(after.rows, confidence=confidence, n_resamples=n_resamples, seed=seed)
    if not paired:
        return MetricComparison(
            name, 0, None, None, None, None, None, threshold, tuple(unpaired), (), base_all, new_all
        )
    a = np.array([now.value for _, now in paired], dtype=float)
    b = np.array([old.value for old, _ in paired], dtype=float)
    difference = paired_bootstrap_ci(
        a, b, confidence=confidence, n_resamples=n_resamples, seed=seed
    )
    base_spread = new_spread = None
    old_groups, new_groups = base.repeat_groups(name), new.repeat_groups(name)
    if old_groups is not None and new_groups is not None:
        pairs = [(new_groups.get(o.id) or [], old_groups.get(o.id) or []) for o, _ in paired]
        if all(left and right for left, right in pairs):
            difference = paired_two_level_bootstrap_ci(
                [left for left, _ in pairs],
                [right for _, right in pairs],
                confidence=confidence,
                n_resamples=n_resamples,
                seed=seed,
            )
            new_spread = within_spread([left for left, _ in pairs])
            base_spread = within_spread([right for _, right in pairs])
            a = np.array([np.mean(left) for left, _ in pairs])  # rows' means over repeats
            b = np.array([np.mean(right) for _, right in pairs])
    randomization = paired_randomization_test(a, b, seed=seed)
    mcnemar = mcnemar_exact((a >= threshold).astype(float), (b >= threshold).astype(float))
    moved = sorted(
        (p for p in paired if p[0].value != p[1].value),
        key=lambda p: (-abs((p[1].value or 0.0) - (p[0].value or 0.0)), p[0].id),
    )[:top]
    changed = tuple(
        RowChange(
            old.id,
            questions.get(old.id, ""),
            float(old.value or 0.0),
            float(now.value or 0.0),
            old.claims,
            now.claims,
            base_answers.get(old.id, ""),
            new_answers.get(old.id, ""),
        )
        for old, now in moved
    )
    return MetricComparison(
        metric=name,
        n_paired=len(paired),
        base_mean=float(b.mean()),
        new_mean=float(a.mean()),
        difference=difference,
        randomization=randomization,
        mcnemar=mcnemar,
        threshold=threshold,
        unpaired=tuple(unpaired),
        changed=changed,
        base_all=base_all,
        new_all=new_all,
        base_spread=base_spread,
        new_spread=new_spread,
    )
