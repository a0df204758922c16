"""A measured rate with its count and interval: how every benchmark of the decision reports one."""

from __future__ import annotations

from dataclasses import dataclass

from scipy.stats import binomtest


@dataclass(frozen=True)
class Rate:
    """``hits`` of ``n`` with its 95% Wilson interval."""

    hits: int
    n: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "hits", int(self.hits))
        object.__setattr__(self, "n", int(self.n))

    @property
    def value(self) -> float | None:
        return None if self.n == 0 else self.hits / self.n

    @property
    def interval(self) -> tuple[float, float] | None:
        if self.n == 0:
            return None
        ci = binomtest(self.hits, self.n).proportion_ci(confidence_level=0.95, method="wilson")
        return float(ci.low), float(ci.high)

    def as_json(self) -> dict[str, object]:
        interval = self.interval
        return {
            "hits": self.hits,
            "n": self.n,
            "rate": None if self.value is None else round(self.value, 4),
            "low": None if interval is None else round(interval[0], 4),
            "high": None if interval is None else round(interval[1], 4),
        }


def shown(rate: dict[str, object], digits: int = 3) -> str:
    """``0.043 [0.031, 0.059] (43/1000)`` from :meth:`Rate.as_json`; ``—`` with no run."""
    if not rate or rate.get("n") in (0, None):
        return "—"
    value, low, high = rate["rate"], rate["low"], rate["high"]
    return f"{value:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}] ({rate['hits']}/{rate['n']})"
