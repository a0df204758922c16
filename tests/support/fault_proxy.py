"""A proxy in front of a real server that injects the failures real APIs produce: 429 with
Retry-After, 500, and a 200 whose JSON body is cut off. Deterministic: every third distinct
request body fails once, the kinds in turn; its retry (same body) passes through.

A request byte for byte the same as one the server already answered with a 200 in this test
session gets that answer again instead of the model computing it anew: the three API backends
send the same bodies, and the real model's reply to the same bytes adds no coverage (only
minutes of CPU). A request that differs in any byte reaches the server.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

FAULTS = ("429", "500", "truncated")


Replies = dict[tuple[str, str, bytes], tuple[int, bytes]]
"""The server's 200 answers by (upstream, path, request body)."""
REPLIES = pytest.StashKey[Replies]()


class FaultProxy:
    """Forwards ``/v1/...`` to ``upstream``; ``upstream_calls`` counts what was passed on
    (answered by the server now, or earlier in the session to the same bytes)."""

    def __init__(self, upstream: str, replies: Replies | None = None) -> None:
        self.upstream = upstream.rstrip("/")
        self.upstream_calls = 0
        self.replayed = 0
        """Of ``upstream_calls``, those answered from ``replies`` (the same bytes as before)."""
        self.injected: list[str] = []
        self.models: list[str] = []
        """The ``model`` of every request that reached the proxy, in order."""
        self._replies: Replies = {} if replies is None else replies
        self._seen: set[str] = set()
        self._faults = itertools.cycle(FAULTS)
        self._distinct = 0
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def fault_for(self, body: bytes) -> str | None:
        """The fault for this request, or None: a third of the distinct bodies, once each."""
        key = hashlib.sha256(body).hexdigest()
        with self._lock:
            if key in self._seen:
                return None
            self._seen.add(key)
            self._distinct += 1
            if self._distinct % 3:
                return None
            fault = next(self._faults)
            self.injected.append(fault)
            return fault

    def forward(self, path: str, body: bytes) -> tuple[int, bytes]:
        key = (self.upstream, path, body)
        with self._lock:
            self.upstream_calls += 1
            self.models.append(_model_of(body))
            known = self._replies.get(key)
        if known is not None:
            with self._lock:
                self.replayed += 1
            return known
        request = urllib.request.Request(
            self.upstream + path.removeprefix("/v1"),
            data=body,
            headers={"Content-Type": "application/json"},
        )
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        try:
            with opener.open(request, timeout=600) as reply:
                answer = reply.status, reply.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()
        if answer[0] == 200:
            with self._lock:
                self._replies[key] = answer
        return answer

    def __enter__(self) -> FaultProxy:
        self._thread.start()
        return self

    def __exit__(self, *_: Any) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def _model_of(body: bytes) -> str:
    """The ``model`` a JSON request names ("" for any other body)."""
    try:
        found = json.loads(body)
    except ValueError:
        return ""
    return str(found.get("model", "")) if isinstance(found, dict) else ""


def _handler(proxy: FaultProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            fault = proxy.fault_for(body)
            if fault == "429":
                error = b'{"error": {"message": "rate limited", "type": "rate_limit_error"}}'
                self._send(429, error, {"Retry-After": "1"})
            elif fault == "500":
                self._send(500, b'{"error": {"message": "overloaded", "type": "server_error"}}')
            elif fault == "truncated":
                self._send(200, b'{"id": "chatcmpl-x", "choices": [ {"mess')
            else:
                self._send(*proxy.forward(self.path, body))

        def _send(self, status: int, data: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet."""

    return Handler


@pytest.fixture
def fault_proxy_for(request: pytest.FixtureRequest) -> Iterator[Any]:
    """``fault_proxy_for(upstream)``: a started proxy, stopped after the test; the server's
    answers are kept for the whole session."""
    started: list[FaultProxy] = []
    replies = request.config.stash.setdefault(REPLIES, {})

    def start(upstream: str) -> FaultProxy:
        proxy = FaultProxy(upstream, replies).__enter__()
        started.append(proxy)
        return proxy

    yield start
    for proxy in started:
        proxy.__exit__()
