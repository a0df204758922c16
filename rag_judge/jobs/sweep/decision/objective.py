"""What the decision maximises: a value parsed once, at the boundary, and carried as that value.

An objective is a metric or a product of them (``faithfulness*completeness``: an answer must be
both grounded and complete). :meth:`Objective.parse` refuses a name that is no judge or
retrieval measure, so a typo fails before an hour of model calls; the value is hashable, its
text round-trips (``str(Objective.parse(t)) == t`` for a canonical ``t``) and its parts are
known. :func:`choose_objective` picks what a finished sweep can compute: the one asked for,
else, when the set cannot give one of its parts, the first fallback with values, said in a note
(Cranfield has no reference answers, so no completeness). An objective whose judges ran but
whose calls failed is not replaced by a fallback: the decision names no k and says why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import pandas as pd

from rag_judge.core.errors import InputError
from rag_judge.judges import ANSWER_OBJECTIVES, DEFAULT_OBJECTIVE, JUDGES, SPANS_OBJECTIVE
from rag_judge.retrieval.by_k import ID_MEASURES, TEXT_MEASURES

FALLBACK_RETRIEVAL = "doc_ndcg"
"""The last fallback: nDCG by document id, which every set with qrels has."""


def known_parts() -> frozenset[str]:
    """Every name an objective may multiply: the judges and the ``doc_*``/``text_*`` measures."""
    return frozenset(
        {*JUDGES, *(f"doc_{m}" for m in ID_MEASURES), *(f"text_{m}" for m in TEXT_MEASURES)}
    )


@dataclass(frozen=True)
class Objective:
    """A metric or a product of metrics that the decision maximises, checked by name.

    >>> objective = Objective.parse("faithfulness * completeness")
    >>> str(objective), objective.parts, objective.judges_answer
    ('faithfulness*completeness', ('faithfulness', 'completeness'), True)
    >>> Objective.parse(str(objective)) == objective
    True
    >>> Objective.parse("doc_ndcg").judges_answer
    False
    """

    parts: tuple[str, ...]
    """The metric names multiplied, in the order given."""

    def __post_init__(self) -> None:
        if not self.parts:
            raise InputError(
                f"the objective is empty; give a product of metrics like {DEFAULT_OBJECTIVE}",
                field="objective",
            )
        if unknown := [n for n in self.parts if n not in known_parts()]:
            raise InputError(
                f"unknown metric {unknown[0]!r} in objective {str(self)!r}", field="objective"
            )

    @classmethod
    def parse(cls, text: str | Objective | None) -> Objective:
        """The objective ``text`` names (None: the judges' default, ``faithfulness*completeness``).

        Raises:
            InputError: an empty text, or a name that is no judge and no ``doc_*``/``text_*``
                measure (a typo).
        """
        if isinstance(text, Objective):
            return text
        if text is not None and not text.strip():
            raise InputError(
                f"the objective is empty; give a product of metrics like {DEFAULT_OBJECTIVE}",
                field="objective",
            )
        return cls(tuple(n.strip() for n in (text or DEFAULT_OBJECTIVE).split("*")))

    def __str__(self) -> str:
        return "*".join(self.parts)

    @property
    def judges_answer(self) -> bool:
        """True when a part is a judge, so the answer (and a refusal) is what is valued."""
        return any(name in JUDGES for name in self.parts)


def with_free_parts(metrics: Sequence[str], objective: Objective) -> tuple[str, ...]:
    """``metrics`` and the objective's parts that cost no model call (reference F1, exact
    match): a sweep decided by them measures them, asked for or not.

    >>> with_free_parts(("faithfulness",), Objective.parse("answer_f1"))
    ('faithfulness', 'answer_f1')
    >>> with_free_parts(("faithfulness",), Objective.parse("faithfulness*completeness"))
    ('faithfulness',)
    """
    free = [p for p in objective.parts if p in JUDGES and not JUDGES[p].uses_model]
    return (*metrics, *(p for p in free if p not in metrics))


DEFAULT = Objective.parse(DEFAULT_OBJECTIVE)
"""The objective when none is asked for and the references are not spans (or there are none)."""


def default_objective(reference_kind: str) -> Objective:
    """The objective when none is asked for: reference F1 where the references are spans of
    the documents, else the judges' product (an answer both grounded and complete)."""
    return Objective.parse(SPANS_OBJECTIVE) if reference_kind == "spans" else DEFAULT


def fallback_objectives() -> tuple[Objective, ...]:
    """Tried in order when the objective cannot be computed: the answer measures (the judges'
    product, the reference matches, one judge), then nDCG by id; the first with a value is
    used, so a retrieval measure never stands in for an answer measure that is there."""
    return tuple(Objective.parse(n) for n in (*ANSWER_OBJECTIVES, FALLBACK_RETRIEVAL))


@dataclass(frozen=True)
class ObjectiveChoice:
    """The objective k is chosen by, and why, when it is not the one asked for."""

    requested: Objective
    used: Objective | None
    """None when neither the request nor any fallback has a value."""
    note: str = ""
    """Why the requested objective was not used ("" when it was)."""


class Swept(Protocol):
    """What the decision reads of a finished sweep (a :class:`~rag_judge.jobs.sweep.result.
    SweepResult` is one)."""

    @property
    def per_question(self) -> pd.DataFrame: ...
    @property
    def ks(self) -> tuple[int, ...]: ...
    @property
    def skipped(self) -> Mapping[str, str]: ...
    @property
    def objective(self) -> Objective: ...


def choose_objective(swept: Swept, objective: str | Objective | None = None) -> ObjectiveChoice:
    """The objective to choose k by: the one asked for (default: the sweep's own) if it has a
    value, else the first of :func:`fallback_objectives` that has one.

    Raises:
        InputError: an objective naming something that is no measure or judge (a typo).

    A sweep that measured exact match only: asked for the judges' product, it falls back to the
    answer measure it has, never to a retrieval measure:

    >>> from types import SimpleNamespace
    >>> frame = pd.DataFrame({"exact_match": [1.0, 0.0], "doc_ndcg": [1.0, 1.0]}).astype("Float64")
    >>> swept = SimpleNamespace(per_question=frame, ks=(1,), skipped={}, objective=DEFAULT)
    >>> choice = choose_objective(swept)
    >>> str(choice.used), choice.note.startswith("The objective faithfulness*completeness cannot")
    ('exact_match', True)
    """
    requested = Objective.parse(objective) if objective is not None else swept.objective
    problem = _why_not(swept, requested)
    if problem is None:
        return ObjectiveChoice(requested, requested)
    fallbacks = fallback_objectives()
    fallbacks = tuple(f for f in fallbacks if f != requested)
    names = ", ".join(str(f) for f in fallbacks)
    for candidate in fallbacks:
        if _why_not(swept, candidate) is None and _has_values(swept, candidate):
            note = (
                f"The objective {requested} cannot be computed for this sweep ({problem}); "
                f"k is chosen by {candidate}, the first with values of {names}."
            )
            return ObjectiveChoice(requested, candidate, note)
    note = (
        f"The objective {requested} cannot be computed for this sweep ({problem}), and none of "
        f"{names} has a value: no k."
    )
    return ObjectiveChoice(requested, None, note)


def _has_values(swept: Swept, objective: Objective) -> bool:
    """True when some row has a value of every part of ``objective`` (a fallback must)."""
    frame = swept.per_question
    return bool(frame[list(objective.parts)].notna().all(axis=1).any())


def _why_not(swept: Swept, objective: Objective) -> str | None:
    """Why the sweep cannot give an objective (a part skipped or not measured), or None when it
    can. Failed calls do not count here: the decision itself says what they left out."""
    frame = swept.per_question
    for name in objective.parts:
        if name in swept.skipped:
            return f"{name} was skipped: {swept.skipped[name]}"
        if name not in frame.columns or frame[name].dtype != "Float64":
            return f"{name} was not measured"
    return None
