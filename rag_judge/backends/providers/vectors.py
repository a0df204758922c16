"""Cosine similarity for the answer-relevancy judge: strict about its input, never NaN.

>>> cosine([1.0, 0.0], [1.0, 1.0])  # doctest: +ELLIPSIS
0.7071...
>>> mean_cosine([1.0, 0.0], [[2.0, 0.0], [0.0, 3.0]])
0.5
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from rag_judge.core.errors import InputError

Vector = Sequence[float] | npt.NDArray[np.floating[Any]]
"""One embedding: a list of floats or a 1-D numpy array."""


def cosine(a: Vector, b: Vector) -> float:
    """Cosine similarity of two vectors, in [-1, 1].

    Raises:
        InputError: the vectors are empty, differ in length, are not finite, or one is zero
            (a zero vector has no direction, so any similarity to it would be made up).
    """
    x = _as_vector(a, "a")
    y = _as_vector(b, "b")
    _check_same_dim(x, y, "a", "b")
    return _clip(float(x @ y) / (float(np.linalg.norm(x)) * float(np.linalg.norm(y))))


def mean_cosine(query_vec: Vector, vecs: Sequence[Vector] | npt.NDArray[Any]) -> float:
    """Mean cosine similarity of one vector to each of several (answer relevancy's score).

    Raises:
        InputError: ``vecs`` is empty (a mean of nothing is undefined, not 0), or any vector
            is invalid as for :func:`cosine`; the message names the offending vector.
    """
    query = _as_vector(query_vec, "query_vec")
    if len(vecs) == 0:
        raise InputError("no vectors to compare the query vector with", field="vecs")
    unit_query = query / np.linalg.norm(query)
    sims: list[float] = []
    for i, vec in enumerate(vecs):
        other = _as_vector(vec, f"vecs[{i}]")
        _check_same_dim(query, other, "query_vec", f"vecs[{i}]")
        sims.append(_clip(float(unit_query @ other) / float(np.linalg.norm(other))))
    return float(np.mean(sims))


def _as_vector(value: Vector, label: str) -> npt.NDArray[np.float64]:
    """A non-empty, finite, non-zero 1-D float64 array, or an InputError naming ``label``."""
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise InputError(f"not a vector of numbers: {error}", field=label) from error
    if array.ndim != 1 or array.size == 0:
        raise InputError(f"expected a non-empty 1-D vector, got shape {array.shape}", field=label)
    if not np.all(np.isfinite(array)):
        raise InputError("vector has NaN or infinite entries", field=label)
    if not np.any(array):
        raise InputError("zero vector has no direction; cosine is undefined", field=label)
    return array


def _check_same_dim(
    x: npt.NDArray[np.float64], y: npt.NDArray[np.float64], x_label: str, y_label: str
) -> None:
    if x.shape != y.shape:
        raise InputError(
            f"dimension mismatch: {x_label} has {x.size} entries, {y_label} has {y.size}",
            field=y_label,
        )


def _clip(value: float) -> float:
    """Keep rounding error from pushing a cosine outside [-1, 1]."""
    return min(1.0, max(-1.0, value))
