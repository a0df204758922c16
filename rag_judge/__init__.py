"""rag_judge: evaluate retrieval-augmented generation end to end.

The public API: :func:`evaluate` runs LLM judges over samples (:class:`RagSample` rows from
files, DataFrames or Hugging Face datasets) and returns an :class:`EvaluationResult`; the
retrieval metrics live in :mod:`rag_judge.retrieval`, the statistics in
:mod:`rag_judge.core.stats`, the k-sweep in :mod:`rag_judge.jobs.sweep` and calibration against
human labels in :mod:`rag_judge.calibration` (statistics) and :mod:`rag_judge.jobs.calibrate`
(the job). The manual's architecture page (docs/architecture.md) maps the folders. Names are
imported on first use, so ``import rag_judge.retrieval`` stays light.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rag_judge.core.errors import InputError, RagJudgeError
    from rag_judge.core.types import ClaimVerdict, JudgeResult, RagSample
    from rag_judge.data.samples import load_samples
    from rag_judge.jobs.score.result import EvaluationResult, MetricSummary, SampleResult
    from rag_judge.jobs.score.run import aevaluate, evaluate
    from rag_judge.judges import DEFAULT_METRICS, JUDGES

__version__ = "0.1.0"

_EXPORTS = {
    "InputError": "rag_judge.core.errors",
    "RagJudgeError": "rag_judge.core.errors",
    "aevaluate": "rag_judge.jobs.score.run",
    "evaluate": "rag_judge.jobs.score.run",
    "DEFAULT_METRICS": "rag_judge.judges",
    "JUDGES": "rag_judge.judges",
    "EvaluationResult": "rag_judge.jobs.score.result",
    "MetricSummary": "rag_judge.jobs.score.result",
    "SampleResult": "rag_judge.jobs.score.result",
    "load_samples": "rag_judge.data.samples",
    "ClaimVerdict": "rag_judge.core.types",
    "JudgeResult": "rag_judge.core.types",
    "RagSample": "rag_judge.core.types",
}

__all__ = [
    "DEFAULT_METRICS",
    "JUDGES",
    "ClaimVerdict",
    "EvaluationResult",
    "InputError",
    "JudgeResult",
    "MetricSummary",
    "RagJudgeError",
    "RagSample",
    "SampleResult",
    "__version__",
    "aevaluate",
    "evaluate",
    "load_samples",
]


def __getattr__(name: str) -> Any:
    """Import a public name from its module the first time it is used."""
    if name not in _EXPORTS:
        raise AttributeError(f"module 'rag_judge' has no attribute '{name}'")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
