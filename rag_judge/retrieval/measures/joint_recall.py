"""Joint recall: did the top k hold *everything* the answer needs?

joint_recall@k = 1 if every requirement of the query is met within the top k, else 0.
By default each relevant document is its own requirement (all relevant documents retrieved);
with explicit requirements (e.g. one per answer fragment, each met by any chunk covering it)
a requirement is met by any one of its documents. Single-source recall hides "found only half";
joint recall shows it. 0 for a query with no requirement.
"""

from __future__ import annotations

from typing import cast

import numpy as np

from rag_judge.retrieval.measure import Measure
from rag_judge.retrieval.ranking import FloatArray, RankedGrades


def compute(ranked: RankedGrades, measure: Measure) -> FloatArray:
    """Per-query joint recall (see the module docstring)."""
    limit = np.inf if measure.cutoff is None else float(measure.cutoff)
    if ranked.joint_rank is not None:
        return cast(FloatArray, np.less_equal(ranked.joint_rank, limit).astype(np.float64))
    num_rel = ranked.num_rel
    complete = (ranked.relevant_in_top(measure.cutoff) == num_rel) & (num_rel > 0)
    return cast(FloatArray, complete.astype(np.float64))
