"""What a calibration left out, and what the judge said there: rows are counted by status,
never dropped silently, so a report shows whom its figures speak for."""

from __future__ import annotations

from collections import Counter

from rag_judge.calibration.join import JoinedLabels
from rag_judge.calibration.judge_scores import JudgeScores

NOT_IN_JUDGE = "not_in_judge_output"
"""Status counted for a compared row (or pair side) that the score file does not contain."""


def judge_statuses(judge: JudgeScores) -> dict[str, int]:
    """Every row of the judge output by status (``not_judged``: the metric is absent)."""
    counts = Counter(row.status for row in judge.rows)
    if judge.not_judged:
        counts["not_judged"] = len(judge.not_judged)
    return dict(sorted(counts.items()))


def excluded_note(joined: JoinedLabels, judge: JudgeScores) -> str:
    """What the judge said on rows whose label the mapping excluded (e.g. BEGIN's Generic)."""
    by_id = judge.by_id()
    counts = Counter(by_id[e.id].status if e.id in by_id else NOT_IN_JUDGE for e in joined.excluded)
    said = ", ".join(f"{status} {n}" for status, n in sorted(counts.items()))
    return (
        f"{len(joined.excluded)} labelled rows have no place on the scale and are left out; "
        f"the judge's statuses on them: {said}."
    )
