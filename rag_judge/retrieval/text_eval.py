"""Retrieval metrics with relevance judged by answer text, and how much the threshold matters.

Relevance comes from :mod:`text_relevance` (a chunk is relevant when it covers a fragment of
the reference answer); joint recall needs every fragment covered within the top k. Questions
the gold-coverage check flags are excluded with their reason, because no retriever could
have found text the index does not contain.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from rag_judge.core.errors import InputError, NothingToEvaluateError
from rag_judge.retrieval.evaluate import evaluate
from rag_judge.retrieval.gold_coverage import CoverageReport, check_gold_coverage
from rag_judge.retrieval.measure import Measure, parse_measure
from rag_judge.retrieval.ranking import Run
from rag_judge.retrieval.result import EvalResult
from rag_judge.retrieval.text_relevance import (
    DEFAULT_THRESHOLD,
    ChunkIndex,
    TextRelevance,
    match_question,
)

DEFAULT_SENSITIVITY_THRESHOLDS = (0.35, 0.5, 0.65)


@dataclass(frozen=True)
class TextEvalResult:
    """Metrics under text relevance, with the coverage check and the matches that made them."""

    result: EvalResult
    """The retrieval metrics; uncovered questions appear in ``result.excluded``."""
    coverage: CoverageReport
    """The gold-coverage check at the same threshold."""
    matches: Mapping[str, TextRelevance]
    """Per question: which chunks cover which fragment."""


def evaluate_by_text(
    references: Mapping[str, str],
    index: ChunkIndex,
    run: Run | pd.DataFrame,
    measures: Iterable[str | Measure],
    *,
    threshold: float = DEFAULT_THRESHOLD,
    exclude_uncovered: bool = True,
    **settings: Any,
) -> TextEvalResult:
    """Score a run with text-derived qrels and per-fragment joint-recall requirements.

    Args:
        references: ``{question_id: reference answer}``.
        index: the chunk index of the corpus the run retrieves from.
        run: as for :func:`evaluate`.
        measures: as for :func:`evaluate`.
        threshold: n-gram coverage at which a chunk covers a fragment.
        exclude_uncovered: leave out questions the gold-coverage check flags (recommended).
        settings: passed to :func:`evaluate` (missing, no_relevant, ...).
    """
    coverage = check_gold_coverage(references, index, threshold=threshold)
    excluded = dict(coverage.uncovered) if exclude_uncovered else {}
    matches: dict[str, TextRelevance] = {}
    for qid, reference in references.items():
        if qid in excluded:
            continue
        try:
            matches[qid] = match_question(qid, reference, index, threshold=threshold)
        except InputError as error:
            excluded[qid] = error.message
    qrels = {qid: dict.fromkeys(m.relevant_doc_ids, 1) for qid, m in matches.items()}
    qrels.update({qid: {} for qid in excluded})
    requirements = {qid: m.requirements for qid, m in matches.items()}
    result = evaluate(qrels, run, measures, requirements=requirements, exclude=excluded, **settings)
    return TextEvalResult(result=result, coverage=coverage, matches=matches)


def threshold_sensitivity(
    references: Mapping[str, str],
    index: ChunkIndex,
    run: Run | pd.DataFrame,
    measures: Iterable[str | Measure],
    *,
    thresholds: Sequence[float] = DEFAULT_SENSITIVITY_THRESHOLDS,
    **settings: Any,
) -> pd.DataFrame:
    """One row per coverage threshold: questions kept and excluded, and each measure's mean.

    Shows how much text-judged numbers move with the threshold; report them together with the
    threshold used, never a single number alone.
    """
    measures = tuple(measures)
    if not thresholds:
        raise InputError("give at least one threshold", field="thresholds")
    names = [parse_measure(m).name for m in measures]
    rows = []
    for threshold in thresholds:
        try:
            scored = evaluate_by_text(
                references, index, run, measures, threshold=threshold, **settings
            )
        except NothingToEvaluateError:
            # Nothing is covered at this threshold: an honest row of None, not a crash or NaN.
            uncovered = check_gold_coverage(references, index, threshold=threshold).uncovered
            rows.append([float(threshold), 0, len(uncovered), *([None] * len(names))])
            continue
        aggregate = scored.result.aggregate()
        rows.append(
            [
                float(threshold),
                len(scored.result.query_ids),
                len(scored.coverage.uncovered),
                *(aggregate[name] for name in names),
            ]
        )
    columns = ["threshold", "n_evaluated", "n_uncovered", *names]
    frame = pd.DataFrame(rows, columns=columns, dtype=object)
    for column in columns:
        if frame[column].map(lambda v: v is not None).all():
            frame[column] = pd.to_numeric(frame[column])
    return frame
