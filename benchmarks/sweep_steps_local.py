"""Where a k-sweep's time goes, step by step, with the embedded model.

Runs ``rag_judge.jobs.sweep.sweep`` exactly as ``rag-judge sweep`` does (BM25, the default
judges, the embedded model, k = 1..10) on the first ``--limit`` questions of a set, with a
fresh response cache (a prompt repeated within the run, such as the same answer at two ks, is
paid once), and times every model call by the prompt that made it: the generator's answers,
each judge's steps, the embedder. A yes/no call is almost all prefill (it reads the prompt and
one token's probabilities); a decode call also writes its reply, so its completion tokens show
what decoding costs. The table lists, per prompt, calls, tokens, seconds and share of the
model's time, biggest first. Prompt tokens count what each call sent: llama.cpp reuses the
prefix shared with the previous call, so it evaluates fewer (that is the point of the order);
evaluated tokens count what it really read (prefill) and wrote (decode), from ``Llama.eval``.
A step of a question's ks that llama.cpp runs together over the ks' shared prefix (one round)
is listed as ``(..., together)``: each call takes an equal share of its round's time, and the
tokens the round evaluated count for its first step.

Usage::

    .venv/bin/python benchmarks/sweep_steps_local.py --limit 2
    .venv/bin/python benchmarks/sweep_steps_local.py --set cmrc2018_zh --limit 3 --label demo
"""

from __future__ import annotations

import argparse
import contextvars
import json
import tempfile
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from _machine import machine_info

from rag_judge.backends.local.embedders import _SerialEncoder
from rag_judge.backends.local.local_llama import LocalLlama
from rag_judge.backends.local.shared_prefix import SharedPrefixContext
from rag_judge.backends.types import ChatRequest
from rag_judge.jobs.sweep.job import sweep
from rag_judge.jobs.sweep.plan import parse_ks

RESULTS = Path(__file__).parent / "results"
STEP: contextvars.ContextVar[str] = contextvars.ContextVar("step", default="unattributed")
"""The step whose call is running: asyncio.to_thread copies it into llama.cpp's worker thread."""


class StepClock:
    """Wall time, calls and tokens per prompt id, from wrapped backend methods."""

    def __init__(self) -> None:
        self.steps: dict[str, dict[str, float]] = defaultdict(
            lambda: {
                "calls": 0,
                "seconds": 0.0,
                "prompt_tokens": 0,
                "completion_tokens": 0,
                "evaluated_tokens": 0,
            }
        )

    def count_tokens(self, run: Callable[..., Any]) -> Callable[..., Any]:
        """``run(owner, tokens)`` (``Llama.eval``, a shared-prefix context's ``_decode``)
        counting the tokens llama.cpp really evaluates into the running step."""
        clock = self

        def counted(owner: Any, tokens: Any) -> Any:
            clock.steps[STEP.get()]["evaluated_tokens"] += len(tokens)
            return run(owner, tokens)

        return counted

    def wrap(
        self, method: Callable[..., Awaitable[Any]], step_of: Callable[[Any, Any], str]
    ) -> Callable[..., Any]:
        """``method`` timed into the step ``step_of(backend, argument)`` names, with its usage."""
        clock = self

        async def timed(backend: Any, argument: Any) -> Any:
            started = time.perf_counter()
            name = step_of(backend, argument)
            token = STEP.set(name)
            try:
                reply = await method(backend, argument)
            finally:
                STEP.reset(token)
            step = clock.steps[name]
            step["calls"] += 1
            step["seconds"] += time.perf_counter() - started
            if (usage := getattr(reply, "usage", None)) is not None:
                step["prompt_tokens"] += usage.prompt_tokens
                step["completion_tokens"] += usage.completion_tokens
            return reply

        return timed

    def wrap_together(self, method: Callable[..., Awaitable[Any]]) -> Callable[..., Any]:
        """``LocalLlama.run_together`` timed into its calls' steps (``... (together)``), each
        call taking an equal share of the round's time; its evaluated tokens go to the round's
        first step."""
        clock = self

        async def timed(backend: Any, calls: list[tuple[str, ChatRequest]]) -> Any:
            names = [
                _prompt_step(("decode" if kind == "chat" else "yes/no") + ", together")(backend, r)
                for kind, r in calls
            ]
            started = time.perf_counter()
            token = STEP.set(names[0])
            try:
                replies = await method(backend, calls)
            finally:
                STEP.reset(token)
            share = (time.perf_counter() - started) / len(calls)
            for name, reply in zip(names, replies, strict=True):
                step = clock.steps[name]
                step["calls"] += 1
                step["seconds"] += share
                if (usage := getattr(reply, "usage", None)) is not None:
                    step["prompt_tokens"] += usage.prompt_tokens
                    step["completion_tokens"] += usage.completion_tokens
            return replies

        return timed


def _prompt_step(kind: str) -> Callable[[Any, ChatRequest], str]:
    return lambda _, request: f"{request.prompt_id or 'unnamed'} ({kind})"


def run(set_name: str, limit: int, ks: str, metrics: str | None = None) -> dict[str, Any]:
    from llama_cpp import Llama

    clock = StepClock()
    Llama.eval = clock.count_tokens(Llama.eval)  # type: ignore[method-assign]
    LocalLlama.complete = clock.wrap(LocalLlama.complete, _prompt_step("decode"))  # type: ignore[method-assign]
    LocalLlama.yes_probability = clock.wrap(LocalLlama.yes_probability, _prompt_step("yes/no"))  # type: ignore[method-assign]
    LocalLlama.run_together = clock.wrap_together(LocalLlama.run_together)  # type: ignore[method-assign]
    SharedPrefixContext._decode = clock.count_tokens(SharedPrefixContext._decode)  # type: ignore[method-assign]
    _SerialEncoder.embed = clock.wrap(_SerialEncoder.embed, lambda e, _: f"embed {e.name}")  # type: ignore[method-assign]
    per_question: list[dict[str, Any]] = []
    started = time.perf_counter()
    last = [started]

    def finished(run: Any) -> None:
        now = time.perf_counter()
        per_question.append({"question": run.query.id, "seconds": round(now - last[0], 1)})
        last[0] = now

    with tempfile.TemporaryDirectory() as cache:  # fresh, as on a first run: repeats are free
        chosen = {"metrics": tuple(metrics.split(","))} if metrics else {}
        result = sweep(
            set_name,
            ks=parse_ks(ks),
            limit=limit,
            cache=Path(cache) / "r.sqlite",
            on_question=finished,
            **chosen,
        )
    wall = time.perf_counter() - started
    model_seconds = sum(s["seconds"] for s in clock.steps.values())
    steps = sorted(
        ({"step": name, **values} for name, values in clock.steps.items()),
        key=lambda s: -s["seconds"],
    )
    return {
        "set": set_name,
        "questions": len(per_question),
        "ks": ks,
        "wall_seconds": round(wall, 1),
        "model_seconds": round(model_seconds, 1),
        "per_question": per_question,
        "steps": steps,
        "metrics": list(result.metrics),
        "machine": machine_info(),
    }


def markdown(found: dict[str, Any]) -> str:
    machine = found["machine"]
    lines = [
        f"# Where a k-sweep's time goes: {found['set']}, {found['questions']} questions, "
        f"k = {found['ks']}",
        "",
        "Written by `benchmarks/sweep_steps_local.py`; embedded model, fresh response cache, "
        f"{machine['cpu_model']}, {machine['usable_cores']} cores. Wall time "
        f"{found['wall_seconds']:.0f} s, of which {found['model_seconds']:.0f} s inside model "
        "and embedder calls (the rest: loading the model, BM25, the statistics). A step is a "
        "prompt: `(decode)` writes text, `(yes/no)` reads one token's probabilities.",
        "",
        "| step | calls | prompt tokens | completion tokens | evaluated tokens | seconds | share "
        "| s per call |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    total = found["model_seconds"] or 1.0
    for s in found["steps"]:
        lines.append(
            f"| `{s['step']}` | {s['calls']:.0f} | {s['prompt_tokens']:.0f} | "
            f"{s['completion_tokens']:.0f} | {s.get('evaluated_tokens', 0):.0f} | "
            f"{s['seconds']:.1f} | "
            f"{100 * s['seconds'] / total:.0f}% | {s['seconds'] / max(s['calls'], 1):.2f} |"
        )
    lines += ["", "Per question: " + ", ".join(
        f"{q['question']} {q['seconds']:.0f} s" for q in found["per_question"]
    ) + "."]  # fmt: skip
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--set", default="cmrc2018_zh")
    parser.add_argument("--limit", type=int, default=2)
    parser.add_argument("--ks", default="1-10")
    parser.add_argument("--label", default="", help="suffix of the result files")
    parser.add_argument("--metrics", default=None, help="judges (default: the default ones)")
    args = parser.parse_args()
    found = run(args.set, args.limit, args.ks, args.metrics)
    stem = "sweep_steps_local" + (f"_{args.label}" if args.label else "")
    (RESULTS / f"{stem}.json").write_text(json.dumps(found, indent=2) + "\n")
    (RESULTS / f"{stem}.md").write_text(markdown(found))
    print(markdown(found))


if __name__ == "__main__":
    main()
