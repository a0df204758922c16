"""Small array helpers shared by the measure modules."""

from __future__ import annotations

import numpy as np

from rag_judge.retrieval.ranking import FloatArray, IntArray


def safe_divide(numerator: FloatArray | IntArray, denominator: FloatArray | IntArray) -> FloatArray:
    """Elementwise numerator / denominator, 0.0 where the denominator is 0 (trec_eval's rule)."""
    num = np.asarray(numerator, dtype=np.float64)
    den = np.asarray(denominator, dtype=np.float64)
    out = np.zeros(np.broadcast_shapes(num.shape, den.shape), dtype=np.float64)
    np.divide(num, den, out=out, where=den != 0)
    return out


def rank_discounts(width: int) -> FloatArray:
    """log2(rank + 1) for ranks 1..width: the nDCG discount denominators."""
    return np.log2(np.arange(2, width + 2, dtype=np.float64))
