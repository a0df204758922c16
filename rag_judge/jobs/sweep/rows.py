"""One question's sweep outcome, and its rows of the per-question table (one per k).

Costs are attributed where they were spent: each row carries its answer's generation (none
when the user's RAG gave the answer) and its per-k judges; the one pass of context recall (or
precision) over the top K is counted on the row of k = K. A step shared by several judges (the
reference's claims) is counted by each judge that uses it, as the judges report it; the
client's ledger has the exact totals.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from rag_judge.core.types import JudgeResult
from rag_judge.data.eval_sets import EvalQuery
from rag_judge.jobs.sweep.decision.columns import ANSWER_TOKENS, ANSWERABLE, REFUSED
from rag_judge.jobs.sweep.decision.outcomes import PROVIDER_REFUSAL
from rag_judge.jobs.sweep.plan import SweepPlan
from rag_judge.judges.refusal import answer_refuses
from rag_judge.pipeline.generate import Generation

AnswerSource = Literal["generated", "external"]
"""Where a question's answers come from (column ``answer_source``)."""


@dataclass(frozen=True)
class QuestionRun:
    """Everything one question produced: an answer per k and the judges' results."""

    query: EvalQuery
    language: str
    """The question's detected language."""
    n_retrieved: int
    """Chunks the retriever returned (at most K)."""
    generations: tuple[Generation, ...]
    """One per k, in the plan's ascending order."""
    once: Mapping[str, JudgeResult]
    """Judges run once on the top K (context recall), by name."""
    per_k: Sequence[Mapping[str, JudgeResult]]
    """Per-k judges' results, one mapping per k in the plan's order."""
    answer_source: AnswerSource = "generated"
    """``generated`` by our generator, or ``external``: given by the user's RAG (no call)."""

    @property
    def failed(self) -> bool:
        """True when a model call failed for any k: an answer or a judge (a bar's "failed")."""
        judged = [*self.once.values(), *(r for per in self.per_k for r in per.values())]
        return any(g.status != "ok" for g in self.generations) or any(r.failed for r in judged)


def question_rows(run: QuestionRun, plan: SweepPlan) -> list[dict[str, Any]]:
    """The question's rows, one per k: ids, the answer, every judge's value and status, cost."""
    rows = []
    for k, generation, judged in zip(plan.ks, run.generations, run.per_k, strict=True):
        row: dict[str, Any] = {
            "question_id": run.query.id,
            "type": run.query.type,
            "language": run.language,
            "k": k,
            "n_contexts": min(k, run.n_retrieved),
            ANSWERABLE: run.query.answerable,
            "answer": generation.answer,
            "generation_status": generation.status,
            REFUSED: (
                answer_refuses(generation.answer, judged.values())
                if generation.status == "ok" and generation.answer is not None
                else True  # the provider refused to answer: a refusal, not a failure
                if generation.status == PROVIDER_REFUSAL
                else None
            ),
            "answer_source": run.answer_source,
            ANSWER_TOKENS: (
                generation.usage.prompt_tokens if run.answer_source == "generated" else None
            ),
        }
        for name, result in judged.items():
            row |= {name: result.value, f"{name}_status": result.status}
        for name, result in run.once.items():
            row |= {name: _at_k(result, min(k, run.n_retrieved)), f"{name}_status": result.status}
        once = list(run.once.values()) if k == plan.k_max else []
        generated = run.answer_source == "generated"
        row |= _cost(generation, [*judged.values(), *once], generated=generated)
        rows.append(row)
    return rows


def _at_k(result: JudgeResult, k: int) -> float | None:
    """A one-pass judge's value for the top k (None when it has no value)."""
    if result.status != "ok" or not result.by_k:
        return None
    return result.by_k.get(k, result.value)


def _cost(
    generation: Generation, results: Sequence[JudgeResult], *, generated: bool
) -> dict[str, int]:
    usage = sum((r.usage for r in results), generation.usage)
    return {
        "calls": int(generated) + sum(r.calls for r in results),
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
    }
