"""``sweep --grid ... --dry-run``: what a configuration sweep will cost, before any model call.

Each configuration is planned as its own k-sweep's dry run (:mod:`rag_judge.jobs.sweep.dry_run`:
the real top K where BM25 gives it without a model, the set's passages as stand-ins elsewhere),
with the embedded model's speed measured once for all of them; the grid is their sum. A run until
decided gets its best case (settled at the first look, every arm swept on one batch) and its
worst (every question, every arm). Answers two arms share through the response cache are not
known before the run, so the plan counts every arm's calls: an upper bound.
"""

from __future__ import annotations

from dataclasses import dataclass

from rag_judge.data.eval_sets import EvalSet
from rag_judge.jobs.grid.job import configured
from rag_judge.jobs.sweep.dry_run import CostPlan, DryRun, dry_run_job
from rag_judge.jobs.sweep.options import SweepOptions
from rag_judge.runtime.session import Session


@dataclass(frozen=True)
class GridDryRun:
    """Each configuration's plan, and the grid's."""

    plans: tuple[tuple[str, DryRun], ...]
    until_decided: bool

    def total(self, best: bool = False) -> CostPlan:
        """The grid's plan: every configuration's summed (``best``: each one's best case)."""
        chosen = [(run.best_case if best and run.best_case else run.plan) for _, run in self.plans]
        first = chosen[0]
        return CostPlan(
            questions=first.questions,
            ks=first.ks,
            answers=sum(p.answers for p in chosen),
            calls=sum(p.calls for p in chosen),
            prompt_tokens=sum(p.prompt_tokens for p in chosen),
            completion_tokens=sum(p.completion_tokens for p in chosen),
            read_tokens=None
            if (read := _sum([p.read_tokens for p in chosen])) is None
            else int(read),
            minutes=_sum([p.minutes for p in chosen]),
            cost_usd=_sum([p.cost_usd for p in chosen]),
        )

    def lines(self) -> list[str]:
        """The plan as the CLI prints it: a row per configuration, then the grid."""
        _, first = self.plans[0]
        total = self.total()
        out = [
            f"Plan: {len(self.plans)} configuration{'s' * (len(self.plans) != 1)} x "
            f"{len(total.ks)} ks = "
            f"{len(self.plans) * len(total.ks)} arms, {total.questions} questions, "
            f"{total.answers:,} answers; generator {first.generator}, judge {first.model} "
            f"({first.mode} path).",
            "",
            "| configuration | passages | answers | calls | prompt tokens | read tokens "
            "| minutes | cost |",
            "|---|---|---:|---:|---:|---:|---:|---:|",
        ]
        rows = [(name, run.passages, run.plan) for name, run in self.plans]
        if self.until_decided:
            rows.append(("grid, best case (settled at the first look)", "", self.total(True)))
            rows.append(("grid, worst case (every question, every arm)", "", total))
        else:
            rows.append(("the grid", "", total))
        for name, passages, plan in rows:
            out.append(
                f"| {name} | {passages} | {plan.answers:,} | {plan.calls:,} "
                f"| {plan.prompt_tokens:,} "
                f"| {'' if plan.read_tokens is None else f'{plan.read_tokens:,}'} "
                f"| {'' if plan.minutes is None else f'{plan.minutes:.1f}'} "
                f"| {'' if plan.cost_usd is None else f'${plan.cost_usd:.4f}'} |"
            )
        if first.speed is not None:
            out += [
                "",
                f"Time from this machine's measured rates: prefill {first.speed.prefill:.0f} "
                f"tokens/s, decode {first.speed.decode:.1f} tokens/s (plus model loading).",
            ]
        out += [
            "",
            "Arms that put the same passages before the model share their calls through the "
            "response cache, so the grid may cost less than this.",
            "Nothing was asked of a model: a dry run. Remove --dry-run to sweep.",
        ]
        return out


async def grid_dry_run(loaded: EvalSet, session: Session, options: SweepOptions) -> GridDryRun:
    """The plan of every configuration of ``options.grid`` over ``loaded`` (already limited)."""
    assert options.grid is not None  # the caller checked
    plans: list[tuple[str, DryRun]] = []
    speed = None
    for configuration in options.grid.configurations():
        run = await dry_run_job(loaded, session, configured(options, configuration), speed=speed)
        speed = run.speed
        plans.append((configuration.name, run))
    return GridDryRun(tuple(plans), options.until_decided)


def _sum(values: list[float | None] | list[int | None]) -> float | None:
    """The sum, or None when any is unknown."""
    if any(v is None for v in values):
        return None
    return sum(v for v in values if v is not None)
