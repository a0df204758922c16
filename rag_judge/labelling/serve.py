"""The labelling server: uvicorn on 127.0.0.1 only, on a socket bound before it starts, so the
address (with its token) is known, and can be printed and opened, before the first request."""

from __future__ import annotations

import socket
from collections.abc import Callable

from starlette.applications import Starlette

from rag_judge.core.errors import InputError

HOST = "127.0.0.1"


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1 (``port`` 0: any free port).

    Raises:
        InputError: the port is taken or not ours to use.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind((HOST, port))
        sock.listen(64)
    except OSError as error:
        sock.close()
        raise InputError(
            f"cannot serve on {HOST}:{port}: {error.strerror or error}; give another --port "
            "(0: any free one)"
        ) from None
    return sock


def address(sock: socket.socket, token: str) -> str:
    """The page's address: the host, the bound port and the token."""
    return f"http://{HOST}:{sock.getsockname()[1]}/{token}/"


def serve(app: Starlette, sock: socket.socket, *, ready: Callable[[], None]) -> None:
    """Serve ``app`` on ``sock`` until Ctrl-C or SIGTERM (uvicorn stops gracefully and raises
    the signal again once stopped); ``ready`` is called once the server is about to accept."""
    import uvicorn

    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    server = uvicorn.Server(config)
    ready()
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
