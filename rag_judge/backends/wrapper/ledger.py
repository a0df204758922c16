"""Token, call and cost accounting for one run, per model."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from rag_judge.backends.registry import provider_of
from rag_judge.backends.types import CallStatus
from rag_judge.core.types import Usage

#: What a Batch API bills of the live price (OpenAI's: half, for replies within 24 hours).
BATCH_DISCOUNT = 0.5


@dataclass
class ModelTally:
    """What one model did in this run."""

    calls: int = 0
    """Calls that reached the backend (retries counted once per attempt in ``attempts``)."""
    attempts: int = 0
    """Backend attempts including retries."""
    cached: int = 0
    """Calls answered without reaching the backend (no tokens spent): from the response cache,
    or shared with an identical request already in flight (``shared`` of them)."""
    shared: int = 0
    """Of ``cached``: identical requests made at the same time, answered by one backend call."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    """Of ``completion_tokens``, those a reasoning model spent thinking."""
    unreported: int = 0
    """Answered calls whose reply carried no token counts (their tokens are unknown, not 0)."""
    seconds: float = 0.0
    """Wall time spent in backend calls."""
    statuses: Counter[str] = field(default_factory=Counter)
    """How calls ended: ok, backend_error, timeout, parse_error ..."""
    prose: int = 0
    """Replies that were prose where a JSON schema was asked for (each then repaired once)."""
    batched: int = 0
    """Of ``calls``, those answered through a Batch API (billed at :data:`BATCH_DISCOUNT`)."""
    batched_prompt_tokens: int = 0
    batched_completion_tokens: int = 0
    uncached: int = 0
    """Replies the response cache could not store (locked by another process, disk full)."""
    cache_error: str = ""
    """Why, as the last failure said it."""


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
        shared: bool = False,
    ) -> None:
        """Add one finished call (``cached``: no backend call; ``shared`` too if it waited on
        an identical request in flight rather than reading the cache)."""
        tally = self.models.get(model)
        if tally is None:  # not setdefault: that would build a tally on every call
            tally = self.models[model] = ModelTally()
        tally.statuses[status] += 1
        if cached:
            tally.cached += 1
            tally.shared += shared
            return
        tally.calls += 1
        tally.attempts += attempts
        tally.prompt_tokens += usage.prompt_tokens
        tally.completion_tokens += usage.completion_tokens
        tally.reasoning_tokens += usage.reasoning_tokens
        if status == "ok" and not usage.reported:
            tally.unreported += 1
        tally.seconds += seconds

    def record_uncached(self, model: str, error: str) -> None:
        """A reply the response cache could not store (locked, disk full): a re-run asks for it
        again."""
        tally = self.models.get(model)
        if tally is None:
            tally = self.models[model] = ModelTally()
        tally.uncached += 1
        tally.cache_error = error

    def record_batched(self, model: str, usage: Usage) -> None:
        """Add one call answered through a Batch API (its tokens cost :data:`BATCH_DISCOUNT`)."""
        tally = self.models.get(model)
        if tally is None:
            tally = self.models[model] = ModelTally()
        tally.statuses["ok"] += 1
        tally.calls += 1
        tally.attempts += 1
        tally.batched += 1
        tally.prompt_tokens += usage.prompt_tokens
        tally.completion_tokens += usage.completion_tokens
        tally.batched_prompt_tokens += usage.prompt_tokens
        tally.batched_completion_tokens += usage.completion_tokens
        if not usage.reported:
            tally.unreported += 1

    def note_prose(self, model: str) -> None:
        """Count a reply that was prose where JSON was asked for."""
        tally = self.models.get(model)
        if tally is None:
            tally = self.models[model] = ModelTally()
        tally.prose += 1

    def cost_usd(self, model: str) -> float | None:
        """Spend for a model, or None when its price, or the tokens of some of its calls, are
        unknown (never a silent 0)."""
        tally = self.models.get(model)
        if tally is None:
            return 0.0
        if not _priced(model):
            return 0.0
        price = price_per_token(model)
        if price is None or tally.unreported:
            return None
        full = tally.prompt_tokens * price[0] + tally.completion_tokens * price[1]
        saved = (1 - BATCH_DISCOUNT) * (
            tally.batched_prompt_tokens * price[0] + tally.batched_completion_tokens * price[1]
        )
        return full - saved

    def describe(self, model: str) -> str:
        """One line on what a model did: calls, cache hits, tokens (or why unknown) and cost."""
        t = self.models[model]
        made = f"{t.calls} call{'s' * (t.calls != 1)} made"
        if t.batched:
            made += f" ({t.batched} through a Batch API, at {BATCH_DISCOUNT:.0%} of the price)"
        parts = [f"{made}, {_reused(t)}"]
        answered = t.statuses["ok"] - t.cached  # calls that reached the backend and succeeded
        if t.unreported and t.unreported == answered:
            parts.append("tokens not reported")
        else:
            tokens = f"{t.prompt_tokens} prompt + {t.completion_tokens} completion tokens"
            if t.reasoning_tokens:
                tokens += f" ({t.reasoning_tokens} of them thinking)"
            if t.unreported:
                tokens += f" (not reported for {t.unreported} of the calls)"
            parts.append(tokens)
        if _priced(model):
            cost = self.cost_usd(model)
            parts.append("cost unknown" if cost is None else f"${cost:.4f}")
        if t.prose:
            parts.append(f"{t.prose} repl{'ies' if t.prose != 1 else 'y'} in prose, not JSON")
        if t.uncached:
            parts.append(
                f"{t.uncached} repl{'ies' if t.uncached != 1 else 'y'} not cached "
                f"({t.cache_error}): a re-run asks for them again"
            )
        failed = {s: n for s, n in sorted(t.statuses.items()) if s != "ok"}
        if failed:
            parts.append("failed: " + ", ".join(f"{n} {s}" for s, n in failed.items()))
        return f"{model}: " + "; ".join(parts)

    def summary(self) -> dict[str, dict[str, Any]]:
        """Per model: calls, cached, attempts, tokens, seconds, statuses, cost (or None)."""
        return {
            model: {
                "calls": t.calls,
                "cached": t.cached,
                "shared": t.shared,
                "attempts": t.attempts,
                "prompt_tokens": t.prompt_tokens,
                "completion_tokens": t.completion_tokens,
                "reasoning_tokens": t.reasoning_tokens,
                "unreported_usage": t.unreported,
                "seconds": round(t.seconds, 3),
                "statuses": dict(t.statuses),
                "prose_replies": t.prose,
                "batched": t.batched,
                "cost_usd": self.cost_usd(model),
            }
            for model, t in self.models.items()
        }


def _reused(t: ModelTally) -> str:
    """The calls that needed no backend call, by where their answer came from."""
    from_cache = t.cached - t.shared
    if not t.shared:
        return f"{from_cache} answered from the cache"
    in_flight = f"{t.shared} shared with an identical request in flight"
    return f"{from_cache} answered from the cache and {in_flight}" if from_cache else in_flight


def _priced(model: str) -> bool:
    """Whether ``model``'s calls cost money (a name outside the provider table might)."""
    record = provider_of(model)
    return record is None or record.priced


def price_per_token(model: str) -> tuple[float, float] | None:
    """(input, output) USD per token from litellm's model_cost map, if litellm is installed."""
    import os

    # Use litellm's bundled price map: fetching the live one needs the network we do not have.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        import litellm
    except ImportError:
        return None
    record, rest = provider_of(model), model.partition("/")[2]
    names = record.prices_under(rest) if record is not None else (rest, model)
    for name in names:
        entry = litellm.model_cost.get(name)
        if entry and "input_cost_per_token" in entry:
            return float(entry["input_cost_per_token"]), float(
                entry.get("output_cost_per_token", 0)
            )
    return None
