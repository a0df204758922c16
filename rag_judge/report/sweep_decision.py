"""The decision as table cells, for the markdown summary and the HTML page alike.

One row per k: the objective's mean over the questions it has, the paired difference to its
highest rival with the bounds of ``k - the best of the others`` (comparisons with the best), the
regret bound, where the k stands, its refusals and what it costs. Every number is the
decision's own (:class:`~rag_judge.jobs.sweep.decision.Decision`), so the sentence above the
table and the table agree.
"""

from __future__ import annotations

from dataclasses import dataclass

from rag_judge.jobs.sweep.decision.recommend import KStanding, Recommendation
from rag_judge.jobs.sweep.decision.record import K_COST, Decision
from rag_judge.jobs.sweep.decision.refusals import REFUSAL_MEASURES
from rag_judge.report.tables import MISSING

REFUSAL_HEADS = {
    "refusal_rate": "refusals",
    "refused_with_answer_in_top_k": "refused, answer in top k",
    "answered_without_answer_in_top_k": "answered, no answer in top k",
}
"""How the tables head the refusal shares (:data:`REFUSAL_MEASURES`)."""


@dataclass(frozen=True)
class DecisionView:
    """The decision's headline, sentence and per-k table, as text."""

    headline: str
    sentence: str
    head: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    marked: int | None
    """The k whose row is highlighted (the recommended one), if any."""


def standing_label(standing: KStanding, found: Recommendation) -> str:
    """Where one k stands: recommended, within the margin, could be the best, still in the running,
    out (shown more than the margin below another), or not recommended (ineligible)."""
    if not standing.eligible:
        return "not recommended"
    if standing.k == found.recommended_k:
        return "recommended"
    if standing.within_margin:
        return "within margin"
    if standing.could_be_best:
        return "could be best"
    return "still in" if standing.candidate else "out"


def decision_view(decision: Decision) -> DecisionView:
    """The view of a decision; an empty table when no k could be compared."""
    found = decision.recommendation
    objective = str(decision.objective.used or "objective")
    if found is None or not found.standings:
        return DecisionView(decision.headline, decision.sentence, (), (), None)
    head = (
        "k",
        objective,
        f"k − best of the others [{found.confidence:.0%} bounds]",
        "at most below the best",
        "standing",
        *(REFUSAL_HEADS[m] for m in REFUSAL_MEASURES),
        "cost (k)" if decision.cost_unit == K_COST else "generator prompt tokens",
    )
    rows = tuple(_row(s, decision, found) for s in found.standings)
    return DecisionView(decision.headline, decision.sentence, head, rows, found.recommended_k)


def _row(standing: KStanding, decision: Decision, found: Recommendation) -> tuple[str, ...]:
    versus = (
        f"{standing.difference:+.3f} [{standing.difference_low:+.3f}, "
        f"{standing.difference_high:+.3f}]"
    )
    shares = decision.refusals.get(standing.k, {})
    fewer = found.n_questions - standing.n
    mean = f"{standing.mean:.3f}" + (f" (of {standing.n})" if fewer else "")
    return (
        str(standing.k),
        mean,
        versus,
        f"{standing.regret_bound:.3f}",
        standing_label(standing, found),
        *(_share(shares.get(m)) for m in REFUSAL_MEASURES),
        f"{standing.cost:,.0f}",
    )


def _share(value: float | None) -> str:
    return MISSING if value is None else f"{value:.2f}"
