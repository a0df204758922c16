"""A configuration sweep ``--until-decided``: the grid in batches of questions, the arms that are
out dropped, until the decision settles.

As the k-sweep's run until decided (:mod:`rag_judge.jobs.sweep.until_decided`), over arms: each
batch of questions is swept by every configuration at its ks still in (a configuration whose
ks are all out is not swept at all: no retrieval, no call), then one look compares the arms still
in on every question judged at all of them, at the level the sweep's test leaves it. The run
stops when a look settles, the budget is spent, or the questions allowed are used; what it did
not generate against the full grid is in its record.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from rag_judge.data.eval_sets import EvalSet
from rag_judge.jobs.grid.result import GridResult, arms_of
from rag_judge.jobs.sweep.decision.looks import SweepLooks
from rag_judge.jobs.sweep.decision.sequential import SequentialRecord
from rag_judge.jobs.sweep.grid_axes import Configuration
from rag_judge.jobs.sweep.in_process import PreparedSweep
from rag_judge.jobs.sweep.options import SweepOptions
from rag_judge.jobs.sweep.result import SweepResult
from rag_judge.jobs.sweep.until_decided import in_batches, merge_results, questions_allowed
from rag_judge.runtime.events import QUIET, Events
from rag_judge.runtime.session import Session


async def grid_until_decided(
    loaded: EvalSet,
    options: SweepOptions,
    configurations: Sequence[Configuration],
    each: Mapping[str, SweepOptions],
    prepared: Mapping[str, PreparedSweep],
    looks: SweepLooks,
    session: Session,
    events: Events = QUIET,
) -> tuple[dict[str, SweepResult], SequentialRecord, SweepLooks]:
    """Sweep the grid in batches until the rule settles (see the module docstring): each
    configuration's sweep over the questions it was asked, the record, and the looks."""
    arms = arms_of(tuple(configurations), options.ks)
    grid = options.grid
    assert grid is not None  # the job checked
    events.started(questions_allowed(loaded, options) * len(configurations))
    parts: dict[str, list[SweepResult]] = {c.name: [] for c in configurations}

    def merged() -> dict[str, SweepResult]:
        return {name: merge_results(p, options.ks) for name, p in parts.items() if p}

    async def sweep_batch(share: EvalSet, active: Sequence[int]) -> SweepResult:
        for configuration in configurations:
            name = configuration.name
            ks = tuple(arms[a].k for a in active if arms[a].configuration == name)
            if ks:  # a configuration whose every k is out is not swept: no retrieval, no call
                at = dataclasses.replace(each[name], ks=ks)
                parts[name].append(await prepared[name].sweep(share, at, events))
        return GridResult(grid, tuple(configurations), merged(), options.ks).as_arms()

    record, looks = await in_batches(loaded, session, options, list(arms), looks, sweep_batch)
    return merged(), record, looks
