"""What a k-sweep varies, measures and decides by: one record, checked once when it is built.

The CLI and the Python API both build a :class:`SweepOptions` and hand it to the job; nothing
downstream re-checks a value. :meth:`SweepOptions.build` is the keyword form (``sweep(...,
ks=range(1, 6), margin=0.02)``): the judge's knobs may be given flat, and a name that is no
option is refused, naming it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from rag_judge.core.errors import InputError
from rag_judge.jobs.sweep.budget import Budget
from rag_judge.jobs.sweep.decision.defaults import (
    DEFAULT_CONFIDENCE,
    DEFAULT_MARGIN,
    DEFAULT_SPENDING,
    DEFAULT_STEP,
    SPENDINGS,
    UNTIL_DECIDED_SPENDING,
    Spending,
    check_margin,
)
from rag_judge.jobs.sweep.decision.objective import Objective
from rag_judge.jobs.sweep.grid_axes import PIPELINE_AXES, Grid
from rag_judge.jobs.sweep.plan import MAX_K, parse_ks
from rag_judge.judges import DEFAULT_METRICS, JUDGES, JudgeOptions, get_judges
from rag_judge.pipeline.build import ChunkSize

STATE_FILE = "batches.json"
"""The batch ids of a batched sweep, inside its output folder."""
RETRIEVERS = ("bm25", "dense", "hybrid")
"""The retrievers of our RAG under test."""
DEFAULT_RETRIEVER = "bm25"
DEFAULT_RERANK_DEPTH = 20
"""Candidates a reranker re-scores per question, unless told."""


@dataclass(frozen=True)
class SweepOptions:
    """What a sweep varies, measures and decides by; a wrong value is refused here, before any
    index or model call."""

    ks: tuple[int, ...] = tuple(range(1, 11))
    """The cutoffs, ascending and distinct (any iterable of ks, or a text such as ``"1-10"``
    that :meth:`build` and the CLI parse, is checked and kept as this tuple)."""
    limit: int | None = None
    """Sweep only the first ``limit`` questions."""
    metrics: tuple[str, ...] = DEFAULT_METRICS
    """Judges (those the set cannot support are skipped and reported); a text such as
    ``"faithfulness,completeness"`` is split at its commas, as ``--metrics`` is."""
    objective: Objective | None = None
    """What the decision maximises; None: the set's default (reference F1 where the references
    are spans of the documents, else ``faithfulness*completeness``: :func:`~rag_judge.jobs.
    sweep.decision.objective.default_objective`). A text such as ``"answer_f1"`` is parsed
    once, here, and kept as the value."""
    margin: float = DEFAULT_MARGIN
    """How much worse than the best the recommended k may be (objective scale, 0 to 1)."""
    confidence: float = DEFAULT_CONFIDENCE
    """Family-wise confidence of the decision's intervals."""
    retriever: str = DEFAULT_RETRIEVER
    """``bm25``, ``dense`` (the embedder) or ``hybrid`` (RRF of both)."""
    rerank: str | None = None
    """Rerank the top ``rerank_depth`` by the model (``llm``) or a cross-encoder's path."""
    rerank_depth: int = DEFAULT_RERANK_DEPTH
    """Candidates the reranker re-scores per question."""
    chunk: ChunkSize | None = None
    """The built-in pipeline's passages re-cut from the set's documents (a text such as
    ``"400/1"``: size in characters, overlap in sentences); None: the set's own chunking."""
    rag: str | object | None = None
    """The user's RAG instead of ours: ``module:attr``, a ``.jsonl`` or a URL; or, from Python,
    the object itself: a LangChain retriever or chain, a LlamaIndex retriever or query engine,
    or a callable ``fn(question, k)``."""
    judge: JudgeOptions = field(default_factory=JudgeOptions)
    """The judges' knobs (support probability, mode, reasons, worked examples)."""
    calibration: Path | None = None
    """A profile of ``calibrate --fit`` applied to the result (checked against the session's
    judge before the first call)."""
    until_decided: bool = False
    """Add questions in batches of ``step``, dropping the ks that are confidently out, until the
    decision settles, the ``budget`` is spent or ``max_questions`` are used
    (:mod:`~rag_judge.jobs.sweep.until_decided`)."""
    max_questions: int | None = None
    """``until_decided``: the most questions to use (default: every question after ``limit``)."""
    budget: Budget | None = None
    """``until_decided``: stop once this much time or these many tokens are spent (a text such
    as ``"30m"`` or ``"200k-tokens"`` is parsed)."""
    step: int = DEFAULT_STEP
    """``until_decided``: questions added between two looks."""
    grid: Grid | None = None
    """Sweep every configuration of this grid at every k and decide over all of them (a
    configuration sweep, :mod:`rag_judge.jobs.grid`); texts such as ``["retriever=bm25,dense"]``
    or a mapping are parsed. An axis on the grid replaces the option of its name."""
    spending: Spending | None = None
    """How a new test of this sweep spends its error across looks (an existing test keeps its
    own); None: ``front`` over the eval set's size for a plain sweep, ``obrien_fleming`` over
    the questions it may use for a run until decided (:attr:`test_spending`)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "ks", _checked_ks(self.ks))
        object.__setattr__(self, "metrics", _names(self.metrics))
        if self.objective is not None:
            object.__setattr__(self, "objective", Objective.parse(self.objective))
        get_judges(self.metrics)  # an unknown name fails now, before an index is built
        if self.limit is not None and (_not_int(self.limit) or self.limit < 1):
            raise InputError(f"must be a whole number >= 1, got {self.limit!r}", field="limit")
        object.__setattr__(self, "margin", check_margin(self.margin))
        if not (_number(self.confidence) and 0 < self.confidence < 1):
            raise InputError(
                f"must be a number in (0, 1), got {self.confidence!r}", field="confidence"
            )
        if self.retriever not in RETRIEVERS:
            raise InputError(
                f"must be one of {', '.join(RETRIEVERS)}, got {self.retriever!r}",
                field="retriever",
            )
        if _not_int(self.rerank_depth) or self.rerank_depth < 1:
            raise InputError(
                f"must be a whole number >= 1, got {self.rerank_depth!r}", field="rerank_depth"
            )
        if self.calibration is not None:
            object.__setattr__(self, "calibration", Path(self.calibration))
        if isinstance(self.chunk, str):
            object.__setattr__(self, "chunk", ChunkSize.parse(self.chunk))
        if self.grid is not None and not isinstance(self.grid, Grid):
            object.__setattr__(self, "grid", Grid.parse(self.grid))
        self._check_objective()
        self._check_pipeline()
        self._check_grid()
        self._check_sequential()

    def _check_objective(self) -> None:
        """An objective asked for must be measurable: a judge it names that calls the model must
        be among the metrics (reference F1 and exact match are measured unasked)."""
        if self.objective is None:
            return
        missing = [p for p in self.objective.parts if p in JUDGES and JUDGES[p].uses_model]
        missing = [p for p in missing if p not in self.metrics]
        if missing:
            raise InputError(
                f"the objective {self.objective} needs {missing[0]}, which the metrics do not "
                f"measure (metrics: {', '.join(self.metrics)}): add it to the metrics, or "
                "choose an objective of what they measure",
                field="objective",
            )

    def _check_pipeline(self) -> None:
        """The built-in pipeline's options do not apply to the user's own RAG, and the
        reranker's depth does not apply without a reranker: refused, never ignored."""
        if self.rag is not None:
            given = {
                "rerank": self.rerank is not None,
                "retriever": self.retriever != DEFAULT_RETRIEVER,
                "rerank_depth": self.rerank_depth != DEFAULT_RERANK_DEPTH,
                "chunk": self.chunk is not None,
            }
            for name, set_ in given.items():
                if set_:
                    raise InputError(
                        "applies to the built-in pipeline, not to your own RAG (rag, --rag), "
                        "which retrieves (and reranks) by itself",
                        field=name,
                    )
        elif (
            self.rerank is None
            and self.rerank_depth != DEFAULT_RERANK_DEPTH
            and not (self.grid is not None and "rerank" in self.grid.names)
        ):
            raise InputError(
                "only applies with a reranker (rerank, --rerank)", field="rerank_depth"
            )
        if self.rerank is not None:
            from rag_judge.pipeline.rerank import check_rerank_spec

            check_rerank_spec(self.rerank)  # before the index is built

    def _check_grid(self) -> None:
        """An axis on the grid and the option of its name are not both given; the built-in
        pipeline's axes do not apply to your own RAG."""
        if self.grid is None:
            return
        names = self.grid.names
        given = {
            "retriever": self.retriever != DEFAULT_RETRIEVER,
            "rerank": self.rerank is not None,
            "chunk": self.chunk is not None,
            "rag": self.rag is not None,
        }
        for axis in names:
            if given.get(axis):
                raise InputError(
                    f"the {axis} axis is on the grid: give its values there, not also as the "
                    f"{axis} option",
                    field=axis,
                )
        if self.rag is not None and (built_in := [a for a in names if a in PIPELINE_AXES]):
            raise InputError(
                f"the {built_in[0]} axis applies to the built-in pipeline, not to your own RAG "
                "(rag, --rag), which retrieves by itself",
                field=f"grid.{built_in[0]}",
            )

    def _check_sequential(self) -> None:
        if isinstance(self.budget, str):
            object.__setattr__(self, "budget", Budget.parse(self.budget))
        for name in ("max_questions", "step"):
            value = getattr(self, name)
            if value is not None and (_not_int(value) or value < 1):
                raise InputError(f"must be a whole number >= 1, got {value!r}", field=name)
        if self.spending is not None and self.spending not in SPENDINGS:
            raise InputError(
                f"must be one of {', '.join(SPENDINGS)}, got {self.spending!r}", field="spending"
            )
        if not self.until_decided:
            given = [n for n in ("max_questions", "budget") if getattr(self, n) is not None]
            if given:
                raise InputError(
                    f"{given[0]} only applies to a sweep until decided (until_decided, "
                    "--until-decided)",
                    field=given[0],
                )

    @property
    def test_spending(self) -> Spending:
        """How a new test of this sweep spends its error: as given, else by the way it runs.

        >>> SweepOptions().test_spending, SweepOptions(until_decided=True).test_spending
        ('front', 'obrien_fleming')
        """
        if self.spending is not None:
            return self.spending
        return UNTIL_DECIDED_SPENDING if self.until_decided else DEFAULT_SPENDING

    @classmethod
    def names(cls) -> frozenset[str]:
        """Every keyword :meth:`build` takes: the fields and the judge's knobs."""
        return frozenset({f.name for f in fields(cls)} | {f.name for f in fields(JudgeOptions)})

    @classmethod
    def build(cls, **values: Any) -> SweepOptions:
        """The options from keywords: any field, and the judge's knobs flat
        (``support_probability``, ``mode``, ``reasons``, ``few_shot``).

        Raises:
            InputError: a keyword that is no option, or a value refused by the checks.

        >>> options = SweepOptions.build(ks="1-3", objective="answer_f1", reasons=False)
        >>> options.ks, str(options.objective), options.judge.reasons
        ((1, 2, 3), 'answer_f1', False)
        >>> SweepOptions.build(margin=1.5)
        Traceback (most recent call last):
        ...
        rag_judge.core.errors.InputError: field 'margin': must be a number in [0, 1), got 1.5
        """
        knobs = {f.name for f in fields(JudgeOptions)}
        if unknown := sorted(set(values) - cls.names()):
            raise InputError(
                f"unknown sweep option {unknown[0]!r}; known: {', '.join(sorted(cls.names()))}",
                field=unknown[0],
            )
        flat = {name: values.pop(name) for name in list(values) if name in knobs}
        if flat:
            if "judge" in values:
                raise InputError("give judge=JudgeOptions(...) or its knobs, not both")
            values["judge"] = JudgeOptions(**flat)
        return cls(**values)


def _checked_ks(ks: str | Iterable[int]) -> tuple[int, ...]:
    """Distinct ks, ascending, each a whole number in 1..MAX_K (from a text like ``1-10`` too)."""
    if isinstance(ks, str):
        return parse_ks(ks)
    chosen = list(ks)
    if not chosen:
        raise InputError("give at least one k", field="ks")
    bad = [k for k in chosen if _not_int(k) or not 1 <= k <= MAX_K]
    if bad:
        raise InputError(f"ks must be whole numbers in 1..{MAX_K}, got {bad[0]!r}", field="ks")
    return tuple(sorted(set(chosen)))


def _not_int(value: object) -> bool:
    return isinstance(value, bool) or not isinstance(value, int)


def _number(value: object) -> bool:
    return (
        not isinstance(value, bool)
        and isinstance(value, int | float)
        and math.isfinite(float(value))
    )


def _names(metrics: str | Iterable[str]) -> tuple[str, ...]:
    """The judges named: a comma-separated text split (a bare string is not a list of letters)."""
    if isinstance(metrics, str):
        return tuple(m.strip() for m in metrics.split(",") if m.strip())
    return tuple(metrics)
