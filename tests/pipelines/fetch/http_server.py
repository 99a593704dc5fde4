"""A real HTTP server on 127.0.0.1 for the remote-source tests: routes by path, every request
logged (`serving` starts and stops one; the `server` fixtures of tests/pipelines/fetch and
tests/pipelines/jobs give one per test)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

Route = Callable[[BaseHTTPRequestHandler], None]


def reply(h: BaseHTTPRequestHandler, status: int, body: bytes = b"",
          headers: dict[str, str] | None = None) -> None:
    h.send_response(status)
    for name, value in (headers or {}).items():
        h.send_header(name, value)
    if status != 304:
        h.send_header("Content-Length", str(len(body)))
    h.end_headers()
    h.wfile.write(body)


class Server:
    """A ThreadingHTTPServer on 127.0.0.1 serving `routes` by path; it logs every request."""

    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.stopping = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                server.requests.append((self.path, dict(self.headers)))
                route = server.routes.get(self.path, lambda h: reply(h, 404, b"no such file"))
                try:
                    route(self)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up first (a timeout test)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def url(self, path: str, userinfo: str = "") -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{userinfo}{host}:{port}{path}"

    def seen(self, path: str) -> list[dict[str, str]]:
        """The headers of every request made for `path`, in order."""
        return [headers for p, headers in self.requests if p == path]

    def wait(self, seconds: float) -> None:
        """Sleep in a handler, but stop when the test ends."""
        self.stopping.wait(seconds)


def serving() -> Iterator[Server]:
    """A started server, stopped and closed when the generator resumes (a fixture's body)."""
    served = Server()
    served.thread.start()
    yield served
    served.stopping.set()
    served.httpd.shutdown()
    served.httpd.server_close()
