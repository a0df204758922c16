"""Write notebooks/calibration.ipynb (no outputs) with nbformat."""

import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

md, code = new_markdown_cell, new_code_cell
cells = [
    md(
        """# How far can the judge be trusted? Calibration against human labels

An LLM judge's score is only useful if it agrees with people. This notebook runs our
faithfulness judge on a bundled, human-labelled calibration set and measures the agreement,
every figure with a bootstrap confidence interval. It uses the embedded local model (no
network, no key), so it is slow; `CALIBRATION_LIMIT` (default 6) chooses how many samples are
judged, `CALIBRATION_SET` which set (default `begin_dev`, whose rows are short). CI runs it on
two samples. The same job from the shell is
`rag-judge calibrate --run begin_dev --limit 6 -o calibration_begin_dev`."""
    ),
    code(
        """import os
from pathlib import Path

import pandas as pd

from rag_judge.jobs.calibrate.job import arun_calibration
from rag_judge.data.calibration_sets import load_calibration_set
from rag_judge.report.calibration_html import (
    figure_table,
    summary_lines,
    write_calibration_report,
)

CALIBRATION_SET = os.environ.get("CALIBRATION_SET", "begin_dev")
LIMIT = int(os.environ.get("CALIBRATION_LIMIT", "6"))
OUT = Path(os.environ.get("CALIBRATION_OUT", f"calibration_{CALIBRATION_SET}"))"""
    ),
    md(
        """## The calibration set

A calibration set is rows a judge can score (answer, contexts, question) and the label a human
gave each, with a manifest saying where they come from and how the labels were mapped.
`limit(n)` takes the first rows of each label in turn, so even a tiny run sees both classes.
BEGIN's `Generic` responses ("i agree.") have no attribution label: they stay in the set with a
null label, are judged (a good judge finds no claims in them) and are left out of the figures,
and the report says so."""
    ),
    code(
        """full = load_calibration_set(CALIBRATION_SET)
print(full.manifest["description"][:400], "...")
print("labels in the whole set:", full.label_counts())
chosen = full.limit(LIMIT)
pd.DataFrame(
    {
        "id": s.id,
        "label": chosen.labels[s.id],
        "source label": chosen.source_labels[s.id],
        "answer": s.answer[:80],
    }
    for s in chosen.samples
)"""
    ),
    md(
        """## Judge the samples, then compare with the labels

`arun_calibration` judges every sample (claims extracted from the answer and verified against
the contexts; the local model also gives P(supported) per claim from its yes/no
log-probabilities), writes `scores.jsonl` exactly as `rag-judge score` would, and calibrates.
Every model call goes through the response cache: re-running this cell makes no model call.
(Outside a notebook, `run_calibration` is the same without `await`.)"""
    ),
    code(
        """run = await arun_calibration(
    CALIBRATION_SET,
    OUT,
    limit=LIMIT,
    progress=lambda r: print("judged", r.sample.id, {m: x.status for m, x in r.results.items()}),
)
report = run.report
for line in summary_lines(report):
    print(line)"""
    ),
    md(
        """## Every figure, with its interval

For binary labels (1 = supported) the agreement figures compare the judge's label at a threshold
(supported iff its score >= 0.5 unless chosen otherwise) with the human one. Precision, recall
and F1 are those of the *unsupported* class, the one a faithfulness judge exists to catch. AUC,
Brier and the expected calibration error need no threshold. A figure the data cannot define
(AUC with one class, a correlation of constant scores) is shown as undefined with the reason,
never as NaN; with a handful of rows the intervals are wide, which is the honest answer."""
    ),
    code(
        """header, rows = figure_table(report)
pd.DataFrame(rows, columns=header)"""
    ),
    md(
        """## The report and the reliability diagram

`write_calibration_report` writes `metrics.csv`, `summary.md`, `reliability.png`,
`disagreements.jsonl` and a self-contained `report.html`. The reliability diagram plots, per
bin of predicted P(supported), how often humans called the row supported: a calibrated judge
sits on the diagonal."""
    ),
    code(
        """files = write_calibration_report(report, OUT, title=f"{CALIBRATION_SET}: faithfulness")
print(sorted(p.name for p in OUT.iterdir()))"""
    ),
    code(
        """from IPython.display import Image

Image(filename=str(OUT / "reliability.png"))"""
    ),
    md(
        """## Where the judge and the humans disagree most

The rows with the largest |judge − human|, with what the judge extracted and why it decided as
it did. Reading these is how one learns whether to trust the judge, or how to fix its prompt."""
    ),
    code(
        """for d in report.disagreements[:3]:
    print(f"{d.id}: human {d.human:g}, judge {d.value:.2f} (gap {d.gap:.2f})")
    if d.detail is not None:
        print("  answer:", d.detail.answer[:200])
        for c in d.detail.claims:
            print(f"  - {c.claim} -> {c.verdict}: {c.reason}")
if not report.disagreements:
    print("no disagreement on these rows")"""
    ),
]
notebook = new_notebook(
    cells=cells,
    metadata={
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    },
)
nbformat.validate(notebook)
nbformat.write(notebook, Path(sys.argv[1]))
