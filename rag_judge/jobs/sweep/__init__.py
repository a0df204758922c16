"""The k-sweep: for k = 1..K, retrieve top k, answer, and score retrieval and generation per k.

Usage (inside an event loop; :func:`sweep` is the synchronous twin)::

    result = await run_sweep(eval_set, retriever=bm25, chunks=chunks, client=client)
    result.per_question  # one row per question x k
    result.summary()  # per k and metric: mean, ci_low, ci_high, n_scored
    decide(result).sentence  # the k to use (or the ks still undecided), and how sure

:func:`run_job` builds the RAG under test from names first and decides (``rag-judge sweep``):
``run_job(...).decision``. Names are
imported on first use, so ``import rag_judge.jobs.sweep.plan`` does not load the whole job.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rag_judge.jobs.sweep.job import arun_job, run_job
    from rag_judge.jobs.sweep.objective import Decision, Objective, decide, parse_objective
    from rag_judge.jobs.sweep.options import SweepOptions
    from rag_judge.jobs.sweep.plan import SweepPlan, plan_sweep
    from rag_judge.jobs.sweep.recommend import KStanding, Recommendation
    from rag_judge.jobs.sweep.result import SweepResult
    from rag_judge.jobs.sweep.run import Progress, run_sweep, sweep

_EXPORTS = {
    "arun_job": "rag_judge.jobs.sweep.job",
    "run_job": "rag_judge.jobs.sweep.job",
    "Decision": "rag_judge.jobs.sweep.objective",
    "Objective": "rag_judge.jobs.sweep.objective",
    "decide": "rag_judge.jobs.sweep.objective",
    "parse_objective": "rag_judge.jobs.sweep.objective",
    "SweepPlan": "rag_judge.jobs.sweep.plan",
    "plan_sweep": "rag_judge.jobs.sweep.plan",
    "SweepResult": "rag_judge.jobs.sweep.result",
    "Progress": "rag_judge.jobs.sweep.run",
    "run_sweep": "rag_judge.jobs.sweep.run",
    "sweep": "rag_judge.jobs.sweep.run",
    "SweepOptions": "rag_judge.jobs.sweep.options",
    "KStanding": "rag_judge.jobs.sweep.recommend",
    "Recommendation": "rag_judge.jobs.sweep.recommend",
}

__all__ = [
    "Decision",
    "KStanding",
    "Objective",
    "Progress",
    "Recommendation",
    "SweepOptions",
    "SweepPlan",
    "SweepResult",
    "arun_job",
    "decide",
    "parse_objective",
    "plan_sweep",
    "run_job",
    "run_sweep",
    "sweep",
]


def __getattr__(name: str) -> Any:
    """Import a public name from its module the first time it is used."""
    if name not in _EXPORTS:
        raise AttributeError(f"module 'rag_judge.jobs.sweep' has no attribute '{name}'")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
