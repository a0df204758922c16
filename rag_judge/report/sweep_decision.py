"""The decision as table cells, for the markdown summary and the HTML page alike.

One row per k: the objective's mean over the decision's questions, the paired difference to the
reference k (the recommended one, else the best by mean) with its simultaneous interval, the
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
    """Where one k stands: recommended, within the margin, could be the best, worse, or never
    answers."""
    if not standing.eligible:
        return "never answers"
    if standing.k == found.recommended_k:
        return "recommended"
    if standing.within_margin:
        return "within margin"
    return "could be best" if standing.could_be_best else "worse"


def decision_view(decision: Decision) -> DecisionView:
    """The view of a decision; an empty table when no k could be compared."""
    found = decision.recommendation
    objective = str(decision.objective.used or "objective")
    if found is None or not found.standings:
        return DecisionView(decision.headline, decision.sentence, (), (), None)
    reference = found.reference_k
    head = (
        "k",
        objective,
        f"vs k={reference} [simultaneous {found.confidence:.0%} CI]",
        "at most below the best",
        "standing",
        *(REFUSAL_HEADS[m] for m in REFUSAL_MEASURES),
        "cost (k)" if decision.cost_unit == K_COST else "generator prompt tokens",
    )
    rows = tuple(_row(s, decision, found) for s in found.standings)
    return DecisionView(decision.headline, decision.sentence, head, rows, found.recommended_k)


def _row(standing: KStanding, decision: Decision, found: Recommendation) -> tuple[str, ...]:
    if standing.k == found.reference_k:
        versus = "—"
    else:
        versus = (
            f"{standing.difference:+.3f} [{standing.difference_low:+.3f}, "
            f"{standing.difference_high:+.3f}]"
        )
    shares = decision.refusals.get(standing.k, {})
    return (
        str(standing.k),
        f"{standing.mean:.3f}",
        versus,
        f"{standing.regret_bound:.3f}",
        standing_label(standing, found),
        *(_share(shares.get(m)) for m in REFUSAL_MEASURES),
        f"{standing.cost:,.0f}",
    )


def _share(value: float | None) -> str:
    return MISSING if value is None else f"{value:.2f}"
