"""How much a sweep ``--until-decided`` may spend: minutes of wall time, or model tokens.

The budget is a ceiling: after each batch of questions the run stops if the budget is spent, or
if the next batch, at the pace of the last one, would overrun it (a pace is a forecast, so a
batch much slower than the one before can still overshoot). What was spent and why the run
stopped go into the decision. Only what this run spends counts:
answers from the response cache cost neither time nor tokens, so a re-run with a larger budget
replays the finished batches at once and goes on from where the last one stopped.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from rag_judge.core.errors import InputError

_TIME = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|m|min|h)\s*$", re.IGNORECASE)
_TOKENS = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([km]?)[\s-]*tokens?\s*$", re.IGNORECASE)
_SECONDS = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600}
_SCALE = {"": 1, "k": 1_000, "m": 1_000_000}


@dataclass(frozen=True)
class Budget:
    """A limit on wall time or on tokens (prompt + completion) spent by model calls."""

    seconds: float | None = None
    tokens: int | None = None

    @classmethod
    def parse(cls, text: str) -> Budget:
        """``30m``, ``1.5h``, ``90s``, ``200k-tokens``, ``2M tokens``, ``50000 tokens``.

        >>> Budget.parse("30m"), Budget.parse("200k-tokens")
        (Budget(seconds=1800.0, tokens=None), Budget(seconds=None, tokens=200000))

        Raises:
            InputError: anything else, or a budget that is not positive.
        """
        if found := _TIME.match(text):
            seconds = float(found.group(1)) * _SECONDS[found.group(2).lower()]
            budget = cls(seconds=seconds)
        elif found := _TOKENS.match(text):
            budget = cls(tokens=int(float(found.group(1)) * _SCALE[found.group(2).lower()]))
        else:
            raise InputError(
                f"{text!r} is not a budget: give minutes or tokens, like 30m, 2h, 90s or "
                "200k-tokens",
                field="budget",
            )
        if not ((budget.seconds or 0) > 0 or (budget.tokens or 0) > 0):
            raise InputError(f"must be more than nothing, got {text!r}", field="budget")
        if budget.seconds is not None and not math.isfinite(budget.seconds):
            raise InputError(f"must be finite, got {text!r}", field="budget")
        return budget

    def spent(self, seconds: float, tokens: int) -> bool:
        """True when this much time or these many tokens use the budget up."""
        if self.seconds is not None and seconds >= self.seconds:
            return True
        return self.tokens is not None and tokens >= self.tokens

    def would_overrun(
        self, seconds: float, tokens: int, next_seconds: float, next_tokens: float
    ) -> bool:
        """True when spending ``next_seconds`` and ``next_tokens`` more would pass the budget.

        >>> Budget(seconds=540).would_overrun(400, 0, 150, 0)
        True
        """
        return self.spent(seconds + next_seconds, round(tokens + next_tokens))

    def __str__(self) -> str:
        if self.seconds is not None:
            return f"{self.seconds / 60:g} min"
        return f"{self.tokens:,} tokens"
