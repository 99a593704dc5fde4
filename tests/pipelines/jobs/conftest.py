"""Fixtures shared by the jobs tests: the remote sources' HTTP server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.pipelines.jobs.http_server import Server


@pytest.fixture
def server() -> Iterator[Server]:
    served = Server()
    served.thread.start()
    yield served
    served.stopping.set()
    served.httpd.shutdown()
    served.httpd.server_close()
