"""What can run here, and if not, why: the data behind ``rag-judge models``."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from rag_judge.backends.registry import PROVIDERS


@dataclass(frozen=True)
class Availability:
    """One model (or provider family) and whether it can be used on this machine."""

    name: str
    """``provider/model``, or ``provider/*`` for a family."""
    kind: Literal["chat", "embeddings"]
    reason: str | None
    """Why it cannot be used, or None when it can."""

    @property
    def available(self) -> bool:
        """True when nothing stands in the way."""
        return self.reason is None


def _safely(check: Callable[[], str | None]) -> str | None:
    """Run a check that imports optional modules; a missing module is a reason, not a crash."""
    try:
        return check()
    except ImportError as error:
        return f"not installed ({error.name})"


def list_models(env: Mapping[str, str] | None = None) -> list[Availability]:
    """Every provider's listed models and families, chat first, in-process providers first,
    with the reason each is unavailable, if it is."""
    env = os.environ if env is None else env
    has_target = bool(
        env.get("OPENAI_API_KEY") or env.get("OPENAI_BASE_URL") or env.get("RAG_JUDGE_BASE_URL")
    )
    records = sorted(PROVIDERS.values(), key=lambda p: not p.in_process)  # stable: table order
    found = []
    kinds: tuple[Literal["chat", "embeddings"], ...] = ("chat", "embeddings")
    for kind in kinds:
        for record in records:
            for model in (record.listed or {}).get(kind, ()):
                reason = _safely(
                    lambda r=record, k=kind, m=model: r.status(k, m, has_target)  # type: ignore[misc]
                )
                found.append(Availability(f"{record.prefix}/{model}", kind, reason))
    return found
