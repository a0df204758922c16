"""The values that flow through an evaluation: documents and samples in, judge results and
their token usage out.

Frozen pydantic models (and one frozen dataclass), so they validate on the way in, hash into
cache keys and serialise to JSON without surprises. No field is ever NaN: what could not be
scored has ``value=None`` and a ``status`` that says why. Nothing here imports another part of
rag_judge, so every floor above can use these types.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

JudgeStatus = Literal[
    "ok",
    "no_claims",
    "noncommittal",
    "missing_input",
    "parse_error",
    "backend_error",
    "timeout",
    "refused",
]
"""How one judge ended on one sample. Only ``ok`` carries a value."""

FAILED_STATUSES: frozenset[str] = frozenset({"backend_error", "timeout", "refused", "parse_error"})
"""The statuses of a model call that failed (after its retries), as opposed to an input the
judge could not score (``no_claims``, ``missing_input``, ``noncommittal``)."""

VerdictLabel = Literal["supported", "contradicted", "not_mentioned"]
"""What the passages say about one claim."""


class Usage(BaseModel):
    """Tokens one call consumed, as the backend reported them."""

    model_config = ConfigDict(frozen=True)

    prompt_tokens: int = 0
    """Tokens read."""
    completion_tokens: int = 0
    """Tokens generated."""
    reasoning_tokens: int = 0
    """Of ``completion_tokens``, those a reasoning model spent thinking (as the server reports
    them, else estimated by characters: ``rag_judge.backends.providers.thinking``)."""
    reported: bool = True
    """False when the reply carried no token counts: the zeros above mean unknown, not free."""

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            reported=self.reported and other.reported,
        )


@dataclass(frozen=True, slots=True)
class Document:
    """A document to chunk: id, text and an optional title."""

    id: str
    text: str
    title: str | None = None


class RagSample(BaseModel):
    """One row to judge: a question, what was retrieved, what was answered, what is right."""

    model_config = ConfigDict(frozen=True)

    id: str
    """Row identifier (given, or the row's position in its source)."""
    question: str | None = None
    """The user's question (ragas: ``user_input``)."""
    contexts: tuple[str, ...] | None = None
    """Retrieved chunks, best first (ragas: ``retrieved_contexts``)."""
    answer: str | None = None
    """The RAG system's answer (ragas: ``response``)."""
    reference: str | None = None
    """A reference (ground-truth) answer, when known."""
    references: tuple[str, ...] = ()
    """Other acceptable reference answers (CMRC 2018 and SQuAD give several per question):
    exact match and F1 take the best over these and ``reference``; the judges read
    ``reference`` alone."""
    language: str | None = None
    """Language of the prompts to use (``en``, ``zh``); detected from the question if None."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Other columns of the row, carried through to the results untouched."""

    @property
    def reference_answers(self) -> tuple[str, ...]:
        """``reference`` and ``references``, each once, in order."""
        given = ((self.reference,) if self.reference else ()) + self.references
        return tuple(dict.fromkeys(given))


class ClaimVerdict(BaseModel):
    """One claim and what the judge found for it."""

    model_config = ConfigDict(frozen=True)

    claim: str
    """An atomic, self-contained statement."""
    verdict: VerdictLabel | None = None
    """What the passages say about it; None when the judge gave no verdict for it."""
    chunks: tuple[int, ...] = ()
    """1-based numbers of the passages that support (or contradict) the claim."""
    reason: str = ""
    """The judge's one-line reason."""
    support_probability: float | None = None
    """P(supported) from the model's yes/no log-probabilities, when the backend gives them."""


class JudgeResult(BaseModel):
    """One judge on one sample: a value in [0, 1], or None and the reason why not."""

    model_config = ConfigDict(frozen=True)

    metric: str
    """Judge name, e.g. ``faithfulness``."""
    value: float | None = None
    """The score in [0, 1]; None unless status is ``ok``."""
    status: JudgeStatus = "ok"
    """``ok`` or why there is no value."""
    error: str | None = None
    """What went wrong or what input was missing."""
    claims: tuple[ClaimVerdict, ...] = ()
    """Claims with verdicts (faithfulness: the answer's; completeness/context recall: the
    reference's)."""
    by_k: dict[int, float] | None = None
    """Value when only the top k contexts are used, for every k (context recall/precision)."""
    details: dict[str, Any] = Field(default_factory=dict)
    """Judge-specific detail, e.g. the generated questions and their similarities."""
    prompts: tuple[str, ...] = ()
    """``id@version#hash`` of every prompt used."""
    usage: Usage = Field(default_factory=Usage)
    """Tokens spent by this judge on this sample (0 when answered from the cache)."""
    calls: int = 0
    """Model calls made (cached calls included)."""

    @property
    def failed(self) -> bool:
        """True when a model call failed (see :data:`FAILED_STATUSES`)."""
        return self.status in FAILED_STATUSES
