"""A prediction-powered (PPI) estimate of the mean human label from the judge's scores on rows
nobody labelled, rectified by the labelled rows so that the judge's errors do not bias it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from rag_judge.calibration._inputs import FloatArray
from rag_judge.calibration.agreement import predict_supported
from rag_judge.calibration.join import JoinedLabels
from rag_judge.calibration.judge_scores import JudgeScores
from rag_judge.calibration.labels import HumanLabels, LabelLevel
from rag_judge.calibration.ordinal_scale import to_scale
from rag_judge.calibration.ppi import PpiResult, ppi_mean
from rag_judge.calibration.report_types import ThresholdUse


def ppi_from_unlabelled(
    judge: JudgeScores,
    joined: JoinedLabels,
    labels: HumanLabels,
    judge_on_scale: FloatArray,
    unlabelled: JudgeScores | None,
    extra: Mapping[str, Any],
    *,
    confidence: float,
) -> tuple[PpiResult | None, str]:
    """PPI of the mean human label from the judge's scores on rows nobody labelled.

    The unlabelled rows are those of ``judge`` outside the labels, plus any new ones in
    ``unlabelled``; the judge's value is put on the label scale as for the labelled rows
    (``judge_on_scale``), using the report's ``threshold`` (binary) or ``scale`` (ordinal) in
    ``extra``. Returns the result, or None, and a note for the report ("" when there is no
    unlabelled row at all).
    """
    pool = _scores_by_key(judge, labels.level)
    keys = [k for k in joined.only_in_judge if pool.get(k) is not None]
    skipped = sum(1 for k in joined.only_in_judge if pool.get(k) is None)
    if unlabelled is not None:
        labelled = {_key(x.id, x.claim) for x in labels.labels}
        labelled |= {_key(x.id, x.claim) for x in labels.excluded}
        known = set(pool)
        more = _scores_by_key(unlabelled, labels.level)
        new = {k: v for k, v in more.items() if k not in labelled and k not in known}
        skipped += sum(1 for v in new.values() if v is None)
        pool = {**pool, **new}
        keys += [k for k, v in new.items() if v is not None]
    if not keys:
        return None, ""
    values = np.array([pool[k] for k in keys], dtype=np.float64)
    if labels.kind == "binary":
        use: ThresholdUse = extra["threshold"]
        f_unlabelled = predict_supported(values, use.threshold)
        judged = "the judge's label at the threshold"
    elif labels.kind == "ordinal":
        low, high = extra["scale"]
        f_unlabelled, judged = to_scale(values, low, high), "the judge's mapped category"
    else:
        f_unlabelled, judged = values, "the judge's value"
    left = f" ({skipped} unlabelled rows without a score left out)" if skipped else ""
    if len(keys) < 2 or len(joined.rows) < 2:
        return None, (
            f"PPI not computed: it needs at least 2 labelled and 2 unlabelled scored rows, "
            f"have {len(joined.rows)} and {len(keys)}{left}."
        )
    result = ppi_mean(joined.human(), judge_on_scale, f_unlabelled, confidence=confidence)
    return result, (
        f"PPI of the mean human label uses {judged} on {len(keys)} unlabelled rows, "
        f"rectified by {len(joined.rows)} labelled rows{left}."
    )


def _scores_by_key(judge: JudgeScores, level: LabelLevel) -> dict[str, float | None]:
    """Key (``id``, or ``id#claim``) → the judge's score as
    :func:`~rag_judge.calibration.join.join_labels` pairs it."""
    if level == "sample":
        return {row.id: row.value for row in judge.rows}
    return {
        _key(row.id, c.index): None if c.verdict is None else float(c.verdict == "supported")
        for row in judge.rows
        for c in row.claims
    }


def _key(id_: str, claim: int | None) -> str:
    return id_ if claim is None else f"{id_}#{claim}"
