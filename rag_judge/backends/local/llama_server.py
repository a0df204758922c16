"""The embedded model behind llama-cpp-python's own OpenAI-compatible server (``rag-judge
serve``): one loaded model that several processes, machines or other tools can share.

It is that package's server (``python -m llama_cpp.server``), run with what rag_judge knows
about loading the model here: the embedded GGUF by default (joined from its chunk packages
once), a context large enough for the judges' prompts, and, on CPUs with Intel AMX, the model
loaded without llama.cpp's extra weight buffers (their AMX path crashes in the first decode:
``llama_amx``). Needs ``pip install 'llama-cpp-python[server]'``.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Sequence

from rag_judge.backends.errors import BackendUnavailable
from rag_judge.backends.local.llama_amx import cpu_has_amx, extra_buffer_types
from rag_judge.core.errors import InputError

DEFAULT_N_CTX = 8192
"""The server's own default (2,048) is too small for the generative judges' batched prompts."""


def server_arguments(
    *,
    model: str | None = None,
    host: str = "127.0.0.1",
    port: int = 8000,
    n_ctx: int = DEFAULT_N_CTX,
    n_threads: int | None = None,
    extra: Sequence[str] = (),
) -> list[str]:
    """The ``llama_cpp.server`` command-line arguments (the embedded GGUF unless ``model``)."""
    if model is None:
        from rag_judge.backends.local.weights import default_model_path

        model = str(default_model_path())
    arguments = ["--model", model, "--host", host, "--port", str(port), "--n_ctx", str(n_ctx)]
    if n_threads is not None:
        arguments += ["--n_threads", str(n_threads)]
    return [*arguments, *extra]


GGUF_MAGIC = b"GGUF"
"""The first four bytes of every GGUF file."""


def check_gguf(path: str) -> None:
    """Refuse a model file that is not GGUF (llama.cpp would fail with a traceback)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(4)
    except OSError as error:
        raise InputError(f"cannot read the model file: {error.strerror}", source=path) from None
    if head != GGUF_MAGIC:
        raise InputError(
            f"not a GGUF model file (it starts with {head!r}, not {GGUF_MAGIC!r})",
            source=path,
            field="--model",
        )


def check_port_free(host: str, port: int) -> None:
    """Refuse a port something already listens on, before the model is loaded."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server will
        try:
            probe.bind((host, port))
        except OSError as error:
            raise InputError(
                f"cannot serve on {host}:{port}: {error.strerror} (another server on that port? "
                "choose one with --port)",
                field="--port",
            ) from None


def serve(arguments: Sequence[str]) -> None:
    """Run llama-cpp-python's server with these arguments until interrupted."""
    try:
        from llama_cpp.server.__main__ import main as server_main
    except ImportError as error:
        raise BackendUnavailable(
            "llama-cpp-python's server is not installed: pip install 'llama-cpp-python[server]'"
        ) from error
    sys.argv = ["llama_cpp.server", *arguments]
    with extra_buffer_types(enabled=not cpu_has_amx()):
        server_main()  # type: ignore[no-untyped-call]


def wait_until_serving(base_url: str, process: subprocess.Popen[bytes], timeout: float) -> None:
    """Return once ``base_url``'s ``/models`` answers 200; raise if the server exits first or
    ``timeout`` seconds pass (loading the model takes a few seconds, assembling it longer)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: no proxy
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with status {process.returncode}")
        try:
            with opener.open(f"{base_url.rstrip('/')}/models", timeout=5) as reply:
                if reply.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"the server did not answer within {timeout:g} s")
        time.sleep(0.5)


if __name__ == "__main__":
    serve(server_arguments(extra=sys.argv[1:]))
