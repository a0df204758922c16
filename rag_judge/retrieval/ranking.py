"""From qrels and a run to per-query grades in rank order: the one place ranking is decided.

The tie rule lives here and only here. A run given as scores is ranked by score descending,
ties broken by document id descending (trec_eval's rule, byte order of the id); a run given as
a list keeps its order, since list order is rank.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, partial
from itertools import chain, repeat
from typing import cast

import numpy as np
import numpy.typing as npt

from rag_judge.core.errors import InputError

Qrels = Mapping[str, Mapping[str, int]]
"""``{query_id: {doc_id: grade}}``; grade >= rel_level is relevant, a negative grade unjudged."""
RunEntry = Mapping[str, float] | Sequence[str]
Run = Mapping[str, RunEntry]
"""``{query_id: {doc_id: score}}`` or ``{query_id: [doc_id, ...]}`` (rank order)."""
Requirements = Mapping[str, Sequence[Iterable[str]]]
"""``{query_id: [alternatives, ...]}``: each requirement is met by any one of its doc ids."""

_NO_DOCS: Mapping[str, int] = {}
UNJUDGED: int = int(np.iinfo(np.int32).min)
"""Grade given to a retrieved document absent from the qrels or judged with a negative grade."""

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


def rank_order(docs: Sequence[str], scores: FloatArray) -> IntArray:
    """Indices of ``docs`` in rank order: score descending, ties by document id descending."""
    # Equal scores are re-ordered by doc id below, so the sort need not be stable.
    order: IntArray = np.argsort(-scores)
    _break_ties(order, scores[order], docs)
    return order


def _break_ties(
    order: IntArray, ordered: FloatArray, docs: Sequence[str] | Callable[[], Sequence[str]]
) -> None:
    """Within each run of equal scores in ``order``, put the larger doc id first (in place).

    ``docs`` may be a callable so that the ids are only listed when there is a tie.
    """
    tied = ordered[1:] == ordered[:-1]
    if not tied.any():
        return
    ids = docs() if callable(docs) else docs
    in_group = np.zeros(len(order), dtype=bool)
    in_group[:-1] |= tied
    in_group[1:] |= tied
    starts = in_group.copy()
    starts[1:] &= ~tied
    positions = np.flatnonzero(in_group)
    members = order[positions].tolist()
    negated_group = (-np.cumsum(starts)[positions]).tolist()
    # Descending on (-group, doc id): groups keep their order, larger ids first within one.
    keys = [ids[m] for m in members]
    resolved = sorted(zip(negated_group, keys, members, strict=True), reverse=True)
    order[positions] = [m for _, _, m in resolved]


def rank_documents(entry: RunEntry, *, query_id: str = "?") -> list[str]:
    """Return document ids in rank order for one query (see the module docstring)."""
    if isinstance(entry, Mapping):
        docs = list(entry)
        return [docs[i] for i in rank_order(docs, _scores(entry, docs, query_id)).tolist()]
    return _checked_list(entry, query_id)


def _scores(entry: Mapping[str, float], docs: list[str], query_id: str) -> FloatArray:
    """The scores of one query as floats; an error names the first bad one."""
    try:
        scores = np.fromiter(entry.values(), dtype=np.float64, count=len(docs))
        bad = None if np.isfinite(scores).all() else int(np.argmin(np.isfinite(scores)))
    except (TypeError, ValueError):
        bad = next(i for i, d in enumerate(docs) if not _is_number(entry[d]))
    if bad is not None:
        raise InputError(
            f"score {entry[docs[bad]]!r} of document '{docs[bad]}' is not a finite number",
            source=f"run query '{query_id}'",
            field="score",
        )
    return scores


def _is_number(value: object) -> bool:
    try:
        return bool(np.isfinite(float(value)))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def _checked_list(entry: object, query_id: str) -> list[str]:
    """A ranked list of doc ids, refusing strings and duplicates."""
    if isinstance(entry, str) or not isinstance(entry, Sequence | Iterable):
        raise InputError(
            "expected a list of doc ids or a {doc_id: score} mapping, "
            f"got {type(entry).__name__}",
            source=f"run query '{query_id}'",
        )
    ranked = list(entry)
    if len(set(ranked)) != len(ranked):
        seen: set[str] = set()
        duplicate = next(d for d in ranked if d in seen or seen.add(d))  # type: ignore[func-returns-value]
        raise InputError(
            f"document '{duplicate}' appears twice in the ranking",
            source=f"run query '{query_id}'",
            field="doc_id",
        )
    return ranked


@dataclass(frozen=True, eq=False)
class RankedGrades:
    """Grades of the retrieved documents in rank order, one padded row per query.

    Every measure is a pure function of this object, so all of them see the same ranking,
    the same relevance threshold and the same treatment of unjudged documents.
    """

    query_ids: tuple[str, ...]
    """Evaluated queries, in output order."""
    grades: npt.NDArray[np.int32]
    """[queries, depth] grade at each rank; ``UNJUDGED`` for unjudged documents and padding."""
    num_ret: IntArray
    """[queries] documents retrieved per query (row length before padding)."""
    levels: IntArray
    """[levels] distinct non-negative grades present in the qrels, ascending."""
    level_counts: IntArray
    """[queries, levels] judged documents per grade in the qrels of each query."""
    rel_level: int
    """A document is relevant when its grade is >= this (trec_eval ``-l``)."""
    joint_rank: FloatArray | None = None
    """[queries] rank at which explicit requirements are all met (inf if never), or None."""

    @property
    def depth(self) -> int:
        """Width of the grade matrix (the longest ranking, at least 1)."""
        return int(self.grades.shape[1])

    @cached_property
    def relevant(self) -> npt.NDArray[np.bool_]:
        """[queries, depth] True where the document at that rank is relevant."""
        return self.grades >= self.rel_level

    @cached_property
    def relevant_cumsum(self) -> IntArray:
        """[queries, depth] relevant documents within the top r, r = column + 1."""
        return np.cumsum(self.relevant, axis=1, dtype=np.int64)

    @cached_property
    def num_rel(self) -> IntArray:
        """[queries] relevant documents in the qrels (grade >= rel_level)."""
        return cast(IntArray, self.level_counts[:, self.levels >= self.rel_level].sum(axis=1))

    def relevant_in_top(self, k: int | None) -> IntArray:
        """[queries] relevant documents within the top k (k=None: the whole ranking)."""
        column = self.depth if k is None else min(k, self.depth)
        counts: IntArray = self.relevant_cumsum[:, column - 1]
        return counts


@dataclass(frozen=True)
class PreparedQrels:
    """Qrels checked once, with the number of judged documents per grade for every query."""

    judged: Mapping[str, Mapping[str, int]]
    """``{query_id: {doc_id: grade}}`` with str keys and int grades."""
    grade_counts: Mapping[str, Counter[int]]
    """``{query_id: {grade: documents}}`` over every judgement, negative grades included."""

    def has_relevant(self, query_id: str, rel_level: int) -> bool:
        """True when the query has a document with grade >= rel_level."""
        return any(g >= rel_level for g in self.grade_counts.get(query_id, ()))


def build_ranked_grades(
    qrels: PreparedQrels,
    run: Mapping[str, RunEntry],
    query_ids: Sequence[str],
    *,
    rel_level: int = 1,
    judged_only: bool = False,
    max_depth: int | None = None,
    requirements: Requirements | None = None,
) -> RankedGrades:
    """Rank each query's documents, look up their grades and pack them into a padded matrix.

    Queries of ``query_ids`` missing from ``run`` are evaluated as empty rankings.
    """
    entries = [run.get(qid, _NO_DOCS) for qid in query_ids]
    joint = None
    if requirements is None and all(type(e) is dict for e in entries):
        judged = [qrels.judged.get(qid, _NO_DOCS) for qid in query_ids]
        flat, num_ret = _scored_grades(entries, judged, query_ids)  # type: ignore[arg-type]
        flat, num_ret = _limit(flat, num_ret, max_depth=max_depth, judged_only=judged_only)
    else:
        rows, joint = _grades_per_query(
            qrels, entries, query_ids, judged_only, max_depth, requirements
        )
        num_ret = np.array([len(g) for g in rows], dtype=np.int64)
        flat = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    depth = max(int(num_ret.max(initial=0)), 1)
    matrix = np.full((len(query_ids), depth), UNJUDGED, dtype=np.int32)
    matrix[np.arange(depth) < num_ret[:, None]] = flat
    levels, counts = _level_counts(qrels, query_ids)
    return RankedGrades(
        query_ids=tuple(query_ids),
        grades=matrix,
        num_ret=num_ret,
        levels=levels,
        level_counts=counts,
        rel_level=rel_level,
        joint_rank=joint,
    )


def _scored_grades(
    entries: list[dict[str, float]], judged: list[Mapping[str, int]], query_ids: Sequence[str]
) -> tuple[npt.NDArray[np.int64], IntArray]:
    """Fast path for score maps: grades in rank order for all queries, flat, and their counts.

    Scores and grades are gathered in one pass each; only the sort (and any tie) is per query.
    """
    lengths = [len(e) for e in entries]
    total = sum(lengths)
    try:
        scores = np.fromiter(chain.from_iterable(e.values() for e in entries), np.float64, total)
        finite = bool(np.isfinite(scores).all())
    except (TypeError, ValueError):
        finite = False
    if not finite:  # find and name the bad score
        for entry, qid in zip(entries, query_ids, strict=True):
            _scores(entry, list(entry), qid)
    looked_up = chain.from_iterable(
        map(j.get, e, repeat(UNJUDGED, len(e))) for e, j in zip(entries, judged, strict=True)
    )
    grades = np.fromiter(looked_up, np.int64, total)
    order = np.empty(total, dtype=np.int64)
    negated = -scores
    start = 0
    for entry, n in zip(entries, lengths, strict=True):
        end = start + n
        local: IntArray = np.argsort(negated[start:end])
        _break_ties(local, scores[start:end][local], partial(list, entry))
        order[start:end] = local + start
        start = end
    return grades[order], np.array(lengths, dtype=np.int64)


def _limit(
    flat: npt.NDArray[np.int64], num_ret: IntArray, *, max_depth: int | None, judged_only: bool
) -> tuple[npt.NDArray[np.int64], IntArray]:
    """Mark unjudged grades, then apply the depth limit and judged-only filter (trec_eval order)."""
    flat[flat < 0] = UNJUDGED
    if max_depth is None and not judged_only:
        return flat, num_ret
    query = np.repeat(np.arange(len(num_ret)), num_ret)
    keep = np.ones(len(flat), dtype=bool)
    if max_depth is not None:
        offsets = np.concatenate(([0], np.cumsum(num_ret)[:-1]))
        keep &= (np.arange(len(flat)) - offsets[query]) < max_depth
    if judged_only:
        keep &= flat != UNJUDGED
    return flat[keep], np.bincount(query[keep], minlength=len(num_ret)).astype(np.int64)


def _grades_per_query(
    qrels: PreparedQrels,
    entries: list[RunEntry],
    query_ids: Sequence[str],
    judged_only: bool,
    max_depth: int | None,
    requirements: Requirements | None,
) -> tuple[list[npt.NDArray[np.int64]], FloatArray | None]:
    """General path (ranked lists, explicit requirements): one query at a time."""
    rows: list[npt.NDArray[np.int64]] = []
    joint = np.full(len(query_ids), np.inf) if requirements is not None else None
    need_docs = requirements is not None
    for row, (qid, entry) in enumerate(zip(query_ids, entries, strict=True)):
        judged = qrels.judged.get(qid, _NO_DOCS)
        grades, ranked = _ranked_grades(entry, judged, qid, need_docs)
        if max_depth is not None:
            grades, ranked = grades[:max_depth], ranked[:max_depth]
        grades[grades < 0] = UNJUDGED
        if judged_only:
            keep = grades != UNJUDGED
            grades = grades[keep]
            if need_docs:
                ranked = [doc for doc, k in zip(ranked, keep.tolist(), strict=True) if k]
        if joint is not None and requirements is not None:
            joint[row] = _joint_rank(ranked, requirements.get(qid, ()))
        rows.append(grades)
    return rows, joint


def _ranked_grades(
    entry: RunEntry, judged: Mapping[str, int], query_id: str, need_docs: bool
) -> tuple[npt.NDArray[np.int64], list[str]]:
    """Grades in rank order (and the ranked ids when asked) for one query's run entry."""
    if isinstance(entry, Mapping):
        docs = list(entry)
        order = rank_order(docs, _scores(entry, docs, query_id))
        looked_up = map(judged.get, docs, repeat(UNJUDGED, len(docs)))
        grades = np.fromiter(looked_up, dtype=np.int64, count=len(docs))[order]
        return grades, ([docs[i] for i in order.tolist()] if need_docs else [])
    ranked = _checked_list(entry, query_id)
    looked_up = map(judged.get, ranked, repeat(UNJUDGED, len(ranked)))
    return np.fromiter(looked_up, dtype=np.int64, count=len(ranked)), ranked


def _joint_rank(ranked: list[str], needs: Sequence[Iterable[str]]) -> float:
    """Rank by which every requirement has one of its documents retrieved (inf if never)."""
    if not needs:
        return float("inf")
    position = {doc: rank for rank, doc in enumerate(ranked, start=1)}
    worst = 0
    for alternatives in needs:
        best = min((position[d] for d in alternatives if d in position), default=None)
        if best is None:
            return float("inf")
        worst = max(worst, best)
    return float(worst)


def _level_counts(qrels: PreparedQrels, query_ids: Sequence[str]) -> tuple[IntArray, IntArray]:
    """Distinct non-negative grades, and per query how many documents have each."""
    per_query = [qrels.grade_counts.get(qid, Counter()) for qid in query_ids]
    levels = np.array(sorted({g for c in per_query for g in c if g >= 0}), dtype=np.int64)
    index = {int(level): i for i, level in enumerate(levels)}
    matrix = np.zeros((len(query_ids), len(levels)), dtype=np.int64)
    for row, counts in enumerate(per_query):
        for level, count in counts.items():
            if level >= 0:
                matrix[row, index[level]] = count
    return levels, matrix
