"""The k-sweep: for k = 1..K, retrieve top k, answer, score retrieval and generation per k, and
decide which k to use.

Usage (:func:`asweep` is the twin to await inside an event loop)::

    result = sweep("cmrc2018_zh_chunked", limit=20, ks="1-10")  # or sweep(name, SweepOptions(...))
    result.per_question  # one row per question x k
    result.summary()  # per k and metric: mean, ci_low, ci_high, n_scored
    result.decision.sentence  # the k to use (or the ks still undecided), and how sure

The decision lives in :mod:`rag_judge.jobs.sweep.decision` (``decide(result, "answer_f1")``
decides a finished sweep again by another objective). Names are imported on first use, so
``import rag_judge.jobs.sweep.plan`` does not load the whole job.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rag_judge.jobs.sweep.decision import (
        Decision,
        KStanding,
        Objective,
        Recommendation,
        decide,
    )
    from rag_judge.jobs.sweep.job import asweep, sweep
    from rag_judge.jobs.sweep.options import SweepOptions
    from rag_judge.jobs.sweep.plan import SweepPlan, plan_sweep
    from rag_judge.jobs.sweep.result import SweepResult

_EXPORTS = {
    "asweep": "rag_judge.jobs.sweep.job",
    "sweep": "rag_judge.jobs.sweep.job",
    "Decision": "rag_judge.jobs.sweep.decision",
    "KStanding": "rag_judge.jobs.sweep.decision",
    "Objective": "rag_judge.jobs.sweep.decision",
    "Recommendation": "rag_judge.jobs.sweep.decision",
    "decide": "rag_judge.jobs.sweep.decision",
    "SweepPlan": "rag_judge.jobs.sweep.plan",
    "plan_sweep": "rag_judge.jobs.sweep.plan",
    "SweepResult": "rag_judge.jobs.sweep.result",
    "SweepOptions": "rag_judge.jobs.sweep.options",
}

__all__ = [
    "Decision",
    "KStanding",
    "Objective",
    "Recommendation",
    "SweepOptions",
    "SweepPlan",
    "SweepResult",
    "asweep",
    "decide",
    "plan_sweep",
    "sweep",
]


def __getattr__(name: str) -> Any:
    """Import a public name from its module the first time it is used."""
    if name not in _EXPORTS:
        raise AttributeError(f"module 'rag_judge.jobs.sweep' has no attribute '{name}'")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
