"""What a score job judges and how: one record, checked once when it is built."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import get_args

from rag_judge.calibration.few_shot import WorkedExample
from rag_judge.core.errors import InputError
from rag_judge.judges import DEFAULT_METRICS, Judge, JudgeOptions, get_judges
from rag_judge.judges.scoring import NoncommittalPolicy
from rag_judge.judges.work import JudgeMode, default_mode

REPEAT_TEMPERATURE = 0.7
"""Sampling temperature of ``repeats``: enough to show the judge's own spread where it has one
(the generative path's claims and verdicts); the scoring path's probabilities do not sample."""


@dataclass(frozen=True)
class ScoreOptions:
    """The judges to run and their knobs; a wrong value is refused here, before any call."""

    metrics: tuple[str, ...] = DEFAULT_METRICS
    """Judge names (``rag_judge.judges.JUDGES``)."""
    language: str | None = None
    """Prompt language for every row (None: detected per question)."""
    n_questions: int = 3
    """Reverse questions per answer for answer relevancy."""
    noncommittal: NoncommittalPolicy = "zero"
    """Answer relevancy of an evasive answer: ``zero``, ``unscored`` or ``ignore``."""
    support_probability: bool | None = None
    """P(supported) per claim (None: where the model's provider gives it for free)."""
    mode: JudgeMode | None = None
    """``score`` or ``generate`` (None: by backend)."""
    reasons: bool = True
    """``score`` mode: a one-line reason for each claim that ends unsupported."""
    repeats: int = 1
    """Judge every row this many times, to measure the judge's own noise."""
    repeat_temperature: float = REPEAT_TEMPERATURE
    """The sampling temperature of the repeats (1 repeat: unused)."""
    few_shot: tuple[WorkedExample, ...] = ()
    """Worked examples for the check of the answer's claims against the passages
    (:mod:`rag_judge.calibration.few_shot`); none by default."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "metrics", tuple(self.metrics))
        object.__setattr__(self, "few_shot", tuple(self.few_shot))
        if not all(isinstance(e, WorkedExample) for e in self.few_shot):
            raise InputError("must be WorkedExample records", field="few_shot")
        get_judges(list(self.metrics) or None)  # an unknown name fails now
        if self.mode is not None and self.mode not in get_args(JudgeMode):
            raise InputError(
                f"must be one of {', '.join(get_args(JudgeMode))}, got {self.mode!r}",
                field="mode",
            )
        if not isinstance(self.n_questions, int) or self.n_questions < 1:
            raise InputError(
                f"must be a whole number >= 1, got {self.n_questions!r}", field="n_questions"
            )
        if self.noncommittal not in get_args(NoncommittalPolicy):
            raise InputError(
                f"must be one of {', '.join(get_args(NoncommittalPolicy))}, "
                f"got {self.noncommittal!r}",
                field="noncommittal",
            )
        if not isinstance(self.repeats, int) or self.repeats < 1:
            raise InputError(f"must be a whole number >= 1, got {self.repeats!r}", field="repeats")
        if not math.isfinite(self.repeat_temperature) or self.repeat_temperature < 0:
            raise InputError(
                f"must be a number >= 0, got {self.repeat_temperature!r}",
                field="repeat_temperature",
            )

    @property
    def judges(self) -> list[Judge]:
        """The judges' records, in the order named."""
        return get_judges(list(self.metrics) or None)

    def judge_options(self, model: str, mode: JudgeMode) -> JudgeOptions:
        """The judges' knobs for ``model`` on the path ``mode`` (support probability by the
        model's provider when not set)."""
        support = self.support_probability
        return JudgeOptions(
            n_questions=self.n_questions,
            noncommittal=self.noncommittal,
            support_probability=default_mode(model) == "score" if support is None else support,
            mode=mode,
            reasons=self.reasons,
            few_shot=self.few_shot,
        )
