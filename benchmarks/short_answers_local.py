"""Short answers with the embedded judge: mixed-script spans, changed numbers and sibling spans,
before and after this release's changes (``results/short_answers_local.md``).

Runs faithfulness and completeness in ``score`` mode (the embedded model's default) over every
row of the bundled ``cmrc_short_answers`` set, as a user would (``rag_judge.aevaluate``; reasons
off: they change no value), one metric after the other so consecutive rows share their passage
prefix. Every call goes through a response cache (``--cache``): a re-run is free.

**Before and after in one run**, on the same claims: *after* is what the judge returns now (a
fragment answer asked with ``claims/answer``, per-script coverage, exact facts compared as
such, the fragment weights); *before* asks every claim the previous release's way, with
``claims/support`` (the same client and cache), and combines that P(yes) with the previous
release's coverage (one word/bigram mode per text, :func:`coverage_before`, kept here verbatim)
by ``SUPPORT_WEIGHTS``, with no exact-fact check. ``exact_match`` and ``answer_f1`` (no model)
are reported beside them.

``fit`` fits the fragment weights (``FRAGMENT_WEIGHTS`` in ``rag_judge/judges/scoring.py``) on
the ``tune`` rows only: a logistic regression of the label on ``logit(P(yes))`` and coverage,
over the fragment claims of both metrics that no exact-fact check decides.

Figures per kind (sibling, number, mixed) and split (held-out, tune, all): ROC AUC of the value
against the label and accuracy at the decision threshold 0.5, each with a percentile bootstrap
95% CI (2,000 resamples, seed 0).

Usage::

    .venv/bin/python benchmarks/short_answers_local.py run      # judges (~1.5 h on 2 cores)
    .venv/bin/python benchmarks/short_answers_local.py fit      # the fragment weights
    .venv/bin/python benchmarks/short_answers_local.py report   # from the score files
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import math
import re
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from _machine import machine_info
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

from rag_judge.data.calibration_sets import load_calibration_set
from rag_judge.jobs.score.run import aevaluate
from rag_judge.judges.reference_match import best_match
from rag_judge.judges.scoring import support_probability
from rag_judge.prompts.templates import load_prompt
from rag_judge.runtime.session import open_session
from rag_judge.runtime.settings import load_settings

RESULTS = Path(__file__).parent / "results"
OUT = RESULTS / "short_answers_local"
MODEL = "local/qwen2.5-coder-1.5b"
SET = "cmrc_short_answers"
JUDGED = ("faithfulness", "completeness")
KINDS = ("sibling", "number", "mixed")
SPLITS = ("held_out", "tune", "all")
THRESHOLD = 0.5


async def judge(cache: Path) -> None:
    """Each judged metric over the whole set, written to ``OUT/<metric>.jsonl``."""
    rows = load_calibration_set(SET).samples
    session = open_session(load_settings({"model": MODEL}), cache=cache)
    OUT.mkdir(parents=True, exist_ok=True)
    for metric in JUDGED:
        started = time.perf_counter()
        done = itertools.count(1)

        def tick(_: Any, metric: str = metric, done: Any = done) -> None:
            print(f"{metric} {next(done)}/{len(rows)}", flush=True)

        result = await aevaluate(
            rows, [metric], client=session.client, mode="score", reasons=False, progress=tick
        )
        with (OUT / f"{metric}.jsonl").open("w", encoding="utf-8") as out:
            for sample in result.samples:
                judged = sample.results[metric]
                claims = [c.claim for c in judged.claims]
                passages = _sources(metric, sample.sample)
                before = [
                    await _support_before(session.client, passages, sample.sample.question, c)
                    for c in claims
                ]
                record = {
                    "id": sample.sample.id,
                    "value": judged.value,
                    "status": judged.status,
                    "claims": claims,
                    "support": judged.details.get("support", []),
                    "before": before,
                }
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
        seconds = time.perf_counter() - started
        (OUT / f"{metric}.run.json").write_text(
            json.dumps({"seconds": round(seconds, 1), "rows": len(rows), "machine": machine_info(
                "llama-cpp-python")}, indent=2) + "\n"
        )  # fmt: skip


async def _support_before(
    client: Any, passages: list[str], question: str | None, claim: str
) -> float | None:
    """P(yes) of ``claims/support`` for the claim, as the previous release asked every claim."""
    support = load_prompt("claims/support", "zh")
    request = support.request(passages=passages, question=question or "", claim=claim)
    return (await client.yes_probability(request)).p_yes


# --- the previous release's coverage, verbatim, for the "before" figures ---------------------

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af"
_WORD = re.compile(rf"[{_CJK}]|[^\W_]+(?:['’.-][^\W_]+)*", re.UNICODE)
_STOP = frozenset(
    """a an the of in on at to for from by with and or but not no nor is are was were be been
    being am do does did has have had having it its it's this that these those there here he
    she they them his her their him we us our you your i me my as so than then too very can
    could will would shall should may might must also only just about into over under after
    before between during while which who whom whose what when where why how all any both
    each few more most other some such own same s t""".split()  # noqa: SIM905
)


def _is_cjk(text: str) -> bool:
    letters = [c for c in text if c.isalpha()]
    cjk = sum(1 for c in letters if re.match(f"[{_CJK}]", c))
    return bool(letters) and cjk * 2 >= len(letters)


def _units_before(text: str) -> list[str]:
    if _is_cjk(text):
        chars = [c for c in text.lower() if c.isalnum()]
        return [a + b for a, b in itertools.pairwise(chars)] or chars
    words = [re.sub(r"['’]s$", "", w.lower()).strip("'’.-") for w in _WORD.findall(text)]
    return [w for w in words if w and w not in _STOP]


def coverage_before(claim: str, *sources: str) -> float:
    """The previous release's ``segment.coverage``: one mode per text, chosen by its script."""
    units = _units_before(claim)
    if not units:
        return 0.0
    if _is_cjk(claim):
        have = {u for source in sources for u in _units_before(source)}
        return sum(1 for u in units if u in have) / len(units)
    words = {u for source in sources for u in _units_before(source)}
    stems = {w[:5] for w in words}
    return sum(1 for u in units if u in words or u[:5] in stems) / len(units)


# --- report ---------------------------------------------------------------------------------


def _records(metric: str) -> dict[str, dict[str, Any]]:
    lines = (OUT / f"{metric}.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["id"]: r for r in map(json.loads, lines)}


def values(metric: str, how: str) -> dict[str, float | None]:
    """Each row's value of ``metric``: ``after`` (as judged), ``before`` (recomputed), or a
    reference match."""
    chosen = load_calibration_set(SET)
    if metric in ("exact_match", "answer_f1"):
        out: dict[str, float | None] = {}
        for s in chosen.samples:
            exact, f1, _ = best_match(s.answer or "", s.reference_answers, "zh")
            out[s.id] = float(exact) if metric == "exact_match" else f1
        return out
    records = _records(metric)
    if how == "after":
        return {i: r["value"] for i, r in records.items()}
    samples = {s.id: s for s in chosen.samples}
    out = {}
    for row_id, record in records.items():
        sample = samples[row_id]
        if record["status"] != "ok" or not record["support"]:
            out[row_id] = None
            continue
        sources = _sources(metric, sample)
        ps = [
            support_probability(p_yes, coverage_before(claim, *sources))
            for claim, p_yes in zip(record["claims"], record["before"], strict=True)
        ]
        out[row_id] = statistics.fmean(ps)
    return out


def _sources(metric: str, sample: Any) -> list[str]:
    if metric == "faithfulness":
        return list(sample.contexts or ())
    return [f"问题：{sample.question}\n回答：{sample.answer}"]  # how completeness reads the answer


def _bootstrap(
    figure: Callable[[np.ndarray, np.ndarray], float], y: np.ndarray, v: np.ndarray
) -> tuple[float, float, float]:
    rng = np.random.default_rng(0)
    point = figure(y, v)
    draws = []
    for _ in range(2000):
        pick = rng.integers(0, len(y), len(y))
        if len(set(y[pick])) == 2:
            draws.append(figure(y[pick], v[pick]))
    low, high = np.percentile(draws, [2.5, 97.5])
    return point, float(low), float(high)


def _accuracy(y: np.ndarray, v: np.ndarray) -> float:
    return float(np.mean((v >= THRESHOLD) == (y == 1)))


def figures(metric: str, how: str) -> dict[str, Any]:
    """AUC and accuracy per split and kind."""
    chosen = load_calibration_set(SET)
    found = values(metric, how)
    out: dict[str, Any] = {}
    for split in SPLITS:
        for kind in (*KINDS, "every kind"):
            rows = [
                s for s in chosen.samples
                if (split == "all" or s.metadata["split"] == split)
                and (kind == "every kind" or s.metadata["kind"] == kind)
            ]  # fmt: skip
            scored = [s for s in rows if found.get(s.id) is not None]
            y = np.array([chosen.labels[s.id] for s in scored])
            v = np.array([found[s.id] for s in scored], dtype=float)
            out[f"{split}/{kind}"] = {
                "rows": len(rows),
                "scored": len(scored),
                "auc": _bootstrap(lambda a, b: float(roc_auc_score(a, b)), y, v),
                "accuracy": _bootstrap(_accuracy, y, v),
            }
    return out


def fit() -> dict[str, Any]:
    """The fragment weights from the tune rows of both metrics (see the module docstring)."""
    chosen = load_calibration_set(SET)
    split = {s.id: s.metadata["split"] for s in chosen.samples}
    x, y = [], []
    for metric in JUDGED:
        for row_id, record in _records(metric).items():
            if split[row_id] != "tune" or record["status"] != "ok":
                continue
            for signal in record["support"]:
                if signal.get("answer") and not signal.get("unstated"):
                    p = min(max(signal["model"], 1e-6), 1 - 1e-6)
                    x.append([math.log(p / (1 - p)), signal["coverage"]])
                    y.append(chosen.labels[row_id])
    model = LogisticRegression(C=1.0).fit(np.array(x), np.array(y))
    weights = (float(model.intercept_[0]), *(float(w) for w in model.coef_[0]))
    found = {
        "weights": weights,
        "claims": len(y),
        "positives": int(sum(y)),
        "machine": machine_info(),
    }
    (RESULTS / "short_answers_fit.json").write_text(json.dumps(found, indent=2) + "\n")
    print(json.dumps(found, indent=2))
    return found


def _cell(triple: Sequence[float]) -> str:
    return f"{triple[0]:.3f} [{triple[1]:.3f}, {triple[2]:.3f}]"


def report() -> None:
    table: dict[str, Any] = {}
    for metric in (*JUDGED, "exact_match", "answer_f1"):
        for how in ("before", "after") if metric in JUDGED else ("after",):
            table[f"{metric} {how}"] = figures(metric, how)
    runs = {m: json.loads((OUT / f"{m}.run.json").read_text()) for m in JUDGED}
    (RESULTS / "short_answers_local.json").write_text(
        json.dumps({"figures": table, "runs": runs}, indent=2) + "\n"
    )
    lines = [
        "# Short answers: mixed scripts, numbers and sibling spans (cmrc_short_answers)",
        "",
        "Written by `benchmarks/short_answers_local.py report`. The embedded judge "
        f"`{MODEL}` in `score` mode; *before*: the previous release's coverage and no number "
        "check, recomputed from the same model probabilities; *after*: as judged now. "
        "Accuracy at value >= 0.5; 95% percentile bootstrap CIs (2,000 resamples, seed 0). "
        "The `held_out` rows were never used to choose anything; `tune` is where the "
        "short-answer weights were fitted.",
        "",
    ]
    machine = runs["faithfulness"]["machine"]
    lines.append(
        f"Machine: {machine['cpu_model']}, {machine['usable_cores']} cores; "
        + ", ".join(
            f"{m} {runs[m]['seconds'] / 60:.1f} min for {runs[m]['rows']} rows" for m in JUDGED
        )
        + "."
    )
    for split in SPLITS:
        lines += ["", f"## {split.replace('_', '-')} rows", ""]
        lines.append("| metric | figure | " + " | ".join((*KINDS, "every kind")) + " |")
        lines.append("|---|---|" + "---|" * (len(KINDS) + 1))
        for name, found in table.items():
            for figure in ("auc", "accuracy"):
                cells = [_cell(found[f"{split}/{k}"][figure]) for k in (*KINDS, "every kind")]
                lines.append(f"| {name} | {figure} | " + " | ".join(cells) + " |")
        counts = table[f"{JUDGED[0]} after"]
        lines.append("")
        lines.append(
            "Rows: " + ", ".join(f"{k} {counts[f'{split}/{k}']['rows']}" for k in KINDS) + "."
        )
    (RESULTS / "short_answers_local.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("command", choices=("run", "fit", "report"))
    parser.add_argument("--cache", type=Path, default=Path(".cache/short_answers.sqlite"))
    args = parser.parse_args()
    if args.command == "run":
        asyncio.run(judge(args.cache))
    if args.command == "fit":
        fit()
        return
    report()


if __name__ == "__main__":
    main()
