"""What a labelling session offers: the rows of a score file, sampled, as the page shows them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag_judge.calibration.judge_scores import judge_scores_from_rows
from rag_judge.calibration.label_log import Sampling
from rag_judge.calibration.sampling import Strategy, sample_rows, scored
from rag_judge.core.errors import InputError
from rag_judge.data import score_file as sf
from rag_judge.data.score_file import JudgeRow

CONTEXTS = "contexts"
CHUNKS = "chunks"
ALL = "all"
"""The strategy recorded when no sample is asked: every scored row, in file order."""


@dataclass(frozen=True)
class LabelPlan:
    """The rows one labelling session offers, in the order it offers them."""

    metric: str
    sampling: Sampling
    ids: tuple[str, ...]
    rows: Mapping[str, dict[str, Any]]
    """Id → the row as the page shows it (:func:`page_row`)."""
    unscored: int
    """Rows with the metric but no value: never offered."""
    not_judged: int
    """Rows without the metric at all."""


def plan_labelling(
    scores: Path, metric: str, *, sample: int | None, strategy: Strategy | None, seed: int
) -> LabelPlan:
    """Read a ``rag-judge score`` file and pick the rows to label: every scored row in file
    order, or ``sample`` rows (all of them when ``sample`` is None) by ``strategy`` (random
    when only ``sample`` is given).

    Raises:
        InputError: a missing or malformed score file, no row with the metric, no scored row,
            or a sample below 1 row.
    """
    records = list(sf.read_score_rows(scores))
    found = judge_scores_from_rows(records, str(scores), metric)
    offered = scored(found.rows)
    population = len(offered)
    if sample is None and strategy is None:
        ids = [row.id for row in offered]
        if not ids:
            raise InputError(f"no row has a {metric} value: nothing to label", source=str(scores))
        sampling = Sampling(ALL, None, None, population, str(scores))
    else:
        chosen: Strategy = strategy or "random"
        ids = sample_rows(found.rows, population if sample is None else sample, chosen, seed)
        sampling = Sampling(chosen, seed, sample, population, str(scores))
    by_id = {row.id: row for row in found.rows}
    records_by_id = {str(record.get(sf.ID)): record for _, record in records}
    rows = {id_: page_row(records_by_id[id_], metric, by_id[id_]) for id_ in ids}
    return LabelPlan(
        metric=metric,
        sampling=sampling,
        ids=tuple(ids),
        rows=rows,
        unscored=len(found.rows) - population,
        not_judged=len(found.not_judged),
    )


def page_row(record: Mapping[str, Any], metric: str, row: JudgeRow) -> dict[str, Any]:
    """What the page shows of one row: text as given (the page renders it as text, never as
    HTML), the judge's value and its claims, each with the passages it cites (1-based)."""
    contexts = record.get(CONTEXTS)
    passages = [_text(c) for c in contexts] if isinstance(contexts, list) else []
    result = record[sf.RESULTS][metric]
    claims = result.get(sf.CLAIMS) if isinstance(result.get(sf.CLAIMS), list) else []
    return {
        "id": row.id,
        "question": _text(record.get(sf.QUESTION)),
        "contexts": passages,
        "answer": _text(record.get(sf.ANSWER)),
        "value": row.value,
        "status": row.status,
        "error": row.error or "",
        "probability": row.probability,
        "claims": [
            {
                "claim": score.claim,
                "verdict": score.verdict,
                "chunks": _cited(raw.get(CHUNKS), len(passages)),
                "reason": _text(raw.get(sf.REASON)),
                "support_probability": score.support_probability,
            }
            for score, raw in zip(row.claims, claims, strict=True)
        ],
    }


def _cited(chunks: Any, n_passages: int) -> list[int]:
    """The 1-based passage numbers a claim cites that are passages of this row."""
    if not isinstance(chunks, list):
        return []
    return [c for c in chunks if type(c) is int and 1 <= c <= n_passages]


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
