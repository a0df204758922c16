"""Faithfulness and completeness: the share of claims one text supports in another."""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable

from rag_judge.core.types import ClaimVerdict, JudgeResult
from rag_judge.judges import call_rates
from rag_judge.judges.base import Judge, claim_grid, cost_fields
from rag_judge.judges.scoring import support_score, supported_fraction
from rag_judge.judges.steps import Outcome
from rag_judge.judges.work import JudgeMode, SampleWork


async def faithfulness(work: SampleWork) -> JudgeResult:
    """Share of the answer's claims that the retrieved contexts support."""
    return await _supported_share(
        "faithfulness",
        await work.answer_claims(),
        work.answer_vs_contexts,
        whose="answer",
        mode=work.mode,
    )


async def completeness(work: SampleWork) -> JudgeResult:
    """Share of the reference answer's claims that the answer states."""
    return await _supported_share(
        "completeness",
        await work.reference_claims(),
        work.reference_vs_answer,
        whose="reference",
        mode=work.mode,
    )


async def _supported_share(
    metric: str,
    claims: Outcome[list[str]],
    grid: Callable[[], Awaitable[Outcome[list[ClaimVerdict]]]],
    *,
    whose: str,
    mode: JudgeMode,
) -> JudgeResult:
    """The share of ``claims`` the grid calls supported (``score`` mode: their mean
    P(supported)), with the verdicts and their counts."""
    found = await claim_grid(metric, claims, grid, whose=whose)
    if isinstance(found, JudgeResult):
        return found
    verdicts = found.verdicts
    value = supported_fraction(verdicts) if mode == "generate" else support_score(verdicts)
    return JudgeResult(
        metric=metric,
        value=value,
        claims=tuple(verdicts),
        details=verdict_counts(verdicts) | found.details,
        **cost_fields(found.cost),
    )


def verdict_counts(verdicts: list[ClaimVerdict]) -> dict[str, int]:
    """How many claims got each verdict (all three labels always present)."""
    counts = Counter(v.verdict for v in verdicts)
    return {label: counts[label] for label in ("supported", "contradicted", "not_mentioned")}


FAITHFULNESS = Judge(
    name="faithfulness",
    label="faithfulness",
    needs=("answer", "contexts"),
    run=faithfulness,
    description="Share of the answer's claims supported by the retrieved contexts.",
    cites="contexts",
    moved_by="noise",
    default=True,
    reads_answer_claims=True,
    call_rates=call_rates.CLAIM_CHECK,
    reason_rate=call_rates.REASON,
)
COMPLETENESS = Judge(
    name="completeness",
    label="completeness",
    needs=("answer", "reference"),
    run=completeness,
    description="Share of the reference answer's claims that the answer states.",
    cites="answer",
    moved_by="missing_passages",
    default=True,
    call_rates=call_rates.REFERENCE_CHECK,
)
