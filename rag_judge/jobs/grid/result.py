"""The outcome of a configuration sweep: each configuration's k-sweep, the arms, the decision.

Every configuration was swept on the same questions at the same ks, so its rows pair with every
other's. :meth:`GridResult.per_question` is their one table, keyed by ``configuration`` and
``k``; :meth:`GridResult.as_arms` is the table the decision reads, whose ``k`` column holds the
arm's number (:mod:`rag_judge.jobs.sweep.decision.arms`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

import pandas as pd

from rag_judge.jobs.sweep.decision.arms import Arm, ArmNames
from rag_judge.jobs.sweep.decision.record import Decision
from rag_judge.jobs.sweep.grid_axes import Configuration, Grid
from rag_judge.jobs.sweep.result import SweepResult

CONFIGURATION: Final = "configuration"
"""The per-question table's column naming each row's configuration."""
ARM: Final = "arm"
"""Its column numbering each row's arm, (configuration, k), as ``decision.json`` does."""


def arms_of(configurations: tuple[Configuration, ...], ks: tuple[int, ...]) -> dict[int, Arm]:
    """The arms in grid order, numbered from 1: each configuration at each k.

    >>> from rag_judge.jobs.sweep.grid_axes import Grid
    >>> arms = arms_of(Grid.parse("retriever=bm25,dense").configurations(), (1, 5))
    >>> {n: arm.label for n, arm in arms.items()}[3]
    'retriever=dense at k=1'
    """
    return {
        i * len(ks) + j + 1: Arm(configuration.name, k)
        for i, configuration in enumerate(configurations)
        for j, k in enumerate(ks)
    }


def arm_number(arms: Mapping[int, Arm]) -> dict[tuple[str, int], int]:
    """(configuration, k) -> arm number."""
    return {(arm.configuration, arm.k): n for n, arm in arms.items()}


@dataclass(frozen=True)
class GridResult:
    """Each configuration's k-sweep on the same questions, and the decision over every arm."""

    grid: Grid
    configurations: tuple[Configuration, ...]
    results: Mapping[str, SweepResult]
    """Each configuration's sweep by its name, in grid order (a run until decided holds the
    ks of each that were still in when its questions were swept)."""
    ks: tuple[int, ...]
    decision: Decision | None = None
    """Which arm to use and how sure that is (None until decided)."""
    extra: Mapping[str, object] = field(default_factory=dict)
    """What the run measured besides: shared answers, the index builds (for the report)."""

    @property
    def arms(self) -> dict[int, Arm]:
        """Every arm of the full grid, numbered."""
        return arms_of(self.configurations, self.ks)

    @property
    def recommended(self) -> Arm | None:
        """The configuration and k to use (None: undecided, or not decided yet)."""
        chosen = None if self.decision is None else self.decision.recommended_arm
        return None if chosen is None else self.arms[chosen]

    @property
    def names(self) -> ArmNames:
        """How the decision names the arms."""
        return ArmNames(self.arms)

    @property
    def per_question(self) -> pd.DataFrame:
        """One row per question, configuration and k: each configuration's table with its name
        and arm number beside the question id."""
        numbers = arm_number(self.arms)
        frames = []
        for name, result in self.results.items():
            frame = result.per_question.copy()
            frame.insert(1, CONFIGURATION, name)
            arms = [numbers[(name, int(k))] for k in frame["k"]]
            frame.insert(2, ARM, pd.Series(arms, index=frame.index, dtype="Int64"))
            frames.append(frame)
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    def as_arms(self) -> SweepResult:
        """The grid as one sweep whose ``k`` is the arm number: what the decision reads."""
        first = next(iter(self.results.values()))
        frame = self.per_question
        arm_frame = frame.drop(columns=["k", CONFIGURATION]).rename(columns={ARM: "k"})
        return dataclasses.replace(
            first,
            per_question=arm_frame,
            ks=tuple(sorted(self.arms)),
            skipped={k: v for r in self.results.values() for k, v in r.skipped.items()},
            decision=None,
        )

    def summary(self) -> pd.DataFrame:
        """Per configuration, k and metric: ``mean``, ``ci_low``/``ci_high``, ``n_scored``."""
        frames = [
            result.summary().assign(**{CONFIGURATION: name})
            for name, result in self.results.items()
        ]
        joined = pd.concat(frames, ignore_index=True)
        first = [CONFIGURATION, *[c for c in joined.columns if c != CONFIGURATION]]
        return joined[first]
