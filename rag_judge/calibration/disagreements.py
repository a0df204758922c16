"""The rows where judge and human differ most, with what the judge said, so a reader of a
calibration report can see why the agreement figures fall short."""

from __future__ import annotations

from collections.abc import Mapping

from rag_judge.calibration.join import JoinedLabels
from rag_judge.calibration.ordinal_scale import to_scale
from rag_judge.calibration.report_types import Disagreement, RowDetail


def worst_disagreements(
    joined: JoinedLabels,
    scale: tuple[int, int] | None,
    details: Mapping[str, RowDetail],
    worst: int,
) -> tuple[Disagreement, ...]:
    """The ``worst`` joined rows by |judge − human| on the label scale (the ordinal ``scale``
    when given, by the unrounded mapped value), largest first, ties by id and claim; rows where
    judge and human agree exactly are left out."""
    found = []
    for row in joined.rows:
        if scale is None:
            judge, unrounded = row.score, row.score
        else:
            low, high = scale
            judge = float(to_scale([row.score], low, high)[0])
            unrounded = low + (high - low) * min(1.0, max(0.0, row.score))
        gap = abs(unrounded - row.human)
        if gap == 0.0:
            continue
        found.append(
            Disagreement(
                id=row.id,
                claim=row.claim,
                human=row.human,
                judge=judge,
                gap=gap,
                value=row.score,
                probability=row.probability,
                detail=details.get(row.id),
            )
        )
    found.sort(key=lambda d: (-d.gap, d.id, -1 if d.claim is None else d.claim))
    return tuple(found[:worst])
