"""What the gate options of ``score`` and ``compare-scores`` do, and how a gate ends a command."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from rag_judge.cli.records import GateArgs
    from rag_judge.jobs.compare_scores.files import ScoreFile
    from rag_judge.jobs.compare_scores.gate import Check, GateOn


def finish_gate(checks: Sequence[Check], junit: Path | None) -> None:
    """Print each check on stderr, write the JUnit file, and exit 1 if any check failed."""
    from rag_judge.jobs.compare_scores.gate import GATE_FAILED
    from rag_judge.report.junit import write_junit

    for check in checks:
        click.echo(
            f"gate: {'pass' if check.passed else 'FAIL'} {check.name}: {check.message}", err=True
        )
    if junit is not None:
        write_junit(junit, checks)
    if any(not c.passed for c in checks):
        sys.exit(GATE_FAILED)


@dataclass(frozen=True)
class ScoreGate:
    """``score``'s gate, checked before any model call and run on the finished results."""

    bounds: Mapping[str, float] | None
    on: str
    baseline: ScoreFile | None
    margin: float
    allow_unjudged: bool

    @classmethod
    def check(cls, metrics: Sequence[str], gate: GateArgs, baseline: Path | None) -> ScoreGate:
        """The gate asked for, with its bounds and baseline read now: bad input fails before
        the first model call, not after the judging."""
        from rag_judge.core.errors import InputError
        from rag_judge.jobs.compare_scores.files import read_score_file
        from rag_judge.jobs.compare_scores.gate import parse_bounds

        bounds = parse_bounds(gate.fail_under) if gate.fail_under is not None else None
        for name in bounds or {}:
            if name not in metrics:
                raise InputError(
                    f"--fail-under names '{name}', which this run does not judge "
                    f"(--metrics: {', '.join(metrics)})",
                    field=f"fail_under.{name}",
                )
        if gate.fail_if_worse and baseline is None:
            raise click.UsageError("--fail-if-worse needs --baseline BASE.jsonl")
        if baseline is not None and not gate.fail_if_worse:
            raise click.UsageError("--baseline is compared by --fail-if-worse; give both")
        base = read_score_file(baseline) if baseline is not None else None
        if base is not None:
            shared = [m for m in metrics if m in base.metrics]
            if not shared:
                raise InputError(
                    f"is not a score file of these metrics: it holds results for "
                    f"{', '.join(base.metrics) or 'none'}; this run judges {', '.join(metrics)}",
                    source=str(baseline),
                    field="--baseline",
                )
            for name in shared:  # every value checked now, not after the judging
                base.scores(name)
        return cls(bounds, gate.gate_on, base, gate.margin, gate.allow_unjudged)

    @property
    def asked(self) -> bool:
        """True when any check was asked for."""
        return bool(self.bounds) or self.baseline is not None

    def checks(self, records: Iterable[Mapping[str, Any]], source: str) -> list[Check]:
        """The checks on this run's records (and against the baseline on the metrics both have)."""
        from rag_judge.jobs.compare_scores.comparison import compare_scores
        from rag_judge.jobs.compare_scores.files import score_records
        from rag_judge.jobs.compare_scores.gate import Gate, run_gate

        new = score_records(records, source)
        comparison = None
        if self.baseline is not None:
            comparison = compare_scores(self.baseline, new)
        on: GateOn = "ci_low" if self.on == "ci-low" else "mean"
        gate = Gate(self.bounds, on, self.margin, self.allow_unjudged)
        return run_gate(new, gate, comparison=comparison, base=self.baseline)
