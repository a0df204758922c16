"""A calibration report for pairwise preferences: how often the judge's score differences
agree with which answer humans preferred, with the pairs it could not compare accounted for."""

from __future__ import annotations

from collections import Counter

from rag_judge.calibration.coverage import NOT_IN_JUDGE, judge_statuses
from rag_judge.calibration.estimate import BootstrapOptions
from rag_judge.calibration.judge_scores import JudgeScores
from rag_judge.calibration.labels import PairwisePreference
from rag_judge.calibration.pairwise import pairwise_agreement
from rag_judge.calibration.report_types import CalibrationReport
from rag_judge.core.errors import InputError


def pairwise_report(
    judge: JudgeScores, pairs: tuple[PairwisePreference, ...], options: BootstrapOptions
) -> CalibrationReport:
    """Concordance and three-way agreement of ``judge`` with ``pairs``; pairs with a side the
    judge did not score are counted by that side's status.

    Raises:
        InputError: No pairs, or none with judge scores on both sides.
    """
    if not pairs:
        raise InputError("no pairwise preferences given", field="labels")
    result = pairwise_agreement(pairs, judge.values(), **options)
    statuses, values = {row.id: row.status for row in judge.rows}, judge.values()
    unscored = Counter(
        statuses.get(s.pair.id_a if values.get(s.pair.id_a) is None else s.pair.id_b, NOT_IN_JUDGE)
        for s in result.skipped
    )
    coverage = (
        f"{judge.metric} vs pairwise preferences: {result.n_compared} of "
        f"{result.n_pairs} pairs compared ({result.n_human_ties} human ties, "
        f"{result.n_judge_ties} judge ties)"
    )
    if result.skipped:
        coverage += f"; {len(result.skipped)} skipped, e.g. {result.skipped[0].reason}"
    notes = ("Worst disagreements are listed for per-row labels only.",)
    return CalibrationReport(
        metric=judge.metric,
        kind="pairwise",
        level="sample",
        scores_source=judge.source,
        labels_source="pairwise preferences",
        n=result.n_compared,
        estimates=(result.concordance, result.three_way_agreement),
        coverage=coverage + ".",
        unscored=dict(sorted(unscored.items())),
        judge_statuses=judge_statuses(judge),
        notes=notes,
        pairwise=result,
        confidence=options["confidence"],
        n_resamples=options["n_resamples"],
        seed=options["seed"],
    )
