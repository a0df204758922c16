"""Context recall at every k against the gold chunk's position, with the embedded model.

The 20 CMRC 2018 samples of ``judge_cost.py`` (``data/judge_cost_samples.jsonl``: three chunks
each, one of them the gold chunk that holds the reference answer, at ``gold_index``) are judged
by ``context_recall`` in each mode, in process. The truth at k is 1 when the gold chunk is in
the top k, else 0; a (sample, k) case matches when the judge's recall@k rounds to it (>= 0.5
for the scoring path's mean P(supported)). The generative path matched in 58 of 60 cases in
``judge_cost.py`` (over llama-cpp-python's server); this script measures both modes in one run,
and the scoring path two ways: cumulative passages in ascending k (what rag_judge does: the
prompt for k extends the one for k - 1) and ``score/per_passage``, each (claim, passage) on its
own with support at k the best over passages 1..k (defined here, for the comparison only).

Usage::

    .venv/bin/python benchmarks/recall_by_k_local.py [--modes score,score/per_passage,generate]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from pathlib import Path
from typing import Any

from _machine import machine_info

from rag_judge.core.types import ClaimVerdict, RagSample
from rag_judge.jobs.score.run import aevaluate
from rag_judge.judges import probes
from rag_judge.judges.lexical import coverage
from rag_judge.judges.scoring import support_probability
from rag_judge.judges.steps import Cost, Outcome
from rag_judge.runtime.session import open_session
from rag_judge.runtime.settings import load_settings

SAMPLES = Path(__file__).parent / "data" / "judge_cost_samples.jsonl"
RESULTS = Path(__file__).parent / "results"
MODEL = "local/qwen2.5-coder-1.5b"


def load() -> list[tuple[RagSample, int]]:
    rows = [json.loads(line) for line in SAMPLES.read_text(encoding="utf-8").splitlines()]
    return [
        (
            RagSample(
                id=r["id"],
                question=r["question"],
                contexts=tuple(r["contexts"]),
                answer=r["answer"],
                reference=r["reference"],
            ),
            int(r["gold_index"]),
        )
        for r in rows
    ]


async def per_passage_by_k(
    client: Any,
    *,
    passages: Any,
    question: str | None,
    claims: Any,
    language: str,
    reasons: bool = True,
) -> Outcome[list[ClaimVerdict]]:
    """Each (claim, passage) alone; a claim's support at k is its best over passages 1..k."""
    cost, best, by_k = Cost(), [0.0] * len(claims), [[] for _ in claims]
    for passage in passages:
        for i, claim in enumerate(claims):
            found = await probes._probe(client, [passage], question, claim, language)
            cost += found.cost
            if not found.ok or found.value is None:
                return Outcome(None, found.status, found.error, cost)
            best[i] = max(best[i], support_probability(found.value, coverage(claim, passage)))
            by_k[i].append(best[i])
    verdicts = [
        ClaimVerdict(
            claim=claim,
            verdict="supported" if p >= probes.SUPPORTED_AT else "not_mentioned",
            support_probability=p,
        )
        for claim, p in zip(claims, best, strict=True)
    ]
    return Outcome(verdicts, cost=cost, details={"support_by_k": by_k})


async def run(mode: str) -> dict[str, Any]:
    original = probes.score_claims_by_k
    if mode == "score/per_passage":
        probes.score_claims_by_k = per_passage_by_k  # type: ignore[assignment]
    try:
        return await _run(mode)
    finally:
        probes.score_claims_by_k = original  # type: ignore[assignment]


async def _run(mode: str) -> dict[str, Any]:
    session = open_session(load_settings({"model": MODEL}), cache=False)
    samples = load()
    cases, seconds = [], []
    for sample, gold in samples:
        started = time.perf_counter()
        result = await aevaluate(
            [sample], ["context_recall"], client=session.client, mode=mode.split("/")[0]
        )
        seconds.append(time.perf_counter() - started)
        judged = result.samples[0].results["context_recall"]
        for k in range(1, len(sample.contexts or ()) + 1):
            value = None if judged.by_k is None else judged.by_k.get(k)
            truth = 1.0 if gold < k else 0.0
            match = value is not None and (value >= 0.5) == (truth == 1.0)
            cases.append({"id": sample.id, "k": k, "recall": value, "truth": truth, "match": match})
    by_k = {
        k: statistics.fmean(c["recall"] for c in cases if c["k"] == k and c["recall"] is not None)
        for k in sorted({c["k"] for c in cases})
    }
    truth = {k: statistics.fmean(c["truth"] for c in cases if c["k"] == k) for k in by_k}
    tally = session.ledger.models.get(session.client.name)
    return {
        "mode": mode,
        "matched": sum(c["match"] for c in cases),
        "cases": len(cases),
        "recall_by_k": by_k,
        "truth_by_k": truth,
        "seconds_per_sample": statistics.fmean(seconds),
        "calls": tally.calls if tally else 0,
        "prompt_tokens": tally.prompt_tokens if tally else 0,
        "completion_tokens": tally.completion_tokens if tally else 0,
        "per_case": cases,
    }


def markdown(report: dict[str, Any]) -> str:
    machine = report["machine"]
    lines = [
        "# Context recall at every k against the gold chunk (embedded model, in process)",
        "",
        f"{machine['date_utc']} · {machine['cpu_model']} · {machine['usable_cores']} cores · "
        f"{len(load())} CMRC 2018 samples × k = 1..3 (`data/judge_cost_samples.jsonl`)",
        "",
        "| mode | cases matched | recall@1 | recall@2 | recall@3 | s per sample | calls | "
        "prompt + completion tokens | run (UTC, CPU) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for run_ in report["runs"]:
        r = run_["recall_by_k"]
        lines.append(
            f"| {run_['mode']} | {run_['matched']} of {run_['cases']} | "
            + " | ".join(f"{r[k]:.3f}" for k in sorted(r, key=int))
            + f" | {run_['seconds_per_sample']:.1f} | {run_['calls']} | "
            f"{run_['prompt_tokens']} + {run_['completion_tokens']} | "
            f"{(run_.get('machine') or {}).get('date_utc', '')[:16]} "
            f"{(run_.get('machine') or {}).get('cpu_model', '')} |"
        )
    truth = report["runs"][0]["truth_by_k"]
    lines += [
        f"| truth | | {' | '.join(f'{truth[k]:.3f}' for k in sorted(truth, key=int))} | | | | |",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--modes", default="score,score/per_passage,generate")
    args = parser.parse_args()
    modes = args.modes.split(",")
    earlier_path = RESULTS / "recall_by_k_local.json"
    earlier = json.loads(earlier_path.read_text()) if earlier_path.exists() else {"runs": []}
    # Modes not asked for this time keep their earlier run (each run records its own machine).
    kept = [r for r in earlier["runs"] if r["mode"] not in modes]
    for run_ in kept:
        run_.setdefault("machine", earlier.get("machine"))
    runs = kept + [
        asyncio.run(run(mode)) | {"machine": machine_info("llama-cpp-python")} for mode in modes
    ]
    runs.sort(key=lambda r: ("score", "score/per_passage", "generate").index(r["mode"]))
    report = {"machine": machine_info("llama-cpp-python"), "runs": runs}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "recall_by_k_local.json").write_text(json.dumps(report, indent=2) + "\n")
    (RESULTS / "recall_by_k_local.md").write_text(markdown(report), encoding="utf-8")
    print(markdown(report))


if __name__ == "__main__":
    main()
