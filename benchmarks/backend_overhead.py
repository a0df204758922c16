"""What ModelClient + its OpenAI-protocol backends cost against a 50 ms server, and the SDK's share.

The fake OpenAI server (tests/support/fake_openai_server.py) runs in its own process, so it does not
share the client's GIL, and answers every call after a fixed latency from a thread per
connection. 2,000 distinct chat calls at concurrency 32 are timed through:

* ``bare_sleep`` / ``ours_scripted``: Semaphore + ``asyncio.sleep`` against ModelClient over a
  sleeping ScriptedBackend, in process: the wrapper's own cost, without any HTTP;
* ``raw``: hand-written HTTP/1.1 over 32 keep-alive asyncio sockets (the server's ceiling);
* ``bare_openai``: ``openai.AsyncOpenAI`` + ``asyncio.Semaphore(32)``;
* ``ours_openai``: ``ModelClient(OpenAIChat(...), policy=CallPolicy(concurrency=32))``, no cache;
* ``bare_aiohttp``: one ``aiohttp.ClientSession`` + ``asyncio.Semaphore(32)``, JSON by hand;
* ``ours_http``: ``ModelClient(HTTPChat(...))``, the ``openai-compatible/<model>`` backend (the
  same wire protocol over aiohttp, without the SDK), no cache;
* ``bare_litellm`` / ``ours_litellm``: the same through ``litellm.acompletion`` / LiteLLMChat;
* ``*_uvloop``: the in-process, raw, aiohttp and HTTPChat configurations again on uvloop, when
  it is installed (it is not a rag_judge dependency: these rows are what decided that);
* ``bare_pyreqwest`` / ``bare_curl_cffi``: other async HTTP clients (Rust reqwest, libcurl),
  bare like ``bare_aiohttp``, when they are importable (neither is a dependency: these rows
  show whether switching the openai-compatible backend's client would pay).

Ideal wall time is calls x latency / concurrency (3.125 s). Each configuration runs
``--repeats`` times; the median counts. Client CPU seconds per call show whether the client
process is the bottleneck; "first call after" is how long the batch waits before its first
request starts. The openai-compatible path is always profiled (cProfile), the SDK path when it
misses 90 % of ideal. Objects from the imports are frozen out of the garbage collector after
the warm-up (``gc.freeze()``). The JSON codecs the openai-compatible backend can use (stdlib,
orjson) are timed on a real request and reply, interleaved, to back its choice.

Usage::

    .venv/bin/python benchmarks/backend_overhead.py            # ~5 minutes
    .venv/bin/python benchmarks/backend_overhead.py --calls 400 --repeats 1 --no-litellm
    .venv/bin/python benchmarks/backend_overhead.py --configs bare_aiohttp,ours_http \
        --repeats 10 --out benchmarks/results/backend_overhead_repeats.json   # the spread
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import importlib.util
import io
import json
import os
import pstats
import re
import statistics
import subprocess
import sys
import time
import timeit
import urllib.request
from collections.abc import Awaitable, Callable, Coroutine
from functools import partial
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from _machine import machine_info  # noqa: E402

from rag_judge.backends.protocol import ChatBackend  # noqa: E402
from rag_judge.backends.providers import http_backend  # noqa: E402
from rag_judge.backends.providers.http_backend import HTTPChat  # noqa: E402
from rag_judge.backends.providers.openai_backend import OpenAIChat  # noqa: E402
from rag_judge.backends.providers.scripted import ScriptedBackend  # noqa: E402
from rag_judge.backends.types import ChatRequest, ChatResponse  # noqa: E402
from rag_judge.backends.wrapper.client import CallPolicy, ModelClient  # noqa: E402

GOAL = 0.90
LATENCY = 0.05
"""Seconds per call: the server's (set by --latency), and the in-process runs' sleep."""
Runner = Callable[[str, int, int], Coroutine[Any, Any, None]]
FIRST: list[float] = []
"""perf_counter() when the current run's first call started."""


def stamp() -> None:
    if not FIRST:
        FIRST.append(time.perf_counter())


class Stamped:
    """A chat backend that stamps FIRST when its first call starts."""

    def __init__(self, backend: ChatBackend) -> None:
        self.backend, self.name, self.endpoint = backend, backend.name, backend.endpoint

    async def complete(self, request: ChatRequest) -> ChatResponse:
        stamp()
        return await self.backend.complete(request)


def request(i: int) -> ChatRequest:
    return ChatRequest.of(("system", "You are a judge."), ("user", f"Is passage {i} relevant?"))


def messages(i: int) -> list[dict[str, str]]:
    return [{"role": m.role, "content": m.content} for m in request(i).messages]


async def run_raw(base_url: str, calls: int, concurrency: int) -> None:
    host, port = re.match(r"http://([^:/]+):(\d+)", base_url).groups()  # type: ignore[union-attr]
    body = json.dumps({"model": "fake-model", "messages": messages(0)}).encode()
    wire = (
        f"POST /v1/chat/completions HTTP/1.1\r\nHost: {host}:{port}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    todo = iter(range(calls))

    async def worker() -> None:  # one keep-alive connection, requests one after another
        reader, writer = await asyncio.open_connection(host, int(port))
        for _ in todo:
            stamp()
            writer.write(wire)
            head = await reader.readuntil(b"\r\n\r\n")
            length = re.search(rb"Content-Length: (\d+)", head, re.IGNORECASE)
            await reader.readexactly(int(length.group(1)) if length else 0)
        writer.close()

    await asyncio.gather(*(worker() for _ in range(concurrency)))


async def _bounded(calls: int, concurrency: int, call: Callable[[int], Awaitable[Any]]) -> None:
    semaphore = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        async with semaphore:
            stamp()
            reply = await call(i)
            assert reply is None or reply.choices[0].message.content

    await asyncio.gather(*(one(i) for i in range(calls)))


async def run_bare_sleep(base_url: str, calls: int, concurrency: int) -> None:
    await _bounded(calls, concurrency, lambda i: asyncio.sleep(LATENCY))


async def run_bare_openai(base_url: str, calls: int, concurrency: int) -> None:
    import openai

    client = openai.AsyncOpenAI(base_url=base_url, api_key="bench", max_retries=0)
    await _bounded(
        calls,
        concurrency,
        lambda i: client.chat.completions.create(
            model="fake-model",
            messages=messages(i),  # type: ignore[arg-type]
            temperature=0.0,
        ),
    )
    await client.close()


async def run_bare_aiohttp(base_url: str, calls: int, concurrency: int) -> None:
    import aiohttp

    url, headers = f"{base_url}/chat/completions", {"Content-Type": "application/json"}
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector, headers=headers) as session:

        async def call(i: int) -> None:
            body = {"model": "fake-model", "messages": messages(i), "temperature": 0.0}
            async with session.post(url, data=http_backend._dumps(body)) as response:
                reply = http_backend._loads(await response.read())
            assert reply["choices"][0]["message"]["content"]

        await _bounded(calls, concurrency, call)


def _json_body(i: int) -> bytes:
    return http_backend._dumps({"model": "fake-model", "messages": messages(i), "temperature": 0.0})


async def run_bare_pyreqwest(base_url: str, calls: int, concurrency: int) -> None:
    from pyreqwest.client import ClientBuilder

    url, headers = f"{base_url}/chat/completions", {"Content-Type": "application/json"}
    builder = ClientBuilder().max_connections(concurrency).default_headers(headers)
    async with builder.build() as client:

        async def call(i: int) -> None:
            response = await client.post(url).body_bytes(_json_body(i)).build().send()
            reply = http_backend._loads(bytes(await response.bytes()))
            assert reply["choices"][0]["message"]["content"]

        await _bounded(calls, concurrency, call)


async def run_bare_curl_cffi(base_url: str, calls: int, concurrency: int) -> None:
    from curl_cffi.requests import AsyncSession

    url, headers = f"{base_url}/chat/completions", {"Content-Type": "application/json"}
    async with AsyncSession(max_clients=concurrency) as session:

        async def call(i: int) -> None:
            response = await session.post(url, data=_json_body(i), headers=headers)
            assert http_backend._loads(response.content)["choices"][0]["message"]["content"]

        await _bounded(calls, concurrency, call)


async def run_bare_litellm(base_url: str, calls: int, concurrency: int) -> None:
    import litellm

    options = {"api_base": base_url, "api_key": "bench", "num_retries": 0, "max_retries": 0}
    await _bounded(
        calls,
        concurrency,
        lambda i: litellm.acompletion(
            model="openai/fake-model", messages=messages(i), temperature=0.0, **options
        ),
    )


async def _run_ours(backend: ChatBackend, calls: int, concurrency: int) -> None:
    client = ModelClient(Stamped(backend), policy=CallPolicy(concurrency=concurrency))

    async def one(i: int) -> Any:  # the request is built when its turn comes, as in _bounded
        return await client.chat(request(i))

    results = await asyncio.gather(*(one(i) for i in range(calls)))
    failed = [r for r in results if r.status != "ok"]
    assert not failed, f"{len(failed)} calls failed, e.g. {failed[0].error}"


async def run_ours_scripted(base_url: str, calls: int, concurrency: int) -> None:
    await _run_ours(ScriptedBackend(respond=lambda r: "ok", delay=LATENCY), calls, concurrency)


async def run_ours_openai(base_url: str, calls: int, concurrency: int) -> None:
    backend = OpenAIChat("fake-model", base_url=base_url, api_key="bench")
    await _run_ours(backend, calls, concurrency)
    await backend.aclose()


async def run_ours_http(base_url: str, calls: int, concurrency: int) -> None:
    backend = HTTPChat("fake-model", base_url=base_url, api_key="bench")
    await _run_ours(backend, calls, concurrency)
    await backend.aclose()


async def run_ours_litellm(base_url: str, calls: int, concurrency: int) -> None:
    from rag_judge.backends.providers.litellm_backend import LiteLLMChat

    backend = LiteLLMChat("openai/fake-model", api_base=base_url, api_key="bench")
    await _run_ours(backend, calls, concurrency)


def start_server(latency: float) -> tuple[subprocess.Popen[str], str]:
    """The fake server in a child process; returns it and its base URL."""
    server = subprocess.Popen(
        [
            sys.executable,
            str(REPO / "tests" / "support" / "fake_openai_server.py"),
            "--latency",
            str(latency),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    line = server.stdout.readline()
    match = re.match(r"PORT (\d+)", line)
    if match is None:
        server.kill()
        raise RuntimeError(f"fake server did not start: {line!r}")
    return server, f"http://127.0.0.1:{match.group(1)}/v1"


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(
    name: str, base_url: str, calls: int, concurrency: int, server_pid: int
) -> dict[str, float]:
    """One timed run: wall seconds and CPU seconds of client and server."""
    _, runner, loop = RUNNERS[name]
    server_cpu, client_cpu = cpu_seconds(server_pid), time.process_time()
    FIRST.clear()
    started = time.perf_counter()
    run_on(loop, runner(base_url, calls, concurrency))
    wall = time.perf_counter() - started
    return {
        "wall_s": wall,
        "client_cpu_s": time.process_time() - client_cpu,
        "server_cpu_s": cpu_seconds(server_pid) - server_cpu,
        "first_call_after_s": FIRST[0] - started,
    }


def profile(name: str, base_url: str, calls: int, concurrency: int) -> dict[str, Any]:
    """cProfile of one run on the process CPU clock (time blocked in epoll is not counted):
    internal time per library, and the top functions."""
    _, runner, loop = RUNNERS[name]
    profiler = cProfile.Profile(time.process_time)
    profiler.runcall(run_on, loop, runner(base_url, calls, concurrency))
    stats = pstats.Stats(profiler)
    by_library: dict[str, float] = {}
    for (path, _, _), (_, _, tottime, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        by_library[_library(path)] = by_library.get(_library(path), 0.0) + tottime
    total = sum(by_library.values())
    shares = sorted(by_library.items(), key=lambda kv: -kv[1])[:10]
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(12)
    return {
        "calls": calls,
        "share_of_time_by_library": {k: round(v / total, 3) for k, v in shares},
        "top_functions": out.getvalue().split("\n\n", 1)[-1].strip(),
    }


def _library(path: str) -> str:
    """Who owns a profiled function: a package, rag_judge, a stdlib module, or C builtins."""
    if path == "~":
        return "C builtins (socket send, isinstance ...)"
    if match := re.search(r"site-packages/([A-Za-z0-9_]+)", path):
        return match.group(1)
    if "/rag_judge/" in path:
        return "rag_judge"
    if match := re.search(r"/lib/python3\.\d+/([A-Za-z0-9_]+)", path):
        return f"stdlib {match.group(1)}"
    return "other"


BASE_RUNNERS: dict[str, tuple[str, Runner]] = {
    "bare_sleep": ("Semaphore + asyncio.sleep, in process (event-loop ceiling)", run_bare_sleep),
    "ours_scripted": ("ModelClient(ScriptedBackend sleeping), in process", run_ours_scripted),
    "raw": ("raw asyncio sockets to the server (server ceiling)", run_raw),
    "bare_openai": ("bare openai.AsyncOpenAI + Semaphore", run_bare_openai),
    "ours_openai": ("ModelClient(OpenAIChat), no cache", run_ours_openai),
    "bare_aiohttp": ("bare aiohttp.ClientSession + Semaphore", run_bare_aiohttp),
    "ours_http": ("ModelClient(HTTPChat: openai-compatible/), no cache", run_ours_http),
    "bare_litellm": ("bare litellm.acompletion + Semaphore", run_bare_litellm),
    "ours_litellm": ("ModelClient(LiteLLMChat), no cache", run_ours_litellm),
}
OTHER_CLIENTS: dict[str, tuple[str, str, Runner]] = {
    "bare_pyreqwest": ("pyreqwest", "bare pyreqwest Client + Semaphore", run_bare_pyreqwest),
    "bare_curl_cffi": ("curl_cffi", "bare curl_cffi AsyncSession + Semaphore", run_bare_curl_cffi),
}
"""Other HTTP clients, run when importable (module, label, runner)."""
BASE_RUNNERS |= {
    name: (label, runner)
    for name, (module, label, runner) in OTHER_CLIENTS.items()
    if importlib.util.find_spec(module) is not None
}
UVLOOP_TOO = ("bare_sleep", "ours_scripted", "raw", "bare_aiohttp", "ours_http")
"""Configurations also run on uvloop when it is installed (to see whether it would pay)."""
HAVE_UVLOOP = importlib.util.find_spec("uvloop") is not None
RUNNERS: dict[str, tuple[str, Runner, str]] = {
    name: (label, runner, "asyncio") for name, (label, runner) in BASE_RUNNERS.items()
} | {
    f"{name}_uvloop": (BASE_RUNNERS[name][0] + ", on uvloop", BASE_RUNNERS[name][1], "uvloop")
    for name in (UVLOOP_TOO if HAVE_UVLOOP else ())
}
PRODUCT = "ours_http"
"""What ``rag_judge`` runs for ``openai-compatible/`` models: the goal is judged on it."""


def run_on(loop: str, coro: Coroutine[Any, Any, None]) -> None:
    """Run ``coro`` on the named event loop."""
    factory = None
    if loop == "uvloop":
        import uvloop

        factory = uvloop.new_event_loop
    with asyncio.Runner(loop_factory=factory) as runner:
        runner.run(coro)


PAIRS = (
    ("ours_scripted", "bare_sleep"),
    ("ours_scripted_uvloop", "bare_sleep_uvloop"),
    ("ours_http_uvloop", "bare_aiohttp_uvloop"),
    ("ours_http_uvloop", "ours_http"),
    ("ours_openai", "bare_openai"),
    ("ours_http", "bare_aiohttp"),
    ("ours_http", "ours_openai"),
    ("ours_litellm", "bare_litellm"),
)


def summarise(runs: list[dict[str, float]], calls: int, ideal: float) -> dict[str, Any]:
    wall = statistics.median(r["wall_s"] for r in runs)
    per_call = {k: 1000 * statistics.median(r[k] for r in runs) / calls for k in runs[0]}
    return {
        "runs": [{k: round(v, 4) for k, v in r.items()} for r in runs],
        "wall_s_median": round(wall, 3),
        "wall_s_min": round(min(r["wall_s"] for r in runs), 3),
        "calls_per_s": round(calls / wall, 1),
        "pct_of_ideal": round(100 * ideal / wall, 1),
        "pct_of_ideal_each_run": [round(100 * ideal / r["wall_s"], 1) for r in runs],
        "client_cpu_ms_per_call": round(per_call["client_cpu_s"], 3),
        "server_cpu_ms_per_call": round(per_call["server_cpu_s"], 3),
        "first_call_after_ms": round(
            1000 * statistics.median(r["first_call_after_s"] for r in runs), 1
        ),
    }


def compare(results: dict[str, Any], calls: int) -> dict[str, Any]:
    """Ours against its bare counterpart: extra wall and CPU per call, relative throughput."""
    out = {}
    for ours, bare in PAIRS:
        if ours in results and bare in results:
            a, b = results[ours], results[bare]
            out[f"{ours} vs {bare}"] = {
                "wall_ms_per_call": round(
                    1000 * (a["wall_s_median"] - b["wall_s_median"]) / calls, 3
                ),
                "client_cpu_ms_per_call": round(
                    a["client_cpu_ms_per_call"] - b["client_cpu_ms_per_call"], 3
                ),
                "pct_of_bare_throughput": round(100 * a["calls_per_s"] / b["calls_per_s"], 1),
            }
    return out


def json_codecs(base_url: str, number: int = 5000, repeats: int = 5) -> dict[str, Any]:
    """Microseconds to encode a chat request and decode the server's real reply, per codec
    the openai-compatible backend could use (interleaved, median of ``repeats``)."""
    body = {"model": "fake-model", "messages": messages(7), "temperature": 0.0}
    post = urllib.request.Request(
        f"{base_url}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(post) as response:
        reply = response.read()
    codecs: dict[str, tuple[Callable[[Any], bytes], Callable[[bytes], Any]]] = {
        "stdlib json": (http_backend._stdlib_dumps, json.loads)
    }
    try:
        import orjson

        codecs["orjson"] = (orjson.dumps, orjson.loads)
    except ImportError:
        pass
    times: dict[str, dict[str, list[float]]] = {c: {"encode": [], "decode": []} for c in codecs}
    for _ in range(repeats):
        for name, (dumps, loads) in codecs.items():
            encode, decode = partial(dumps, body), partial(loads, reply)
            times[name]["encode"].append(timeit.timeit(encode, number=number))
            times[name]["decode"].append(timeit.timeit(decode, number=number))
    out: dict[str, Any] = {
        name: {f"{op}_us": round(1e6 * statistics.median(t) / number, 2) for op, t in ops.items()}
        for name, ops in times.items()
    }
    out["request_bytes"], out["reply_bytes"] = len(json.dumps(body)), len(reply)
    out["used_by_backend"] = "stdlib json" if http_backend._loads is json.loads else "orjson"
    return out


def markdown(report: dict[str, Any]) -> str:
    p, m = report["parameters"], report["machine"]
    lines = [
        "# Backend overhead: ModelClient over the OpenAI protocol, SDK and openai-compatible",
        "",
        f"{p['calls']} chat calls, concurrency {p['concurrency']}, {p['latency_s'] * 1000:g} ms "
        f"per call (fake server in its own process); ideal wall {p['ideal_s']:.3f} s; median of "
        f"{p['repeats']} interleaved runs. Goal: ours >= {GOAL:.0%} of ideal. Load average "
        f"(1/5/15 min) {m['load_average_at_start']} at the start, {m['load_average_at_end']} "
        "at the end, on 2 cores.",
        "",
        "| configuration | wall s (median) | wall s (min) | calls/s | % of ideal (runs) "
        "| client CPU ms/call | server CPU ms/call | first call after ms |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
        f"| ideal (calls x latency / concurrency) | {p['ideal_s']:.3f} | {p['ideal_s']:.3f} "
        f"| {p['calls'] / p['ideal_s']:.0f} | 100.0 | | | |",
    ]
    for name, r in report["results"].items():
        lines.append(
            f"| {RUNNERS[name][0]} | {r['wall_s_median']:.3f} | {r['wall_s_min']:.3f} "
            f"| {r['calls_per_s']:.0f} | {r['pct_of_ideal']:.1f}{_spread(r)} "
            f"| {r['client_cpu_ms_per_call']:.3f} | {r['server_cpu_ms_per_call']:.3f} "
            f"| {r['first_call_after_ms']:.1f} |"
        )
    lines += ["", "## Our wrapper against the bare client (and HTTPChat against OpenAIChat)", ""]
    lines += [
        f"* {name}: {r['wall_ms_per_call']:+.3f} ms wall and {r['client_cpu_ms_per_call']:+.3f} ms "
        f"client CPU per call; {r['pct_of_bare_throughput']:.1f}% of the second's throughput"
        for name, r in report["overhead"].items()
    ]
    lines += ["", "## Verdict", "", report["verdict"], ""]
    codecs = report["json_codecs"]
    lines += [
        "## JSON codecs (openai-compatible backend)",
        "",
        f"A {codecs['request_bytes']}-byte chat request and the server's {codecs['reply_bytes']}"
        f"-byte reply; the backend uses {codecs['used_by_backend']}.",
        "",
        *(
            f"* {name}: encode {c['encode_us']:.2f} us, decode {c['decode_us']:.2f} us"
            for name, c in codecs.items()
            if isinstance(c, dict)
        ),
        "",
    ]
    for name, prof in report["profiles"].items():
        lines += [f"## Profile of {name} ({prof['calls']} calls)", "", "Internal time by library:"]
        lines += ["", *(f"* {k}: {v:.1%}" for k, v in prof["share_of_time_by_library"].items())]
        lines += ["", "```", prof["top_functions"], "```", ""]
    lines += ["## Machine", "", *(f"* {k}: {v}" for k, v in m.items()), ""]
    return "\n".join(lines)


def _spread(result: dict[str, Any]) -> str:
    each = result.get("pct_of_ideal_each_run") or []
    return f" ({min(each):.1f}–{max(each):.1f})" if len(each) > 1 else ""


def verdict(results: dict[str, Any], ideal_rate: float) -> str:
    """The goal judged on the product's path, with whatever ceilings were measured."""
    if PRODUCT not in results:
        return f"{PRODUCT} was not run: no verdict."
    http = results[PRODUCT]
    each = http["pct_of_ideal_each_run"]
    text = (
        f"ModelClient(HTTPChat), the openai-compatible backend, reaches {http['pct_of_ideal']:.1f}%"
        f" of ideal (median of {len(each)} runs; {min(each):.1f}–{max(each):.1f}%) at "
        f"{http['client_cpu_ms_per_call']:.2f} ms client CPU per call."
    )
    if {"ours_openai", "bare_openai"} <= results.keys():
        sdk, bare = results["ours_openai"], results["bare_openai"]
        text += (
            f" ModelClient(OpenAIChat) {sdk['pct_of_ideal']:.1f}% at "
            f"{sdk['client_cpu_ms_per_call']:.2f} ms (bare SDK {bare['pct_of_ideal']:.1f}%)."
        )
    ceilings = [
        f"{label} {results[name]['pct_of_ideal']:.1f}% "
        f"({results[name]['client_cpu_ms_per_call']:.2f} ms/call)"
        for name, label in (
            ("ours_scripted", "the wrapper alone over a sleeping in-process backend"),
            ("bare_aiohttp", "bare aiohttp"),
            ("bare_pyreqwest", "bare pyreqwest"),
            ("bare_curl_cffi", "bare curl_cffi"),
            ("raw", "raw sockets"),
        )
        if name in results
    ]
    if ceilings:
        text += " Ceilings: " + ", ".join(ceilings) + "."
    if "ours_http_uvloop" in results:
        uv = results["ours_http_uvloop"]
        text += (
            f" On uvloop the same path reaches {uv['pct_of_ideal']:.1f}% at "
            f"{uv['client_cpu_ms_per_call']:.2f} ms/call."
        )
    if http["pct_of_ideal"] >= 100 * GOAL:
        return text + f" Goal of {GOAL:.0%} met by the openai-compatible backend."
    busy = http["client_cpu_ms_per_call"] / 1000 * ideal_rate
    return text + (
        f" Goal missed. One event loop serves all calls in flight, so each reply also waits "
        f"for the client CPU of the replies ahead of it: at the ideal {ideal_rate:.0f} calls/s "
        f"this path keeps the loop {busy:.0%} busy, and more so when other processes compete "
        f"for the 2 cores (load average above)."
    )


def main(argv: list[str] | None = None) -> None:
    global LATENCY
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=LATENCY)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--profile-calls", type=int, default=500)
    parser.add_argument("--no-litellm", action="store_true")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "backend_overhead.json")
    parser.add_argument(
        "--configs", default=None, help="comma-separated configurations (default: all)"
    )
    args = parser.parse_args(argv)
    LATENCY = args.latency
    names = [n for n in RUNNERS if not (args.no_litellm and "litellm" in n)]
    if args.configs:
        wanted = [n.strip() for n in args.configs.split(",") if n.strip()]
        unknown = [n for n in wanted if n not in RUNNERS]
        if unknown:
            parser.error(f"unknown configurations {unknown}; have {', '.join(RUNNERS)}")
        names = wanted
    ideal = args.calls * args.latency / args.concurrency
    machine = machine_info(
        "openai", "litellm", "aiohttp", "orjson", "uvloop", "pyreqwest", "curl_cffi"
    )
    server, base_url = start_server(args.latency)
    try:
        for name in names:  # warm-up: imports, lazy SDK setup
            _, runner, loop = RUNNERS[name]
            run_on(loop, runner(base_url, 2 * args.concurrency, args.concurrency))
        # The SDKs' import-time objects (litellm's especially) would make every full garbage
        # collection during the runs slow, and more so for whoever allocates more: freeze them.
        gc.collect()
        gc.freeze()
        runs: dict[str, list[dict[str, float]]] = {n: [] for n in names}
        for repeat in range(args.repeats):  # interleaved: background load hits all alike
            for name in names:
                run = measure(name, base_url, args.calls, args.concurrency, server.pid)
                runs[name].append(run)
                print(f"[{repeat + 1}/{args.repeats}] {name:14s} {run['wall_s']:.3f} s", flush=True)
        results = {n: summarise(runs[n], args.calls, ideal) for n in names}
        report: dict[str, Any] = {
            "parameters": vars(args)
            | {"out": str(args.out), "latency_s": args.latency}
            | {"ideal_s": ideal, "goal_pct_of_ideal": 100 * GOAL, "gc_frozen_after_warmup": True},
            "machine": machine | {"load_average_at_end": [round(x, 2) for x in os.getloadavg()]},
            "results": results,
            "overhead": compare(results, args.calls),
            "verdict": verdict(results, args.concurrency / args.latency),
            "json_codecs": json_codecs(base_url),
            "profiles": {},
        }
        for name in (PRODUCT, "ours_openai"):
            if name not in results:
                continue
            if name == PRODUCT or results[name]["pct_of_ideal"] < 100 * GOAL:
                report["profiles"][name] = profile(
                    name, base_url, args.profile_calls, args.concurrency
                )
    finally:
        server.terminate()
        server.wait(timeout=10)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    args.out.with_suffix(".md").write_text(markdown(report))
    print(markdown(report))


if __name__ == "__main__":
    main()
