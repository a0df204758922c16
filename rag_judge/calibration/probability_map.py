"""A learnt map from a judge's output to a calibrated P(supported), fitted and applied.

Two kinds, each a few numbers that a profile file keeps and any machine applies without
scikit-learn:

- ``isotonic``: a non-decreasing step-and-ramp function of the judge's value (scikit-learn's
  :class:`~sklearn.isotonic.IsotonicRegression`, its breakpoints kept and applied with linear
  interpolation, clipped at the ends). Monotone in the value, so it never reorders rows: the
  AUC of the value is unchanged.
- ``logistic``: Platt scaling, P = σ(a·logit(value) + b), or with a second input, the lowest
  support probability among the row's claims (``min_probability``), P = σ(a·logit(value) +
  c·logit(min_probability) + b). With two inputs the map can reorder rows, so AUC can change.

Inputs are clipped to [``EPSILON``, 1 − ``EPSILON``] before the logit, so a value of exactly 0
or 1 maps to a finite number.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from rag_judge.calibration._inputs import FloatArray
from rag_judge.core.errors import InputError

MapKind = Literal["isotonic", "logistic"]
"""How the judge's value becomes a probability."""

Feature = Literal["value", "min_probability"]
"""What a map reads: the judge's value, and the lowest claim support probability of the row."""

EPSILON = 1e-4
"""Inputs are clipped to [EPSILON, 1 − EPSILON] before a logit."""

LOGISTIC_C = 1.0
"""Inverse L2 strength of the logistic fit (scikit-learn's default)."""


@dataclass(frozen=True)
class ProbabilityMap:
    """A fitted map: what it reads and its numbers (breakpoints, or coefficients)."""

    kind: MapKind
    features: tuple[Feature, ...]
    x: tuple[float, ...] = ()
    """Isotonic: the value breakpoints, ascending."""
    y: tuple[float, ...] = ()
    """Isotonic: P(supported) at each breakpoint, non-decreasing."""
    coefficients: tuple[float, ...] = ()
    """Logistic: one weight per feature, on the feature's logit."""
    intercept: float = 0.0
    """Logistic: the bias."""

    @property
    def monotone_in_value(self) -> bool:
        """Whether the map keeps the order of the judge's values (then AUC cannot change)."""
        if self.kind == "isotonic":
            return True
        return self.features == ("value",) and self.coefficients[0] >= 0.0

    @property
    def label(self) -> str:
        """E.g. ``isotonic(value)``, ``logistic(value, min_probability)``."""
        return f"{self.kind}({', '.join(self.features)})"

    def apply(self, inputs: FloatArray) -> FloatArray:
        """P(supported) for each row of ``inputs`` (one column per feature, in order)."""
        if inputs.ndim != 2 or inputs.shape[1] != len(self.features):
            raise InputError(
                f"{self.label} takes {len(self.features)} input(s) per row, got shape "
                f"{inputs.shape}",
                field="inputs",
            )
        if self.kind == "isotonic":
            out: FloatArray = np.interp(inputs[:, 0], np.asarray(self.x), np.asarray(self.y))
            return out
        z = _logit(inputs) @ np.asarray(self.coefficients) + self.intercept
        sigmoid: FloatArray = 1.0 / (1.0 + np.exp(-z))
        return sigmoid

    def to_json(self) -> dict[str, Any]:
        """The map as a JSON object (the profile's ``map``)."""
        out: dict[str, Any] = {"kind": self.kind, "features": list(self.features)}
        if self.kind == "isotonic":
            out |= {"x": list(self.x), "y": list(self.y)}
        else:
            out |= {"coefficients": list(self.coefficients), "intercept": self.intercept}
        return out

    @classmethod
    def from_json(cls, data: Any) -> ProbabilityMap:
        """Read a map written by :meth:`to_json`.

        Raises:
            InputError: naming the field that is missing or malformed.
        """
        if not isinstance(data, dict):
            raise InputError("must be an object", field="map")
        kind = data.get("kind")
        features = data.get("features")
        if kind not in ("isotonic", "logistic"):
            raise InputError(f"unknown kind {kind!r}: isotonic or logistic", field="map.kind")
        if (
            not isinstance(features, list)
            or not features
            or any(f not in ("value", "min_probability") for f in features)
        ):
            raise InputError(f"bad features {features!r}", field="map.features")
        if kind == "isotonic":
            x, y = _numbers(data, "x"), _numbers(data, "y")
            if not x or len(x) != len(y) or list(x) != sorted(x) or list(y) != sorted(y):
                raise InputError("x and y must be equally long and ascending", field="map.x")
            return cls("isotonic", tuple(features), x=x, y=y)
        coefficients = _numbers(data, "coefficients")
        intercept = data.get("intercept")
        if len(coefficients) != len(features) or intercept is None or not _finite(intercept):
            raise InputError("one coefficient per feature and an intercept", field="map")
        return cls(
            "logistic", tuple(features), coefficients=coefficients, intercept=float(intercept)
        )


def fit_map(
    kind: MapKind, features: Sequence[Feature], inputs: FloatArray, labels: FloatArray
) -> ProbabilityMap:
    """Fit a map of ``kind`` to rows (``inputs``: one column per feature) and 0/1 labels."""
    from sklearn.isotonic import IsotonicRegression
    from sklearn.linear_model import LogisticRegression

    if kind == "isotonic":
        iso = IsotonicRegression(y_min=0.0, y_max=1.0, increasing=True, out_of_bounds="clip")
        iso.fit(inputs[:, 0], labels)
        return ProbabilityMap(
            "isotonic",
            tuple(features),
            x=tuple(float(v) for v in iso.X_thresholds_),
            y=tuple(float(v) for v in iso.y_thresholds_),
        )
    model = LogisticRegression(C=LOGISTIC_C)
    model.fit(_logit(inputs), labels)
    return ProbabilityMap(
        "logistic",
        tuple(features),
        coefficients=tuple(float(c) for c in model.coef_[0]),
        intercept=float(model.intercept_[0]),
    )


def _logit(inputs: FloatArray) -> FloatArray:
    clipped = np.clip(inputs, EPSILON, 1.0 - EPSILON)
    return np.log(clipped / (1.0 - clipped))


def _numbers(data: dict[str, Any], field: str) -> tuple[float, ...]:
    raw = data.get(field)
    if not isinstance(raw, list) or not all(_finite(v) for v in raw):
        raise InputError("must be a list of finite numbers", field=f"map.{field}")
    return tuple(float(v) for v in raw)


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
