"""What a synth job writes and how strictly it filters: one record, checked when it is built."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final

from rag_judge.core.errors import InputError
from rag_judge.pipeline.build import MAX_CHUNK, MIN_CHUNK
from rag_judge.pipeline.chunking import CHUNKERS, chunker_from_spec
from rag_judge.synth.candidates import KINDS, Kind

DEFAULT_CHUNKING: Final = MappingProxyType(
    {"chunker": "structure_aware", "min_chars": MIN_CHUNK, "max_chars": MAX_CHUNK}
)
"""The sweep's default chunking: the set's passages are what the sweep would cut."""
LANGUAGES: Final = ("en", "zh")
"""Languages the synth prompts are written in."""
STATE_FILE: Final = "synth_batches.json"
"""Where ``--batch`` keeps its batch ids, beside the set folder."""


@dataclass(frozen=True)
class SynthOptions:
    """How many questions of which kinds, from which chunks, kept by which thresholds."""

    questions: int = 50
    """Questions to keep, of every kind together."""
    multi_source: float = 0.2
    """Share of them that need two chunks."""
    unanswerable: float = 0.1
    """Share of them that no chunk answers."""
    language: str | None = None
    """Prompt language for every chunk (None: detected per chunk)."""
    chunking: Mapping[str, Any] = field(default_factory=lambda: dict(DEFAULT_CHUNKING))
    """How the documents are cut (an eval-set manifest's ``chunking`` entry)."""
    seed: int = 0
    """Seed of the chunk order."""
    max_overlap: float | None = 0.5
    """A question sharing more of its token 3-grams with its chunk(s) is dropped (None: off)."""
    duplicate_similarity: float = 0.7
    """A question this similar (token-bigram Jaccard) to an earlier kept one is dropped."""
    support_threshold: float = 0.5
    """Least reference-support value a reference needs from its chunk(s)."""
    answered_threshold: float = 0.5
    """Support (by the top 10 chunks) of the generator's answer at which an unanswerable
    question counts as answered and is dropped."""
    tries_per_question: int = 3
    """Candidates written at most per question asked for, before the job stops short."""

    def __post_init__(self) -> None:
        _whole(self.questions, "questions", 1)
        _whole(self.seed, "seed", 0)
        _whole(self.tries_per_question, "tries_per_question", 1)
        for name in ("multi_source", "unanswerable", "duplicate_similarity"):
            _share(getattr(self, name), name)
        for name in ("support_threshold", "answered_threshold"):
            _share(getattr(self, name), name)
        if self.max_overlap is not None:
            _share(self.max_overlap, "max_overlap")
        if self.multi_source + self.unanswerable > 1:
            raise InputError(
                f"multi_source + unanswerable must not exceed 1, got "
                f"{self.multi_source} + {self.unanswerable}",
                field="multi_source",
            )
        if self.language is not None and self.language not in LANGUAGES:
            raise InputError(
                f"the synth prompts are in {', '.join(LANGUAGES)}; got {self.language!r}",
                field="language",
            )
        try:
            chunker_from_spec(self.chunking)
        except InputError as error:
            field_name = "chunking" + (f".{error.field}" if error.field else "")
            raise InputError(error.message, field=field_name) from None
        object.__setattr__(self, "chunking", dict(self.chunking))

    def quotas(self) -> dict[Kind, int]:
        """Questions to keep per kind: the shares rounded, factual ones the rest."""
        multi = round(self.questions * self.multi_source)
        unanswerable = round(self.questions * self.unanswerable)
        factual = max(0, self.questions - multi - unanswerable)
        return dict(zip(KINDS, (factual, multi, unanswerable), strict=True))


def parse_chunker(text: str) -> dict[str, Any]:
    """``--chunker``: ``NAME[:MIN:MAX[:OVERLAP]]`` as a ``chunking`` entry.

    >>> parse_chunker("sentence_windows:100:200:1")
    {'chunker': 'sentence_windows', 'min_chars': 100, 'max_chars': 200, 'overlap': 1}
    >>> parse_chunker("structure_aware")
    {'chunker': 'structure_aware', 'min_chars': 100, 'max_chars': 400}
    """
    name, *sizes = text.split(":")
    if name not in CHUNKERS or name == "none":
        known = ", ".join(c for c in CHUNKERS if c != "none")
        raise InputError(f"unknown chunker {name!r}; one of {known}", field="chunker")
    try:
        numbers = [int(s) for s in sizes]
    except ValueError:
        raise InputError(f"sizes must be whole numbers, got {text!r}", field="chunker") from None
    keys = (
        ("min_chars", "max_chars", "overlap")
        if name == "sentence_windows"
        else ("min_chars", "max_chars")
    )
    if len(numbers) not in (0, 2, len(keys)):
        raise InputError(
            f"give NAME, NAME:MIN:MAX or NAME:MIN:MAX:OVERLAP, got {text!r}", field="chunker"
        )
    defaults = [MIN_CHUNK, MAX_CHUNK]
    return {"chunker": name, **dict(zip(keys, numbers or defaults, strict=False))}


def _whole(value: object, name: str, least: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise InputError(f"must be a whole number >= {least}, got {value!r}", field=name)


def _share(value: object, name: str) -> None:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or not 0 <= value <= 1
    ):
        raise InputError(f"must be a number from 0 to 1, got {value!r}", field=name)
