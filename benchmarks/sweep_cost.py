"""Model calls and wall time of a k-sweep, planned (rag_judge) against the naive plan.

Same eval set, questions, retriever (BM25), model and judges for both plans; no response cache
(each plan starts from nothing, so every call is paid):

* **planned** — ``rag_judge.jobs.sweep``: per question, the answers for k = 1..K in ascending k
  back to back (each prompt extends the previous one, so llama.cpp reuses its KV-cache
  prefix), then the judges; the reference's claims are extracted once per question and context
  recall for every k comes from one pass over the top K.
* **naive** — what a user gets by looping a judge library over k: for each question and each k,
  generate the answer, then judge that (question, top-k, answer) sample from scratch with
  ``rag_judge.evaluate`` (reference claims re-extracted and context recall re-run per k; the
  generation prefix is evicted by the judge calls in between).

Both use the same client settings (one call at a time for the local model). Each finished
question's cumulative calls, tokens and wall time are written as it finishes, so a run stopped
early (``--budget-min``: start no new question after that many minutes) still leaves per-question
numbers; the markdown compares the plans on the questions both finished. Every row names its
CPU: a run resumed on another machine compares wall times only where both plans ran the
question on the same CPU model (``--questions`` runs both plans on one question back to back).
Results go to ``results/sweep_cost.json`` (replaced per plan run; ``comparison`` holds the
markdown's side-by-side table, totals included) and ``results/sweep_cost.md``; ``--rewrite``
writes both again from the recorded runs without a model call.

Usage::

    .venv/bin/python benchmarks/sweep_cost.py --limit 10                  # the issue's size
    .venv/bin/python benchmarks/sweep_cost.py --plans naive --budget-min 60
    .venv/bin/python benchmarks/sweep_cost.py --resume --questions DEV_6_QUERY_2  # both plans
    .venv/bin/python benchmarks/sweep_cost.py --rewrite                   # no model call
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import time
from pathlib import Path
from typing import Any

from _machine import machine_info

from rag_judge.backends.wrapper.embedding_client import EmbeddingClient
from rag_judge.backends.wrapper.ledger import Ledger
from rag_judge.core.language import detect_language
from rag_judge.core.types import RagSample
from rag_judge.data.eval_sets import load_eval_set
from rag_judge.jobs.score.run import aevaluate
from rag_judge.jobs.sweep import SweepOptions
from rag_judge.jobs.sweep.in_process import build_rag
from rag_judge.jobs.sweep.plan import parse_ks
from rag_judge.jobs.sweep.run import sweep_questions
from rag_judge.judges import DEFAULT_METRICS, JUDGES
from rag_judge.pipeline.generate import generate_answer
from rag_judge.prompts.templates import prompt_languages
from rag_judge.runtime.session import Session, open_session
from rag_judge.runtime.settings import load_settings

RESULTS = Path(__file__).parent / "results"
Rows = list[dict[str, Any]]
"""Per-question cumulative tallies, as :class:`Recorder` saves them."""


def _session(model: str) -> Session:
    """One call at a time and no response cache: every call of a plan reaches the model."""
    return open_session(load_settings({"model": model, "concurrency": 1}), cache=False)


def _tally(ledger: Ledger, started: float) -> dict[str, Any]:
    """Cumulative calls, tokens and wall seconds since ``started``."""
    calls = prompt = completion = 0
    for tally in ledger.models.values():
        calls += tally.calls
        prompt += tally.prompt_tokens
        completion += tally.completion_tokens
    return {
        "calls": calls,
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "wall_s": round(time.perf_counter() - started, 1),
    }


class Recorder:
    """Per-question cumulative tallies for one plan, saved after every question; each row
    names the CPU it ran on, since a resumed run may continue on another machine."""

    def __init__(
        self, plan: str, ledger: Ledger, save: Any, earlier: Rows | None = None, cpu: str = ""
    ) -> None:
        self.plan = plan
        self.ledger = ledger
        self.save = save
        self.cpu = cpu
        self.started = time.perf_counter()
        self.per_question: list[dict[str, Any]] = list(earlier or [])
        """Cumulative rows; a resumed run continues the tallies of its earlier questions."""
        self._base = dict(self.per_question[-1]) if self.per_question else {}

    def done(self, question_id: str) -> None:
        now = _tally(self.ledger, self.started)
        row = {"question": question_id, **{k: v + self._base.get(k, 0) for k, v in now.items()}}
        row["wall_s"] = round(row["wall_s"], 1)
        row["cpu"] = self.cpu
        self.per_question.append(row)
        print(f"{self.plan}: {json.dumps(row, ensure_ascii=False)}", flush=True)
        self.save(self.per_question)

    def totals(self) -> dict[str, Any]:
        """The run's cumulative tallies (earlier questions included) and its rows."""
        last = self.per_question[-1] if self.per_question else _tally(self.ledger, self.started)
        keys = ("calls", "prompt_tokens", "completion_tokens", "wall_s")
        return {**{k: last[k] for k in keys}, "per_question": self.per_question}

    def elapsed_min(self) -> float:
        return (time.perf_counter() - self.started) / 60


async def planned(
    args: argparse.Namespace, eval_set: Any, rag: Any, save: Any, earlier: Rows | None
) -> dict[str, Any]:
    """The sweep as rag_judge plans it (``earlier``: rows of the run this one resumes)."""
    session = _session(args.model)
    client, ledger = session.client, session.ledger
    recorder = Recorder("planned", ledger, save, earlier, cpu=args.cpu)
    result = await sweep_questions(
        eval_set,
        SweepOptions(ks=tuple(args.ks), metrics=tuple(args.metrics)),
        retriever=rag.retriever,
        chunks=rag.chunks,
        client=client,
        embedder=rag.embedder,
        progress=recorder.done,
    )
    out = recorder.totals()
    out["means_at_k_max"] = {m: _mean(result.per_question, m, max(args.ks)) for m in result.metrics}
    return out


async def naive(
    args: argparse.Namespace, eval_set: Any, rag: Any, save: Any, earlier: Rows | None
) -> dict[str, Any]:
    """Every k judged from scratch: generate, then evaluate the (question, top k, answer)."""
    session = _session(args.model)
    client, ledger = session.client, session.ledger
    texts = {c.id: c.text for c in rag.chunks}
    queries = list(eval_set.queries)
    hits = await rag.retriever.search([q.question for q in queries], max(args.ks))
    recorder = Recorder("naive", ledger, save, earlier, cpu=args.cpu)
    for query, ranked in zip(queries, hits, strict=True):
        if args.budget_min is not None and recorder.elapsed_min() >= args.budget_min:
            print(f"naive: budget of {args.budget_min} min spent; stopping", flush=True)
            break
        contexts = [texts[h.chunk_id] for h in ranked]
        language = detect_language(query.question)
        prompt_language = language if language in prompt_languages() else "en"
        for k in args.ks:
            generation = await generate_answer(
                client, question=query.question, contexts=contexts[:k], language=prompt_language
            )
            sample = RagSample(
                id=f"{query.id}@{k}",
                question=query.question,
                contexts=tuple(contexts[:k]),
                answer=generation.answer,
                reference=query.answers[0],
                language=language,
            )
            await aevaluate(
                [sample],
                args.metrics,
                client=client,
                embedder=rag.embedder,
                cache=False,
                support_probability=False,
            )
        recorder.done(query.id)
    return recorder.totals()


def _mean(frame: Any, metric: str, k: int) -> float | None:
    values = frame.loc[frame.k == k, metric].dropna()
    return None if values.empty else round(float(values.mean()), 4)


async def main(args: argparse.Namespace) -> None:
    eval_set = load_eval_set(args.eval_set).limit(args.limit)
    args.cpu = machine_info()["cpu_model"]
    unknown = [q for q in args.questions or () if q not in {q.id for q in eval_set.queries}]
    if unknown:
        raise SystemExit(f"--questions: {unknown} not among the first {args.limit} questions")
    rag = await build_rag(
        eval_set,
        _session(args.model),
        needs_embedder=any(JUDGES[m].needs_embedder for m in args.metrics),
    )
    if rag.embedder is not None:
        # Embeddings are not model calls; keep them out of both plans' ledgers alike.
        rag = type(rag)(rag.chunks, rag.retriever, EmbeddingClient(rag.embedder.backend))
    path = args.out
    report = json.loads(path.read_text()) if path.exists() else {"runs": []}
    setup = {
        "eval_set": args.eval_set,
        "questions": [q.id for q in eval_set.queries],
        "ks": list(args.ks),
        "metrics": list(args.metrics),
        "model": args.model,
        "retriever": "bm25",
    }
    for plan in args.plans:
        machine = machine_info("llama-cpp-python")
        run: dict[str, Any] = {"plan": plan, **setup, "machine": machine, "finished": False}
        old = next((r for r in report["runs"] if r["plan"] == plan), None)
        subset, earlier = eval_set, None
        if args.resume and old is not None and old.get("per_question"):
            earlier = old["per_question"]
            done = {row["question"] for row in earlier}
            run["machine"] = old["machine"]
            run["resumed"] = [*old.get("resumed", []), machine]
            subset = dataclasses.replace(
                eval_set, queries=tuple(q for q in eval_set.queries if q.id not in done)
            )
        if args.questions is not None:
            subset = _only(subset, args.questions)
            if earlier is None:  # a run of only these questions, not a continuation
                run["asked"] = list(args.questions)
        report["runs"] = [r for r in report["runs"] if r["plan"] != plan] + [run]

        def save(per_question: list[dict[str, Any]], run: dict[str, Any] = run) -> None:
            run["per_question"] = per_question
            _write(path, report)

        measure = planned if plan == "planned" else naive
        measured = await measure(args, subset, rag, save, earlier)
        run.update(measured, finished=True, load_average_at_end=list(os.getloadavg()))
        _write(path, report)
        print(json.dumps({"plan": plan, **measured}, ensure_ascii=False), flush=True)


def _only(eval_set: Any, wanted: list[str]) -> Any:
    """The eval set cut to ``wanted`` question ids that it still holds, in that order."""
    by_id = {q.id: q for q in eval_set.queries}
    return dataclasses.replace(eval_set, queries=tuple(by_id[q] for q in wanted if q in by_id))


def _write(path: Path, report: dict[str, Any]) -> None:
    """The runs and, once both plans share a question, their ``comparison``; and the markdown."""
    written = {key: value for key, value in report.items() if key != "comparison"}
    both = comparison(report["runs"])
    if both is not None:
        written["comparison"] = both
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(written, indent=2, ensure_ascii=False) + "\n")
    path.with_suffix(".md").write_text(render(report))


def render(report: dict[str, Any]) -> str:
    """The runs as markdown: totals per plan, then both plans on the questions both finished."""
    lines = [
        "# k-sweep cost: planned (rag_judge) vs naive (judge every k from scratch)",
        "",
        "Written by `benchmarks/sweep_cost.py`; no response cache, one call at a time.",
        "",
        "| plan | set | questions done | ks | calls | prompt tok | completion tok | wall s "
        "| load at start |",
        "|---|---|--:|---|--:|--:|--:|--:|---|",
    ]
    for run in report["runs"]:
        done = run.get("per_question", [])
        last = done[-1] if done else {}
        ks = run["ks"]
        lines.append(
            f"| {run['plan']} | {run['eval_set']} | {len(done)} of {len(run['questions'])} | "
            f"{ks[0]}..{ks[-1]} | {last.get('calls', 0)} | {last.get('prompt_tokens', 0):,} | "
            f"{last.get('completion_tokens', 0):,} | {last.get('wall_s', 0)} | "
            f"{run['machine']['load_average_at_start']} |"
        )
    for run in report["runs"]:
        done = len(run.get("per_question", []))
        if run.get("asked"):
            lines += [
                "",
                f"The {run['plan']} run was asked for {', '.join(run['asked'])} only "
                f"(`--questions`), not all {len(run['questions'])} questions of the setup.",
            ]
        elif done < len(run["questions"]):
            lines += [
                "",
                f"The {run['plan']} run was stopped after {done} of {len(run['questions'])} "
                "questions; its numbers are those of the finished questions.",
            ]
    lines += _side_by_side(comparison(report["runs"]))
    for run in report["runs"]:
        machine = ", ".join(f"{k}={v}" for k, v in run["machine"].items())
        lines += ["", f"Machine ({run['plan']}): {machine}"]
        for later in run.get("resumed", []):
            lines.append(
                f"Resumed ({run['plan']}): {later.get('date_utc')} on {later.get('cpu_model')}, "
                f"load average at start {later.get('load_average_at_start')}"
            )
    return "\n".join(lines) + "\n"


def _per_question(run: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each finished question's own calls, tokens and seconds (differences of the tallies),
    and its CPU (rows from before rows named one ran on the run's first machine)."""
    out: dict[str, dict[str, Any]] = {}
    previous = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "wall_s": 0.0}
    for row in run.get("per_question", []):
        out[row["question"]] = {key: row[key] - previous[key] for key in previous}
        out[row["question"]]["wall_s"] = round(out[row["question"]]["wall_s"], 1)
        out[row["question"]]["cpu"] = row.get("cpu") or run["machine"]["cpu_model"]
        previous = {key: row[key] for key in previous}
    return out


def comparison(runs: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Both plans on the questions both finished: each question's own figures and the naive
    plan's time over the planned one's where both ran it on one CPU model, the totals, and the
    totals of those questions (None until both plans have a question in common)."""
    by_plan = {run["plan"]: _per_question(run) for run in runs}
    if not {"planned", "naive"} <= by_plan.keys():
        return None
    common = [q for q in by_plan["planned"] if q in by_plan["naive"]]
    if not common:
        return None
    keys = ("calls", "prompt_tokens", "completion_tokens", "wall_s")
    questions = []
    for question in common:
        p, n = by_plan["planned"][question], by_plan["naive"][question]
        same = p["cpu"] == n["cpu"]
        questions.append(
            {
                "question": question,
                "cpu": p["cpu"] if same else None,
                "planned": p,
                "naive": n,
                "naive_over_planned": round(n["wall_s"] / p["wall_s"], 4) if same else None,
            }
        )
    timed = [q for q in questions if q["cpu"] is not None]
    return {
        "questions": questions,
        "all": {
            "questions": len(questions),
            **{
                plan: {key: round(sum(q[plan][key] for q in questions), 1) for key in keys}
                for plan in ("planned", "naive")
            },
        },
        "same_cpu": {
            "questions": len(timed),
            **{
                plan: {"wall_s": round(sum(q[plan]["wall_s"] for q in timed), 1)}
                for plan in ("planned", "naive")
            },
            "naive_over_planned": round(
                sum(q["naive"]["wall_s"] for q in timed)
                / sum(q["planned"]["wall_s"] for q in timed),
                4,
            )
            if timed
            else None,
        },
    }


def _side_by_side(both: dict[str, Any] | None) -> list[str]:
    """Both plans per question; wall times are compared only where both ran on one CPU."""
    if both is None:
        return []
    lines = [
        "",
        f"Both plans on the {len(both['questions'])} question(s) both finished (wall times "
        "compared only where both plans ran the question on the same CPU model):",
        "",
        "| question | CPU (planned / naive) | planned calls | naive calls "
        "| planned prompt + completion tok | naive prompt + completion tok "
        "| planned s | naive s | naive / planned time |",
        "|---|---|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for q in both["questions"]:
        p, n = q["planned"], q["naive"]
        cpus = q["cpu"] or f"{p['cpu']} / {n['cpu']}"
        lines.append(_side_row(q["question"], cpus, p, n, comparable=q["cpu"] is not None))
    every = both["all"]
    label = f"**all {every['questions']}**"
    lines.append(_side_row(label, "", every["planned"], every["naive"], False))
    same = both["same_cpu"]
    if same["questions"]:
        lines.append(
            f"| **{same['questions']} on one CPU each** | | | | | | "
            f"{same['planned']['wall_s']:.1f} | {same['naive']['wall_s']:.1f} "
            f"| {same['naive_over_planned']:.2f}x |"
        )
    return lines


def _side_row(label: str, cpus: str, p: dict[str, Any], n: dict[str, Any], comparable: bool) -> str:
    ratio = f"{n['wall_s'] / p['wall_s']:.2f}x" if comparable else "-"
    return (
        f"| {label} | {cpus} | {p['calls']:.0f} | {n['calls']:.0f} "
        f"| {p['prompt_tokens']:,.0f} + {p['completion_tokens']:,.0f} "
        f"| {n['prompt_tokens']:,.0f} + {n['completion_tokens']:,.0f} "
        f"| {p['wall_s']:.1f} | {n['wall_s']:.1f} | {ratio} |"
    )


def rewrite(path: Path) -> None:
    """The results file's comparison and markdown again from its runs (no model call)."""
    _write(path, json.loads(path.read_text(encoding="utf-8")))


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--eval-set", default="cmrc2018_zh")
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--ks", type=parse_ks, default=parse_ks("1-10"))
    parser.add_argument("--model", default="local/qwen2.5-coder-1.5b")
    parser.add_argument("--metrics", type=lambda s: tuple(s.split(",")), default=DEFAULT_METRICS)
    parser.add_argument("--plans", type=lambda s: s.split(","), default=["planned", "naive"])
    parser.add_argument(
        "--budget-min", type=float, default=None, help="naive: start no question after this"
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=RESULTS / "sweep_cost.json",
        help="results file (its .md is written next to it); --resume continues the runs in it",
    )
    parser.add_argument(
        "--questions",
        type=lambda s: [q.strip() for q in s.split(",") if q.strip()],
        default=None,
        help="only these question ids, in this order (finished ones skipped with --resume)",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue each plan's recorded run with the questions it has not finished",
    )
    parser.add_argument(
        "--rewrite",
        action="store_true",
        help="only write --out's comparison and markdown again from its runs (no model call)",
    )
    args = parser.parse_args()
    if args.questions is not None and not args.resume:
        # Without --resume a plan's recorded run is replaced: its other questions would be lost.
        parser.error("--questions adds questions to a plan's recorded run: use it with --resume")
    return args


if __name__ == "__main__":
    arguments = parse_args()
    if arguments.rewrite:
        rewrite(arguments.out)
    else:
        asyncio.run(main(arguments))
