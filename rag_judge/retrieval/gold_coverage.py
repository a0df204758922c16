"""Gold-coverage check, run before comparing retrievers: which reference answers no chunk covers.

A question whose reference text no chunk in the index covers (some fragment reaches the
threshold in no chunk) cannot be answered from any retrieval, so it is excluded from retrieval
metrics with a reason: a chunking gap is not a retrieval failure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from rag_judge.core.errors import InputError
from rag_judge.retrieval.text_relevance import (
    DEFAULT_THRESHOLD,
    ChunkIndex,
    FragmentMatch,
    NgramSpec,
    fragment_ngrams,
    match_fragment,
    split_fragments,
    validate_threshold,
)

EMPTY_REFERENCE: Final[str] = "empty reference answer"
_MAX_FRAGMENT_CHARS: Final[int] = 40
_MAX_LISTED_IDS: Final[int] = 50


@dataclass(frozen=True)
class CoverageReport:
    """Which questions have reference text no chunk covers, with a reason per question."""

    threshold: float
    spec: NgramSpec
    question_ids: tuple[str, ...]
    uncovered: dict[str, str]
    """Question id -> human-readable reason, in input order."""

    @property
    def n_questions(self) -> int:
        """Number of questions checked."""
        return len(self.question_ids)

    @property
    def covered_ids(self) -> list[str]:
        """Question ids whose every fragment some chunk covers, in input order."""
        return [qid for qid in self.question_ids if qid not in self.uncovered]

    def summary(self) -> str:
        """One line for a report: how many questions are excluded, and which."""
        at = f"at threshold {self.threshold:g}"
        if not self.uncovered:
            if self.n_questions == 1:
                return f"the 1 question has reference text some chunk covers {at}"
            return f"all {self.n_questions} questions have reference text some chunk covers {at}"
        share = 100.0 * len(self.uncovered) / self.n_questions
        ids = list(self.uncovered)
        listed = ", ".join(ids[:_MAX_LISTED_IDS])
        if len(ids) > _MAX_LISTED_IDS:
            listed += f", … ({len(ids) - _MAX_LISTED_IDS} more)"
        return (
            f"{len(self.uncovered)} of {self.n_questions} questions ({share:.1f}%) have "
            f"reference text no chunk covers {at}; excluded from retrieval metrics: {listed}"
        )


def _quote(fragment: str) -> str:
    if len(fragment) > _MAX_FRAGMENT_CHARS:
        fragment = fragment[: _MAX_FRAGMENT_CHARS - 1] + "…"
    return f"'{fragment}'"


def _miss_reason(position: str, match: FragmentMatch) -> str:
    if match.best_doc is None:
        closest = "no chunk shares any n-gram"
    else:
        closest = f"best {match.best_coverage:.2f} in doc '{match.best_doc}'"
    return f"fragment {position} {_quote(match.fragment)} covered by no chunk ({closest})"


def _uncovered_reason(
    reference: object, index: ChunkIndex, threshold: float, spec: NgramSpec
) -> str | None:
    """Why no chunk covers this reference, or None if every fragment is covered."""
    if not isinstance(reference, str):
        return f"reference answer is a {type(reference).__name__}, not text"
    fragments = split_fragments(reference)
    if not fragments:
        return EMPTY_REFERENCE
    reasons: list[str] = []
    for number, fragment in enumerate(fragments, start=1):
        position = f"{number}/{len(fragments)}"
        if not fragment_ngrams(fragment, spec):
            reasons.append(f"fragment {position} {_quote(fragment)} has no letters or digits")
            continue
        match = match_fragment(fragment, index, threshold)
        if not match.doc_ids:
            reasons.append(_miss_reason(position, match))
    return "; ".join(reasons) or None


def check_gold_coverage(
    references: Mapping[str, str],
    corpus_or_index: Mapping[str, str] | ChunkIndex,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    spec: NgramSpec | None = None,
) -> CoverageReport:
    """List the questions whose reference answer no chunk covers, each with a reason.

    ``spec`` defaults to the index's spec when an index is given (and must equal it if both
    are given), else to the default NgramSpec.
    """
    threshold = validate_threshold(threshold)
    if isinstance(corpus_or_index, ChunkIndex):
        index = corpus_or_index
        if spec is not None and spec != index.spec:
            raise InputError(
                f"spec {spec} differs from the index's spec {index.spec}; "
                "build the index with the spec to check",
                field="spec",
            )
    else:
        index = ChunkIndex(corpus_or_index, spec if spec is not None else NgramSpec())
    uncovered: dict[str, str] = {}
    for qid, reference in references.items():
        reason = _uncovered_reason(reference, index, threshold, index.spec)
        if reason is not None:
            uncovered[qid] = reason
    return CoverageReport(threshold, index.spec, tuple(references), uncovered)
