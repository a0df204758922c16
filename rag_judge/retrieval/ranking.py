"""From qrels and a run to per-query grades in rank order: the one place ranking is decided.

The tie rule lives here and only here. A run given as scores is ranked by score descending,
ties broken by document id descending (trec_eval's rule, byte order of the id); a run given as
a list keeps its order, since list order is rank.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from operator import itemgetter
from typing import cast

import numpy as np
import numpy.typing as npt

from rag_judge.errors import InputError

Qrels = Mapping[str, Mapping[str, int]]
"""``{query_id: {doc_id: grade}}``; grade >= rel_level is relevant, a negative grade unjudged."""
RunEntry = Mapping[str, float] | Sequence[str]
Run = Mapping[str, RunEntry]
"""``{query_id: {doc_id: score}}`` or ``{query_id: [doc_id, ...]}`` (rank order)."""
Requirements = Mapping[str, Sequence[Iterable[str]]]
"""``{query_id: [alternatives, ...]}``: each requirement is met by any one of its doc ids."""

UNJUDGED: int = int(np.iinfo(np.int32).min)
"""Grade given to a retrieved document absent from the qrels or judged with a negative grade."""

_SCORE_THEN_DOC = itemgetter(1, 0)
IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


def rank_documents(entry: RunEntry, *, query_id: str = "?") -> list[str]:
    """Return document ids in rank order for one query (see the module docstring)."""
    if isinstance(entry, Mapping):
        items = list(entry.items())
        scores = np.fromiter((score for _, score in items), dtype=np.float64, count=len(items))
        if not np.isfinite(scores).all():
            bad = items[int(np.flatnonzero(~np.isfinite(scores))[0])]
            raise InputError(
                f"score {bad[1]!r} of document '{bad[0]}' is not a finite number",
                source=f"run query '{query_id}'",
                field="score",
            )
        items.sort(key=_SCORE_THEN_DOC, reverse=True)
        return [doc for doc, _ in items]
    if isinstance(entry, str):
        raise InputError(
            "expected a list of doc ids or a {doc_id: score} mapping, got a string",
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


def build_ranked_grades(
    qrels: Qrels,
    ranked_run: Mapping[str, list[str]],
    query_ids: Sequence[str],
    *,
    rel_level: int = 1,
    judged_only: bool = False,
    max_depth: int | None = None,
    requirements: Requirements | None = None,
) -> RankedGrades:
    """Look up the grade of every retrieved document and pack them into a padded matrix.

    ``ranked_run`` must already be in rank order (see :func:`rank_documents`); queries of
    ``query_ids`` missing from it are evaluated as empty rankings.
    """
    flat: list[int] = []
    num_ret = np.zeros(len(query_ids), dtype=np.int64)
    joint = np.full(len(query_ids), np.inf) if requirements is not None else None
    empty: dict[str, int] = {}
    for row, qid in enumerate(query_ids):
        ranked = ranked_run.get(qid, [])
        if max_depth is not None:
            ranked = ranked[:max_depth]
        judged = qrels.get(qid, empty)
        grades = [judged.get(doc, UNJUDGED) for doc in ranked]
        if judged_only:
            keep = [g >= 0 for g in grades]
            ranked = [doc for doc, k in zip(ranked, keep, strict=True) if k]
            grades = [g for g, k in zip(grades, keep, strict=True) if k]
        if joint is not None and requirements is not None:
            joint[row] = _joint_rank(ranked, requirements.get(qid, ()))
        num_ret[row] = len(grades)
        flat.extend(grades)
    depth = max(int(num_ret.max()) if len(num_ret) else 0, 1)
    matrix = np.full((len(query_ids), depth), UNJUDGED, dtype=np.int32)
    values = np.asarray(flat, dtype=np.int64)
    values[values < 0] = UNJUDGED
    matrix[np.arange(depth) < num_ret[:, None]] = values
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


def _level_counts(qrels: Qrels, query_ids: Sequence[str]) -> tuple[IntArray, IntArray]:
    per_query: list[dict[int, int]] = []
    all_levels: set[int] = set()
    for qid in query_ids:
        counts: dict[int, int] = {}
        for grade in qrels.get(qid, {}).values():
            if grade >= 0:
                counts[grade] = counts.get(grade, 0) + 1
        per_query.append(counts)
        all_levels.update(counts)
    levels = np.array(sorted(all_levels), dtype=np.int64)
    index = {int(level): i for i, level in enumerate(levels)}
    matrix = np.zeros((len(query_ids), len(levels)), dtype=np.int64)
    for row, counts in enumerate(per_query):
        for level, count in counts.items():
            matrix[row, index[level]] = count
    return levels, matrix
