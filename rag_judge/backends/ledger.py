"""Token, call and cost accounting for one run, per model."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from rag_judge.backends.types import CallStatus, Usage

#: Providers that run in process and cost nothing per token.
FREE_PROVIDERS = frozenset({"local", "scripted"})


@dataclass
class ModelTally:
    """What one model did in this run."""

    calls: int = 0
    """Calls that reached the backend (retries counted once per attempt in ``attempts``)."""
    attempts: int = 0
    """Backend attempts including retries."""
    cached: int = 0
    """Calls answered from the cache (no tokens spent)."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    """Wall time spent in backend calls."""
    statuses: Counter[str] = field(default_factory=Counter)
    """How calls ended: ok, backend_error, timeout, parse_error ..."""


class Ledger:
    """Accumulates a :class:`ModelTally` per model; cost comes from litellm's price map."""

    def __init__(self) -> None:
        self.models: dict[str, ModelTally] = {}

    def record(
        self,
        model: str,
        *,
        usage: Usage,
        status: CallStatus,
        cached: bool,
        attempts: int,
        seconds: float,
    ) -> None:
        """Add one finished call."""
        tally = self.models.get(model)
        if tally is None:  # not setdefault: that would build a tally on every call
            tally = self.models[model] = ModelTally()
        tally.statuses[status] += 1
        if cached:
            tally.cached += 1
            return
        tally.calls += 1
        tally.attempts += attempts
        tally.prompt_tokens += usage.prompt_tokens
        tally.completion_tokens += usage.completion_tokens
        tally.seconds += seconds

    def cost_usd(self, model: str) -> float | None:
        """Spend for a model, or None when its price is unknown (never a silent 0)."""
        tally = self.models.get(model)
        if tally is None:
            return 0.0
        provider = model.split("/", 1)[0]
        if provider in FREE_PROVIDERS:
            return 0.0
        price = _price(model)
        if price is None:
            return None
        return tally.prompt_tokens * price[0] + tally.completion_tokens * price[1]

    def summary(self) -> dict[str, dict[str, Any]]:
        """Per model: calls, cached, attempts, tokens, seconds, statuses, cost (or None)."""
        return {
            model: {
                "calls": t.calls,
                "cached": t.cached,
                "attempts": t.attempts,
                "prompt_tokens": t.prompt_tokens,
                "completion_tokens": t.completion_tokens,
                "seconds": round(t.seconds, 3),
                "statuses": dict(t.statuses),
                "cost_usd": self.cost_usd(model),
            }
            for model, t in self.models.items()
        }


def _price(model: str) -> tuple[float, float] | None:
    """(input, output) USD per token from litellm's model_cost map, if litellm is installed."""
    import os

    # Use litellm's bundled price map: fetching the live one needs the network we do not have.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        import litellm
    except ImportError:
        return None
    provider, _, rest = model.partition("/")
    names = [rest, rest.split("/", 1)[-1]] if provider == "litellm" else [rest, model]
    for name in names:
        entry = litellm.model_cost.get(name)
        if entry and "input_cost_per_token" in entry:
            return float(entry["input_cost_per_token"]), float(
                entry.get("output_cost_per_token", 0)
            )
    return None
