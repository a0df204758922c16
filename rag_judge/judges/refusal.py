"""Whether an answer is a refusal: it asserts nothing, so no judge of its claims can score it.

A refusal is an outcome, not a missing value (the k-sweep's decision gives it a worth); this
module only recognises one: an empty answer, a bare "I don't know" / "不知道" (the sweep's
generator is told to reply so when the passages lack the answer), or an answer in which a judge
that extracts the answer's claims found none ("The passages do not say.").
"""

from __future__ import annotations

from collections.abc import Iterable

from rag_judge.core.types import JudgeResult
from rag_judge.judges import JUDGES
from rag_judge.judges.segment import is_refusal


def answer_refuses(answer: str, results: Iterable[JudgeResult] = ()) -> bool:
    """True when ``answer`` asserts nothing: empty, a bare refusal, or ``no_claims`` from a
    judge that reads the answer's claims (among ``results``, that answer's judgements).

    >>> answer_refuses("不知道。"), answer_refuses("  "), answer_refuses("1903年")
    (True, True, False)
    >>> answer_refuses("It is unclear.", [JudgeResult(metric="faithfulness", status="no_claims")])
    True
    """
    if not answer.strip() or is_refusal(answer):
        return True
    return any(
        r.status == "no_claims"
        and (judge := JUDGES.get(r.metric)) is not None
        and judge.reads_answer_claims
        for r in results
    )
