"""What a judge is: a name, the inputs it needs, and an async function of one sample's work."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from rag_judge.judges.steps import Cost, Outcome
from rag_judge.judges.work import SampleWork
from rag_judge.types import JudgeResult, RagSample


@dataclass(frozen=True)
class Judge:
    """A metric computed by LLM steps plus a pure scoring function."""

    name: str
    needs: tuple[str, ...]
    """Sample fields that must be present (question, contexts, answer, reference)."""
    run: Callable[[SampleWork], Awaitable[JudgeResult]]
    """Score one sample whose inputs are all present."""
    description: str
    higher_is_better: bool = True

    def missing(self, sample: RagSample) -> list[str]:
        """The needed fields this sample lacks (None, empty text or no contexts)."""
        return [name for name in self.needs if not getattr(sample, name)]

    async def __call__(self, work: SampleWork) -> JudgeResult:
        """Score, or ``missing_input`` naming the fields this sample lacks."""
        if absent := self.missing(work.sample):
            return JudgeResult(
                metric=self.name,
                status="missing_input",
                error=f"needs {', '.join(absent)}",
            )
        return await self.run(work)


def unscored(metric: str, outcome: Outcome[Any], cost: Cost) -> JudgeResult:
    """The result of a judge whose step failed: no value, the step's status and error."""
    return JudgeResult(
        metric=metric, status=outcome.status, error=outcome.error, **cost_fields(cost)
    )


def cost_fields(cost: Cost) -> dict[str, Any]:
    """The JudgeResult fields that record what a judge cost."""
    return {"calls": cost.calls, "usage": cost.usage, "prompts": cost.prompts}


async def claim_grid(
    metric: str,
    claims: Outcome[list[str]],
    grid: Callable[[], Awaitable[Outcome[list[Any]]]],
    *,
    whose: str,
) -> JudgeResult | tuple[list[Any], Cost]:
    """Claims, then their verdicts: the verdicts and their cost, or the unscored result.

    No claims is ``no_claims`` (e.g. a refusal has nothing to verify), never a 0 or a 1.
    """
    if not claims.ok or claims.value is None:
        return unscored(metric, claims, claims.cost)
    if not claims.value:
        return JudgeResult(
            metric=metric,
            status="no_claims",
            error=f"the {whose} makes no factual claim",
            **cost_fields(claims.cost),
        )
    verdicts = await grid()
    cost = claims.cost + verdicts.cost
    if not verdicts.ok or verdicts.value is None:
        return unscored(metric, verdicts, cost)
    return verdicts.value, cost
