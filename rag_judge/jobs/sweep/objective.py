"""What the decision maximises: checked before the sweep makes a model call, decided after it.

An objective is a metric column or a product of them (``faithfulness*completeness``: an answer
must be both grounded and complete). :func:`parse_objective` refuses a name that is no judge or
retrieval measure, so a typo fails at once instead of after an hour of model calls.
:func:`decide` picks the objective a finished sweep can compute (the one asked for, else, when
the set cannot give one of its parts, the first fallback with values, said in a note: Cranfield
has no reference answers, so no completeness) and decides k by it
(:func:`~rag_judge.jobs.sweep.decision.decide_frame`). An objective whose judges ran but whose
calls failed is not replaced by a fallback: the decision names no k and says why.
"""

from __future__ import annotations

from rag_judge.core.errors import InputError
from rag_judge.jobs.sweep.decision import (
    DEFAULT_CONFIDENCE,
    DEFAULT_MARGIN,
    Decision,
    Objective,
    decide_frame,
)
from rag_judge.jobs.sweep.outcomes import objective_parts
from rag_judge.jobs.sweep.result import SweepResult
from rag_judge.judges import DEFAULT_METRICS, DEFAULT_OBJECTIVE, JUDGES
from rag_judge.retrieval.by_k import ID_MEASURES, TEXT_MEASURES

__all__ = ["Decision", "Objective", "choose_objective", "decide", "parse_objective"]

FALLBACK_RETRIEVAL = "doc_ndcg"
"""The last fallback: nDCG by document id, which every set with qrels has."""


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
        if _why_not(result, candidate) is None and _has_values(result, candidate):
            note = (
                f"The objective {requested} cannot be computed for this sweep ({problem}); "
                f"k is chosen by {candidate}, the first of {', '.join(fallbacks)} "
                "with values."
            )
            return Objective(requested, candidate, note)
    note = (
        f"The objective {requested} cannot be computed for this sweep ({problem}), and none of "
        f"{', '.join(fallbacks)} has a value: no k."
    )
    return Objective(requested, None, note)


def decide(
    result: SweepResult,
    objective: str | None = None,
    *,
    margin: float = DEFAULT_MARGIN,
    confidence: float = DEFAULT_CONFIDENCE,
    n_resamples: int = 2000,
    seed: int = 0,
) -> Decision:
    """The objective the sweep can compute (see :func:`choose_objective`) and the k it
    recommends, or why it names none."""
    chosen = choose_objective(result, objective)
    return decide_frame(
        result.per_question,
        chosen,
        result.ks,
        margin=margin,
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
    )


def _has_values(result: SweepResult, objective: str) -> bool:
    """True when some row has a value of every part of ``objective`` (a fallback must)."""
    frame = result.per_question
    parts = objective_parts(objective)
    return bool(frame[parts].notna().all(axis=1).any())


def _why_not(result: SweepResult, objective: str) -> str | None:
    """Why the sweep cannot give an objective (a part skipped or not measured), or None when it
    can. Failed calls do not count here: the decision itself says what they left out."""
    frame = result.per_question
    for name in objective_parts(objective):
        if name in result.skipped:
            return f"{name} was skipped: {result.skipped[name]}"
        if name not in frame.columns or frame[name].dtype != "Float64":
            return f"{name} was not measured"
    return None
