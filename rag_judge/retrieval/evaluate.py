"""``evaluate(qrels, run, measures)``: choose the queries, rank, look up grades, compute."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from rag_judge.core.errors import InputError, NothingToEvaluateError
from rag_judge.retrieval.frames import MAX_GRADE, qrels_from_frame, run_from_frame
from rag_judge.retrieval.measure import Measure, parse_measures
from rag_judge.retrieval.measures import compute_measure
from rag_judge.retrieval.ranking import (
    PreparedQrels,
    Qrels,
    Requirements,
    Run,
    build_ranked_grades,
)
from rag_judge.retrieval.result import (
    EvalResult,
    EvalSettings,
    MissingPolicy,
    NoRelevantPolicy,
)


def evaluate(
    qrels: Qrels | pd.DataFrame,
    run: Run | pd.DataFrame,
    measures: Iterable[str | Measure],
    *,
    rel_level: int = 1,
    missing: MissingPolicy = "skip",
    no_relevant: NoRelevantPolicy = "zero",
    judged_only: bool = False,
    max_depth: int | None = None,
    requirements: Requirements | None = None,
    exclude: Mapping[str, str] | None = None,
) -> EvalResult:
    """Score a run against qrels; trec_eval's semantics unless a setting says otherwise.

    Args:
        qrels: ``{qid: {doc_id: grade}}`` or a DataFrame (query_id, doc_id, relevance).
        run: ``{qid: {doc_id: score}}``, ``{qid: [doc_id, ...]}`` or a DataFrame
            (query_id, doc_id, and score or rank).
        measures: names such as ``"ndcg@10"`` or :class:`Measure` objects.
        rel_level: grade at or above which a document is relevant (trec_eval ``-l``).
        missing: "skip" queries with no ranking (trec_eval), or "zero" (trec_eval ``-c``).
        no_relevant: "zero" (trec_eval) or "skip" queries whose qrels have no relevant doc.
        judged_only: drop unjudged documents before scoring (trec_eval ``-J``).
        max_depth: only the top max_depth documents count (trec_eval ``-M``).
        requirements: explicit per-query requirements for joint recall (see joint_recall).
        exclude: ``{qid: reason}`` queries to leave out, e.g. from the gold-coverage check.

    Raises:
        InputError: malformed qrels or run, unknown measure, or no query left to evaluate.
    """
    settings = _settings(rel_level, missing, no_relevant, judged_only, max_depth)
    parsed = parse_measures(tuple(measures))
    if not parsed:
        raise InputError("no measure given", field="measures")
    prepared = _prepare_qrels(qrels)
    run_map = _run_mapping(run)
    query_ids, excluded = _select_queries(prepared.judged, run_map, settings, exclude or {})
    no_rel = {q for q in prepared.judged if not prepared.has_relevant(q, settings.rel_level)}
    if settings.no_relevant == "skip":
        for qid in query_ids:
            if qid in no_rel:
                excluded[qid] = f"no document with grade >= {rel_level} in the qrels"
        query_ids = [q for q in query_ids if q not in no_rel]
    if not query_ids:
        raise NothingToEvaluateError(_nothing_to_evaluate(excluded))
    ranked = build_ranked_grades(
        prepared,
        run_map,
        query_ids,
        rel_level=settings.rel_level,
        judged_only=settings.judged_only,
        max_depth=settings.max_depth,
        requirements=requirements,
    )
    values = {m.name: compute_measure(ranked, m) for m in parsed}
    return EvalResult(
        measures=parsed,
        query_ids=tuple(query_ids),
        values=values,
        excluded=dict(sorted(excluded.items())),
        no_relevant=tuple(sorted(no_rel & (set(query_ids) | set(excluded)))),
        settings=settings,
    )


def _settings(
    rel_level: int,
    missing: str,
    no_relevant: str,
    judged_only: bool,
    max_depth: int | None,
) -> EvalSettings:
    if missing not in ("skip", "zero"):
        raise InputError(f"missing must be 'skip' or 'zero', got {missing!r}", field="missing")
    if no_relevant not in ("zero", "skip"):
        raise InputError(
            f"no_relevant must be 'zero' or 'skip', got {no_relevant!r}", field="no_relevant"
        )
    if isinstance(rel_level, bool) or not isinstance(rel_level, int):
        raise InputError(f"rel_level must be an integer, got {rel_level!r}", field="rel_level")
    if max_depth is not None and (not isinstance(max_depth, int) or max_depth <= 0):
        raise InputError(f"max_depth must be a positive integer, got {max_depth!r}")
    return EvalSettings(rel_level, missing, no_relevant, judged_only, max_depth)  # type: ignore[arg-type]


def _prepare_qrels(qrels: Qrels | pd.DataFrame) -> PreparedQrels:
    """Check qrels once: str keys, int grades (copying only a query that needs it), counts."""
    if isinstance(qrels, pd.DataFrame):
        qrels = qrels_from_frame(qrels)
    if not isinstance(qrels, Mapping):
        raise InputError(f"qrels must be a mapping or DataFrame, got {type(qrels).__name__}")
    judged: dict[str, Mapping[str, int]] = {}
    counts: dict[str, Counter[int]] = {}
    for qid, docs in qrels.items():
        if not isinstance(docs, Mapping):
            raise InputError(
                f"expected {{doc_id: grade}}, got {type(docs).__name__}",
                source=f"qrels query '{qid}'",
            )
        grades = Counter(docs.values())
        if not all(type(g) is int and abs(g) <= MAX_GRADE for g in grades):
            docs = {str(d): _grade(g, qid, d) for d, g in docs.items()}
            grades = Counter(docs.values())
        judged[str(qid)] = docs
        counts[str(qid)] = grades
    return PreparedQrels(judged=judged, grade_counts=counts)


def _grade(value: Any, qid: object, doc: object) -> int:
    where: dict[str, Any] = {"source": f"qrels query '{qid}'", "field": "relevance"}
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(f"grade {value!r} of document '{doc}' is not an integer", **where)
    if isinstance(value, float) and not value.is_integer():
        raise InputError(f"grade {value!r} of document '{doc}' is not an integer", **where)
    if abs(value) > MAX_GRADE:
        raise InputError(
            f"grade {value!r} of document '{doc}' is out of range (at most {MAX_GRADE} either way)",
            **where,
        )
    return int(value)


def _run_mapping(run: Run | pd.DataFrame) -> Mapping[str, Any]:
    if isinstance(run, pd.DataFrame):
        run = run_from_frame(run)
    if not isinstance(run, Mapping):
        raise InputError(f"run must be a mapping or DataFrame, got {type(run).__name__}")
    if all(type(q) is str for q in run):
        return run
    return {str(qid): entry for qid, entry in run.items()}


def _select_queries(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Sequence[str]],
    settings: EvalSettings,
    exclude: Mapping[str, str],
) -> tuple[list[str], dict[str, str]]:
    excluded: dict[str, str] = {}
    chosen: list[str] = []
    for qid in sorted(qrels):
        if qid in exclude:
            excluded[qid] = str(exclude[qid])
        elif qid in run or settings.missing == "zero":
            chosen.append(qid)
        else:
            excluded[qid] = "no ranking in the run"
    for qid in run:
        if qid not in qrels:
            excluded[qid] = "not in the qrels (no relevance judgements)"
    return chosen, excluded


def _nothing_to_evaluate(excluded: Mapping[str, str]) -> str:
    detail = "; ".join(f"{qid}: {why}" for qid, why in list(excluded.items())[:5])
    more = f" (and {len(excluded) - 5} more)" if len(excluded) > 5 else ""
    return "no query has both a ranking and relevance judgements to evaluate" + (
        f" — {detail}{more}" if detail else ""
    )
