"""Context recall and context precision, at every k ≤ K from one (claim × passage) grid."""

from __future__ import annotations

from rag_judge.core.types import JudgeResult
from rag_judge.judges import call_rates
from rag_judge.judges.base import Judge, claim_grid, cost_fields
from rag_judge.judges.claim_judges import verdict_counts
from rag_judge.judges.scoring import (
    average_precision,
    precision_by_k,
    recall_by_k,
    support_by_k,
    useful_chunks,
)
from rag_judge.judges.work import SampleWork


async def context_recall(work: SampleWork) -> JudgeResult:
    """Share of the reference's claims the top-K contexts support; ``by_k`` for every k ≤ K."""
    found = await claim_grid(
        "context_recall",
        await work.reference_claims(),
        work.reference_vs_contexts,
        whose="reference",
    )
    if isinstance(found, JudgeResult):
        return found
    verdicts, details = found.verdicts, dict(found.details)
    k_max = len(work.sample.contexts or ())
    if work.mode == "score":  # the mean P(supported) of the reference claims given the top k
        by_k = support_by_k(details.pop("support_by_k"))
    else:
        by_k = recall_by_k(verdicts, k_max)
    return JudgeResult(
        metric="context_recall",
        value=by_k[k_max],
        by_k=by_k,
        claims=tuple(verdicts),
        details=verdict_counts(verdicts) | details,
        **cost_fields(found.cost),
    )


async def context_precision(work: SampleWork) -> JudgeResult:
    """Rank-aware precision of the contexts: a context is useful if it supports a reference
    claim; average precision over the useful ranks (``by_k`` for every k ≤ K)."""
    found = await claim_grid(
        "context_precision",
        await work.reference_claims(),
        work.reference_vs_contexts,
        whose="reference",
    )
    if isinstance(found, JudgeResult):
        return found
    useful = useful_chunks(found.verdicts, len(work.sample.contexts or ()))
    return JudgeResult(
        metric="context_precision",
        value=average_precision(useful),
        by_k=precision_by_k(useful),
        claims=tuple(found.verdicts),
        details={"useful": [i for i, flag in enumerate(useful, start=1) if flag]},
        **cost_fields(found.cost),
    )


CONTEXT_RECALL = Judge(
    name="context_recall",
    label="context recall",
    needs=("contexts", "reference"),
    run=context_recall,
    description="Share of the reference answer's claims supported by the retrieved contexts "
    "(per k too).",
    scope="per_question",
    cites="contexts",
    moved_by="missing_passages",
    default=True,
    call_rates=call_rates.PASSAGE_CHECK,
)
CONTEXT_PRECISION = Judge(
    name="context_precision",
    label="context precision",
    needs=("contexts", "reference"),
    run=context_precision,
    description="Average precision of the contexts, a context being useful if it supports a "
    "reference claim (per k too).",
    scope="per_question",
    cites="contexts",
    call_rates=call_rates.PASSAGE_CHECK,
)
