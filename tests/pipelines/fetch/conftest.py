"""Fixtures shared by the fetch tests: the remote sources' HTTP server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.pipelines.fetch.http_server import Server, serving


@pytest.fixture
def server() -> Iterator[Server]:
    yield from serving()
