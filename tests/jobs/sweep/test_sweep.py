"""The k-sweep with a scripted model routed by prompt id and a fixed retriever: no weights.

The toy set, retriever and model are in ``sweep_toy.py``; every expected value below follows
from which chunks are in the top k.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from lockstep_scripted import LockstepScripted
from sweep_toy import (
    CHUNKS,
    KS,
    QUERIES,
    TEXTS,
    TOY,
    FixedRetriever,
    column,
    passages,
    respond,
    tagged,
    tagged_passages,
    toy_sweep,
)

from rag_judge.backends import ModelClient, ResponseCache
from rag_judge.backends.errors import BackendRefusal
from rag_judge.backends.providers.scripted import ScriptedBackend
from rag_judge.backends.types import ChatRequest
from rag_judge.core.errors import InputError
from rag_judge.data.eval_sets import load_eval_set
from rag_judge.jobs.sweep import SweepOptions
from rag_judge.jobs.sweep.decision import Objective, decide
from rag_judge.jobs.sweep.decision.outcomes import objective_table
from rag_judge.jobs.sweep.decision.refusals import REFUSAL_MEASURES
from rag_judge.jobs.sweep.plan import NO_REFERENCE
from rag_judge.jobs.sweep.run import sweep_questions
from rag_judge.judges import JudgeOptions
from rag_judge.pipeline.bm25 import BM25Retriever
from rag_judge.pipeline.chunking import chunk_corpus, structure_aware
from rag_judge.prompts.checks import validate_prompts
from rag_judge.prompts.templates import load_prompt

NO_EMBEDDER_TEXT = "no embedder given (answer relevancy embeds the reverse questions)"


@pytest.mark.parametrize("language", ["en", "zh"])
def test_generator_prompt_extends_k_minus_1_and_is_the_judges_prefix(language: str) -> None:
    """k's answer prompt starts with k - 1's passages, and the fragment judge's prompt starts
    with the answer prompt's system message, passages and question line: llama.cpp reads
    each passage once per question, and the judge re-reads only the answer."""
    prompt = load_prompt("generate/answer", language)
    contexts = ["First passage.", "Second passage.", "Third passage."]
    two = prompt.render(question="Q?", contexts=contexts[:2])
    three = prompt.render(question="Q?", contexts=contexts)
    assert two[0] == three[0]  # the system message does not depend on k
    passages_of_two = two[-1].content.split(contexts[1])[0] + contexts[1]
    assert three[-1].content.startswith(passages_of_two)
    judge = load_prompt("claims/answer", language).render(
        passages=contexts, question="Q?", claim="A"
    )
    assert judge[0] == three[0]
    question_line = three[-1].content.index("Q?") + len("Q?\n")
    assert judge[-1].content[:question_line] == three[-1].content[:question_line]
    assert three[-1].content.index(contexts[-1]) < three[-1].content.index("Q?")


def test_every_question_has_every_k_with_retrieval_and_judge_values() -> None:
    result, _ = toy_sweep()
    frame = result.per_question
    assert sorted(zip(frame.question_id, frame.k, strict=True)) == [
        (q, k) for q in ("q1", "q2") for k in KS
    ]
    # q1's ranking: d2#0, d1#0 (Paris), d1#1 (same doc d1), d3#0.
    assert column(result, "q1", "doc_recall") == [0.0, 1.0, 1.0, 1.0]
    assert column(result, "q1", "doc_precision") == [0.0, 0.5, 1 / 3, 0.25]  # d1 counted once
    assert column(result, "q1", "doc_mrr") == [0.0, 0.5, 0.5, 0.5]
    assert column(result, "q1", "text_hit_rate") == [0.0, 1.0, 1.0, 1.0]  # only d1#0 says Paris
    assert column(result, "q1", "context_recall") == [0.0, 1.0, 1.0, 1.0]
    assert column(result, "q1", "completeness") == [0.0, 1.0, 1.0, 1.0]
    assert column(result, "q1", "faithfulness") == [None, 1.0, 1.0, 1.0]
    assert column(result, "q1", "faithfulness_status") == ["no_claims", "ok", "ok", "ok"]
    assert column(result, "q2", "answer") == ["The capital is Tokyo."] * 4
    assert column(result, "q2", "answer_relevancy")[0] is not None
    for name in [*result.value_columns]:
        assert frame[name].dtype == "Float64"
        assert not np.isnan(frame[name].dropna().to_numpy(dtype=float)).any()
    assert (frame.calls >= 1).all()
    assert result.skipped == {}


def test_answers_come_in_ascending_k_back_to_back_when_their_claims_need_the_model() -> None:
    """Generate mode: every answer's claims are extracted by the model (a call that would evict
    the passages), so the answers come back to back and the judges after them."""
    _, backend = toy_sweep()
    kinds = [(r.prompt_id or "").split(".")[0] + f":{len(passages(r))}" for r in backend.requests]
    per_question = len(kinds) // 2
    for start in (0, per_question):
        block = kinds[start : start + per_question]
        first = block.index("generate/answer:1")
        assert block[:first] == ["claims/extract:0"] * first  # the reference's claims, once
        assert block[first : first + 4] == [f"generate/answer:{k}" for k in KS]
        assert not any(k.startswith("generate/") for k in block[first + 4 :])


def test_passage_judges_run_back_to_back_in_ascending_k_then_context_recall() -> None:
    """After the answers, the verifications over chunks form one run per question: k's
    passages extend k-1's, and context recall over the top K extends k = K's (KV-cache reuse)."""
    _, backend = toy_sweep()
    chunk_texts = {text for _, text in TEXTS.values()}
    over_chunks = [
        (i, len(passages(r)))
        for i, r in enumerate(backend.requests)
        if (r.prompt_id or "").startswith("claims/verify") and set(passages(r)) <= chunk_texts
    ]
    positions = [i for i, _ in over_chunks]
    # q1 has no claim at k = 1 ("I do not know."), q2 has one at every k.
    assert [n for _, n in over_chunks] == [2, 3, 4, 4, 1, 2, 3, 4, 4]
    first, second = positions[:4], positions[4:]
    assert first == list(range(first[0], first[0] + 4))
    assert second == list(range(second[0], second[0] + 5))


def test_context_recall_costs_one_verify_pass_over_top_k_per_question() -> None:
    references = {"Paris", "Tokyo"}
    for ks in (KS, (2, 4), (1, 2, 3, 4, 5, 6)):  # K = 4 chunks retrieved in each
        _, backend = toy_sweep(ks=ks)
        reference_checks = [
            r
            for r in backend.requests
            if r.prompt_id
            and r.prompt_id.startswith("claims/verify")
            and re.search(r"^1\. (Paris|Tokyo)$", r.messages[-1].content, re.MULTILINE)
        ]
        against_chunks = [r for r in reference_checks if len(passages(r)) > 1]
        assert [len(passages(r)) for r in against_chunks] == [4, 4]  # K = 4 retrieved
        extracted = [
            r
            for r in backend.requests
            if r.prompt_id
            and r.prompt_id.startswith("claims/extract")
            and r.messages[-1].content.endswith(tuple(references))
        ]
        assert len(extracted) == 2  # the reference's claims: once per question, shared by all k


def test_a_rerun_on_the_same_cache_makes_no_model_call(tmp_path: Path) -> None:
    first, backend = toy_sweep(cache=ResponseCache(tmp_path / "cache.sqlite"))
    assert backend.requests
    again, replay = toy_sweep(cache=ResponseCache(tmp_path / "cache.sqlite"))
    assert replay.requests == []
    columns = ["question_id", "k", "answer", *first.value_columns]
    pd.testing.assert_frame_equal(first.per_question[columns], again.per_question[columns])


def test_concurrent_questions_give_the_same_table() -> None:
    serial, _ = toy_sweep()
    parallel, _ = toy_sweep(concurrency=4)
    columns = ["question_id", "k", "answer", *serial.value_columns]
    pd.testing.assert_frame_equal(serial.per_question[columns], parallel.per_question[columns])


def test_summary_has_means_with_bootstrap_cis_per_k() -> None:
    result, _ = toy_sweep()
    summary = result.summary(n_resamples=200)
    assert list(summary.columns) == [
        "k",
        "metric",
        "mean",
        "ci_low",
        "ci_high",
        "n_scored",
        "n_questions",
    ]
    assert len(summary) == len(KS) * (len(result.value_columns) + len(REFUSAL_MEASURES))
    row = summary[(summary.k == 2) & (summary.metric == "context_recall")].iloc[0]
    assert (row["mean"], row["n_scored"]) == (1.0, 2)
    faithful = summary[(summary.k == 1) & (summary.metric == "faithfulness")].iloc[0]
    assert faithful["n_scored"] == 1  # q1's refusal has no claims: left out, not zeroed
    assert (summary.ci_low <= summary["mean"]).all()
    assert (summary["mean"] <= summary.ci_high).all()


def test_a_refusal_is_an_outcome_every_k_is_decided_over_the_same_questions() -> None:
    result, _ = toy_sweep()
    assert column(result, "q1", "refused") == [True, False, False, False]  # "I do not know."
    assert column(result, "q1", "answerable") == [True] * 4
    table = objective_table(result.per_question, Objective.parse("faithfulness*completeness"))
    assert (table.n_questions, dict(table.excluded)) == (2, {})
    assert table.values.loc["q1", 1] == 0.0  # refused an answerable question: worth nothing
    decision = decide(result, n_resamples=200)
    assert decision.n_questions == 2
    assert str(decision.objective.used) == "faithfulness*completeness"
    assert decision.refusals[1]["refusal_rate"] == 0.5


def test_a_provider_refusal_of_the_answer_is_a_refusal_in_the_table_and_the_decision() -> None:
    """A content filter refusing to answer is what the model did, not a failed call: the row is
    refused, and the objective counts it (0 on an answerable question)."""

    def filtered(request: ChatRequest) -> str | float:
        prompt = (request.prompt_id or "").split(".")[0]
        if prompt == "generate/answer" and "Tokyo" in " ".join(passages(request)):
            raise BackendRefusal("the model refused: content filter")
        return respond(request)

    result, _ = toy_sweep(backend=ScriptedBackend(respond=filtered))
    frame = result.per_question
    refused = frame[frame["generation_status"] == "refused"]
    assert len(refused) > 0
    assert refused["refused"].all()
    table = objective_table(frame, Objective.parse("faithfulness*completeness"))
    assert table.excluded == {}
    for qid, k in zip(refused["question_id"], refused["k"], strict=True):
        assert table.values.loc[qid, int(k)] == 0.0


def test_progress_is_called_per_question_and_unknown_chunks_are_refused() -> None:
    seen: list[str] = []
    toy_sweep(progress=seen.append)
    assert sorted(seen) == ["q1", "q2"]
    with pytest.raises(InputError, match="not in chunks"):
        asyncio.run(
            sweep_questions(
                TOY,
                retriever=FixedRetriever(),
                chunks=CHUNKS[:2],
                client=ModelClient(ScriptedBackend(respond=respond)),
            )
        )


def test_metrics_a_reference_free_set_cannot_support_are_skipped_and_reported() -> None:
    free = dataclasses.replace(
        TOY,
        queries=tuple(dataclasses.replace(q, answers=()) for q in QUERIES),
        has_reference_answers=False,
        not_applicable={"completeness": "no reference answers"},
    )
    result, backend = toy_sweep(free, embed=False)
    assert result.skipped == {
        "completeness": "no reference answers",
        "context_recall": NO_REFERENCE,
        "exact_match": NO_REFERENCE,
        "answer_f1": NO_REFERENCE,
        "answer_relevancy": NO_EMBEDDER_TEXT,
    }
    assert result.metrics == ("faithfulness",)
    frame = result.per_question
    assert "completeness" not in frame.columns
    assert "text_recall" not in frame.columns
    assert column(result, "q1", "doc_recall") == [0.0, 1.0, 1.0, 1.0]
    assert column(result, "q1", "faithfulness") == [None, 1.0, 1.0, 1.0]
    assert {(r.prompt_id or "").split(".")[0] for r in backend.requests} == {
        "generate/answer",
        "claims/extract",
        "claims/verify",
    }


def test_the_generator_prompt_is_free_text_and_valid() -> None:
    prompt = load_prompt("generate/answer", "zh")
    assert (prompt.output, prompt.output_model) == ("text", None)
    assert not [p for p in validate_prompts() if "generate/answer" in p]


def test_a_free_text_prompt_must_end_with_a_user_message(tmp_path: Path) -> None:
    (tmp_path / "demo").mkdir()
    front = "id: demo/step\nversion: 1\nlanguage: en\ninputs: [text]\noutput: text\n"
    body = "=== user ===\n{{ text }}\n=== assistant ===\nSure.\n"
    (tmp_path / "demo" / "step.en.md").write_text(f"---\n{front}description: d\n---\n{body}")
    (tmp_path / "fixtures.json").write_text('{"demo/step": {"en": {"text": "x"}}}')
    assert "demo/step.en: a text prompt must end with a user message" in validate_prompts(
        root=tmp_path
    )


def test_cmrc_sample_with_bm25(tmp_path: Path) -> None:
    cmrc = load_eval_set("cmrc2018_zh").limit(2)
    cmrc = dataclasses.replace(cmrc, documents=cmrc.documents[:30])  # their paragraphs come first
    chunks = chunk_corpus(structure_aware(100, 400), cmrc.documents)
    retriever = BM25Retriever.build(chunks, zh_tokenizer="bigram", cache_dir=tmp_path)
    backend = ScriptedBackend(respond=respond)
    result = asyncio.run(
        sweep_questions(
            cmrc,
            SweepOptions(ks=(1, 2, 3), metrics=("faithfulness", "context_recall")),
            retriever=retriever,
            chunks=chunks,
            client=ModelClient(backend),
        )
    )
    frame = result.per_question
    assert sorted(set(zip(frame.question_id, frame.k, strict=True))) == sorted(
        (q.id, k) for q in cmrc.queries for k in (1, 2, 3)
    )
    assert set(frame.language) == {"zh"}
    assert frame.doc_recall.notna().all()
    prompts = [r.prompt_id for r in backend.requests if r.prompt_id]
    assert all(".zh@" in p for p in prompts)


def test_a_sweep_in_score_mode_reads_each_passage_once_and_scores_every_k() -> None:
    """The scoring path in a sweep: the answers' claims are split without a model, each k's
    faithfulness is one probe over its top k, context recall reads the top k for every k."""
    result, backend = toy_sweep(options=JudgeOptions(mode="score"))
    assert column(result, "q1", "faithfulness_status") == ["no_claims", "ok", "ok", "ok"]
    assert column(result, "q2", "faithfulness_status") == ["ok"] * 4
    recall = column(result, "q1", "context_recall")
    assert recall[0] < 0.5 <= recall[1]  # Paris is at rank 2
    assert recall == sorted(recall)  # never falls with k
    prompts = [(r.prompt_id or "").split(".")[0] for r in backend.requests]
    assert "claims/extract" not in prompts
    assert "claims/verify" not in prompts
    chunk_texts = {text for _, text in TEXTS.values()}
    recall_probes = [
        len(tagged_passages(r))
        for r in backend.requests
        if (r.prompt_id or "").startswith("claims/answer")  # "Paris": a fragment answer
        and tagged(r, "answer") == "Paris"
        and set(tagged_passages(r)) <= chunk_texts
    ]
    assert recall_probes == [4, 3, 2, 1]  # q1's reference over the top K: k = K down to 1
    # q2's answers are fragments (claims without a call): each is judged right after it was
    # written, on the passages just read, then context recall reads the top K from K down.
    kinds = [
        ((r.prompt_id or "").split(".")[0], r.messages[-1].content.count("\n["))
        for r in backend.requests
    ]
    start = [i for i, kind in enumerate(kinds) if kind == ("generate/answer", 1)][1]
    interleaved = [(step, k) for k in KS for step in ("generate/answer", "claims/support")]
    assert kinds[start : start + 8] == interleaved
    assert kinds[start + 8 : start + 12] == [("claims/answer", k) for k in reversed(KS)]


def test_a_separate_generator_answers_and_the_judge_only_judges() -> None:
    writer = ScriptedBackend(respond=respond, name="scripted/writer")
    result, judge = toy_sweep(generator=writer)
    assert {(r.prompt_id or "").split(".")[0] for r in writer.requests} == {"generate/answer"}
    assert len(writer.requests) == len(KS) * 2
    assert not any((r.prompt_id or "").startswith("generate/") for r in judge.requests)
    assert (result.generator, result.model) == ("scripted/writer", "scripted/test")
    assert result.ledger is not None
    assert set(result.ledger.models) >= {"scripted/writer", "scripted/test"}
    # The same answers, so the same scores as when the judge answered itself.
    alone, _ = toy_sweep()
    columns = ["answer", "faithfulness", "completeness", "context_recall"]
    pd.testing.assert_frame_equal(result.per_question[columns], alone.per_question[columns])


@pytest.mark.parametrize("mode", ["score", "generate"])
def test_a_model_that_runs_calls_together_gets_each_step_of_every_k_as_one_round(
    mode: str,
) -> None:
    """The embedded model answers a question's ks together (one shared-prefix round per step):
    every k's answer in one round, then every k's first probe, ...; the table is the one the
    calls made one by one give, and the steps that read no passage are not run together."""
    options = JudgeOptions(mode=mode)  # type: ignore[arg-type]
    one_by_one, _ = toy_sweep(options=options)
    lockstep = LockstepScripted(respond=respond)
    together, _ = toy_sweep(options=options, backend=lockstep)
    columns = ["question_id", "k", "answer", *one_by_one.value_columns]
    pd.testing.assert_frame_equal(one_by_one.per_question[columns], together.per_question[columns])
    prompts = lockstep.prompt_ids()
    assert prompts[0] == ["generate/answer"] * len(KS)  # q1's answers, every k at once
    answers = [sent for sent in prompts if "generate/answer" in sent]
    assert answers == [["generate/answer"] * len(KS)] * len(QUERIES)
    for sent in prompts:  # no round mixes a question's steps
        assert len(set(sent)) == 1 or set(sent) <= {"claims/answer", "claims/support"}
    if mode == "score":  # fragment answers: judged in the lockstep, on the passages just read
        assert any(set(sent) & {"claims/answer", "claims/support"} for sent in prompts)
