"""A server that answers every GET with an HTML error page, as a proxy or a web server in
front of a model does: for the tests that check the page is named by its title, not pasted."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager

HTML_404 = (
    b"<!DOCTYPE html>\n<html>\n<head>\n<title>404 Not Found</title>\n</head>\n<body>\n"
    b"<h1>Not Found</h1>\n<p>The requested URL was not found on this server.</p>\n"
    b"<hr>\n<address>nginx</address>\n</body>\n</html>\n"
)


class _Html404(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self._answer()

    def _answer(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(404)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(HTML_404)))
        self.end_headers()
        self.wfile.write(HTML_404)

    def log_message(self, *_: object) -> None:
        """Quiet."""


@contextmanager
def html_error_server() -> Iterator[str]:
    """The server's ``/v1`` base URL, for the block's length."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Html404)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
