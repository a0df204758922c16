"""The result of a retrieval evaluation: per-query values kept, aggregates derived from them."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import pandas as pd

from rag_judge.retrieval.measure import Measure, parse_measure
from rag_judge.retrieval.ranking import FloatArray

MissingPolicy = Literal["skip", "zero"]
NoRelevantPolicy = Literal["zero", "skip"]

#: Count measures aggregate as sums over queries, as trec_eval's "all" row does.
SUMMED_FAMILIES = frozenset({"num_ret", "num_rel", "num_rel_ret"})


@dataclass(frozen=True)
class EvalSettings:
    """Everything besides qrels, run and measures that changes the numbers."""

    rel_level: int = 1
    """A document is relevant when its grade is >= rel_level (trec_eval ``-l``)."""
    missing: MissingPolicy = "skip"
    """Queries in the qrels but not in the run: "skip" them (trec_eval) or score them 0
    (``"zero"``, trec_eval ``-c``)."""
    no_relevant: NoRelevantPolicy = "zero"
    """Queries whose qrels hold no relevant document: score 0 like trec_eval (``"zero"``)
    or leave them out of every value and aggregate (``"skip"``); either way they are listed."""
    judged_only: bool = False
    """Drop unjudged documents from rankings before scoring (trec_eval ``-J``)."""
    max_depth: int | None = None
    """Consider only the top max_depth documents of each ranking (trec_eval ``-M``)."""


@dataclass(frozen=True)
class EvalResult:
    """Per-query values of each measure, the evaluated and excluded queries, and the settings.

    Values are kept as one float array per measure, aligned with ``query_ids``, so that
    aggregates, confidence intervals and paired tests all read the same numbers.
    """

    measures: tuple[Measure, ...]
    """The measures, in the order asked for."""
    query_ids: tuple[str, ...]
    """Evaluated queries, sorted by id (byte order, as trec_eval)."""
    values: Mapping[str, FloatArray]
    """Measure name -> per-query values aligned with ``query_ids``."""
    excluded: Mapping[str, str] = field(default_factory=dict)
    """Query id -> reason it was not evaluated (no ranking, not in qrels, excluded by user...)."""
    no_relevant: tuple[str, ...] = ()
    """Evaluated or skipped queries whose qrels hold no relevant document."""
    settings: EvalSettings = field(default_factory=EvalSettings)
    """The settings that produced these numbers."""

    @property
    def names(self) -> list[str]:
        """Canonical measure names in order."""
        return [m.name for m in self.measures]

    def per_query_values(self, measure: str | Measure) -> FloatArray:
        """Per-query values of one measure, aligned with ``query_ids``."""
        return self.values[parse_measure(measure).name]

    def aggregate(self) -> dict[str, float]:
        """Mean over evaluated queries (sum for the count measures, as trec_eval prints)."""
        out: dict[str, float] = {}
        for measure in self.measures:
            values = self.values[measure.name]
            total = math.fsum(values.tolist())
            out[measure.name] = total if measure.family in SUMMED_FAMILIES else total / len(values)
        return out

    def per_query(self) -> dict[str, dict[str, float]]:
        """``{query_id: {measure: value}}``."""
        columns = {name: self.values[name].tolist() for name in self.names}
        return {
            qid: {name: columns[name][row] for name in self.names}
            for row, qid in enumerate(self.query_ids)
        }

    def to_dataframe(self) -> pd.DataFrame:
        """One row per evaluated query, one column per measure, indexed by query_id."""
        frame = pd.DataFrame({name: self.values[name] for name in self.names})
        frame.index = pd.Index(list(self.query_ids), name="query_id")
        return frame

    def to_dict(self) -> dict[str, Any]:
        """``{"aggregate": {measure: value}, "per_query": {qid: {measure: value}}}``."""
        return {"aggregate": self.aggregate(), "per_query": self.per_query()}
