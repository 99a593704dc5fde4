"""Paged price APIs (Azure's Retail Prices API: each page ends with NextPageLink), served by a
real HTTP server on 127.0.0.1: the pages are joined into one JSON array, and a page that
cannot be fetched fails the whole source, never half a price list."""

from __future__ import annotations

import json

import pytest
import yaml

from pipelines.inputs.remote_sources import RemoteSourceError, load_remote_sources
from pipelines.settings import Settings
from tests.pipelines.fetch.http_server import reply
from tests.pipelines.fetch.test_remote_sources import cached_files, fetch, logged


@pytest.fixture
def settings(ledger_url, tmp_path) -> Settings:
    # A generous attempt timeout: on a loaded machine a 404 must not turn into a timeout and a
    # retry. The tests of timeouts set their own.
    return Settings(home=tmp_path / "home", database_url=ledger_url, offline=False,
                    remote_sources_path=tmp_path / "remote_sources.yaml",
                    fetch_timeout_seconds=10.0, fetch_retries=1, fetch_backoff_seconds=0.1)


def page(items: list[dict], next_path: str | None, server) -> bytes:
    return json.dumps({"BillingCurrency": "USD", "Items": items, "Count": len(items),
                       "NextPageLink": server.url(next_path) if next_path else None}).encode()


def declare_paged(settings, url: str, **extra) -> None:
    entry = {"name": "azure-gpu", "url": url, "local": True, "paging": "next_link",
             "file_name": "azure-prices.json", **extra}
    settings.remote_sources_path.write_text(yaml.safe_dump({"sources": [entry]}),
                                            encoding="utf-8")


def test_the_pages_are_followed_and_kept_as_one_array(settings, server):
    server.routes["/api/prices?$filter=gpu"] = lambda h: reply(
        h, 200, page([{"n": 1}], "/api/prices?page=2", server))
    server.routes["/api/prices?page=2"] = lambda h: reply(h, 200, page([{"n": 2}], None, server))
    declare_paged(settings, server.url("/api/prices?$filter=gpu"))
    [got] = fetch(settings).sources
    assert (got.outcome, got.attempts) == ("fetched", 2)
    pages = json.loads(got.path.read_bytes())
    assert [p["Items"][0]["n"] for p in pages] == [1, 2]
    assert got.path.name == "azure-prices.json" and got.size_bytes == got.path.stat().st_size


def test_a_page_that_fails_fails_the_source_and_nothing_is_kept(settings, server):
    server.routes["/p1"] = lambda h: reply(h, 200, page([{"n": 1}], "/p2", server))
    server.routes["/p2"] = lambda h: reply(h, 503, b"busy")
    declare_paged(settings, server.url("/p1"))
    [got] = fetch(settings).sources
    assert got.outcome == "failed" and "page 2" in got.error and "503" in got.error
    assert cached_files(settings) == []
    assert [row.outcome for row in logged(settings)] == ["failed"]


@pytest.mark.parametrize("routes,reason", [
    ({"/p1": "/p2", "/p2": "/p1"}, "links back"),
    ({"/p1": "/p2", "/p2": "/p3", "/p3": None}, "max_pages = 2"),
])
def test_a_loop_or_too_many_pages_fail_the_source(settings, server, routes, reason):
    for path, following in routes.items():
        server.routes[path] = (lambda nxt: lambda h: reply(h, 200, page([], nxt, server)))(
            following)
    declare_paged(settings, server.url("/p1"), max_pages=2)
    [got] = fetch(settings).sources
    assert got.outcome == "failed" and reason in got.error


def test_a_page_that_is_not_json_fails_the_source(settings, server):
    server.routes["/p1"] = lambda h: reply(h, 200, b"<html>maintenance</html>")
    declare_paged(settings, server.url("/p1"))
    [got] = fetch(settings).sources
    assert got.outcome == "failed" and "not JSON" in got.error


@pytest.mark.parametrize("extra,field", [({"paging": "cursor"}, "paging"),
                                         ({"max_pages": 0}, "max_pages"),
                                         ({"max_pages": "many"}, "max_pages")])
def test_a_bad_paging_declaration_names_its_field(tmp_path, extra, field):
    path = tmp_path / "remote.yaml"
    entry = {"name": "a", "url": "https://prices.example/api", "paging": "next_link", **extra}
    path.write_text(yaml.safe_dump({"sources": [entry]}), encoding="utf-8")
    with pytest.raises(RemoteSourceError) as error:
        load_remote_sources(path)
    assert error.value.field == f"sources[1].{field}"
