"""What a judge is: a name, the inputs it needs, an async function of one sample's work, and
the facts the sweep, the report and the CLI read from it (so none of them lists judges by name).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from rag_judge.core.types import ClaimVerdict, JudgeResult, RagSample
from rag_judge.judges.call_rates import CallRate, CallRates
from rag_judge.judges.steps import Cost, Outcome
from rag_judge.judges.work import SampleWork

Scope = Literal["per_k", "per_question"]
"""``per_k``: judged on each k's answer and top k; ``per_question``: once on the top K, with a
value for every k in ``by_k``."""
Cites = Literal["contexts", "answer"]
"""What a judge's verdicts point at: retrieved chunks by rank, or the answer."""
MovedBy = Literal["missing_passages", "noise"]
"""What moves a judge across k: the answer missing from too few passages, or noise in many."""


@dataclass(frozen=True, kw_only=True)
class Judge:
    """A metric computed by LLM steps plus a pure scoring function, and what it needs."""

    name: str
    """The metric's name (column, ``--metrics``)."""
    label: str
    """How the report's prose names it (``answer relevancy``)."""
    needs: tuple[str, ...]
    """Sample fields that must be present (question, contexts, answer, reference)."""
    run: Callable[[SampleWork], Awaitable[JudgeResult]]
    """Score one sample whose inputs are all present."""
    description: str
    """One sentence on what the value means."""
    higher_is_better: bool = True
    scope: Scope = "per_k"
    """How a k-sweep runs it: on every k, or once per question on the top K."""
    embeds: str | None = None
    """What it embeds (``the reverse questions``); None when it needs no embedder."""
    cites: Cites | None = None
    """What its verdicts cite, for the report's claim tables; None when it has no claims."""
    moved_by: MovedBy | None = None
    """What the report says moves it when it reads fewer or more passages than the best k."""
    default: bool = False
    """Run when no metrics are named (``rag-judge score``, ``rag-judge sweep``)."""
    uses_model: bool = True
    """It calls the model (False for exact match and F1): a run whose every call failed has
    judged nothing, however many rows these scored."""
    reads_answer_claims: bool = False
    """It extracts the answer's claims, so its ``no_claims`` says the answer asserts nothing:
    a refusal, whatever its wording (the k-sweep counts it as one)."""
    call_rates: CallRates | None = None
    """Its calls and tokens per answer on each path (``sweep --dry-run``); None when it calls no
    model."""
    reason_rate: CallRate | None = None
    """What decoding its reasons adds on the ``score`` path; None when it writes none."""

    @property
    def reads_passages(self) -> bool:
        """Its prompts hold the retrieved passages (a sweep runs these after the others)."""
        return "contexts" in self.needs

    @property
    def needs_reference(self) -> bool:
        """It needs a reference answer (a reference-free eval set skips it)."""
        return "reference" in self.needs

    @property
    def needs_embedder(self) -> bool:
        """It embeds text, so a run without an embedder skips it."""
        return self.embeds is not None

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


@dataclass(frozen=True)
class Grid:
    """Verdicts on a text's claims, what they cost, and what the steps found on the way."""

    verdicts: list[ClaimVerdict]
    cost: Cost
    details: dict[str, Any]
    """The steps' details (claims dropped and why, evidence kept, support by k ...)."""


async def claim_grid(
    metric: str,
    claims: Outcome[list[str]],
    grid: Callable[[], Awaitable[Outcome[list[ClaimVerdict]]]],
    *,
    whose: str,
) -> JudgeResult | Grid:
    """Claims, then their verdicts, or the unscored result.

    No claims is ``no_claims`` (e.g. a refusal has nothing to verify), never a 0 or a 1.
    """
    if not claims.ok or claims.value is None:
        return unscored(metric, claims, claims.cost)
    if not claims.value:
        return JudgeResult(
            metric=metric,
            status="no_claims",
            error=f"the {whose} makes no factual claim",
            details=dict(claims.details),
            **cost_fields(claims.cost),
        )
    verdicts = await grid()
    cost = claims.cost + verdicts.cost
    if not verdicts.ok or verdicts.value is None:
        return unscored(metric, verdicts, cost)
    return Grid(verdicts.value, cost, {**claims.details, **verdicts.details})
