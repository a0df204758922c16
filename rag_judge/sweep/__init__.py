"""The k-sweep: for k = 1..K, retrieve top k, answer, and score retrieval and generation per k.

Usage (inside an event loop; :func:`sweep` is the synchronous twin)::

    result = await run_sweep(eval_set, retriever=bm25, chunks=chunks, client=client)
    result.per_question  # one row per question x k
    result.summary()  # per k and metric: mean, ci_low, ci_high, n_scored
    result.best_k("faithfulness*completeness").sentence
"""

from rag_judge.sweep.external import (
    CallableRag,
    ExternalRag,
    ExternalRagError,
    JsonlRag,
    Passage,
    Retrieval,
    load_external_rag,
)
from rag_judge.sweep.external_http import HttpRag
from rag_judge.sweep.generate import GENERATE_PROMPT, Generation, generate_answer
from rag_judge.sweep.plan import SWEEP_METRICS, SweepPlan, plan_sweep
from rag_judge.sweep.result import DEFAULT_OBJECTIVE, SweepResult
from rag_judge.sweep.retrieval_by_k import ID_MEASURES, TEXT_MEASURES, doc_ranking
from rag_judge.sweep.run import Progress, run_sweep, sweep
from rag_judge.sweep.summary import BestK, NeighbourTest

__all__ = [
    "DEFAULT_OBJECTIVE",
    "GENERATE_PROMPT",
    "ID_MEASURES",
    "SWEEP_METRICS",
    "TEXT_MEASURES",
    "BestK",
    "CallableRag",
    "ExternalRag",
    "ExternalRagError",
    "Generation",
    "HttpRag",
    "JsonlRag",
    "NeighbourTest",
    "Passage",
    "Progress",
    "Retrieval",
    "SweepPlan",
    "SweepResult",
    "doc_ranking",
    "generate_answer",
    "load_external_rag",
    "plan_sweep",
    "run_sweep",
    "sweep",
]
