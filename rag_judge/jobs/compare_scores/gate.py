"""Pass/fail decisions a CI build exits on, from one run's means or from NEW against BASE.

Two kinds of check:

- ``--fail-under faithfulness=0.8``: the mean (or, with ``on="ci_low"``, the lower end of its
  CI) must reach the bound;
- ``--fail-if-worse --margin 0.02``: fails only when the whole CI of NEW − BASE lies below
  −margin, so judge and sample noise do not fail a build; a drop the data cannot tell from
  noise passes, with its CI shown.

Either kind adds, per gated metric, a check that every row was judged: a row whose model call
failed (after its retries) has no value, and a mean over the rest could pass a build that an
outage emptied. ``allow_unjudged`` (``--allow-unjudged``) lets such a check pass, still counted.

Exit statuses: 0 every check passed, 1 a check failed, 2 bad input.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from rag_judge.core.errors import InputError
from rag_judge.core.types import FAILED_STATUSES
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


def judged_checks(
    files: Mapping[str, ScoreFile], metrics: Sequence[str], *, allow_unjudged: bool = False
) -> list[Check]:
    """One check per gated metric: no row of these files (label → file) lacks its result
    because a model call failed, or lacks the metric altogether. Rows with nothing to judge
    (``no_claims``, ``missing_input``, ``noncommittal``) are not failures of the run."""
    checks = []
    for metric in metrics:
        counted: list[str] = []
        unjudged: list[str] = []
        for label, file in files.items():
            if metric not in file.metrics:
                continue
            scores = file.scores(metric)
            failed = [row for row in scores.rows if row.status in FAILED_STATUSES]
            total = len(scores.rows) + len(scores.not_judged)
            counted.append(f"{label} {total - len(failed) - len(scores.not_judged)} of {total}")
            if not failed and not scores.not_judged:
                continue
            statuses: dict[str, int] = {}
            for row in failed:
                statuses[row.status] = statuses.get(row.status, 0) + 1
            if scores.not_judged:
                statuses["no result"] = len(scores.not_judged)
            first = failed[0].id if failed else scores.not_judged[0]
            listed = ", ".join(f"{status} {n}" for status, n in sorted(statuses.items()))
            unjudged.append(
                f"{sum(statuses.values())} of {total} rows of {label} could not be judged "
                f"({listed}; first: {first!r})"
            )
        title = f"{metric} judged on every gated row"
        if not unjudged:
            checks.append(Check(title, True, f"rows judged: {', '.join(counted)}"))
            continue
        message = "; ".join(unjudged)
        if allow_unjudged:
            message += ": allowed by --allow-unjudged"
        else:
            message += (
                ": a gate on the other rows could pass what an outage emptied; re-run (the "
                "cache keeps what was judged) or pass --allow-unjudged"
            )
        checks.append(Check(title, allow_unjudged, message))
    return checks


@dataclass(frozen=True)
class Gate:
    """What a gate checks: bounds on the means (or their CIs' lower ends), "not worse" within a
    margin, and whether rows that could not be judged may pass."""

    bounds: Mapping[str, float] | None = None
    """``--fail-under``: metric → the bound its mean must reach."""
    on: GateOn = "mean"
    """``--gate-on``: the mean, or its CI's lower end."""
    margin: float = 0.0
    """``--margin``: a drop counts only when the whole CI lies below −margin."""
    allow_unjudged: bool = False
    """``--allow-unjudged``: rows that could not be judged are counted, and do not fail it."""


def run_gate(
    new: ScoreFile,
    gate: Gate = Gate(),
    *,
    comparison: ScoreComparison | None = None,
    base: ScoreFile | None = None,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> list[Check]:
    """Every check ``gate`` asks for: its bounds on NEW's means (all its scored rows), and,
    given a ``comparison`` with a baseline, "not worse" on each of its metrics; before them,
    that every gated row of NEW (and of ``base``, for the comparison's metrics) was judged."""
    bounds, on, margin, allow_unjudged = gate.bounds, gate.on, gate.margin, gate.allow_unjudged
    gated = [m for m in (bounds or {}) if m in new.metrics]
    compared = [c.metric for c in comparison.metrics] if comparison is not None else []
    files = {"NEW": new} if base is None or not compared else {"NEW": new, "BASE": base}
    checks: list[Check] = judged_checks(
        {"NEW": new}, [m for m in gated if m not in compared], allow_unjudged=allow_unjudged
    )
    checks += judged_checks(files, compared, allow_unjudged=allow_unjudged)
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
