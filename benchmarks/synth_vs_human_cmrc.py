"""Synthetic against human questions on the same CMRC 2018 paragraphs, in one run.

CMRC's people wrote questions for each dev paragraph with the paragraph in view. Here a seeded
sample of those paragraphs goes through ``synth_job`` (factual questions only, the chunking of
``cmrc2018_zh_chunked``, the embedded model), once with the copy filter and once without it.
Then, over the whole 848-paragraph corpus cut the same way:

- BM25 recall@1/@5/@10 by paragraph (a question's paragraph among the top k passages'), and
  answer hit@k (a top-k passage holds the reference answer: passages compete here),
- the answer the embedded model writes from the top ``K`` passages, scored by exact match,
  answer F1 and the faithfulness and completeness judges,
- how much each question copies its paragraph (token 3-gram overlap),

for the human question and the synthetic one of each paragraph, side by side, with paired
bootstrap CIs of the difference (2,000 resamples, seed 0); the tables are also in the results
file (``comparisons``). Everything is cached, so a re-run makes no model call; ``--summarise``
only recomputes the tables from the results file's rows:

    python benchmarks/synth_vs_human_cmrc.py [--paragraphs 60] [--k 3]
    python benchmarks/synth_vs_human_cmrc.py --summarise
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _machine import machine_info

from rag_judge.core.stats import bootstrap_mean_ci, paired_bootstrap_ci
from rag_judge.core.types import RagSample
from rag_judge.data.eval_sets import load_eval_set
from rag_judge.jobs.score.options import ScoreOptions
from rag_judge.jobs.score.run import judge_rows
from rag_judge.jobs.synth.job import synth_job
from rag_judge.jobs.synth.options import SynthOptions
from rag_judge.pipeline.bm25 import BM25Retriever
from rag_judge.pipeline.chunking import chunk_corpus, chunker_from_spec
from rag_judge.pipeline.generate import generate_answer
from rag_judge.retrieval.by_k import doc_ranking, text_metrics
from rag_judge.runtime.session import open_session
from rag_judge.synth.overlap import copy_overlap

RESULTS = Path(__file__).resolve().parent / "results"
CHUNKING = {"chunker": "sentence_windows", "min_chars": 100, "max_chars": 200, "overlap": 1}
KS = (1, 5, 10)
JUDGED = ("exact_match", "answer_f1", "faithfulness", "completeness")


async def main(paragraphs: int, k: int) -> None:
    machine = machine_info("llama-cpp-python")
    started = time.monotonic()
    cmrc = load_eval_set("cmrc2018_zh")
    asked = {}
    for query in cmrc.queries:  # the first human question of each paragraph
        (paragraph,) = cmrc.qrels[query.id]
        asked.setdefault(paragraph, query)
    chosen = sorted(random.Random(0).sample(sorted(asked), paragraphs))
    documents = [d for d in cmrc.documents if d.id in set(chosen)]
    session = open_session()
    sets: dict[str, dict[str, dict[str, Any]]] = {
        "human": {
            p: {"question": asked[p].question, "answers": list(asked[p].answers)} for p in chosen
        }
    }
    synth_runs = {}
    for name, max_overlap in (("synthetic", 0.5), ("synthetic, no copy filter", None)):
        options = SynthOptions(
            questions=paragraphs,
            multi_source=0.0,
            unanswerable=0.0,
            language="zh",
            chunking=CHUNKING,
            max_overlap=max_overlap,
        )
        begun = time.monotonic()
        run = await synth_job(documents, session, options)
        synth_runs[name] = {
            "seconds": round(time.monotonic() - begun, 1),
            "written": len(run.verdicts),
            "kept": len(run.kept),
            "rejected": _rejected(run.verdicts),
        }
        doc_of = {c.id: c.doc_id for c in run.chunks}
        sets[name] = {}
        for verdict in run.kept:  # each paragraph's first kept question
            c = verdict.candidate
            sets[name].setdefault(
                doc_of[c.chunk_ids[0]], {"question": c.question, "answers": [c.answer]}
            )
    chunks = chunk_corpus(chunker_from_spec(CHUNKING), list(cmrc.documents))
    texts = {c.id: c.text for c in chunks}
    doc_of = {c.id: c.doc_id for c in chunks}
    paragraph_text = {d.id: d.text for d in cmrc.documents}
    retriever = BM25Retriever.build(chunks)
    for rows in sets.values():
        found = await retriever.search([r["question"] for r in rows.values()], max(KS))
        rankings = {p: [h.chunk_id for h in hits] for p, hits in zip(rows, found, strict=True)}
        references = {p: row["answers"][0] for p, row in rows.items()}
        by_text, _ = text_metrics(rankings, texts, references, KS)
        for (paragraph, k_), values in by_text.items():
            rows[paragraph][f"answer_hit@{k_}"] = values["text_hit_rate"]
        for (paragraph, row), hits in zip(rows.items(), found, strict=True):
            ranked = doc_ranking([h.chunk_id for h in hits], doc_of)
            for cut in KS:
                row[f"recall@{cut}"] = float(paragraph in ranked[:cut])
            row["contexts"] = [texts[h.chunk_id] for h in hits[:k]]
            row["overlap"] = copy_overlap(row["question"], paragraph_text[paragraph])
            row["overlap>0.5"] = float(row["overlap"] > 0.5)
    await _answer_and_judge(sets, session)
    record = {
        "machine": machine,
        "paragraphs": paragraphs,
        "k": k,
        "synth": synth_runs,
        "model": session.client.name,
        "seconds": round(time.monotonic() - started, 1),
        "sets": sets,
        "comparisons": comparisons(sets),
    }
    (RESULTS / "synth_vs_human_cmrc.json").write_text(
        json.dumps(record, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )
    (RESULTS / "synth_vs_human_cmrc.md").write_text(_report(record), encoding="utf-8")
    print(_report(record))


async def _answer_and_judge(sets: dict[str, dict[str, dict[str, Any]]], session: Any) -> None:
    """Each question answered from its top k, then scored; a question asked twice (the same
    synthetic question with and without the filter) is answered once, from the cache."""
    for name, rows in sets.items():
        samples = []
        for paragraph, row in rows.items():
            made = await generate_answer(
                session.generator, question=row["question"], contexts=row["contexts"], language="zh"
            )
            row["answer"] = made.answer
            samples.append(
                RagSample(
                    id=paragraph,
                    question=row["question"],
                    contexts=tuple(row["contexts"]),
                    answer=made.answer or "",
                    reference=row["answers"][0],
                    references=tuple(row["answers"][1:]),
                    language="zh",
                )
            )
        judged = await judge_rows(samples, session, ScoreOptions(metrics=JUDGED, reasons=False))
        for sample in judged.samples:
            for metric, result in sample.results.items():
                rows[sample.sample.id][metric] = result.value
        print(f"{name}: answered and judged {len(samples)}", file=sys.stderr)


def _rejected(verdicts: Sequence[Any]) -> dict[str, int]:
    found: dict[str, int] = {}
    for v in verdicts:
        if v.rejected_by:
            found[v.rejected_by] = found.get(v.rejected_by, 0) + 1
    return found


MEASURES = (
    *(f"recall@{k}" for k in KS),
    *(f"answer_hit@{k}" for k in KS),
    *JUDGED,
    "overlap",
    "overlap>0.5",
)


def _report(record: dict[str, Any]) -> str:
    sets = record["sets"]
    m = record["machine"]
    lines = [
        "# Synthetic and human questions on the same CMRC 2018 paragraphs",
        "",
        f"Written by `benchmarks/synth_vs_human_cmrc.py` on {m['cpu_model']}, "
        f"{m['usable_cores']} cores, {m['date_utc']}; model `{record['model']}`; "
        f"{record['paragraphs']} paragraphs sampled (seed 0) from cmrc2018_zh's 848; "
        f"{record['seconds'] / 60:.1f} min in all.",
        "",
        "Retrieval: BM25 over all 848 paragraphs cut into sentence windows (cmrc2018_zh_chunked's "
        "chunking); recall@k = the question's paragraph is among the top k passages'; "
        "answer_hit@k = a top-k passage holds the question's reference answer (n-gram "
        "coverage 0.5, the sweep's text_hit_rate; a question no passage covers is left out). "
        f"Answers: the embedded model from the top {record['k']} passages; exact match and "
        "answer F1 "
        "against the question's reference(s); faithfulness and completeness by the embedded "
        "judge (scoring path). Overlap: share of the question's character 3-grams found in its "
        "paragraph. Difference = synthetic - human on the paragraphs both have, with a 95% "
        "paired bootstrap CI.",
        "",
    ]
    for name, synth in record["synth"].items():
        rejected = ", ".join(f"{k} {v}" for k, v in synth["rejected"].items()) or "none"
        lines.append(
            f"- {name}: {synth['written']} written, {synth['kept']} kept in "
            f"{synth['seconds'] / 60:.1f} min; dropped: {rejected}"
        )
    lines.append("")
    for comparison in record.get("comparisons") or comparisons(sets):
        name = comparison["set"]
        lines += [
            f"## human vs {name} ({comparison['paragraphs']} paragraphs with both)",
            "",
            "| measure | human | " + name + " | difference [95% CI] |",
            "|---|---|---|---|",
        ]
        for row in comparison["measures"]:
            diff = row["difference"]
            lines.append(
                f"| {row['measure']} (n={row['n']}) | {_ci(row['human'])} "
                f"| {_ci(row['synthetic'])} | "
                f"{diff['estimate']:+.3f} [{diff['low']:+.3f}, {diff['high']:+.3f}] |"
            )
        lines.append("")
    return "\n".join(lines) + "\n"


def comparisons(sets: dict[str, dict[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Each synthetic set against the human questions on the paragraphs both have: per measure,
    the rows both scored, each side's mean and the paired difference (synthetic - human), each
    with its 95% bootstrap CI (2,000 resamples, seed 0): the tables of the markdown, as data."""
    human = sets["human"]
    found = []
    for name in [n for n in sets if n != "human"]:
        rows = sets[name]
        paired = [p for p in rows if p in human]
        measures = []
        for measure in MEASURES:
            both = [p for p in paired if _num(human[p].get(measure)) and _num(rows[p].get(measure))]
            if not both:
                continue
            a = [rows[p][measure] for p in both]
            b = [human[p][measure] for p in both]
            measures.append(
                {
                    "measure": measure,
                    "n": len(both),
                    "human": _interval(bootstrap_mean_ci(b)),
                    "synthetic": _interval(bootstrap_mean_ci(a)),
                    "difference": _interval(paired_bootstrap_ci(a, b)),
                }
            )
        found.append({"set": name, "paragraphs": len(paired), "measures": measures})
    return found


def _interval(ci: Any) -> dict[str, float]:
    return {"estimate": ci.estimate, "low": ci.low, "high": ci.high}


def _num(value: Any) -> bool:
    return isinstance(value, (int, float))


def _ci(ci: dict[str, float]) -> str:
    return f"{ci['estimate']:.3f} [{ci['low']:.3f}, {ci['high']:.3f}]"


def summarise(path: Path) -> None:
    """Add the comparison tables to a results file from its per-paragraph rows (no model
    call); its markdown is left as it is."""
    record = json.loads(path.read_text(encoding="utf-8"))
    record["comparisons"] = comparisons(record["sets"])
    path.write_text(json.dumps(record, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paragraphs", type=int, default=60)
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument(
        "--summarise",
        action="store_true",
        help="only add the comparison tables to the results file from its rows (no model call)",
    )
    args = parser.parse_args()
    if args.summarise:
        summarise(RESULTS / "synth_vs_human_cmrc.json")
    else:
        asyncio.run(main(args.paragraphs, args.k))
