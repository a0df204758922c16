"""What a judge's calls cost per answer, so a dry run can price a sweep before calling a model.

The rates are measured on this release's judges with the embedded model
(``benchmarks/sweep_steps_local.py``); each judge carries its own (:attr:`Judge.call_rates`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class CallRate:
    """A judge's calls per answer (per question for a once-per-question judge)."""

    calls: float
    """Calls per answer."""
    resend: bool
    """Its prompts carry the passages (the generator's prompt plus ``prompt``), else they are
    ``prompt`` tokens long."""
    prompt: float
    read: float
    """Tokens the embedded model reads per call after prefix reuse."""
    completion: float
    """Tokens written per call."""
    distinct_only: bool = False
    """Asked once per distinct answer (identical answers at two ks hit the cache)."""


CallRates = Mapping[str, CallRate]
"""Per judge path (``score``, ``generate``): the rate of one answer."""

CLAIM_CHECK: CallRates = {
    "score": CallRate(1.1, True, 30, 45, 1),
    "generate": CallRate(2.0, True, 250, 300, 60),
}
"""A judge that checks the answer's claims against the passages (faithfulness and kin)."""
REFERENCE_CHECK: CallRates = {
    "score": CallRate(1.2, False, 160, 160, 1, distinct_only=True),
    "generate": CallRate(2.0, False, 350, 350, 60, distinct_only=True),
}
"""A judge that reads the answer against the reference (no passages in its prompts)."""
REVERSE_QUESTIONS: CallRates = {
    "score": CallRate(1.0, False, 200, 200, 60, distinct_only=True),
    "generate": CallRate(1.0, False, 200, 200, 60, distinct_only=True),
}
"""Questions written back from the answer (answer relevancy)."""
PASSAGE_CHECK: CallRates = {
    "score": CallRate(1.5, True, 40, 60, 1),
    "generate": CallRate(2.0, True, 250, 300, 60),
}
"""The reference's claims or the question checked against each passage (context judges)."""
REASON = CallRate(0.25, True, 40, 60, 20)
"""``score`` path with reasons: a reason decoded for an answer with an unsupported claim (a
sweep writes them for the rows its report shows; ``calls`` is the share of answers with one)."""
