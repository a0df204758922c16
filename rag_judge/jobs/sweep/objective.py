"""What "best k" maximises: checked before the sweep makes a model call, decided after it.

An objective is a metric column or a product of them (``faithfulness*completeness``: an answer
must be both grounded and complete). :func:`parse_objective` refuses a name that is no judge or
retrieval measure, so a typo fails at once instead of after an hour of model calls.
:func:`decide` picks the objective a finished sweep can compute (the one asked for, else the
first fallback with values, said in a note: Cranfield has no reference answers, so no
completeness) and the best k by it, tested against its neighbours. The report only renders
the decision.
"""

from __future__ import annotations

from dataclasses import dataclass

from rag_judge.core.errors import InputError
from rag_judge.jobs.sweep.result import SweepResult
from rag_judge.jobs.sweep.summary import BestK, objective_values
from rag_judge.judges import DEFAULT_METRICS, DEFAULT_OBJECTIVE, JUDGES
from rag_judge.retrieval.by_k import ID_MEASURES, TEXT_MEASURES

FALLBACK_RETRIEVAL = "doc_ndcg"
"""The last fallback: nDCG by document id, which every set with qrels has."""


@dataclass(frozen=True)
class Objective:
    """The objective the best k is chosen by, and why, when it is not the one asked for."""

    requested: str
    used: str | None
    """None when neither the request nor any fallback has a value."""
    note: str = ""
    """Why the requested objective was not used ("" when it was)."""


@dataclass(frozen=True)
class Decision:
    """What a sweep concludes: the objective it could compute and the best k by it."""

    objective: Objective
    best: BestK | None
    """The best k by ``objective.used``; None when no objective could be computed."""


def fallback_objectives() -> tuple[str, ...]:
    """Tried in order when the objective cannot be computed: the default judges that need no
    reference answer, then nDCG by id; the first with a value is used."""
    reference_free = (n for n in DEFAULT_METRICS if not JUDGES[n].needs_reference)
    return (*reference_free, FALLBACK_RETRIEVAL)


def parse_objective(objective: str | None) -> str:
    """The objective to choose k by (default ``faithfulness*completeness``), checked by name.

    Raises:
        InputError: a name that is no judge and no ``doc_*``/``text_*`` measure (a typo).
    """
    if objective is not None and not objective.strip():
        raise InputError(
            f"the objective is empty; give a product of metrics like {DEFAULT_OBJECTIVE}",
            field="objective",
        )
    requested = objective or DEFAULT_OBJECTIVE
    names = [n.strip() for n in requested.split("*")]
    known = {*JUDGES, *(f"doc_{m}" for m in ID_MEASURES), *(f"text_{m}" for m in TEXT_MEASURES)}
    if unknown := [n for n in names if n not in known]:
        raise InputError(
            f"unknown metric {unknown[0]!r} in objective {requested!r}", field="objective"
        )
    return requested


def choose_objective(result: SweepResult, objective: str | None = None) -> Objective:
    """The objective to choose k by: the one asked for (default: the sweep's own) if it has a
    value, else the first of :func:`fallback_objectives` that has one.

    Raises:
        InputError: an objective naming something that is no measure or judge (a typo).
    """
    requested = parse_objective(objective or result.objective)
    problem = _why_not(result, requested)
    if problem is None:
        return Objective(requested, requested)
    fallbacks = fallback_objectives()
    for candidate in fallbacks:
        if _why_not(result, candidate) is None:
            note = (
                f"The objective {requested} cannot be computed for this sweep ({problem}); "
                f"k is chosen by {candidate}, the first of {', '.join(fallbacks)} "
                "with values."
            )
            return Objective(requested, candidate, note)
    note = (
        f"The objective {requested} cannot be computed for this sweep ({problem}), and none of "
        f"{', '.join(fallbacks)} has a value: no best k."
    )
    return Objective(requested, None, note)


def decide(
    result: SweepResult, objective: str | None = None, *, n_resamples: int = 2000, seed: int = 0
) -> Decision:
    """The objective the sweep can compute and its best k (see :func:`choose_objective`)."""
    chosen = choose_objective(result, objective)
    best = (
        None
        if chosen.used is None
        else result.best_k(chosen.used, n_resamples=n_resamples, seed=seed)
    )
    return Decision(chosen, best)


def _why_not(result: SweepResult, objective: str) -> str | None:
    """Why an objective has no value in this sweep, or None when it has one."""
    frame = result.per_question
    for name in (n.strip() for n in objective.split("*")):
        if name in result.skipped:
            return f"{name} was skipped: {result.skipped[name]}"
        if name not in frame.columns or frame[name].dtype != "Float64":
            return f"{name} was not measured"
    if not objective_values(frame, objective).notna().any():
        return f"no question has a value of {objective}"
    return None
