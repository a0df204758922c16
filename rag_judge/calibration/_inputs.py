"""Input checks shared by the calibration statistics: labels, scores and probabilities.

Every statistic takes one value per row, paired by position (human label, judge output). These
helpers turn the inputs into float arrays and reject what no statistic can use, naming the
argument: empty input, non-finite values, mismatched lengths, labels that are not 0/1.
"""

from __future__ import annotations

from typing import TypeAlias

import numpy as np
from numpy.typing import ArrayLike, NDArray

from rag_judge.core.errors import InputError
from rag_judge.core.stats import as_finite_values

FloatArray: TypeAlias = NDArray[np.float64]
IntArray: TypeAlias = NDArray[np.intp]

as_values = as_finite_values
"""One input as a float64 array; empty or non-finite input is rejected, naming the field."""


def as_pair(
    first: ArrayLike, second: ArrayLike, names: tuple[str, str] = ("human", "judge")
) -> tuple[FloatArray, FloatArray]:
    """Convert two inputs that pair up row by row, rejecting mismatched lengths."""
    x = as_values(first, names[0])
    y = as_values(second, names[1])
    if x.size != y.size:
        raise InputError(
            f"mismatched lengths: {names[0]} has {x.size} values but {names[1]} has {y.size}; "
            "paired inputs need one value per row in each",
            field=names[1],
        )
    return x, y


def check_binary(x: FloatArray, field: str) -> None:
    """Reject any value other than 0 (unsupported) and 1 (supported)."""
    bad = np.flatnonzero((x != 0.0) & (x != 1.0))
    if bad.size:
        first = int(bad[0])
        raise InputError(
            f"non-binary value {x[first]} at index {first} ({bad.size} in total); expected "
            "1 (supported) or 0 (unsupported)",
            field=field,
        )


def check_probabilities(x: FloatArray, field: str) -> None:
    """Reject values outside [0, 1]."""
    bad = np.flatnonzero((x < 0.0) | (x > 1.0))
    if bad.size:
        first = int(bad[0])
        raise InputError(
            f"probability {x[first]} at index {first} is outside [0, 1] ({bad.size} in total)",
            field=field,
        )
