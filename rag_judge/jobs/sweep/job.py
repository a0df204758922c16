"""The k-sweep's entries, one per form, all returning the same decided, calibrated result:

- :func:`sweep` and :func:`asweep` (Python, notebooks; named as :func:`rag_judge.evaluate` and
  :func:`rag_judge.aevaluate` are): an eval set and the options, given whole or as keywords;
- :func:`sweep_job` (``rag-judge sweep``, ``make demo``): a session and options, where the
  executor says.

In process the sweep is :func:`~rag_judge.jobs.sweep.in_process.sweep_in_process`; batched, it
runs in stages over the response cache (:mod:`rag_judge.runtime.executors.batched`) with both
the judge's and the generator's clients; on Ray, as shares of the questions
(:mod:`rag_judge.jobs.sweep.on_ray`). Every form calibrates (``options.calibration``), then
decides (:mod:`rag_judge.jobs.sweep.decision`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rag_judge.backends.wrapper.client import ModelClient
from rag_judge.calibration.profile import CalibrationProfile
from rag_judge.core.errors import InputError
from rag_judge.data.eval_sets import EvalSet, load_eval_set
from rag_judge.jobs.calibrate.fit_profile import apply_profile_to_sweep, profile_for_run
from rag_judge.jobs.sweep.decision.arms import ArmNames
from rag_judge.jobs.sweep.decision.decide import decide_table
from rag_judge.jobs.sweep.decision.looks import SweepLooks
from rag_judge.jobs.sweep.decision.objective import choose_objective
from rag_judge.jobs.sweep.decision.sequential import SequentialRecord
from rag_judge.jobs.sweep.explain import explain_shown
from rag_judge.jobs.sweep.in_process import sweep_in_process
from rag_judge.jobs.sweep.looks_store import (
    NOT_RECORDED,
    load_looks,
    new_test,
    record_key,
    record_path,
    save_looks,
)
from rag_judge.jobs.sweep.options import SweepOptions
from rag_judge.jobs.sweep.plan import check_objective_fits
from rag_judge.jobs.sweep.result import SweepResult
from rag_judge.jobs.sweep.rows import QuestionRun
from rag_judge.jobs.sweep.run import Progress
from rag_judge.jobs.sweep.until_decided import questions_allowed, sweep_until_decided
from rag_judge.judges.work import check_judge_options
from rag_judge.runtime.events import QUIET, Callbacks, Events
from rag_judge.runtime.executors import IN_PROCESS, Batch, Executor, OnRay
from rag_judge.runtime.executors.batched import Stage
from rag_judge.runtime.executors.on_batch import run_on_batch
from rag_judge.runtime.session import CacheChoice, Session, open_session
from rag_judge.runtime.settings import Settings, load_settings


@dataclass(frozen=True)
class SweepRun:
    """The sweep's result, and the batch stages that led to it (none unless batched)."""

    result: SweepResult
    stages: tuple[Stage, ...] = ()


async def sweep_job(
    eval_set: str | Path | EvalSet,
    session: Session,
    options: SweepOptions,
    *,
    executor: Executor = IN_PROCESS,
    events: Events = QUIET,
) -> SweepRun:
    """Sweep k on an eval set (bundled name, folder or set) with the session's models, where
    ``executor`` says, then calibrate (``options.calibration``) and decide: the result holds
    its decision. ``events`` hears the number of questions, then each finished question (of
    the final run only, when batched).

    Raises:
        InputError: a calibration profile that does not fit the session's judge (before any
            call), or what the eval set, the RAG or the index refuse.
    """
    if options.grid is not None:
        raise InputError(
            "a grid is a configuration sweep: run it with sweep_grid (Python) or "
            "rag-judge sweep --grid",
            field="grid",
        )
    start = start_job(eval_set, session, options, executor)
    whole, loaded, profile, in_process = start.whole, start.loaded, start.profile, start.in_process
    where, horizon, looks = start.where, start.horizon, start.looks
    if not in_process:
        run = await sweep_scaled_out(eval_set, session, options, executor, events)
        result = decided(
            calibrated(run.result, profile), options, looks, horizon=len(whole.queries)
        )
        save_looks(where, result.decision.looks if result.decision else None)
        return replace(run, result=result)
    # In process, reasons are written afterwards for the rows the report shows (explain.py).
    unreasoned = replace(options, judge=replace(options.judge, reasons=False))
    if options.until_decided:
        within = looks or new_test(horizon, options)
        swept, record, within = await sweep_until_decided(
            loaded, session, unreasoned, within, events
        )
        result = decided(
            calibrated(swept, profile), options, within, record, kept=looks is not None
        )
    else:
        swept = await sweep_in_process(loaded, session, unreasoned, events)
        result = decided(calibrated(swept, profile), options, looks, horizon=len(whole.queries))
    save_looks(where, result.decision.looks if result.decision and looks else None)
    if options.judge.reasons:
        result = await explain_shown(
            result, loaded.queries, session.client, options.judge, events=events
        )
    return SweepRun(result)


@dataclass(frozen=True)
class JobStart:
    """What a sweep's job (a k-sweep, a grid) has checked and loaded before any index or call."""

    whole: EvalSet
    loaded: EvalSet
    """The questions to sweep (the first ``limit``)."""
    profile: tuple[CalibrationProfile, str] | None
    in_process: bool
    where: Path | None
    """The sweep's record of looks (None without a response cache)."""
    horizon: int
    looks: SweepLooks | None


def start_job(
    eval_set: str | Path | EvalSet, session: Session, options: SweepOptions, executor: Executor
) -> JobStart:
    """Check what a job may refuse before any index or call (the judge's options, the
    calibration profile, a run until decided off this process, the objective against the set),
    load the set, and read the sweep's record of looks.

    Raises:
        InputError: any of those refusals, with the option named.
    """
    check_judge_options(options.judge, session.judge_name)
    profile = _profile(options, session)
    in_process = not isinstance(executor, OnRay | Batch)
    if options.until_decided and not in_process:
        raise InputError(
            "a sweep until decided runs in this process (no --executor ray or --batch): "
            "each batch waits for the look before it",
            field="until_decided",
        )
    whole = eval_set if isinstance(eval_set, EvalSet) else load_eval_set(eval_set)
    if options.objective is not None:
        check_objective_fits(whole, options.objective.parts)
    where = record_path(session, record_key(whole, options, session))
    loaded = _loaded(whole, options)
    horizon = questions_allowed(loaded, options) if options.until_decided else len(whole.queries)
    looks = load_looks(where, horizon, options)
    return JobStart(whole, loaded, profile, in_process, where, horizon, looks)


def calibrated(result: SweepResult, profile: tuple[CalibrationProfile, str] | None) -> SweepResult:
    """``result`` with the profile's calibrated columns (itself when there is no profile)."""
    return result if profile is None else apply_profile_to_sweep(result, *profile)


def decided(
    result: SweepResult,
    options: SweepOptions,
    looks: SweepLooks | None,
    record: SequentialRecord | None = None,
    *,
    kept: bool = True,
    horizon: int | None = None,
    names: ArmNames | None = None,
) -> SweepResult:
    """``result`` holding its decision by ``options``, as the next of the sweep's ``looks`` (None:
    no record, the decision's confidence is this look's alone); a run until decided is decided
    over the ks still in at its last look, with its record. ``kept``: the looks are recorded;
    ``horizon``: the most questions there are (what more questions can be planned within);
    ``names``: a configuration sweep's arms (its ``k`` column holds their numbers)."""
    active = record.looks[-1].active if record is not None and record.looks else result.ks
    frame = result.per_question[result.per_question["k"].isin(active)]
    decision = decide_table(
        frame,
        choose_objective(result, options.objective),
        active,
        margin=options.margin,
        confidence=options.confidence,
        looks=looks,
        limit=horizon,
        names=names,
    )
    if looks is None or not kept:
        decision = replace(
            decision, looks_note=" ".join(filter(None, (decision.looks_note, NOT_RECORDED)))
        )
    return replace(result, decision=replace(decision, sequential=record))


def _loaded(eval_set: EvalSet, options: SweepOptions) -> EvalSet:
    """The eval set, its first ``limit`` questions when a limit is given."""
    return eval_set if options.limit is None else eval_set.limit(options.limit)


def _profile(options: SweepOptions, session: Session) -> tuple[CalibrationProfile, str] | None:
    """The calibration profile, checked against the session's judge before any call."""
    if options.calibration is None:
        return None
    return profile_for_run(
        options.calibration,
        options.metrics,
        model=session.settings.judge_model,
        mode=options.judge.mode,
        few_shot=options.judge.few_shot,
    )


async def sweep_scaled_out(
    eval_set: str | Path | EvalSet,
    session: Session,
    options: SweepOptions,
    executor: Executor,
    events: Events,
) -> SweepRun:
    """The sweep itself, undecided: over Ray or in batched stages."""
    if isinstance(executor, OnRay):
        from rag_judge.jobs.sweep.on_ray import sweep_on_ray

        return SweepRun(sweep_on_ray(eval_set, session, options, executor.target, events))
    whole = eval_set if isinstance(eval_set, EvalSet) else load_eval_set(eval_set)
    loaded = _loaded(whole, options)
    if not isinstance(executor, Batch):
        raise TypeError(f"unknown executor {executor!r}")
    run = await run_on_batch(
        lambda view, shown: sweep_in_process(loaded, view, options, shown),
        session,
        executor,
        events=events,
        with_generator=True,
    )
    return SweepRun(run.result, run.stages)


async def asweep(
    eval_set: str | Path | EvalSet,
    options: SweepOptions | None = None,
    *,
    model: str | None = None,
    generator: str | None = None,
    judge: str | None = None,
    embeddings: str | None = None,
    base_url: str | None = None,
    generator_base_url: str | None = None,
    judge_base_url: str | None = None,
    concurrency: int | None = None,
    cache: CacheChoice = True,
    settings: Settings | None = None,
    client: ModelClient | None = None,
    generator_client: ModelClient | None = None,
    progress: Progress | None = None,
    on_question: Callable[[QuestionRun], None] | None = None,
    on_start: Callable[[int], None] | None = None,
    **values: Any,
) -> SweepResult:
    """Sweep k on an eval set and decide, as ``rag-judge sweep`` does: the same decided,
    calibrated result its report renders (``result.decision``). :func:`sweep` is the
    synchronous twin, with the same arguments.

    What to sweep is a :class:`~rag_judge.jobs.sweep.options.SweepOptions`, given whole as
    ``options`` or as its keywords (``ks=range(1, 6)``, ``limit=20``, ``metrics=[...]``,
    ``objective=...``, ``margin=0.05``, ``confidence=0.95``, ``retriever="bm25"``, ``rerank``,
    ``rerank_depth``, ``rag``, ``calibration``, and the judge's ``support_probability``,
    ``mode``, ``reasons``, ``few_shot``), all checked before any index or model call. The other
    keywords say which models run it.

    Args:
        eval_set: ``cmrc2018_zh``, ``cmrc2018_zh_chunked``, ``cranfield``, a folder in the
            eval-set format, or a set.
        options: The sweep's options (instead of their keywords).
        model: Generator and judge, ``provider/model`` (default: settings, then local).
        generator: The model that answers, when it is not ``model``.
        judge: The model that judges, when it is not ``model`` (a model judging its own
            answers favours them; the report warns when the two are one model).
        embeddings: Embedder for answer relevancy and dense retrieval (default: settings).
        base_url: OpenAI-compatible server for ``openai/`` and ``litellm/`` models.
        generator_base_url: The generator's server, when it is not ``base_url``.
        judge_base_url: The judge's server, when it is not ``base_url``.
        concurrency: Model calls in flight (the local model runs one at a time regardless).
        cache: True for the settings' response cache, a path for another, False for none.
            With a cache, an interrupted sweep resumes where it stopped.
        settings: Explicit settings instead of arguments, environment and config file.
        client: A ready model client (tests, custom backends); overrides ``model`` and
            ``judge``, and generates too unless ``generator_client`` is given.
        generator_client: A ready model client that answers (tests, custom backends).
        progress: Called with each finished question's id.
        on_question: Called with each finished question's whole run (answers, results).
        on_start: Called with the number of questions once the RAG is built.
        **values: The options' keywords, when ``options`` is not given.

    Raises:
        InputError: an unknown or wrong option, before any call.

    >>> from rag_judge.backends.providers.scripted import ScriptedBackend, register
    >>> model = register(ScriptedBackend(respond=lambda r: "光荣和ω-force", name="scripted/a"))
    >>> result = asyncio.run(asweep("cmrc2018_zh", limit=2, ks=[1, 2], metrics=["exact_match"],
    ...                             model=model, cache=False))
    >>> str(result.decision.objective.used), result.decision.n_questions  # F1 costs no call
    ('answer_f1', 2)
    """
    chosen, session, events = session_and_options(
        options,
        values,
        model=model, generator=generator, judge=judge, embeddings=embeddings,
        base_url=base_url, generator_base_url=generator_base_url, judge_base_url=judge_base_url,
        concurrency=concurrency, cache=cache, settings=settings, client=client,
        generator_client=generator_client, progress=progress, on_question=on_question,
        on_start=on_start,
    )  # fmt: skip
    run = await sweep_job(eval_set, session, chosen, events=events)
    return run.result


def session_and_options(
    options: SweepOptions | None,
    values: dict[str, Any],
    *,
    model: str | None = None,
    generator: str | None = None,
    judge: str | None = None,
    embeddings: str | None = None,
    base_url: str | None = None,
    generator_base_url: str | None = None,
    judge_base_url: str | None = None,
    concurrency: int | None = None,
    cache: CacheChoice = True,
    settings: Settings | None = None,
    client: ModelClient | None = None,
    generator_client: ModelClient | None = None,
    progress: Progress | None = None,
    on_question: Callable[[QuestionRun], None] | None = None,
    on_start: Callable[[int], None] | None = None,
) -> tuple[SweepOptions, Session, Events]:
    """What the keyword forms (:func:`asweep`, :func:`~rag_judge.jobs.grid.job.asweep_grid`)
    hand their job: the options (given whole, or built from ``values``), the session of the
    models named, and the callbacks as events (see :func:`asweep` for each argument).

    Raises:
        InputError: both options and their keywords, or an unknown or wrong option.
    """
    if options is not None and values:
        raise InputError(
            f"give options or their keywords, not both (got {', '.join(sorted(values))})",
            field=sorted(values)[0],
        )
    chosen_options = options or SweepOptions.build(**values)
    chosen = settings or load_settings(
        {
            "model": model,
            "generator": generator,
            "judge": judge,
            "base_url": base_url,
            "generator_base_url": generator_base_url,
            "judge_base_url": judge_base_url,
            "concurrency": concurrency,
        }
    )
    session = open_session(
        chosen, cache=cache, client=client, generator=generator_client, embeddings=embeddings
    )
    events = Callbacks(started=on_start, finished=_each_question(progress, on_question))
    return chosen_options, session, events


def _each_question(
    progress: Progress | None, on_question: Callable[[QuestionRun], None] | None
) -> Callable[[QuestionRun], None]:
    """The keyword form's two per-question callbacks as one: the id, then the whole run."""

    def finished(run: QuestionRun) -> None:
        if progress is not None:
            progress(run.query.id)
        if on_question is not None:
            on_question(run)

    return finished


def sweep(
    eval_set: str | Path | EvalSet, options: SweepOptions | None = None, **arguments: Any
) -> SweepResult:
    """:func:`asweep` from synchronous code (the same arguments, positional ones too).

    Two questions of the bundled CMRC 2018 set, k = 1..3, answered by a scripted model (a real
    run names one, ``model="openai/gpt-4o-mini"``, or none for the embedded default) and scored
    by exact match:

    >>> from rag_judge.backends.providers.scripted import ScriptedBackend, register
    >>> model = register(ScriptedBackend(respond=lambda r: "光荣和ω-force", name="scripted/doc"))
    >>> result = sweep("cmrc2018_zh", limit=2, ks=[1, 2, 3], metrics=["exact_match"],
    ...                objective="exact_match",
    ...                model=model, cache=False)
    >>> result.decision.objective.used
    Objective(parts=('exact_match',))
    >>> result.decision.headline
    'Undecided between k = 1, 2, 3'
    """
    return asyncio.run(asweep(eval_set, options, **arguments))
