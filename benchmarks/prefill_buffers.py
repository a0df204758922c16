"""Prefill speed of the embedded model by llama.cpp weight buffer: can this CPU read faster?

The scoring path's time is prefill (the passages), so this asks what llama.cpp can do here with
the embedded Q4_K_M weights, each configuration in its own child process (a crash is a result):

* ``plain``: no extra buffers (what rag_judge loads on CPUs with AMX, where the AMX buffer
  crashes: ``backends/llama_amx.py``);
* ``repack``: the weights llama.cpp can repack (the Q4_K matrices) in its CPU_REPACK buffer,
  the AMX buffer left out (set through ``tensor_buft_overrides``, which llama-cpp-python's
  ``Llama`` does not expose);
* ``amx``: llama.cpp's default extra buffers (AMX first where the CPU has it).

Each child evaluates the same ~1,000 fresh tokens three times (no KV reuse) and reports
tokens per second. Usage: ``.venv/bin/python benchmarks/prefill_buffers.py``.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _machine import machine_info

RESULTS = Path(__file__).parent / "results"
CONFIGS = ("plain", "repack", "amx")
REPACKABLE = r"blk\.[0-9]+\.(attn_q|attn_k|attn_output|ffn_gate|ffn_up)\.weight"
"""Tensors that are Q4_K in every layer of the embedded model (the Q6_K ones cannot repack)."""
TEXT = (
    "The committee met on Tuesday to review the budget for the coming year. It approved the "
    "plan for new school buildings, postponed the road works, and asked the auditors for a "
    "second estimate of the costs of the harbour project before the next meeting. "
)


def child(config: str) -> dict[str, Any]:
    import llama_cpp
    import llama_cpp.llama_cpp as native
    from llama_cpp import Llama

    from rag_judge.backends.local.weights import default_model_path

    path = str(default_model_path())
    defaults = native.llama_model_default_params
    keep: list[Any] = []

    def params() -> Any:
        chosen = defaults()
        if config == "plain":
            chosen.use_extra_bufts = False
        elif config == "repack":
            chosen.use_extra_bufts = False
            chosen.tensor_buft_overrides = _repack_override(llama_cpp, keep)
        return chosen

    native.llama_model_default_params = params
    llm = Llama(model_path=path, n_ctx=4096, n_threads=2, n_threads_batch=2, verbose=False)
    native.llama_model_default_params = defaults
    tokens = llm.tokenize((TEXT * 30).encode(), add_bos=False)[:1000]
    rates = []
    for _ in range(3):
        llm.reset()
        started = time.perf_counter()
        llm.eval(tokens)
        rates.append(len(tokens) / (time.perf_counter() - started))
    return {"config": config, "tokens": len(tokens), "tok_s": rates}


def _repack_override(llama_cpp: Any, keep: list[Any]) -> int:
    """A ``llama_model_tensor_buft_override`` array sending :data:`REPACKABLE` to CPU_REPACK."""
    base = Path(llama_cpp.__file__).parent / "lib"
    ggml_base = ctypes.CDLL(str(base / "libggml-base.so"))
    ggml = ctypes.CDLL(str(base / "libggml.so"))
    ggml.ggml_backend_dev_by_type.restype = ctypes.c_void_p
    ggml.ggml_backend_dev_by_type.argtypes = [ctypes.c_int]
    ggml_base.ggml_backend_dev_backend_reg.restype = ctypes.c_void_p
    ggml_base.ggml_backend_dev_backend_reg.argtypes = [ctypes.c_void_p]
    ggml_base.ggml_backend_reg_get_proc_address.restype = ctypes.c_void_p
    ggml_base.ggml_backend_reg_get_proc_address.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    ggml_base.ggml_backend_buft_name.restype = ctypes.c_char_p
    ggml_base.ggml_backend_buft_name.argtypes = [ctypes.c_void_p]
    device = ggml.ggml_backend_dev_by_type(0)  # GGML_BACKEND_DEVICE_TYPE_CPU
    registry = ggml_base.ggml_backend_dev_backend_reg(device)
    address = ggml_base.ggml_backend_reg_get_proc_address(
        registry, b"ggml_backend_dev_get_extra_bufts"
    )
    extra = ctypes.CFUNCTYPE(ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p)(address)(device)
    found, i = {}, 0
    while extra[i]:
        found[ggml_base.ggml_backend_buft_name(extra[i]).decode()] = extra[i]
        i += 1

    class Override(ctypes.Structure):
        _fields_ = (("pattern", ctypes.c_char_p), ("buft", ctypes.c_void_p))

    overrides = (Override * 2)(
        Override(REPACKABLE.encode(), found["CPU_REPACK"]), Override(None, None)
    )
    keep.append(overrides)
    return ctypes.cast(overrides, ctypes.c_void_p).value or 0


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        print(json.dumps(child(sys.argv[2])))
        return
    runs = []
    for config in CONFIGS:
        done = subprocess.run(
            [sys.executable, __file__, "--child", config],
            capture_output=True,
            text=True,
            env=os.environ | {"PYTHONPATH": str(Path(__file__).parent)},
        )
        if done.returncode == 0:
            runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
        else:
            runs.append({"config": config, "exit_code": done.returncode})
    report = {"machine": machine_info("llama-cpp-python"), "runs": runs}
    (RESULTS / "prefill_buffers.json").write_text(json.dumps(report, indent=2) + "\n")
    lines = [
        "# Prefill speed by llama.cpp weight buffer (embedded Q4_K_M, 2 threads)",
        "",
        f"{report['machine']['date_utc']} · {report['machine']['cpu_model']} · "
        f"llama-cpp-python {report['machine'].get('llama_cpp_python')}",
        "",
        "| buffer | prefill tok/s (3 runs of ~1,000 tokens) |",
        "|---|---|",
    ]
    for run in runs:
        if "tok_s" in run:
            cell = ", ".join(f"{r:.0f}" for r in run["tok_s"])
        else:
            cell = f"crashed (exit code {run['exit_code']})"
        lines.append(f"| {run['config']} | {cell} |")
    (RESULTS / "prefill_buffers.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
