"""A real HTTP server that speaks enough of the OpenAI API to test backends over the wire.

It serves ``POST /v1/chat/completions`` and ``POST /v1/embeddings`` on 127.0.0.1 (a free
port) from daemon threads, counts and records every call, and plays a fault script: a queue
of behaviours for the next calls (``"429"``, ``"500"``, ``"slow"``, ``"malformed"``,
``"truncated"``, ``"schema_violation"``, ``"ok"``, or any HTTP status as digits; ``"401"``
echoes the API key back in its message, as real APIs do, to test redaction).
``settle()`` waits until every request that reached its port has been recorded, so that a test
reads the counters only after requests a client cancelled or timed out have landed.

Run it standalone (used by the benchmark, so the server does not share the client's GIL)::

    python tests/support/fake_openai_server.py --latency 0.05  # prints "PORT <n>", serves on
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import math
import select
import socket
import struct
import sys
import threading
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

Body = dict[str, Any]
Responder = Callable[[Body], str]
TopLogprobs = Callable[[Body], list[tuple[str, float]]]

TRUNCATED = '{"verdict": "yes", "reason": "the passage sa'
VIOLATION = '{"unexpected_field": 1}'
EMBED_DIM = 8


def echo(body: Body) -> str:
    """Default reply: ``echo: <last message content>``."""
    messages = body.get("messages") or [{"content": ""}]
    return f"echo: {messages[-1].get('content', '')}"


def default_top_logprobs(body: Body) -> list[tuple[str, float]]:
    """Default first-token alternatives: mostly "Yes", some "No" and noise."""
    return [("Yes", math.log(0.6)), ("No", math.log(0.2)), (" yes", math.log(0.1)), ("Maybe", -5)]


def fake_vector(text: str, dim: int = EMBED_DIM) -> list[float]:
    """A deterministic vector for a text (exactly representable in float32)."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return [(digest[i] - 128) / 128.0 for i in range(dim)]


LLAMA_CPP_PYTHON_JSON_SCHEMA_500 = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
    "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', 'ctx': "
    "{'expected': \"'text' or 'json_object'\"}}\n\n  File \".../llama_cpp/server/app.py\", "
    "line 376, in create_chat_completion\n    POST /v1/chat/completions"
)
"""What llama-cpp-python 0.3.36's server answers to ``response_format: json_schema``, with HTTP
500 and type ``internal_server_error`` (recorded from the real server, ``rag-judge serve``, on
2026-12-02; the path in the traceback line shortened)."""

FAILURE_SHAPES: dict[str, tuple[int, str, str]] = {
    "llama_cpp_python_json_schema": (
        500,
        LLAMA_CPP_PYTHON_JSON_SCHEMA_500,
        "internal_server_error",
    ),
    "rejects_json_schema_400": (
        400,
        "Invalid value for 'response_format.type': 'json_schema' is not supported",
        "invalid_request_error",
    ),
}
"""Named failure shapes of real servers: behaviour name -> (status, error message, type)."""

FAKE_THINKING = "Let me think. The passage says so, so the answer is clear."
"""What a thinking reply thinks (its words are its reported reasoning tokens)."""
THINKING = ("reasoning_content", "think_tags")
"""Behaviours whose replies carry the model's thinking besides the answer."""


class FakeOpenAIServer:
    """The server plus its knobs; ``calls``, ``total_calls`` and ``requests`` are the record."""

    def __init__(
        self,
        *,
        latency: float = 0.0,
        slow_seconds: float = 1.5,
        respond: Responder = echo,
        top_logprobs: TopLogprobs = default_top_logprobs,
        port: int = 0,
    ) -> None:
        self.latency = latency
        self.slow_seconds = slow_seconds
        self.respond = respond
        self.top_logprobs = top_logprobs
        self.fail_when: Callable[[Body], str | None] | None = None
        """Per-request behaviour override (e.g. fail permanently on some prompts)."""
        self.default_behaviour = "ok"
        """What to do when the fault queue is empty (e.g. ``"slow"`` for "always slow")."""
        self.calls: Counter[str] = Counter()
        self.requests: list[tuple[str, Body, dict[str, str]]] = []
        self._faults: deque[str] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = _Server(("127.0.0.1", port), _handler_for(self), self._lock)
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The bound port."""
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """What clients take as ``base_url``/``api_base``."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def total_calls(self) -> int:
        """Calls over all paths."""
        with self._lock:
            return sum(self.calls.values())

    def script(self, *behaviours: str) -> None:
        """Queue behaviours for the next calls, in order."""
        with self._lock:
            self._faults.extend(behaviours)

    def bodies(self, path: str = "/v1/chat/completions") -> list[Body]:
        """Recorded request bodies for one path."""
        with self._lock:
            return [body for p, body, _ in self.requests if p == path]

    def reset(self) -> None:
        """Forget calls, requests, faults and overrides."""
        with self._lock:
            self.calls.clear()
            self.requests.clear()
            self._faults.clear()
        self.fail_when = None
        self.default_behaviour = "ok"

    def settle(self, timeout: float = 60.0) -> None:
        """Wait until every request a client has sent here is recorded in the counters.

        A request a client gave up on (cancelled, timed out) may still sit in the listen
        backlog or in a socket when the client returns. A marker connection, accepted only
        after every connection queued before it, then a wait until no connection holds a
        request not yet recorded (none being read, none with bytes waiting). Requests are
        recorded on arrival: a "slow" one that is still sleeping counts as recorded.
        ``timeout`` only guards against a hang (TimeoutError).
        """
        self._httpd.settle(timeout)

    def start(self) -> FakeOpenAIServer:
        """Serve from a daemon thread."""
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and wake any handler that is sleeping ("slow", latency)."""
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _take(self, path: str, body: Body, headers: dict[str, str]) -> str:
        with self._lock:
            self.calls[path] += 1
            self.requests.append((path, body, headers))
            self._httpd.recorded()
            scripted = self._faults.popleft() if self._faults else None
        if scripted is not None:
            return scripted
        override = self.fail_when(body) if self.fail_when is not None else None
        return override or self.default_behaviour

    def _wait(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)

    def handle(
        self, path: str, body: Body, headers: dict[str, str]
    ) -> tuple[int, dict[str, str], bytes]:
        """(status, headers, body bytes) for one request."""
        if path not in ("/v1/chat/completions", "/v1/embeddings"):
            return _error(404, f"no route {path}")
        behaviour = self._take(path, body, headers)
        self._wait(self.latency)
        if behaviour == "slow":
            self._wait(self.slow_seconds)
        elif behaviour == "429":
            status, extra, data = _error(429, "rate limited")
            return status, extra | {"Retry-After": "0.1"}, data
        elif behaviour == "malformed":
            return 200, {}, b'{"id": "chatcmpl-x", "choices": [ {"mess'
        elif behaviour == "401":  # like real APIs, echo the key back: backends must redact it
            key = headers.get("authorization", "").removeprefix("Bearer ")
            return _error(401, f"Incorrect API key provided: {key}")
        elif behaviour in FAILURE_SHAPES:
            status, message, kind = FAILURE_SHAPES[behaviour]
            error = {"message": message, "type": kind, "param": None, "code": None}
            return status, {}, _json({"error": error})
        elif behaviour.isdigit():
            return _error(int(behaviour), f"scripted status {behaviour}")
        if path == "/v1/embeddings":
            return 200, {}, _json(self._embeddings(body))
        return 200, {}, _json(self._chat(body, behaviour))

    def _chat(self, body: Body, behaviour: str) -> Body:
        finish = "stop"
        if behaviour == "truncated":
            content, finish = TRUNCATED, "length"
        elif behaviour == "schema_violation":
            content = VIOLATION
        else:
            content = self.respond(body)
        message: Body = {"role": "assistant", "content": content}
        thinking = FAKE_THINKING
        details: Body = {}
        if behaviour == "reasoning_content":  # DeepSeek's API, vLLM's --reasoning-parser
            message["reasoning_content"] = thinking
            details = {"completion_tokens_details": {"reasoning_tokens": len(thinking.split())}}
        elif behaviour == "think_tags":  # Qwen3/DeepSeek-R1 on a server that does not split
            message["content"] = f"<think>\n{thinking}\n</think>\n\n{content}"
        choice: Body = {
            "index": 0,
            "message": message,
            "finish_reason": finish,
            "logprobs": None,
        }
        if body.get("logprobs") and behaviour != "no_logprobs":  # a server that ignores them
            top = self.top_logprobs(body)[: int(body.get("top_logprobs") or 0) or None]
            first = top[0] if top else (content[:1], 0.0)
            choice["logprobs"] = {
                "content": [
                    {
                        "token": first[0],
                        "logprob": first[1],
                        "bytes": None,
                        "top_logprobs": [
                            {"token": t, "logprob": lp, "bytes": None} for t, lp in top
                        ],
                    }
                ]
            }
        prompt = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
        completion = len(content.split()) + (len(thinking.split()) if behaviour in THINKING else 0)
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": body.get("model", "fake-model"),
            "choices": [choice],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
                **details,
            },
        }

    def _embeddings(self, body: Body) -> Body:
        raw = body.get("input", [])
        texts = [raw] if isinstance(raw, str) else list(raw)
        as_base64 = body.get("encoding_format") == "base64"
        data = []
        for index, text in enumerate(texts):
            vector = fake_vector(str(text))
            encoded: Any = vector
            if as_base64:
                encoded = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
            data.append({"object": "embedding", "index": index, "embedding": encoded})
        tokens = sum(len(str(t).split()) for t in texts)
        return {
            "object": "list",
            "data": data[::-1],  # out of order on purpose: clients must sort by index
            "model": body.get("model", "fake-embedder"),
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }


class _Server(ThreadingHTTPServer):
    """Tracks each open connection's state for ``settle``: ``idle`` (any next request can only
    be in its socket: none was read, or the reply to the last is being sent), ``reading`` (a
    request arrived, not yet recorded) or ``answering`` (recorded, its reply not yet sent)."""

    daemon_threads = True  # never joined on close: a stuck handler cannot hang the suite
    request_queue_size = 256  # listen backlog: bursts of 32+ new connections are not refused

    def __init__(
        self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], lock: threading.Lock
    ) -> None:
        super().__init__(address, handler)
        self.changed = threading.Condition(lock)
        self.states: dict[socket.socket, str] = {}
        self.markers: set[tuple[str, int]] = set()
        self.current = threading.local()
        """The connection the calling handler thread serves."""

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.changed:
            marker = client_address in self.markers
            if marker:
                self.markers.discard(client_address)
            else:
                self.states[request] = "idle"
            self.changed.notify_all()
        if marker:  # every connection queued before it has been accepted: close it, no thread
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self.changed:
            self.states.pop(request, None)
            self.changed.notify_all()
        super().shutdown_request(request)

    def claim(self, connection: socket.socket, rfile: Any) -> bool:
        """Whether a request (or its start) waits in ``rfile`` or the socket, without blocking;
        marks the connection ``reading`` if so, ``idle`` if not, in one step under the lock."""
        with self.changed:
            timeout = connection.gettimeout()
            connection.settimeout(0)
            try:
                pending = bool(rfile.peek(1))
            except OSError:  # reset by the client
                pending = False
            finally:
                connection.settimeout(timeout)
            self.states[connection] = "reading" if pending else "idle"
            self.changed.notify_all()
            return pending

    def replying(self, connection: socket.socket) -> None:
        """A reply is about to be sent: the client may send its next request from now on."""
        with self.changed:
            if connection in self.states:
                self.states[connection] = "idle"
                self.changed.notify_all()

    def recorded(self) -> None:
        """The calling handler's request is in the counters (the caller holds the lock)."""
        connection = getattr(self.current, "connection", None)
        if connection in self.states:
            self.states[connection] = "answering"
            self.changed.notify_all()

    def settle(self, timeout: float) -> None:
        """See :meth:`FakeOpenAIServer.settle`."""
        with socket.socket() as marker:
            marker.bind(("127.0.0.1", 0))
            address = marker.getsockname()
            with self.changed:
                self.markers.add(address)
            marker.connect(self.server_address)
            with self.changed:
                accepted = self.changed.wait_for(lambda: address not in self.markers, timeout)
                settled = accepted and self.changed.wait_for(self._quiet, timeout)
        if not settled:
            raise TimeoutError(f"requests still unrecorded after {timeout} s: {self.states}")

    def _quiet(self) -> bool:
        if "reading" in self.states.values():
            return False
        idle = [c for c, state in self.states.items() if state == "idle"]
        return not any(_readable(c, 0) for c in idle)


def _readable(connection: socket.socket, seconds: float) -> bool:
    """Whether the socket has bytes (or the client's close) to read within ``seconds``
    (``poll``: no limit on descriptor numbers, unlike ``select``)."""
    poller = select.poll()
    poller.register(connection, select.POLLIN)
    return bool(poller.poll(seconds * 1000))


def _json(payload: Body) -> bytes:
    return json.dumps(payload).encode("utf-8")


def _error(status: int, message: str) -> tuple[int, dict[str, str], bytes]:
    kind = {429: "rate_limit_error", 400: "invalid_request_error"}.get(status, "server_error")
    return status, {}, _json({"error": {"message": message, "type": kind, "code": None}})


def _handler_for(server: FakeOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as real APIs do
        disable_nagle_algorithm = True  # else headers then body wait on the delayed ACK (40 ms)
        timeout = 30  # an idle or stuck connection never pins a thread for long

        def handle(self) -> None:
            """Serve requests until the client closes, waiting for each outside the lock and
            claiming it under the lock (what ``settle`` relies on; it would miss a request a
            client pipelined behind another, which no client here does)."""
            httpd = server._httpd
            httpd.current.connection = self.connection
            self.close_connection = False
            while not self.close_connection:
                if not httpd.claim(self.connection, self.rfile):
                    ready = _readable(self.connection, self.timeout)
                    if not ready or not httpd.claim(self.connection, self.rfile):
                        return  # idle too long, or closed by the client
                self.handle_one_request()

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if self.path not in ("/v1/chat/completions", "/v1/embeddings"):
                self._send(*_error(404, f"no route {self.path}"))  # as real servers: route first
                return
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                self._send(*_error(400, "request body is not JSON"))
                return
            headers = {k.lower(): v for k, v in self.headers.items()}
            self._send(*server.handle(self.path, body, headers))

        def _send(self, status: int, extra: dict[str, str], data: bytes) -> None:
            server._httpd.replying(self.connection)
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in extra.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # client gave up (timeout)
                self.close_connection = True

        def log_message(self, format: str, *args: Any) -> None:
            """Silence per-request logging."""

    return Handler


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAIServer]:
    """A started fake OpenAI server, stopped after the test."""
    server = FakeOpenAIServer().start()
    try:
        yield server
    finally:
        server.stop()


def judge_reply(body: Body) -> str:
    """Replies like a judge model, routed by what the system prompt asks for: each text is one
    claim, every claim supported by passage 1, three reverse questions (benchmarks)."""
    system = str(body["messages"][0]["content"])
    if '"verdicts"' in system:
        claims = [
            line for line in str(body["messages"][-1]["content"]).splitlines() if line[:1].isdigit()
        ]
        verdicts = [
            {"claim": i, "reason": "r", "verdict": "supported", "passages": [1]}
            for i in range(1, max(1, len(claims)) + 1)
        ]
        return json.dumps({"verdicts": verdicts})
    if '"questions"' in system:
        return json.dumps({"questions": ["What is it?"] * 3, "noncommittal": False})
    return json.dumps({"claims": [str(body["messages"][-1]["content"]).split("Text:")[-1].strip()]})


def main(argv: Iterable[str] | None = None) -> None:
    """Serve until killed; print ``PORT <n>`` first so a parent process can connect."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--judge", action="store_true", help="reply like a judge (judge_reply)")
    args = parser.parse_args(list(argv) if argv is not None else None)
    server = FakeOpenAIServer(
        latency=args.latency, port=args.port, respond=judge_reply if args.judge else echo
    )
    print(f"PORT {server.port}", flush=True)
    try:
        server._httpd.serve_forever(poll_interval=0.05)
    except KeyboardInterrupt:
        pass
    finally:
        server._httpd.server_close()
        sys.stdout.flush()


if __name__ == "__main__":
    main()
