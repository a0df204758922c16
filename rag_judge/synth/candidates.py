"""A synthetic question on its way through the filters, and the verdict on it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Literal

Kind = Literal["factual", "multi_source", "unanswerable"]
KINDS: Final[tuple[Kind, ...]] = ("factual", "multi_source", "unanswerable")
"""The question kinds, in the order they are written; also the eval set's ``type`` values."""

FILTERS: Final = {
    "failed": "the model call failed or its reply did not parse, after retries (status kept)",
    "refers_to_passage": "the question points at its source ('the passage', '本文') instead of "
    "naming its subject",
    "not_a_span": "factual: the answer is not a short span of its chunk (at most 16 tokens; "
    "exact match would not apply)",
    "copies_chunk": "the question shares more than the threshold of its token n-grams with its "
    "chunk(s)",
    "unsupported": "the reference answer is not supported by its source chunk(s) (the "
    "reference-support judge below the threshold, or unjudged)",
    "answerable_alone": "multi-source: one of the two chunks alone supports the whole reference "
    "(each part of a two-part answer at the support threshold; else every claim)",
    "answered_by_top10": "unanswerable: the generator, given the retriever's top 10 chunks, "
    "writes an answer they support (the reference-support judge at the threshold)",
    "near_duplicate": "its token bigrams are at least the threshold similar to an earlier kept "
    "question's",
}
"""Every filter by name, with its rule; a rejected candidate names the one that dropped it."""


@dataclass(frozen=True)
class Candidate:
    """One written question and where it came from."""

    id: str
    """``<kind>-<n>``, n counting written candidates of the kind from 0 (stable per seed)."""
    kind: Kind
    chunk_ids: tuple[str, ...]
    """The source chunk (two for multi-source)."""
    language: str
    """The prompts' language."""
    question: str = ""
    answer: str = ""
    """The reference answer ('' for unanswerable)."""
    prompt: str = ""
    """``ref`` of the writing prompt."""
    status: str = "ok"
    """How the writing call ended."""
    error: str | None = None


@dataclass(frozen=True)
class Verdict:
    """A candidate kept, or dropped by the named filter, with the figures that decided it."""

    candidate: Candidate
    rejected_by: str | None = None
    """A key of :data:`FILTERS`, or None when kept."""
    detail: str = ""
    figures: dict[str, Any] = field(default_factory=dict)
    """The measured values (overlap, support, P(answered), similarity) behind the verdict."""

    @property
    def kept(self) -> bool:
        """True when no filter dropped it."""
        return self.rejected_by is None

    @property
    def failed(self) -> bool:
        """True when a model call failed (a progress bar counts these as failures)."""
        return self.rejected_by == "failed"
