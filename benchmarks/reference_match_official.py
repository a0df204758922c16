"""``exact_match`` and ``answer_f1`` against the official evaluation scripts, row by row.

The scripts are the public ones, run unmodified from a checkout of their repositories (not
committed here):

* CMRC 2018: ``baseline/cmrc2018_evaluate.py`` (v6, Python 3) of https://github.com/ymcui/cmrc2018
  (commit c0eb1b6ba219847457e6af3180da722bbeb656af);
* SQuAD v1.1: ``evaluate-v1.1.py``, as distributed with SQuAD (https://rajpurkar.github.io/
  SQuAD-explorer/), here the copy in https://github.com/allenai/bi-att-flow (``squad/``).

The CMRC script calls ``nltk.word_tokenize``, whose sentence splitter needs the Punkt data,
a download this machine cannot make; it is run with ``preserve_line=True`` (no sentence
split), the same rule rag_judge follows. The two can differ only where a run of Latin text
between Chinese characters holds more than one sentence; the rows where that could happen are
counted (``latin_runs_with_a_sentence_end``).

Predictions, every one scored by both the official function and rag_judge:

* Chinese: for each of the 3,219 CMRC 2018 dev questions (``cmrc2018_zh``), another annotator's
  answer, the first answer in a sentence (``答案是…。``), its first half, and another question's
  answer from the same paragraph; plus every answer of ``cmrc_short_answers``;
* English: every WiCE claim sentence (``wice_dev``) cut into a seeded reference span of 1-4
  words and four predictions (the span with the next word, in a sentence, lower-cased without
  punctuation, another span): punctuation, articles, numbers, hyphens and quotes as they occur
  in real text. No SQuAD data is in this checkout's sources; the normalisation is the same.

Writes ``results/reference_match_official.json`` (agreement counts, the official aggregate
figures beside rag_judge's) and ``tests/fixtures/reference_match_official.jsonl`` (a seeded
sample of rows with the official values, which the tests check).

Usage::

    .venv/bin/python benchmarks/reference_match_official.py \\
        --cmrc /path/to/cmrc2018/baseline/cmrc2018_evaluate.py \\
        --squad /path/to/evaluate-v1.1.py
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import re
import statistics
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import nltk
from _machine import machine_info

from rag_judge.data.calibration_sets import load_calibration_set
from rag_judge.data.eval_sets import load_eval_set
from rag_judge.judges.reference_match import best_match

RESULTS = Path(__file__).parent / "results" / "reference_match_official.json"
FIXTURE = Path(__file__).parents[1] / "tests" / "fixtures" / "reference_match_official.jsonl"
SAMPLE = {"zh": 300, "en": 200}
"""Rows per language kept in the test fixture."""


def load_script(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    saved = sys.argv
    sys.argv = [str(path)]
    try:
        spec.loader.exec_module(module)
    finally:
        sys.argv = saved
    return module


def seeded(*parts: str) -> int:
    return int(hashlib.sha256("\0".join(parts).encode()).hexdigest(), 16)


def chinese_rows() -> list[dict[str, Any]]:
    rows = []
    cmrc = load_eval_set("cmrc2018_zh")
    by_paragraph: dict[str, list[Any]] = {}
    for query in cmrc.queries:
        by_paragraph.setdefault(next(iter(cmrc.qrels[query.id])), []).append(query)
    for query in cmrc.queries:
        answers = list(query.answers)
        first = answers[0]
        siblings = [q.answers[0] for q in by_paragraph[next(iter(cmrc.qrels[query.id]))]
                    if q.id != query.id]  # fmt: skip
        predictions = {
            "other annotator": answers[-1],
            "in a sentence": f"答案是{first}。",
            "first half": first[: max(1, len(first) // 2)],
        }
        if siblings:
            predictions["sibling"] = siblings[seeded("sibling", query.id) % len(siblings)]
        for how, prediction in predictions.items():
            rows.append(_row(f"{query.id}/{how}", prediction, answers, "zh"))
    short = load_calibration_set("cmrc_short_answers")
    for sample in short.samples:
        rows.append(_row(sample.id, sample.answer or "", list(sample.reference_answers), "zh"))
    return rows


def english_rows() -> list[dict[str, Any]]:
    rows = []
    for sample in load_calibration_set("wice_dev").samples:
        words = (sample.answer or "").split()
        if len(words) < 6:
            continue
        key = sample.id
        start = seeded("start", key) % (len(words) - 5)
        size = 1 + seeded("size", key) % 4
        reference = " ".join(words[start : start + size])
        other = seeded("other", key) % (len(words) - 4)
        predictions = {
            "with the next word": " ".join(words[start : start + size + 1]),
            "in a sentence": f"The answer is {reference}.",
            "lower, no punctuation": re.sub(r"[^\w\s]", "", reference.lower()),
            "another span": " ".join(words[other : other + size]),
        }
        for how, prediction in predictions.items():
            rows.append(_row(f"{key}/{how}", prediction, [reference], "en"))
    return rows


def _row(row_id: str, prediction: str, references: list[str], language: str) -> dict[str, Any]:
    return {"id": row_id, "language": language, "prediction": prediction, "references": references}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--cmrc", type=Path, required=True, help="cmrc2018_evaluate.py (v6)")
    parser.add_argument("--squad", type=Path, required=True, help="evaluate-v1.1.py")
    args = parser.parse_args()
    original = nltk.word_tokenize
    nltk.word_tokenize = lambda text, language="english", preserve_line=True: original(
        text, language, preserve_line=True
    )  # no Punkt data here: see the module docstring
    cmrc = load_script(args.cmrc, "cmrc2018_evaluate")
    squad = load_script(args.squad, "squad_evaluate")
    rows = chinese_rows() + english_rows()
    for row in rows:
        prediction, references = row["prediction"], row["references"]
        if row["language"] == "zh":
            row["official_em"] = float(cmrc.calc_em_score(references, prediction))
            row["official_f1"] = float(cmrc.calc_f1_score(references, prediction))
        else:
            row["official_em"] = float(squad.metric_max_over_ground_truths(
                squad.exact_match_score, prediction, references))  # fmt: skip
            row["official_f1"] = float(squad.metric_max_over_ground_truths(
                squad.f1_score, prediction, references))  # fmt: skip
        exact, f1, _ = best_match(prediction, references, row["language"])
        row["ours_em"], row["ours_f1"] = float(exact), f1
    summary: dict[str, Any] = {}
    for language in ("zh", "en"):
        chosen = [r for r in rows if r["language"] == language]
        summary[language] = {
            "rows": len(chosen),
            "exact_match_equal": sum(r["ours_em"] == r["official_em"] for r in chosen),
            "f1_equal": sum(abs(r["ours_f1"] - r["official_f1"]) < 1e-12 for r in chosen),
            "official_EM_x100": round(100 * statistics.fmean(r["official_em"] for r in chosen), 3),
            "ours_EM_x100": round(100 * statistics.fmean(r["ours_em"] for r in chosen), 3),
            "official_F1_x100": round(100 * statistics.fmean(r["official_f1"] for r in chosen), 3),
            "ours_F1_x100": round(100 * statistics.fmean(r["ours_f1"] for r in chosen), 3),
        }
    sentence_end = re.compile(r"[A-Za-z][.!?]\s+[A-Za-z]")
    summary["zh"]["latin_runs_with_a_sentence_end"] = sum(
        bool(sentence_end.search(" ".join([r["prediction"], *r["references"]])))
        for r in rows
        if r["language"] == "zh"
    )
    report = {
        "scripts": {"cmrc2018": str(args.cmrc.name), "squad_v1.1": str(args.squad.name)},
        "nltk": nltk.__version__,
        "summary": summary,
        "machine": machine_info(),
    }
    RESULTS.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    kept = []
    for language, n in SAMPLE.items():
        chosen = sorted((r for r in rows if r["language"] == language),
                        key=lambda r: seeded("fixture", r["id"]))[:n]  # fmt: skip
        kept += sorted(chosen, key=lambda r: r["id"])
    with FIXTURE.open("w", encoding="utf-8") as out:
        for row in kept:
            fields = ("id", "language", "prediction", "references", "official_em", "official_f1")
            out.write(json.dumps({k: row[k] for k in fields}, ensure_ascii=False) + "\n")
    print(json.dumps(summary, indent=2, ensure_ascii=False))
    mismatched = [r for r in rows if r["ours_em"] != r["official_em"]
                  or abs(r["ours_f1"] - r["official_f1"]) >= 1e-12]  # fmt: skip
    for row in mismatched[:20]:
        print("MISMATCH", json.dumps(row, ensure_ascii=False))


if __name__ == "__main__":
    main()
