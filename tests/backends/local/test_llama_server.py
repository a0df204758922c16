"""`rag-judge serve`'s pieces without starting a model: its arguments and the readiness wait."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from rag_judge.backends.local.llama_server import server_arguments, wait_until_serving
from rag_judge.cli import main


def test_arguments_pass_the_options_and_the_rest_unchanged() -> None:
    arguments = server_arguments(model="m.gguf", port=9000, n_threads=2, extra=["--verbose", "1"])
    assert arguments == [
        "--model", "m.gguf", "--host", "127.0.0.1", "--port", "9000", "--n_ctx", "8192",
        "--n_threads", "2", "--verbose", "1",
    ]  # fmt: skip


def test_a_server_that_exits_is_reported_not_waited_for() -> None:
    process = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    process.wait()
    with pytest.raises(RuntimeError, match="exited with status 3"):
        wait_until_serving("http://127.0.0.1:9/v1", process, timeout=30)


def test_serve_refuses_a_model_file_that_does_not_exist() -> None:
    run = CliRunner().invoke(main, ["serve", "--model", "/no/such.gguf"])
    assert run.exit_code == 2
    assert "does not exist" in run.output


def test_serve_refuses_a_file_that_is_not_gguf_before_loading(tmp_path: Path) -> None:
    not_gguf = tmp_path / "model.gguf"
    not_gguf.write_text("not a model")
    run = CliRunner().invoke(main, ["serve", "--model", str(not_gguf)])
    assert run.exit_code == 2
    assert "not a GGUF model file (it starts with b'not '" in run.output


def test_serve_refuses_a_busy_port_in_one_line_before_loading(tmp_path: Path) -> None:
    fake = tmp_path / "model.gguf"
    fake.write_bytes(b"GGUF" + bytes(16))  # passes the magic check: the port fails first
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        run = CliRunner().invoke(main, ["serve", "--model", str(fake), "--port", str(port)])
    assert run.exit_code == 2
    assert f"cannot serve on 127.0.0.1:{port}" in run.output
    assert len(run.output.splitlines()) == 1
