"""Writes k_sweep.ipynb (without outputs): edit here, run it, commit both."""

from pathlib import Path

import nbformat as nbf

nb = nbf.v4.new_notebook()
md, code = nbf.v4.new_markdown_cell, nbf.v4.new_code_cell
nb.cells = [
    md("""# Which k should my RAG use? A k-sweep, step by step

This notebook runs the main job of rag_judge on a bundled eval set: for every question it
retrieves the top K chunks once, answers with the top k for k = 1..K, and judges every answer.
It uses the embedded local model (no network, no key), so it is slow: a few minutes per
question on 2 cores. `SWEEP_LIMIT` and `SWEEP_KS` choose the size; CI runs it with one
question and two ks. The same job from the shell is `rag-judge sweep cmrc2018_zh -o OUT`."""),
    code("""import os
from pathlib import Path

from rag_judge.data.eval_sets import load_eval_set
from rag_judge.jobs.sweep.job import asweep
from rag_judge.jobs.sweep.plan import parse_ks
from rag_judge.report.sweep_report import write_sweep_report

EVAL_SET = os.environ.get("SWEEP_EVAL_SET", "cmrc2018_zh")
LIMIT = int(os.environ.get("SWEEP_LIMIT", "3"))
KS = parse_ks(os.environ.get("SWEEP_KS", "1-10"))
OUT = Path(os.environ.get("SWEEP_OUT", "k_sweep_out"))"""),
    md("""## The eval set

A bundled eval set is a corpus, questions with reference answers, and qrels (which document
answers which question), with a manifest saying where it comes from and under what licence."""),
    code("""eval_set = load_eval_set(EVAL_SET).limit(LIMIT)
print(eval_set.manifest["description"][:300], "...")
print(f"{len(eval_set.documents)} documents, {len(eval_set.queries)} questions")
for query in eval_set.queries:
    print(f"{query.id} [{query.type}] {query.question} -> {query.answers[0]}")"""),
    md("""## The sweep

BM25 retrieves the top K once per question. Answers are generated in ascending k, so each
prompt extends the previous one and llama.cpp re-reads only the new passage. Then the judges
run: faithfulness and answer relevancy per k, completeness per k against the reference, and
context recall for every k from one pass over the top K. Every model call goes through the
response cache: re-running this cell costs no model call."""),
    code("""result = await asweep(eval_set, ks=KS, progress=lambda qid: print("swept", qid))
frame = result.per_question
frame[["question_id", "k", "doc_recall", "text_recall", *result.metrics, "calls"]]"""),
    md("""Retrieval is scored twice: by document id against the qrels (`doc_*`) and by whether a
chunk covers the reference answer's text (`text_*`). Generation quality comes from the judges;
a judge that could not score a row leaves `<NA>` and says why in its `*_status` column."""),
    code("""frame[["question_id", "k", "answer", "generation_status"]]"""),
    md("""## Per k: means with 95% bootstrap intervals

With a handful of questions the intervals are wide: that is the honest answer to "how sure are
we?". Run with a larger limit (or an API model with concurrency) for real decisions."""),
    code("""summary = result.summary()
summary.pivot(index="k", columns="metric", values="mean")"""),
    code("""summary[summary.metric.isin(result.metrics)]"""),
    md("""## The decision: which k, and how sure

The job decides as the CLI does (`result.decision`). The objective is what the set's
references allow: on CMRC 2018, whose references are spans of its documents, reference F1
(`answer_f1`) per question; on a set with written answers, `faithfulness*completeness`. Every
question counts at every k: a refusal scores 0 on a question that has an answer (1 on one the
set marks unanswerable), and a failed call takes the question from that k only. Each k is
compared with the best on the same questions, with one-sided bounds that hold together at 95%;
the recommendation is the cheapest k within the margin (0.05) of the best, or an honest
"undecided between ..." with how many questions would settle it with 80% probability."""),
    code("""decision = result.decision
print(decision.headline, "by", decision.objective.used)
print(decision.sentence)"""),
    code("""import pandas as pd

pd.DataFrame(decision.to_json()["per_k"]).set_index("k")"""),
    md("""## The report

`write_sweep_report` writes the tables, the plot and a self-contained HTML report with the
worst cases and their claims; `rag-judge sweep` does the same."""),
    code("""report = write_sweep_report(result, OUT, title=f"{EVAL_SET} k-sweep")
sorted(p.name for p in OUT.iterdir())"""),
    code("""from IPython.display import Image

Image(filename=str(OUT / "sweep.png"))"""),
    md("""## Why both too small and too large k hurt

Too small a k misses the passage that holds the answer (retrieval recall rises with k, so
completeness and context recall do too). Too large a k buries that passage among distractors
in a longer prompt: a small model is more likely to copy an unsupported detail from a wrong
passage (faithfulness falls) or to answer a different question. The best k sits where the
first effect has flattened and the second has not yet set in; the plot shows where that is for
this set and this model, and the intervals show how sure that is."""),
]
nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
nb.metadata["language_info"] = {"name": "python"}
nbf.write(nb, Path(__file__).with_name("k_sweep.ipynb"))
