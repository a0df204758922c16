"""Reasons for the rows a sweep's report shows, written after the sweep instead of for every row.

On the scoring path a reason (why a claim is unsupported) is decoded text: a call of 1-2 s per
claim on two cores that changes no score. A sweep's reasons are read in one place, report.html's
lowest-valued rows per judge (:data:`SHOWN_WORST`, chosen by :func:`worst_rows`), so an
in-process sweep judges every row without them and, once calibrated and decided, judges those
rows again with reasons on (:func:`explain_shown`): the same prompts as before, so with the
response cache every support and contradiction check is a cache hit, and only the reasons are
new calls. ``rag-judge score`` still writes a reason for every claim (its score file carries
them).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pandas as pd

from rag_judge.backends.wrapper.client import ModelClient
from rag_judge.core.language import detect_language
from rag_judge.core.types import ClaimVerdict, JudgeResult
from rag_judge.data.eval_sets import EvalQuery
from rag_judge.jobs.sweep.judging import sample_of
from rag_judge.jobs.sweep.result import SweepResult
from rag_judge.judges import JUDGES, JudgeOptions, SampleWork
from rag_judge.runtime.events import QUIET, Events

SHOWN_WORST = 5
"""Lowest-valued (question, k) rows per judge that the report shows, with claims and reasons."""
STEP = "reasons for the report's rows"
"""The step :func:`explain_shown` reports progress under."""


def worst_rows(frame: pd.DataFrame, metric: str, count: int) -> pd.DataFrame:
    """The ``count`` scored rows of ``metric`` with the lowest value (highest when lower is
    better), ties by question id and k: the rows the report shows."""
    scored = frame[frame[metric].notna()]
    ascending = JUDGES[metric].higher_is_better if metric in JUDGES else True
    ordered = scored.sort_values(
        [metric, "question_id", "k"], ascending=[ascending, True, True], kind="stable"
    )
    return ordered.head(count)


def unexplained(judged: JudgeResult | None) -> bool:
    """The judge found a claim unsupported and gave no reason for it."""
    return judged is not None and any(
        c.verdict in ("contradicted", "not_mentioned") and not c.reason for c in judged.claims
    )


async def explain_shown(
    result: SweepResult,
    queries: Sequence[EvalQuery],
    client: ModelClient,
    options: JudgeOptions,
    *,
    count: int = SHOWN_WORST,
    events: Events = QUIET,
) -> SweepResult:
    """``result`` with reasons for the unsupported claims of the rows the report shows.

    Args:
        result: The decided sweep, judged without reasons.
        queries: The swept questions (their references, for judges that read them).
        client: The judge's client (its cache makes the repeated checks free).
        options: The judges' options of the sweep (``reasons`` is turned on here).
        count: Rows per judge, as the report shows.
        events: Hears :data:`STEP` advance, row by row.
    """
    if result.judge_mode != "score":
        return result
    by_id = {q.id: q for q in queries}
    knobs = dataclasses.replace(options, mode="score", reasons=True)
    judgements = {key: dict(judged) for key, judged in result.judgements.items()}
    todo = [
        (metric, str(row["question_id"]), int(row["k"]), row.get("answer"))
        for metric in result.metrics
        if (judge := JUDGES.get(metric)) is not None and judge.uses_model
        for row in worst_rows(result.per_question, metric, count).to_dict("records")
        if unexplained(judgements.get((str(row["question_id"]), int(row["k"])), {}).get(metric))
        and str(row["question_id"]) in by_id
        and str(row["question_id"]) in result.passages
    ]
    for done, (metric, qid, k, answer) in enumerate(todo):
        events.advanced(STEP, done, len(todo))
        judge = JUDGES[metric]
        once = judge.scope == "per_question"
        passages = result.passages[qid]
        top = list(passages) if once else list(passages[:k])
        work = _work(by_id[qid], top, None if once else _answer(answer), client, knobs)
        explained = _with_reasons(judgements[(qid, k)][metric], await judge(work))
        for key in [(qid, kk) for kk in result.ks] if once else [(qid, k)]:
            if key in judgements and metric in judgements[key]:
                judgements[key][metric] = explained
    if todo:
        events.advanced(STEP, len(todo), len(todo))
    return dataclasses.replace(result, judgements=judgements)


def _answer(value: object) -> str | None:
    """The row's answer, None when it has none (a failed generation)."""
    return value if isinstance(value, str) else None


def _work(
    query: EvalQuery,
    contexts: list[str],
    answer: str | None,
    client: ModelClient,
    options: JudgeOptions,
) -> SampleWork:
    """The row's judging work, built as the sweep built it."""
    language = detect_language(query.question)
    sample = sample_of(query, contexts, answer, language)
    return SampleWork(sample, language=language, client=client, embedder=None, options=options)


def _with_reasons(judged: JudgeResult, again: JudgeResult) -> JudgeResult:
    """``judged`` with the reasons ``again`` gave its unsupported claims (matched by position
    and text) and the prompts that wrote them; its values, verdicts and cost stay the sweep's
    (the reasons' calls are in the ledger)."""
    if len(again.claims) != len(judged.claims):
        return judged
    claims: list[ClaimVerdict] = []
    for mine, theirs in zip(judged.claims, again.claims, strict=True):
        if mine.claim == theirs.claim and not mine.reason and theirs.reason:
            mine = mine.model_copy(update={"reason": theirs.reason})
        claims.append(mine)
    prompts = tuple(dict.fromkeys((*judged.prompts, *again.prompts)))
    return judged.model_copy(update={"claims": tuple(claims), "prompts": prompts})
