"""Pass/fail decisions a CI build exits on, from one run's means or from NEW against BASE.

Two kinds of check:

- ``--fail-under faithfulness=0.8``: the mean (or, with ``on="ci_low"``, the lower end of its
  CI) must reach the bound;
- ``--fail-if-worse --margin 0.02``: fails only when the whole CI of NEW − BASE lies below
  −margin, so judge and sample noise do not fail a build; a drop the data cannot tell from
  noise passes, with its CI shown.

Exit statuses: 0 every check passed, 1 a check failed, 2 bad input.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from rag_judge.core.errors import InputError
from rag_judge.jobs.compare_scores.comparison import Mean, ScoreComparison, side_mean
from rag_judge.jobs.compare_scores.files import ScoreFile

GATE_FAILED = 1
"""Exit status when a check fails (0: all passed; 2: bad input)."""

GateOn = Literal["mean", "ci_low"]
"""What ``--fail-under`` compares with its bound: the mean, or its CI's lower end."""


@dataclass(frozen=True)
class Check:
    """One gate check and its outcome."""

    name: str
    """What was checked, e.g. ``faithfulness mean >= 0.800``."""
    passed: bool
    message: str
    """The figures behind the decision, one sentence."""


def parse_bounds(text: str) -> dict[str, float]:
    """``faithfulness=0.8,context_recall=0.7`` as metric → bound in [0, 1].

    Raises:
        InputError: a part without ``=``, an empty name, or a bound that is no number in [0, 1].
    """
    bounds: dict[str, float] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        name, sep, raw = part.partition("=")
        name = name.strip()
        if not sep or not name:
            raise InputError(f"expected METRIC=BOUND, got {part!r}", field="fail_under")
        try:
            bound = float(raw)
        except ValueError:
            raise InputError(
                f"{raw.strip()!r} is not a number", field=f"fail_under.{name}"
            ) from None
        if not 0.0 <= bound <= 1.0:
            raise InputError(f"must be in [0, 1], got {bound}", field=f"fail_under.{name}")
        bounds[name] = bound
    if not bounds:
        raise InputError("names no METRIC=BOUND", field="fail_under")
    return bounds


def fail_under_checks(
    means: Mapping[str, Mean], bounds: Mapping[str, float], *, on: GateOn = "mean"
) -> list[Check]:
    """One check per bound: the metric's mean (or CI low end) must reach it.

    Raises:
        InputError: a bound on a metric that was not judged.
    """
    checks = []
    for name, bound in bounds.items():
        if name not in means:
            raise InputError(
                f"no results for metric '{name}' (judged: {', '.join(means) or 'none'})",
                field=f"fail_under.{name}",
            )
        found = means[name]
        what = "mean" if on == "mean" else "CI lower bound"
        title = f"{name} {what} >= {bound:.3f}"
        if found.mean is None or found.ci is None:
            checks.append(Check(title, False, f"no row was scored (0 of {found.n})"))
            continue
        value = found.mean if on == "mean" else found.ci.low
        figures = (
            f"mean {found.mean:.3f} [{found.ci.low:.3f}, {found.ci.high:.3f}] over "
            f"{found.n_scored} of {found.n} rows"
        )
        passed = value >= bound
        verdict = "reaches" if passed else "is below"
        checks.append(Check(title, passed, f"{figures}: the {what} {verdict} {bound:.3f}"))
    return checks


def worse_checks(
    comparison: ScoreComparison, *, margin: float = 0.0, metrics: Sequence[str] | None = None
) -> list[Check]:
    """One check per metric: fails only when the CI of NEW − BASE lies wholly below −margin."""
    if margin < 0:
        raise InputError(f"must be >= 0, got {margin}", field="margin")
    checks = []
    for found in comparison.metrics:
        if metrics is not None and found.metric not in metrics:
            continue
        title = f"{found.metric} not worse than the baseline (margin {margin:.3f})"
        if found.difference is None:
            checks.append(Check(title, False, "no row was scored in both runs: nothing to compare"))
            continue
        ci = found.difference
        worse = ci.high < -margin
        figures = (
            f"NEW − BASE {ci.estimate:+.3f}, {comparison.confidence:.0%} CI "
            f"[{ci.low:+.3f}, {ci.high:+.3f}] over {found.n_paired} paired rows"
        )
        if worse:
            message = f"{figures}: the whole interval lies below −{margin:.3f}"
        elif ci.estimate < 0:
            message = f"{figures}: a drop the data cannot tell from noise"
        else:
            message = f"{figures}: no drop"
        checks.append(Check(title, not worse, message))
    return checks


def run_gate(
    new: ScoreFile,
    *,
    bounds: Mapping[str, float] | None = None,
    on: GateOn = "mean",
    comparison: ScoreComparison | None = None,
    margin: float = 0.0,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> list[Check]:
    """Every check asked for: ``bounds`` on NEW's means (all its scored rows), and, given a
    ``comparison`` with a baseline, "not worse" on each of its metrics."""
    checks: list[Check] = []
    if bounds:
        means = {
            name: side_mean(
                new.scores(name).rows, confidence=confidence, n_resamples=n_resamples, seed=seed
            )
            for name in bounds
            if name in new.metrics
        }
        checks += fail_under_checks(means, bounds, on=on)
    if comparison is not None:
        checks += worse_checks(comparison, margin=margin)
    return checks
