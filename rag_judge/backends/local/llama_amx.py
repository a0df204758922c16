"""llama.cpp on CPUs with Intel AMX: load the model without the extra (repacked) weight buffers.

On such CPUs llama.cpp repacks Q4_K/Q6_K weights into its AMX buffer and then segfaults in the
first decode (ggml-org/llama.cpp#20824; reproduced with llama-cpp-python 0.3.36 on a 2-core
Xeon, where rag_judge's local-model tests and the sweep crashed). Loading with
``use_extra_bufts = False`` avoids the AMX buffer; other CPUs load as before.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

_DEFAULTS_LOCK = threading.Lock()
"""Held while llama-cpp-python's default model parameters are swapped for one load."""


def cpu_has_amx(cpuinfo: str = "/proc/cpuinfo") -> bool:
    """Whether this CPU has Intel AMX (``amx_int8``/``amx_tile`` among its flags)."""
    try:
        text = Path(cpuinfo).read_text(errors="replace")
    except OSError:
        return False
    flags = next((line for line in text.splitlines() if line.startswith("flags")), "")
    return bool({"amx_int8", "amx_tile"} & set(flags.partition(":")[2].split()))


@contextlib.contextmanager
def extra_buffer_types(*, enabled: bool) -> Iterator[None]:
    """Load ``Llama`` with llama.cpp's extra (repacked) weight buffers on or off.

    ``Llama`` takes its model parameters from ``llama_model_default_params()`` inside its
    constructor and has no argument for ``use_extra_bufts``, so that one function is wrapped
    while the model loads (under a lock: the swap is process-wide).
    """
    if enabled:
        yield
        return
    import llama_cpp.llama_cpp as native

    defaults = native.llama_model_default_params

    def without_extra_buffers() -> Any:
        params = defaults()
        params.use_extra_bufts = False
        return params

    with _DEFAULTS_LOCK:
        native.llama_model_default_params = without_extra_buffers
        try:
            yield
        finally:
            native.llama_model_default_params = defaults
