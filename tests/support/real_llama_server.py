"""A real OpenAI-compatible server for the tests: llama-cpp-python's own (``rag-judge
serve``), on 127.0.0.1 with the embedded GGUF, started once per test session."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from rag_judge.backends.local.llama_server import wait_until_serving

STARTUP_SECONDS = 120.0
THREADS = len(os.sched_getaffinity(0))
"""Decode threads, as the in-process model uses (the server's own default, half the cores,
decodes ~1.4x slower here; prompts already use every core)."""


@dataclass(frozen=True)
class RealServer:
    """A running server: where to reach it and what it logs."""

    base_url: str
    log: str


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def serving(log_dir: Path) -> Iterator[RealServer]:
    """llama-cpp-python's server with the embedded model, on a free port, until the block ends."""
    port = _free_port()
    log = log_dir / "server.log"
    command = [sys.executable, "-m", "rag_judge.backends.local.llama_server", "--port", str(port)]
    command += ["--n_threads", str(THREADS)]
    env = os.environ | {"NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}
    with log.open("wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, env=env)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        try:
            wait_until_serving(base_url, process, STARTUP_SECONDS)
        except RuntimeError as error:
            raise RuntimeError(f"{error}; its log:\n{log.read_text()}") from None
        yield RealServer(base_url, str(log))
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealServer]:
    """The embedded model behind llama-cpp-python's server (the dev extra installs it: a
    server that cannot start fails the tests that use it, never skips them)."""
    with serving(tmp_path_factory.mktemp("llama_server")) as server:
        yield server


@pytest.fixture(scope="session")
def second_llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealServer]:
    """Another such server, for the tests that need two (a generator's and a judge's)."""
    with serving(tmp_path_factory.mktemp("second_llama_server")) as server:
        yield server
