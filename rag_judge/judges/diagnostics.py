"""RAGChecker-style diagnostics from grids the other judges already build.

Context utilization reuses the context-recall and completeness grids (no extra call when
those judges run). Noise sensitivity needs one more check: the answer's claims against the
reference.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from rag_judge.core.types import ClaimVerdict, JudgeResult
from rag_judge.judges import call_rates
from rag_judge.judges.base import Judge, claim_grid, cost_fields, unscored
from rag_judge.judges.scoring import context_utilization as utilization_score
from rag_judge.judges.scoring import noise_sensitivity as noise_score
from rag_judge.judges.steps import Cost, Outcome
from rag_judge.judges.work import SampleWork

Grid = Callable[[], Awaitable[Outcome[list[ClaimVerdict]]]]


async def _two_grids(
    metric: str, claims: Outcome[list[str]], first: Grid, second: Grid, *, whose: str
) -> JudgeResult | tuple[list[ClaimVerdict], list[ClaimVerdict], Cost]:
    """Verdicts on the same claims from two grids, with their combined cost."""
    found = await claim_grid(metric, claims, first, whose=whose)
    if isinstance(found, JudgeResult):
        return found
    verdicts, cost = found.verdicts, found.cost
    other = await second()
    cost += other.cost
    if not other.ok or other.value is None:
        return unscored(metric, other, cost)
    return verdicts, other.value, cost


async def context_utilization(work: SampleWork) -> JudgeResult:
    """Of the reference claims the contexts support, the share the answer states."""
    metric = "context_utilization"
    found = await _two_grids(
        metric,
        await work.reference_claims(),
        work.reference_vs_contexts,
        work.reference_vs_answer,
        whose="reference",
    )
    if isinstance(found, JudgeResult):
        return found
    in_contexts, in_answer, cost = found
    value = utilization_score(in_contexts, in_answer)
    if value is None:
        return JudgeResult(
            metric=metric,
            status="no_claims",
            error="the contexts support no claim of the reference",
            **cost_fields(cost),
        )
    return JudgeResult(metric=metric, value=value, claims=tuple(in_answer), **cost_fields(cost))


async def noise_sensitivity(work: SampleWork) -> JudgeResult:
    """Share of the answer's claims that are wrong (not in the reference) yet in a context."""
    metric = "noise_sensitivity"
    found = await _two_grids(
        metric,
        await work.answer_claims(),
        work.answer_vs_contexts,
        work.answer_vs_reference,
        whose="answer",
    )
    if isinstance(found, JudgeResult):
        return found
    vs_contexts, vs_reference, cost = found
    misled = [
        a.claim
        for a, b in zip(vs_contexts, vs_reference, strict=True)
        if a.verdict == "supported" and b.verdict != "supported"
    ]
    return JudgeResult(
        metric=metric,
        value=noise_score(vs_contexts, vs_reference),
        claims=tuple(vs_contexts),
        details={"misled_claims": misled},
        **cost_fields(cost),
    )


CONTEXT_UTILIZATION = Judge(
    name="context_utilization",
    label="context utilization",
    needs=("answer", "contexts", "reference"),
    run=context_utilization,
    description="Of the reference claims the contexts support, the share the answer states.",
    cites="answer",
    call_rates=call_rates.CLAIM_CHECK,
)
NOISE_SENSITIVITY = Judge(
    name="noise_sensitivity",
    label="noise sensitivity",
    needs=("answer", "contexts", "reference"),
    run=noise_sensitivity,
    description="Share of the answer's claims that are wrong yet supported by a retrieved "
    "context (lower is better).",
    higher_is_better=False,
    cites="contexts",
    moved_by="noise",
    call_rates=call_rates.CLAIM_CHECK,
)
