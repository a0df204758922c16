"""Ordinal labels low..high: the judge's value v in [0, 1] mapped onto the scale by
``low + floor((high - low) * v + 0.5)`` (round half up), and the check that labels lie on it."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from rag_judge.calibration._inputs import FloatArray
from rag_judge.core.errors import InputError

MAPPING_RULE = "low + floor((high - low) * value + 0.5), i.e. round half up"
"""The mapping, in words, for the notes of a report."""


def to_scale(values: Iterable[float], low: int, high: int) -> FloatArray:
    """Map judge values in [0, 1] onto the ordinal scale low..high (see the module docstring)."""
    v = np.clip(np.asarray(list(values), dtype=np.float64), 0.0, 1.0)
    mapped: FloatArray = low + np.floor((high - low) * v + 0.5)
    return mapped


def ordinal_scale(h: FloatArray, scale: tuple[int, int] | None, source: str) -> tuple[int, int]:
    """The ordinal scale: given (every label must lie on it) or the labels' min and max.

    Raises:
        InputError: Every label is the same and no scale is given, the scale is not integers
            low < high, or a label is off the given scale.
    """
    if scale is None:
        low, high = int(np.min(h)), int(np.max(h))
        if low == high:
            raise InputError(
                f"every label is {low}: give the scale (e.g. 1-5) to map the judge onto",
                source=source,
                field="scale",
            )
        return low, high
    low, high = scale
    if not (isinstance(low, int) and isinstance(high, int) and low < high):
        raise InputError(f"expected integers low < high, got {scale!r}", field="scale")
    off = h[(h < low) | (h > high)]
    if off.size:
        raise InputError(
            f"label {off[0]:g} is off the scale {low}–{high} ({off.size} in total)",
            source=source,
            field="scale",
        )
    return low, high
