"""Multi-source against single-source questions of one synthesized set: joint recall@k beside
recall@k, BM25 over the set's own passages (no model call).

A factual question has one relevant passage, so its recall@k is whether BM25 ranks it in the
top k. A multi-source question has two: recall@k is the share of them in the top k, joint
recall@k whether both are. The gap between a multi-source question's recall and its joint
recall is what a single-passage measure hides:

    python benchmarks/synth_joint_recall.py benchmarks/results/synth_english_set
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _machine import machine_info

from rag_judge.core.stats import bootstrap_mean_ci
from rag_judge.data.eval_sets import load_eval_set
from rag_judge.pipeline.bm25 import BM25Retriever
from rag_judge.pipeline.build import eval_set_chunks
from rag_judge.retrieval.by_k import doc_ranking

KS = (1, 3, 5, 10)
RESULTS = Path(__file__).resolve().parent / "results"


async def main(folder: Path) -> None:
    machine = machine_info()
    loaded = load_eval_set(folder)
    chunks = eval_set_chunks(loaded)
    doc_of = {c.id: c.doc_id for c in chunks}
    asked = [q for q in loaded.queries if loaded.qrels.get(q.id)]
    found = await BM25Retriever.build(list(chunks)).search([q.question for q in asked], max(KS))
    rows: dict[str, dict[str, list[float]]] = {}
    for query, hits in zip(asked, found, strict=True):
        ranked = doc_ranking([h.chunk_id for h in hits], doc_of)
        relevant = set(loaded.qrels[query.id])
        into = rows.setdefault(query.type, {})
        for k in KS:
            got = len(relevant & set(ranked[:k]))
            into.setdefault(f"recall@{k}", []).append(got / len(relevant))
            into.setdefault(f"joint_recall@{k}", []).append(float(got == len(relevant)))
    lines = [
        f"# Joint recall of multi-source questions: `{loaded.name}`",
        "",
        f"Written by `benchmarks/synth_joint_recall.py` on {machine['cpu_model']}, "
        f"{machine['usable_cores']} cores, {machine['date_utc']}. BM25 over the set's "
        f"{len(chunks)} passages; mean [95% bootstrap CI].",
        "",
        "| type | n | " + " | ".join(f"recall@{k} | joint@{k}" for k in KS) + " |",
        "|---|---:|" + "---:|---:|" * len(KS),
    ]
    for kind, values in rows.items():
        cells = []
        for k in KS:
            for name in (f"recall@{k}", f"joint_recall@{k}"):
                ci = bootstrap_mean_ci(values[name])
                cells.append(f"{ci.estimate:.2f} [{ci.low:.2f}, {ci.high:.2f}]")
        lines.append(f"| {kind} | {len(values['recall@1'])} | " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    (RESULTS / f"synth_joint_recall_{loaded.name}.md").write_text(text, encoding="utf-8")
    (RESULTS / f"synth_joint_recall_{loaded.name}.json").write_text(
        json.dumps({"machine": machine, "rows": rows}, indent=1) + "\n", encoding="utf-8"
    )
    print(text)


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1])))
