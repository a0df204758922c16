"""This machine's speed with the embedded model, measured in a few seconds: for a sweep's plan.

:func:`measure_speed` reads a fresh prompt as a sweep reads its prompts: a context first
(:data:`CONTEXT_TOKENS`, untimed: it also warms the model up), then the tokens a k adds
(:data:`PREFILL_TOKENS`, timed: prefill, tokens read per second), then writes a few dozen tokens
(decode: tokens written per second), straight through llama.cpp, bypassing the response cache
and the ledger: it is a measurement, not a model call a result depends on. Reading after a
context is slower than from an empty one (attention over the context: on a 2-core Xeon 105-110
tokens/s after 900 tokens against 133-139 from none), and a sweep's reads all come after its
passages, so timing from none under-predicted a sweep's minutes by 14%. The prompt differs from
any sweep's (it is built here), so the KV cache it leaves behind costs a sweep nothing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from rag_judge.backends.errors import BackendUnavailable
from rag_judge.backends.local.local_llama import LocalLlama
from rag_judge.backends.protocol import ChatBackend

CONTEXT_TOKENS = 600
"""Tokens read before the timed ones: about the passages a sweep's prompt holds mid-sweep."""
PREFILL_TOKENS = 250
"""Tokens the prefill measurement times: about what each k of a sweep adds (a passage, the
question and the instruction)."""
DECODE_TOKENS = 32
"""How many tokens the decode measurement writes."""
_FILLER = (
    "The survey counted rivers, bridges, mills and the roads between the market towns; each "
    "entry gives the length, the year it was measured and the parish it belongs to. "
)


@dataclass(frozen=True)
class MachineSpeed:
    """Tokens read and written per second by the embedded model on this machine, now."""

    prefill_per_second: float
    decode_per_second: float
    seconds: float
    """What measuring took (load included)."""


def measure_speed(backend: ChatBackend) -> MachineSpeed:
    """Time one prefill after a context, and one decode, with ``backend``'s model (loading it
    if needed)."""
    started = time.perf_counter()
    llama = _embedded(backend).load()
    total = CONTEXT_TOKENS + PREFILL_TOKENS
    text = (_FILLER * 80)[: total * 5]
    tokens = llama.tokenize(f"{time.time_ns()} {text}".encode(), add_bos=True)[:total]
    llama.reset()  # type: ignore[no-untyped-call]
    llama.eval(tokens[:CONTEXT_TOKENS])
    clock = time.perf_counter()
    llama.eval(tokens[CONTEXT_TOKENS:])
    prefill = (len(tokens) - CONTEXT_TOKENS) / max(time.perf_counter() - clock, 1e-9)
    clock = time.perf_counter()
    written = 0
    # The default reset=True finds the prompt already in the KV cache and samples at once;
    # reset=False would read the whole prompt a second time and time that as decoding.
    for token in llama.generate(tokens, temp=0.0):
        written += 1
        if written >= DECODE_TOKENS or token == llama.token_eos():
            break
    decode = written / max(time.perf_counter() - clock, 1e-9)
    llama.reset()  # type: ignore[no-untyped-call]
    return MachineSpeed(prefill, decode, time.perf_counter() - started)


def count_tokens(backend: ChatBackend, text: str) -> int:
    """Tokens of ``text`` by the embedded model's own tokenizer."""
    return len(
        _embedded(backend).load().tokenize(text.encode("utf-8"), add_bos=False, special=True)
    )


def _embedded(backend: ChatBackend) -> LocalLlama:
    """``backend`` as the llama.cpp model its provider record says it is (``measured_here``)."""
    if not isinstance(backend, LocalLlama):
        raise BackendUnavailable(f"{backend.name}: not a llama.cpp model run in this process")
    return backend
