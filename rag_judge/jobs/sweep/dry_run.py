"""``sweep --dry-run``: what a sweep will cost, before any model call.

The plan is counted from the prompts and the set's passages: our RAG's top K for every question
(BM25 asks no model; another retriever, a reranker or your RAG would, so their passages are
estimated from the set's own passages instead), the generator's prompt for every k rendered
and counted with the model's tokenizer (the embedded model's own; an estimate by script for
others), and each judge's calls per answer from the rates measured on this release's judges
(:attr:`~rag_judge.judges.base.Judge.call_rates`). Prompt tokens are what the calls send; for
the embedded model, which keeps the previous prompt's KV cache, the tokens it actually reads
are counted by following the sweep's call order (each k's prompt re-reads only what follows its
shared prefix with the one before). Time, for the embedded model, is read tokens over this
machine's prefill rate plus written tokens over its decode rate, both measured now in a few
seconds (:func:`~rag_judge.backends.local.speed.measure_speed`); cost, for a priced API model,
is the tokens at its price. Reasons for unsupported claims are written after the sweep, for
the rows the report shows (:mod:`~rag_judge.jobs.sweep.explain`): one call per shown row and
judge that gives them, re-reading that row's passages. ``--until-decided`` gets a range: its
best case settles at the first look, its worst uses every question at every k.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from rag_judge.backends.local.speed import count_tokens, measure_speed
from rag_judge.backends.registry import provider_of
from rag_judge.data.eval_sets import EvalSet
from rag_judge.jobs.sweep.explain import SHOWN_WORST
from rag_judge.jobs.sweep.options import SweepOptions
from rag_judge.judges import JUDGES
from rag_judge.judges.call_rates import CallRate
from rag_judge.pipeline.build import ChunkSize, sized_chunks
from rag_judge.prompts.templates import load_prompt, prompt_languages
from rag_judge.runtime.session import Session

GENERATE_PROMPT = "generate/answer"
ANSWER_TOKENS = 8.0
"""Tokens a generated answer has, on average (a name, number or phrase; measured)."""
DISTINCT_ANSWERS = 0.21
"""The share of (question, k) answers no smaller k of the question gave: steps that read only
the answer are cache hits for the rest. Measured with the embedded model over k = 1..10: 0.210
on 300 questions of cmrc2018_zh_chunked, 0.212 on 270 of squad2_en_chunked (most questions get
one or two answers across ten ks)."""


@dataclass(frozen=True)
class Speed:
    """Tokens read and written per second by the model that runs the sweep."""

    prefill: float
    decode: float


@dataclass(frozen=True)
class CostPlan:
    """What a sweep will ask of the model, counted before it asks."""

    questions: int
    ks: tuple[int, ...]
    answers: int
    """(question, k) answers to generate and judge."""
    calls: int
    prompt_tokens: int
    """Tokens the calls send."""
    completion_tokens: int
    read_tokens: int | None = None
    """Prompt tokens the embedded model reads after prefix reuse (None: not in process)."""
    minutes: float | None = None
    """Predicted wall time (the embedded model; None otherwise)."""
    cost_usd: float | None = None
    """At the model's price (None: not priced, or in process)."""
    notes: tuple[str, ...] = field(default=())

    def scaled(self, questions: int, answers: int) -> CostPlan:
        """The same plan for ``questions`` questions and ``answers`` answers, pro rata."""
        f = answers / self.answers if self.answers else 0.0

        def by(value: float | int | None) -> float | None:
            return None if value is None else value * f

        return replace(
            self,
            questions=questions,
            answers=answers,
            calls=round(self.calls * f),
            prompt_tokens=round(self.prompt_tokens * f),
            completion_tokens=round(self.completion_tokens * f),
            read_tokens=None if self.read_tokens is None else round(self.read_tokens * f),
            minutes=by(self.minutes),
            cost_usd=by(self.cost_usd),
        )


def approximate_tokens(text: str) -> int:
    """Tokens of ``text`` by script, for a model whose tokenizer is not at hand: one per Han
    character, and about 1.3 per word of other scripts (digits and punctuation included).

    >>> approximate_tokens("广三铁路在哪年建成？"), approximate_tokens("Where is Paris, France?")
    (10, 5)
    """
    han = len(re.findall(r"[\u4e00-\u9fff]", text))
    words = len(re.findall(r"[^\s\u4e00-\u9fff]+", text))
    return han + round(words * 1.3)


def plan_cost(
    loaded: EvalSet,
    contexts: Mapping[str, Sequence[str]],
    options: SweepOptions,
    *,
    mode: str,
    count: Callable[[str], int],
    speed: Speed | None = None,
    price: tuple[float, float] | None = None,
    answers_given: bool = False,
) -> CostPlan:
    """Count the plan (see the module docstring).

    Args:
        loaded: The questions to sweep.
        contexts: Per question id, its top K passages in rank order.
        options: The sweep's options (ks, judges, reasons).
        mode: The judges' path, ``score`` or ``generate``.
        count: Tokens of a text by the model's tokenizer.
        speed: The embedded model's measured rates (None: not in process, no time).
        price: USD per prompt and per completion token (None: not priced).
        answers_given: The user's RAG answers: no generation call.
    """
    language = loaded.language if loaded.language in prompt_languages() else "en"
    template = load_prompt(GENERATE_PROMPT, language)
    ks = options.ks
    calls = prompt = completion = read = generator_tokens = 0.0
    for query in loaded.queries:
        previous: list[str] = []
        for k in ks:
            messages = template.render(
                question=query.question, contexts=list(contexts[query.id][:k])
            )
            text = "\n".join(m.content for m in messages)
            tokens = count(text) + 8 * len(messages)  # the chat template's markers
            shared = _shared_prefix(previous, text, count) if previous else 0
            previous = [text]
            if not answers_given:
                calls += 1
                prompt += tokens
                completion += ANSWER_TOKENS
                read += tokens - shared
            for name in options.metrics:
                cost = _cost_of(name, mode)
                if cost is None or JUDGES[name].scope == "per_question":
                    continue
                share = DISTINCT_ANSWERS if cost.distinct_only else 1.0
                n = cost.calls * share
                calls += n
                prompt += n * ((tokens if cost.resend else 0) + cost.prompt)
                completion += n * cost.completion
                read += n * cost.read
            generator_tokens += tokens
        for name in options.metrics:
            cost = _cost_of(name, mode)
            if cost is not None and JUDGES[name].scope == "per_question":
                calls += cost.calls
                prompt += cost.calls * (tokens + cost.prompt)
                completion += cost.calls * cost.completion
                read += cost.calls * cost.read
    answers = len(loaded.queries) * len(ks)
    for name in options.metrics:  # reasons: written afterwards for the rows the report shows
        reason = JUDGES[name].reason_rate
        if mode == "score" and options.judge.reasons and reason is not None and answers:
            shown = min(SHOWN_WORST, answers)
            whole = generator_tokens / answers + reason.prompt  # its passages no longer cached
            calls += shown
            prompt += shown * whole
            completion += shown * reason.completion
            read += shown * whole
    minutes = None
    if speed is not None:
        minutes = (read / speed.prefill + completion / speed.decode) / 60
    cost_usd = None if price is None else prompt * price[0] + completion * price[1]
    return CostPlan(
        questions=len(loaded.queries),
        ks=tuple(ks),
        answers=answers,
        calls=round(calls),
        prompt_tokens=round(prompt),
        completion_tokens=round(completion),
        read_tokens=round(read) if speed is not None else None,
        minutes=minutes,
        cost_usd=cost_usd,
    )


def corpus_contexts(
    loaded: EvalSet, k: int, chunk: ChunkSize | None = None
) -> dict[str, list[str]]:
    """Stand-in passages when the real top K cannot be had without a model call: the set's own
    passages (re-cut to ``chunk`` when given), the same middling ones for every question."""
    chunks = sorted(sized_chunks(loaded, chunk), key=lambda c: len(c.text))
    middle = chunks[len(chunks) // 2 : len(chunks) // 2 + k] or chunks[:k]
    texts = [c.text for c in middle]
    return {q.id: texts for q in loaded.queries}


def _cost_of(name: str, mode: str) -> CallRate | None:
    rates = JUDGES[name].call_rates
    return None if rates is None else rates[mode]


def _shared_prefix(previous: list[str], text: str, count: Callable[[str], int]) -> int:
    """Tokens of the longest common prefix of the previous prompt and this one (by text)."""
    before = previous[0]
    n = 0
    limit = min(len(before), len(text))
    while n < limit and before[n] == text[n]:
        n += 1
    return count(text[:n])


@dataclass(frozen=True)
class DryRun:
    """The plan of a sweep (and, until decided, its best and worst case)."""

    model: str
    generator: str
    mode: str
    plan: CostPlan
    """Every question at every k (an until-decided run's worst case)."""
    best_case: CostPlan | None = None
    """Until decided: settled at the first look."""
    speed: Speed | None = None
    passages: str = ""
    """Where the passages came from (the real top K, or the set's as stand-ins)."""

    def lines(self) -> list[str]:
        """The plan as the CLI prints it."""
        p = self.plan
        out = [
            f"Plan: {p.questions} questions x {len(p.ks)} ks = {p.answers:,} answers; generator "
            f"{self.generator}, judge {self.model} ({self.mode} path); passages: {self.passages}.",
            "",
            "| case | questions | answers | calls | prompt tokens | completion tokens "
            "| read tokens | minutes | cost |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        cases = [("best (settled at the first look)", self.best_case)] if self.best_case else []
        cases.append(("worst (every question, every k)" if self.best_case else "the sweep", p))
        for label, plan in cases:
            assert plan is not None
            out.append(
                f"| {label} | {plan.questions} | {plan.answers:,} | {plan.calls:,} "
                f"| {plan.prompt_tokens:,} | {plan.completion_tokens:,} "
                f"| {'' if plan.read_tokens is None else f'{plan.read_tokens:,}'} "
                f"| {'' if plan.minutes is None else f'{plan.minutes:.1f}'} "
                f"| {'' if plan.cost_usd is None else f'${plan.cost_usd:.4f}'} |"
            )
        if self.speed is not None:
            out += [
                "",
                f"Time from this machine's measured rates: prefill {self.speed.prefill:.0f} "
                f"tokens/s, decode {self.speed.decode:.1f} tokens/s (plus model loading).",
            ]
        out += ["", "Nothing was asked of a model: a dry run. Remove --dry-run to sweep."]
        return out


async def dry_run_job(
    loaded: EvalSet, session: Session, options: SweepOptions, *, speed: Speed | None = None
) -> DryRun:
    """The plan for sweeping ``loaded`` (already limited) with the session's models (the
    embedded model's ``speed`` measured now unless given)."""
    from rag_judge.backends.wrapper.ledger import price_per_token
    from rag_judge.jobs.sweep.plan import check_objective_fits
    from rag_judge.judges.work import default_mode

    if options.objective is not None:  # the run would refuse it: so does its plan
        check_objective_fits(loaded, options.objective.parts)
    judge, generator = session.settings.judge_model, session.settings.generator_model
    mode = options.judge.mode or default_mode(judge)
    questions = loaded
    if options.until_decided and options.max_questions is not None:
        questions = loaded.limit(min(options.max_questions, len(loaded.queries)))
    contexts, passages = await _contexts(questions, session, options)
    backend = session.generator.backend
    count: Callable[[str], int] = approximate_tokens
    if (provider := provider_of(backend.name)) is not None and provider.measured_here:
        local = backend
        count = lambda text: count_tokens(local, text)  # noqa: E731
        if speed is None:
            measured = measure_speed(local)
            speed = Speed(measured.prefill_per_second, measured.decode_per_second)
    else:
        speed = None
    record = provider_of(judge)
    price = price_per_token(judge) if record is not None and record.priced else None
    plan = plan_cost(
        questions, contexts, options, mode=mode, count=count, speed=speed, price=price,
        answers_given=isinstance(options.rag, str) and options.rag.endswith(".jsonl"),
    )  # fmt: skip
    best = None
    if options.until_decided:
        first = min(options.step, plan.questions)
        best = plan.scaled(first, first * len(options.ks))
    return DryRun(judge, generator, mode, plan, best, speed, passages)


async def _contexts(
    loaded: EvalSet, session: Session, options: SweepOptions
) -> tuple[dict[str, list[str]], str]:
    """The real top K when no model is needed to get it (BM25, no reranker, our RAG), else the
    set's passages as stand-ins, and which."""
    if options.rag is None and options.retriever == "bm25" and options.rerank is None:
        from rag_judge.jobs.sweep.in_process import build_rag

        built = await build_rag(
            loaded, session, retriever="bm25", chunk=options.chunk, needs_embedder=False
        )
        hits = await built.retriever.search([q.question for q in loaded.queries], options.ks[-1])
        texts = {c.id: c.text for c in built.chunks}
        found = {q.id: [texts[h.chunk_id] for h in ranked] for q, ranked in zip(
            loaded.queries, hits, strict=True
        )}  # fmt: skip
        return found, "each question's real top K by BM25"
    passages = (
        "the set's own passages" if options.chunk is None else f"passages re-cut to {options.chunk}"
    )
    return (
        corpus_contexts(loaded, options.ks[-1], options.chunk),
        f"{passages} as stand-ins (the retriever would need a model call)",
    )
