"""`rag-judge serve`'s pieces without starting a model: its arguments and the readiness wait."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rag_judge.backends.llama_server import server_arguments, wait_until_serving


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
    from click.testing import CliRunner

    from rag_judge.cli import main

    run = CliRunner().invoke(main, ["serve", "--model", "/no/such.gguf"])
    assert run.exit_code == 2
    assert "does not exist" in run.output
