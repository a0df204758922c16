"""A fake OpenAI Batch API (/v1/files, /v1/batches, file content) over FakeOpenAIServer's replies.

Chat completions are answered live as the fake OpenAI server answers them; a batch's lines are
answered the same way when it is created and handed out once it has been polled
``polls_before_done`` times. ``outcome`` plays the endings of OpenAI's documentation:
``completed``; ``expired`` (the 24 h window ran out: only the first half of the lines finished,
the rest are in the error file with ``batch_expired``); ``partly_failed`` (every third line
failed with a 500 and sits in the error file).
"""

from __future__ import annotations

import email.parser
import email.policy
import itertools
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from fake_openai_server import FakeOpenAIServer

Body = dict[str, Any]


class FakeBatchServer:
    """Batch endpoints plus live chat completions on one port; the record of what it got."""

    def __init__(self) -> None:
        self.chat = FakeOpenAIServer()  # used for its replies, never started
        self.outcome = "completed"
        self.polls_before_done = 1
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, Body] = {}
        self.submitted: list[list[Body]] = []
        """The lines of every batch created, in order."""
        self.live_calls = 0
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> FakeBatchServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def handle(self, method: str, path: str, raw: bytes, content_type: str) -> tuple[int, bytes]:
        if method == "POST" and path == "/v1/chat/completions":
            with self._lock:
                self.live_calls += 1
            status, _, data = self.chat.handle(path, json.loads(raw or b"{}"), {})
            return status, data
        if method == "POST" and path == "/v1/files":
            return 200, _json({"id": self._store(_file_part(raw, content_type)), "object": "file"})
        if method == "POST" and path == "/v1/batches":
            return 200, _json(self._create(json.loads(raw)))
        if method == "GET" and path.startswith("/v1/batches/"):
            return self._poll(path.rsplit("/", 1)[1])
        if method == "GET" and path.split("?")[0] == "/v1/batches":  # the listing, newest first
            listed = [self._view(batch_id) for batch_id in reversed(self.batches)]
            return 200, _json({"object": "list", "data": listed[:1], "has_more": len(listed) > 1})
        if method == "GET" and path.startswith("/v1/files/") and path.endswith("/content"):
            file_id = path.split("/")[3]
            return (200, self.files[file_id]) if file_id in self.files else (404, b"{}")
        return 404, _json({"error": {"message": f"no route {method} {path}"}})

    def _store(self, content: bytes) -> str:
        with self._lock:
            file_id = f"file-{next(self._ids)}"
            self.files[file_id] = content
        return file_id

    def _create(self, request: Body) -> Body:
        lines = [json.loads(line) for line in self.files[request["input_file_id"]].splitlines()]
        self.submitted.append(lines)
        outputs, errors = [], []
        for i, line in enumerate(lines):
            expired = self.outcome == "expired" and i >= len(lines) // 2
            failed = self.outcome == "partly_failed" and i % 3 == 2
            if expired or failed:
                code = "batch_expired" if expired else "server_error"
                errors.append(
                    {
                        "custom_id": line["custom_id"],
                        "response": None,
                        "error": {"code": code, "message": code},
                    }
                )
                continue
            status, _, data = self.chat.handle("/v1/chat/completions", line["body"], {})
            outputs.append(
                {
                    "custom_id": line["custom_id"],
                    "error": None,
                    "response": {"status_code": status, "body": json.loads(data)},
                }
            )
        with self._lock:
            batch_id = f"batch_{next(self._ids)}"
        output = self._store(_jsonl(outputs)) if outputs else None
        error = self._store(_jsonl(errors)) if errors else None
        final = "expired" if self.outcome == "expired" else "completed"
        self.batches[batch_id] = {
            "id": batch_id,
            "status": "validating",
            "polls": 0,
            "final": final,
            "output": output,
            "error": error,
            "counts": {"total": len(lines), "completed": len(outputs), "failed": len(errors)},
        }
        return self._view(batch_id)

    def _poll(self, batch_id: str) -> tuple[int, bytes]:
        batch = self.batches.get(batch_id)
        if batch is None:
            return 404, _json({"error": {"message": "no such batch"}})
        batch["polls"] += 1
        batch["status"] = (
            batch["final"] if batch["polls"] > self.polls_before_done else "in_progress"
        )
        return 200, _json(self._view(batch_id))

    def _view(self, batch_id: str) -> Body:
        batch = self.batches[batch_id]
        done = batch["status"] in ("completed", "expired")
        return {
            "id": batch_id,
            "object": "batch",
            "status": batch["status"],
            "output_file_id": batch["output"] if done else None,
            "error_file_id": batch["error"] if done else None,
            "request_counts": batch["counts"] if done else {"total": batch["counts"]["total"]},
        }


def _file_part(raw: bytes, content_type: str) -> bytes:
    """The ``file`` part of a multipart/form-data body."""
    head = f"Content-Type: {content_type}\r\n\r\n".encode()
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + raw)
    for part in message.iter_parts():  # type: ignore[attr-defined]
        if part.get_param("name", header="content-disposition") == "file":
            return bytes(part.get_payload(decode=True))
    raise ValueError("no file part")


def _jsonl(rows: list[Body]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def _json(payload: Body) -> bytes:
    return json.dumps(payload).encode()


def _handler(server: FakeBatchServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _serve(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            status, data = server.handle(
                method, self.path, raw, self.headers.get("Content-Type", "")
            )
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            self._serve("POST")

        def do_GET(self) -> None:
            self._serve("GET")

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet."""

    return Handler


@pytest.fixture
def fake_batch() -> Iterator[FakeBatchServer]:
    server = FakeBatchServer().start()
    try:
        yield server
    finally:
        server.stop()
