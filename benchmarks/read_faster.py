"""Two ways the embedded model might read a sweep's prompts faster, each against today's path.

A sweep's time on two cores is the model reading prompts (``sweep_steps_local.py``). Measured
here, in one run on this machine:

* **requantized weights**: the shipped Q4_K_M requantized (llama.cpp's own quantizer, into a
  temporary file) to Q8_0 and Q4_0, loaded as rag_judge loads the model; prefill of 250 tokens
  after a 600-token context (as a sweep reads a new passage) and decode of 30 tokens;
* **one shared-prefix batch per question** against **per-k calls** (today): the same tokens read
  for k = 1..10 of one question. Today each k is its own call: llama.cpp keeps the previous
  prompt's prefix, reads the new passage and the prompt's tail (the question, the answer
  instruction), writes the answer, then the fragment judge's probe reads its own tail. Batched,
  the ten passages are read once into sequence 0, each k's sequence shares that prefix up to
  its k (``llama_memory_seq_cp``), and the ten tails, each decode step of the ten answers, and
  the ten probes are each one ``llama_decode``. Token counts are the averages measured by
  ``sweep_steps_local.py`` on the demo's judges (``results/sweep_steps_local_demo_judges.md``).

Usage: ``.venv/bin/python benchmarks/read_faster.py``.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

from _machine import machine_info

RESULTS = Path(__file__).parent / "results"
CORPUS = Path(__file__).parents[1] / "eval_sets" / "cmrc2018_zh_chunked" / "corpus.jsonl"
KS = 10
SYSTEM, PASSAGE, TAIL, ANSWER, PROBE = 60, 140, 65, 4, 42
"""Tokens: system prompt; a passage; the generator's tail after it (question, instruction,
chat template); an answer written; the probe's tail (answer and its yes/no question)."""
REPEATS = 3


def _load(path: str, *, n_ctx: int = 8192) -> Any:
    from llama_cpp import Llama

    from rag_judge.backends.local.llama_amx import cpu_has_amx, extra_buffer_types

    with extra_buffer_types(enabled=not cpu_has_amx()):
        return Llama(path, n_ctx=n_ctx, n_threads=2, n_threads_batch=2, verbose=False)


def _text_tokens(llm: Any) -> list[int]:
    return list(llm.tokenize(CORPUS.read_text(encoding="utf-8").encode(), add_bos=False))


def weights_speed(path: str) -> dict[str, Any]:
    """Prefill of 250 tokens after 600, and decode of 30, with the weights at ``path``."""
    llm = _load(path, n_ctx=4096)
    tokens = _text_tokens(llm)[:900]
    prefill = []
    for _ in range(REPEATS):
        llm.reset()
        llm.eval(tokens[:600])
        started = time.perf_counter()
        llm.eval(tokens[600:850])
        prefill.append(250 / (time.perf_counter() - started))
    started, written = time.perf_counter(), 0
    for _ in llm.generate(tokens[:850], temp=0.0):  # the prefix is in the KV cache: decode only
        written += 1
        if written == 30:
            break
    decode = written / (time.perf_counter() - started)
    return {"prefill_tok_s": [round(r, 1) for r in prefill], "decode_tok_s": round(decode, 1)}


def requantized(source: str, ftype_name: str, folder: str) -> str:
    import llama_cpp

    target = str(Path(folder) / f"model-{ftype_name}.gguf")
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = getattr(llama_cpp, f"LLAMA_FTYPE_MOSTLY_{ftype_name.upper()}")
    params.allow_requantize = True
    params.nthread = 2
    if llama_cpp.llama_model_quantize(source.encode(), target.encode(), params) != 0:
        raise RuntimeError(f"quantizing to {ftype_name} failed")
    return target


class Parts:
    """One question's token pieces, cut from the corpus's text."""

    def __init__(self, tokens: list[int]) -> None:
        self.at = 0
        self.tokens = tokens
        self.system = self.take(SYSTEM)
        self.passages = [self.take(PASSAGE) for _ in range(KS)]
        self.tails = [self.take(TAIL) for _ in range(KS)]
        self.answers = [self.take(ANSWER) for _ in range(KS)]
        self.probes = [self.take(PROBE) for _ in range(KS)]

    def take(self, n: int) -> list[int]:
        self.at += n
        return self.tokens[self.at - n : self.at]


def per_k_calls(llm: Any, parts: Parts) -> float:
    """Today's order: per k, the new passage and tail, the answer, the probe (prefix kept)."""
    started = time.perf_counter()
    llm.reset()
    llm.eval(parts.system)
    kept = len(parts.system)
    for k in range(KS):
        llm.n_tokens = kept  # llama.cpp drops what follows the common prefix
        llm.eval(parts.passages[k] + parts.tails[k])
        for token in parts.answers[k]:
            llm.eval([token])
        kept += PASSAGE
        llm.n_tokens = kept
        llm.eval(parts.probes[k])
    return time.perf_counter() - started


def shared_prefix_batch(llm: Any, parts: Parts) -> float:
    """The same tokens: passages once, then each step of the ten ks as one batch."""
    import llama_cpp as native

    params = native.llama_context_default_params()
    params.n_ctx, params.n_batch, params.n_ubatch = 8192, 2048, 512
    params.n_seq_max, params.kv_unified = KS + 1, True
    params.n_threads = params.n_threads_batch = 2
    ctx = native.llama_init_from_model(llm._model.model, params)
    memory = native.llama_get_memory(ctx)
    batch = native.llama_batch_init(2048, 0, KS + 1)

    def add(tokens: list[int], first: int, seq: int) -> None:
        n = batch.n_tokens
        for i, token in enumerate(tokens):
            batch.token[n + i], batch.pos[n + i] = token, first + i
            batch.n_seq_id[n + i], batch.seq_id[n + i][0] = 1, seq
            batch.logits[n + i] = i == len(tokens) - 1
        batch.n_tokens = n + len(tokens)

    def decode() -> None:
        if native.llama_decode(ctx, batch) != 0:
            raise RuntimeError("llama_decode failed")
        batch.n_tokens = 0

    try:
        started = time.perf_counter()
        prefix = parts.system + [t for p in parts.passages for t in p]
        for i in range(0, len(prefix), 512):
            add(prefix[i : i + 512], i, 0)
            batch.logits[batch.n_tokens - 1] = False
            decode()
        ends = [SYSTEM + PASSAGE * (k + 1) for k in range(KS)]
        for k in range(KS):
            native.llama_memory_seq_cp(memory, 0, k + 1, 0, ends[k])
            add(parts.tails[k], ends[k], k + 1)
        decode()
        at = [ends[k] + TAIL for k in range(KS)]
        for step in range(ANSWER):
            for k in range(KS):
                add([parts.answers[k][step]], at[k], k + 1)
                at[k] += 1
            decode()
        for k in range(KS):
            native.llama_memory_seq_rm(memory, k + 1, -1, -1)
            native.llama_memory_seq_cp(memory, 0, k + 1, 0, ends[k])
            add(parts.probes[k], ends[k], k + 1)
        decode()
        return time.perf_counter() - started
    finally:
        native.llama_batch_free(batch)
        native.llama_free(ctx)


def main() -> None:
    from rag_judge.backends.local.weights import default_model_path

    source = str(default_model_path())
    weights: dict[str, Any] = {"q4_k_m (shipped)": weights_speed(source)}
    with tempfile.TemporaryDirectory() as folder:
        for name in ("q8_0", "q4_0"):
            weights[name] = weights_speed(requantized(source, name, folder))
    llm = _load(source)
    parts = Parts(_text_tokens(llm))
    batches = [
        {"per_k_calls_s": round(per_k_calls(llm, parts), 2),
         "shared_prefix_batch_s": round(shared_prefix_batch(llm, parts), 2)}
        for _ in range(REPEATS)
    ]  # fmt: skip
    read = SYSTEM + KS * (PASSAGE + TAIL + ANSWER + PROBE)
    report = {
        "machine": machine_info("llama-cpp-python"),
        "weights": weights,
        "batch": {"tokens_read_per_question": read, "runs": batches},
    }
    (RESULTS / "read_faster.json").write_text(json.dumps(report, indent=2) + "\n")
    (RESULTS / "read_faster.md").write_text(markdown(report))
    print(markdown(report))


def markdown(report: dict[str, Any]) -> str:
    machine = report["machine"]
    lines = [
        "# Reading faster with the embedded model: requantized weights, one batch per question",
        "",
        f"{machine['date_utc']} · {machine['cpu_model']}, {machine['usable_cores']} cores · "
        f"llama-cpp-python {machine.get('llama_cpp_python')} · `benchmarks/read_faster.py`",
        "",
        "| weights | prefill tok/s (250 after 600, 3 runs) | decode tok/s |",
        "|---|---|---:|",
    ]
    for name, found in report["weights"].items():
        rates = ", ".join(f"{r:.0f}" for r in found["prefill_tok_s"])
        lines.append(f"| {name} | {rates} | {found['decode_tok_s']:.1f} |")
    runs = report["batch"]["runs"]
    lines += [
        "",
        f"One question, k = 1..{KS}, {report['batch']['tokens_read_per_question']:,} tokens "
        "read and written either way:",
        "",
        "| run | per-k calls (today) | one shared-prefix batch per step | ratio |",
        "|---:|---:|---:|---:|",
    ]
    for i, run in enumerate(runs, 1):
        ratio = run["shared_prefix_batch_s"] / run["per_k_calls_s"]
        lines.append(
            f"| {i} | {run['per_k_calls_s']:.2f} s | {run['shared_prefix_batch_s']:.2f} s | "
            f"{ratio:.2f} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
