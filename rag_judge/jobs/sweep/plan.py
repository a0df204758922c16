"""What a k-sweep will run: the ks in ascending order, and the judges that apply to the set.

A judge the eval set cannot support (listed in its manifest's ``not_applicable``, needing
reference answers the set does not have, or answer relevancy without an embedder) is skipped
with a reason, so a reference-free set such as Cranfield still sweeps retrieval, faithfulness
and relevancy instead of failing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from rag_judge.core.errors import InputError
from rag_judge.data.eval_sets import EvalSet
from rag_judge.judges import JUDGES, Judge, get_judges

NO_REFERENCE = "the eval set has no reference answers"


def no_embedder(judge: Judge) -> str:
    """Why a judge that embeds text is skipped without an embedder."""
    return f"no embedder given ({judge.label} embeds {judge.embeds})"


@dataclass(frozen=True)
class SweepPlan:
    """The ks and the judges of one sweep."""

    ks: tuple[int, ...]
    """Distinct cutoffs, ascending: the order answers are generated and judged in."""
    per_k: tuple[str, ...]
    """Judges run on each k's answer and top-k contexts."""
    once: tuple[str, ...]
    """Judges run once per question on the top K and read per k from ``by_k`` (context
    recall)."""
    skipped: Mapping[str, str] = field(default_factory=dict)
    """Metrics asked for but not run, with the reason."""

    @property
    def k_max(self) -> int:
        """K: how many chunks are retrieved per question."""
        return self.ks[-1]

    @property
    def metrics(self) -> tuple[str, ...]:
        """Every judge that runs."""
        return (*self.per_k, *self.once)


MAX_K = 1000
"""The largest k a sweep takes: each k is an answer generated per question, and a range is
checked before it is expanded (``1-100000000`` is an error, not 4.7 GB of integers)."""


def parse_ks(text: str) -> tuple[int, ...]:
    """Cutoffs from ``1-10``, ``1,2,5`` or ``1-3,5,10`` (ascending, distinct).

    Raises:
        InputError: an empty list, a piece that is not a number or range, or a k below 1 or
            above :data:`MAX_K`.
    """
    chosen: set[int] = set()
    for piece in (p.strip() for p in text.split(",")):
        low, dash, high = piece.partition("-")
        try:
            first, last = int(low), int(high if dash else low)
        except ValueError:
            raise InputError(
                f"{piece!r} is not a k or a range like 1-10 (in {text!r})", field="ks"
            ) from None
        if first < 1 or last < first:
            raise InputError(f"{piece!r}: ks must be >= 1 and ranges ascending", field="ks")
        if last > MAX_K:
            raise InputError(f"{piece!r}: ks must be at most {MAX_K}", field="ks")
        chosen.update(range(first, last + 1))
    return tuple(sorted(chosen))


def check_ks_fit(ks: Iterable[int], n_chunks: int) -> None:
    """Every k must be at most the number of chunks the retriever can return.

    Raises:
        InputError: a k above ``n_chunks`` (its top k would be the whole index, padded).
    """
    largest = max(ks, default=0)
    if largest > n_chunks:
        raise InputError(
            f"k={largest} is more than the {n_chunks:,} chunks in the index; "
            f"use ks up to {n_chunks}",
            field="ks",
        )


def plan_sweep(
    eval_set: EvalSet,
    ks: Iterable[int],
    metrics: Iterable[str],
    *,
    has_embedder: bool,
) -> SweepPlan:
    """Sort and check the ks, and split the judges into those that run and those skipped.

    Raises:
        InputError: no k, a k below 1, or an unknown metric.
    """
    chosen = sorted(set(ks))
    if not chosen or any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in chosen):
        raise InputError(f"ks must be integers >= 1, got {chosen!r}", field="ks")
    judges = get_judges(tuple(metrics))
    skipped: dict[str, str] = {}
    for judge in judges:
        if judge.name in eval_set.not_applicable:
            skipped[judge.name] = eval_set.not_applicable[judge.name]
        elif judge.needs_reference and not eval_set.has_reference_answers:
            skipped[judge.name] = NO_REFERENCE
        elif judge.needs_embedder and not has_embedder:
            skipped[judge.name] = no_embedder(judge)
    running = [j for j in judges if j.name not in skipped]
    return SweepPlan(
        ks=tuple(chosen),
        per_k=tuple(j.name for j in running if j.scope == "per_k"),
        once=tuple(j.name for j in running if j.scope == "per_question"),
        skipped=skipped,
    )


def check_objective_fits(eval_set: EvalSet, parts: Iterable[str]) -> None:
    """An objective asked for whose judge this set cannot support (say, completeness on a set
    without reference answers) is refused before any index is built or any model is called;
    only the default objective falls back, with a note.

    Raises:
        InputError: the first such part, with the reason the set gives.
    """
    chosen = tuple(parts)
    judged = [p for p in chosen if p in JUDGES]
    if not judged:
        return
    skipped = plan_sweep(eval_set, (1,), judged, has_embedder=True).skipped
    for part in judged:
        if part in skipped:
            raise InputError(
                f"the objective {'*'.join(chosen)} needs {part}, which this set cannot give "
                f"({skipped[part]}): choose another objective, or leave it to the set's default",
                field="objective",
            )
