"""A synthesized English eval set from a folder of English text, swept with the embedded model.

Run as a user would: Cranfield's first 200 abstracts are written out as one ``.txt`` file each
(title, blank line, abstract), then ``rag-judge synth`` writes an 80-question set from the folder
and ``rag-judge sweep`` sweeps it, both with the defaults but ``--ks 1,3,5`` and the judges
of the default objective plus the reference matches and context recall (answer relevancy, which
writes three reverse questions per answer and k, would double the sweep's time on two cores).
A set already written is swept again without being rewritten (its synth time is the
manifest's). The set, the sweep's summary and the times are committed:

    python benchmarks/synth_english.py          # writes benchmarks/results/synth_english*
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _machine import machine_info

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
SET_DIR = RESULTS / "synth_english_set"
SWEEP_DIR = RESULTS / "synth_english_sweep"
ABSTRACTS = 200
QUESTIONS = 80
METRICS = "faithfulness,completeness,context_recall,exact_match,answer_f1"


def main() -> None:
    machine = machine_info("llama-cpp-python")
    rows = [json.loads(line) for line in (ROOT / "eval_sets/cranfield/corpus.jsonl").open()]
    times = {}
    if not SET_DIR.exists():
        with tempfile.TemporaryDirectory() as folder:
            for row in rows[:ABSTRACTS]:
                head = f"{row['title']}\n\n" if row["title"] else ""
                Path(folder, f"cranfield-{row['doc_id']}.txt").write_text(head + row["text"] + "\n")
            _run(["synth", folder, "-o", str(SET_DIR), "--questions", str(QUESTIONS)])
    manifest = json.loads((SET_DIR / "manifest.json").read_text(encoding="utf-8"))["synth"]
    times["synth_seconds"] = manifest["seconds"]
    synth = json.dumps({k: manifest[k] for k in ("asked", "written", "kept", "notes")}, indent=1)
    synth += "\ndropped: " + json.dumps(
        {name: f["rejected"] for name, f in manifest["filters"].items() if f["rejected"]}
    )
    started = time.monotonic()
    sweep = _run(
        ["sweep", str(SET_DIR), "-o", str(SWEEP_DIR), "--ks", "1,3,5", "--metrics", METRICS]
    )
    times["sweep_seconds"] = round(time.monotonic() - started, 1)
    record = {"machine": machine, "abstracts": ABSTRACTS, "questions": QUESTIONS, **times}
    (RESULTS / "synth_english.json").write_text(json.dumps(record, indent=2) + "\n")
    (RESULTS / "synth_english.md").write_text(
        f"# A synthesized English set from Cranfield abstracts, swept\n\n"
        f"Written by `benchmarks/synth_english.py` on {machine['cpu_model']}, "
        f"{machine['usable_cores']} cores, {machine['date_utc']}.\n\n"
        f"`rag-judge synth` ({ABSTRACTS} abstracts, {QUESTIONS} questions): "
        f"{times['synth_seconds'] / 60:.1f} min.\n\n```\n{synth}\n```\n\n"
        f"`rag-judge sweep --ks 1,3,5 --metrics {METRICS}`: "
        f"{times['sweep_seconds'] / 60:.1f} min.\n\n"
        f"{sweep}\n"
    )


def _run(args: list[str]) -> str:
    done = subprocess.run(
        [str(Path(sys.executable).with_name("rag-judge")), *args],
        capture_output=True,
        text=True,
        check=False,
    )
    sys.stderr.write(done.stderr[-3000:])
    if done.returncode != 0:
        raise SystemExit(f"rag-judge {args[0]} exited {done.returncode}")
    return done.stdout


if __name__ == "__main__":
    main()
