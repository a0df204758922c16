"""Answer relevancy: do questions written from the answer look like the question asked?"""

from __future__ import annotations

from rag_judge.backends.providers.vectors import cosine
from rag_judge.core.types import JudgeResult, JudgeStatus
from rag_judge.judges import call_rates
from rag_judge.judges.base import Judge, cost_fields, unscored
from rag_judge.judges.scoring import answer_relevancy_score
from rag_judge.judges.work import SampleWork

NAME = "answer_relevancy"


async def answer_relevancy(work: SampleWork) -> JudgeResult:
    """Mean cosine between the question and n questions the answer answers, clamped to [0, 1].

    An evasive (noncommittal) answer follows the configured policy (default: 0).
    """
    generated = await work.reverse_questions()
    cost = generated.cost
    if not generated.ok or generated.value is None:
        return unscored(NAME, generated, cost)
    questions, noncommittal = generated.value.questions, generated.value.noncommittal
    details: dict[str, object] = {"questions": questions, "noncommittal": noncommittal}
    policy = work.options.noncommittal
    if noncommittal and policy != "ignore":
        value = answer_relevancy_score([], noncommittal=True, policy=policy)
        status: JudgeStatus = "ok" if value is not None else "noncommittal"
        return JudgeResult(
            metric=NAME, value=value, status=status, details=details, **cost_fields(cost)
        )
    if not questions:
        return JudgeResult(
            metric=NAME,
            status="parse_error",
            error="the model wrote no question",
            details=details,
            **cost_fields(cost),
        )
    embedder = work.embedder()
    if embedder is None:
        return JudgeResult(
            metric=NAME, status="backend_error", error="no embedder configured", **cost_fields(cost)
        )
    embedded = await embedder.embed([work.sample.question or "", *questions])
    if embedded.status != "ok":
        return JudgeResult(
            metric=NAME,
            status=embedded.status,
            error=embedded.error,
            details=details,
            **cost_fields(cost),
        )
    original, *others = embedded.vectors
    similarities = [cosine(original, other) for other in others]
    details |= {"similarities": similarities, "embeddings": embedder.name}
    return JudgeResult(
        metric=NAME,
        value=answer_relevancy_score(similarities, noncommittal=noncommittal, policy=policy),
        details=details,
        **cost_fields(cost),
    )


ANSWER_RELEVANCY = Judge(
    name=NAME,
    label="answer relevancy",
    needs=("question", "answer"),
    run=answer_relevancy,
    description="Mean cosine similarity between the question and questions generated from the "
    "answer.",
    embeds="the reverse questions",
    moved_by="noise",
    default=True,
    call_rates=call_rates.REVERSE_QUESTIONS,
)
