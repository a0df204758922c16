"""Run a k-sweep: retrieve top K once, answer for every k, judge every k, score retrieval per k.

Per question, the model sees the calls in the order that lets llama.cpp reuse its KV cache
(:mod:`rag_judge.jobs.sweep.judging`): every k's answer in ascending k back to back, then the steps
that read no passage, then the passage-reading judges in ascending k. Context recall (and
precision) for every k comes from one pass over the top K. Questions run one at a time when
the client allows one call at a time (the local model), else up to the client's concurrency.
Every model call goes through the client and its response cache, so re-running a finished
sweep makes no model call.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Sequence

from rag_judge.backends.wrapper.client import ModelClient
from rag_judge.backends.wrapper.embedding_client import EmbeddingClient
from rag_judge.core.errors import InputError
from rag_judge.data.eval_sets import EvalQuery, EvalSet
from rag_judge.jobs.sweep.decision.columns import ANSWER_TOKENS, RERANK_TOKENS
from rag_judge.jobs.sweep.decision.objective import default_objective, with_free_parts
from rag_judge.jobs.sweep.judging import QuestionRunner
from rag_judge.jobs.sweep.options import SweepOptions
from rag_judge.jobs.sweep.plan import plan_sweep
from rag_judge.jobs.sweep.result import SweepResult, build_frame
from rag_judge.jobs.sweep.rows import QuestionRun, question_rows
from rag_judge.jobs.sweep.sources import from_index, from_rag
from rag_judge.judges.mode import choose_mode
from rag_judge.pipeline.base import Retriever
from rag_judge.pipeline.chunking import Chunk
from rag_judge.pipeline.external.base import ExternalRag
from rag_judge.pipeline.external.load import external_rag
from rag_judge.retrieval.text_relevance import DEFAULT_THRESHOLD

Progress = Callable[[str], None]
"""Called with each question's id once all its ks are judged (e.g. to advance a bar)."""


async def sweep_questions(
    eval_set: EvalSet,
    options: SweepOptions | None = None,
    *,
    retriever: Retriever | None = None,
    chunks: Sequence[Chunk] | None = None,
    rag: ExternalRag | object | None = None,
    client: ModelClient,
    generator: ModelClient | None = None,
    embedder: EmbeddingClient | None = None,
    text_threshold: float = DEFAULT_THRESHOLD,
    progress: Progress | None = None,
    on_question: Callable[[QuestionRun], None] | None = None,
) -> SweepResult:
    """Sweep k over the eval set's questions with one retriever, generator and judge model,
    undecided: the job (:func:`~rag_judge.jobs.sweep.job.sweep_job`, :func:`~rag_judge.jobs.
    sweep.job.sweep`) builds the RAG, calls this, then calibrates and decides.

    Give either ``retriever`` and ``chunks`` (our RAG) or ``rag`` (the user's, see
    :mod:`rag_judge.pipeline.external`). An external RAG is asked for the top K once per
    question; its passages' texts are the contexts, and its answers, when it gives them, replace
    ours (no generation call; column ``answer_source`` says ``external``). Its ``doc_*`` measures
    need a ``doc_id`` on every passage, else they are skipped with the reason in ``skipped``.
    Only its retrieved passages are known, not its index, so its ``text_*`` measures judge
    relevance within the retrieved passages with no question left out as uncovered (a
    reference no passage covers scores 0: a miss of the system, chunking gap or not), and
    ``text_recall``/``text_ndcg``, whose denominators need the whole index, are skipped.

    Args:
        eval_set: Questions, reference answers, qrels and the manifest's not-applicable list.
        options: What to sweep and measure (ks, judges, objective, the judges' knobs); checked
            when built. ``limit``, ``retriever``, ``rerank`` and ``rag`` name what the job
            builds and are not read here: give the built RAG below.
        retriever: The retriever under test (BM25, dense, hybrid, reranked, ...).
        chunks: The chunks the retriever indexes (their texts are the contexts).
        rag: A user's RAG instead of ``retriever``/``chunks``: an ``ExternalRag`` (callable,
            JSONL or endpoint), its spec string, or a LangChain retriever or chain, a
            LlamaIndex retriever or query engine, or a callable (recognised by
            :func:`~rag_judge.pipeline.external.load.rag_from_object`).
        client: The judge's model client (and the generator's unless ``generator`` is given);
            give it a ``ResponseCache`` to make the sweep resumable.
        generator: The model client that answers, when it is not the judge's.
        embedder: Embedding client for answer relevancy (skipped without one).
        text_threshold: n-gram coverage for relevance by answer text.
        progress: Called with each finished question's id.
        on_question: Called with each finished question's whole run (answers, results).

    Raises:
        InputError: both or neither of ``rag`` and ``retriever``/``chunks``, unknown chunk ids,
            or what the external RAG's source reports.
    """
    options = options or SweepOptions()
    objective = options.objective or default_objective(eval_set.reference_kind)
    metrics = with_free_parts(options.metrics, objective)
    plan = plan_sweep(eval_set, options.ks, metrics, has_embedder=embedder is not None)
    queries = list(eval_set.queries)
    if rag is not None:
        if retriever is not None or chunks is not None:
            raise InputError("give either rag or retriever and chunks, not both", field="rag")
        got = await from_rag(external_rag(rag), eval_set, plan.ks, text_threshold)
    elif retriever is None or chunks is None:
        raise InputError("give a retriever and its chunks, or rag", field="retriever")
    else:
        got = await from_index(eval_set, retriever, chunks, plan.ks, text_threshold)
    answering = generator or client
    chosen_mode = await choose_mode(client, options.judge.mode)
    knobs = dataclasses.replace(options.judge, mode=chosen_mode.mode)
    runner = QuestionRunner(plan, client, answering, embedder, knobs)
    gate = asyncio.Semaphore(min(client.policy.concurrency, answering.policy.concurrency))

    async def one(query: EvalQuery) -> QuestionRun:
        async with gate:
            done = await runner.question(query, got.texts[query.id], got.answers.get(query.id, {}))
        if progress is not None:
            progress(query.id)
        if on_question is not None:
            on_question(done)
        return done

    runs = await asyncio.gather(*(one(q) for q in queries))
    rows = [row for run in runs for row in question_rows(run, plan)]
    frame = build_frame(rows, plan, got.by_id, got.by_text)
    if got.rerank_tokens:
        spent = frame["question_id"].map(got.rerank_tokens)
        where = list(frame.columns).index(ANSWER_TOKENS) + 1
        frame.insert(where, RERANK_TOKENS, spent.astype("Int64"))
    return SweepResult(
        per_question=frame,
        ks=plan.ks,
        metrics=plan.metrics,
        skipped={**plan.skipped, **got.skipped},
        uncovered=got.uncovered,
        model=client.name,
        generator=answering.name,
        ledger=client.ledger,
        judgements={
            (run.query.id, k): {**judged, **run.once}
            for run in runs
            for k, judged in zip(plan.ks, run.per_k, strict=True)
        },
        questions={q.id: q.question for q in queries},
        retrieved={qid: tuple(ids) for qid, ids in got.ids.items()},
        passages={q.id: tuple(got.texts[q.id]) for q in queries},
        objective=objective,
        judge_mode=chosen_mode.mode,
        judge_mode_note=chosen_mode.note,
    )
