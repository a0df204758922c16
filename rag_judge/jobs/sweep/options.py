"""What a k-sweep varies and measures: one record, checked once when it is built."""

from __future__ import annotations

from dataclasses import dataclass, field

from rag_judge.jobs.sweep.objective import parse_objective
from rag_judge.judges import DEFAULT_METRICS, JudgeOptions, get_judges

STATE_FILE = "batches.json"
"""The batch ids of a batched sweep, inside its output folder."""


@dataclass(frozen=True)
class SweepOptions:
    """What a sweep varies and measures; a wrong value is refused here, before any index or
    model call."""

    ks: tuple[int, ...] = tuple(range(1, 11))
    """The cutoffs."""
    limit: int | None = None
    """Sweep only the first ``limit`` questions."""
    metrics: tuple[str, ...] = DEFAULT_METRICS
    """Judges (those the set cannot support are skipped and reported)."""
    objective: str | None = None
    """What the best k maximises (None: ``faithfulness*completeness``); checked, then kept in
    its parsed spelling."""
    retriever: str = "bm25"
    """``bm25``, ``dense`` (the embedder) or ``hybrid`` (RRF of both)."""
    rerank: str | None = None
    """Rerank the top ``rerank_depth`` by the model (``llm``) or a cross-encoder's path."""
    rerank_depth: int = 20
    """Candidates the reranker re-scores per question."""
    rag: str | None = None
    """The user's RAG instead of ours: ``module:function``, a ``.jsonl``, or a URL."""
    judge: JudgeOptions = field(default_factory=JudgeOptions)
    """The judges' knobs (support probability, mode, reasons)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "ks", tuple(self.ks))
        object.__setattr__(self, "metrics", tuple(self.metrics))
        object.__setattr__(self, "objective", parse_objective(self.objective))
        get_judges(self.metrics)  # an unknown name fails now, before an index is built
