"""The market feed on gpuhunt's published catalogs, served as a user's network would serve
them: a loopback HTTP server laid out as gpuhunt's bucket ({base}/{provider}/version and
{base}/{provider}/{version}/catalog.zip, with Last-Modified), one that times out, and a host no
resolver knows (a machine offline)."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
import yaml
from gpuhunt._internal import catalog as gpuhunt_catalog

from pipelines.fetch import gpuhunt
from pipelines.fetch.remote import FetchReport, fetch_remote_sources
from pipelines.inputs.adapters.base import AdapterOptions
from pipelines.inputs.adapters.registry import read_file
from pipelines.inputs.remote_sources import (
    GPUHUNT_CATALOG_URL,
    GPUHUNT_PROVIDERS,
    RemoteSourceError,
    load_remote_sources,
)
from pipelines.settings import Settings
from tests.pipelines.fetch.http_server import reply
from tests.pipelines.inputs.adapters.test_gpuhunt_catalog import catalog_zip, real_lambda_items

WEEK1 = datetime(2026, 11, 30, 6, 0, tzinfo=UTC)
PUBLISHED = "Tue, 28 Apr 2026 04:38:43 GMT"


class Bucket:
    """gpuhunt's bucket layout for one provider: its `version` file and each version's
    archive, answering 304 to a client that has the archive's Last-Modified."""

    def __init__(self, server, provider: str = "lambdalabs", version: str = "20260428",
                 last_modified: str | None = PUBLISHED) -> None:
        self.server, self.provider = server, provider
        self.archive = catalog_zip(real_lambda_items(), provider)
        self.last_modified = last_modified
        self.publish(version)

    def publish(self, version: str) -> None:
        self.version = version
        base = f"/v3/{self.provider}"
        self.server.routes[f"{base}/version"] = lambda h: reply(h, 200, f"{version}\n".encode())
        self.server.routes[f"{base}/{version}/catalog.zip"] = self._archive

    def _archive(self, h: BaseHTTPRequestHandler) -> None:
        headers = {"Last-Modified": self.last_modified} if self.last_modified else {}
        if self.last_modified and h.headers.get("If-Modified-Since") == self.last_modified:
            reply(h, 304, headers=headers)
        else:
            reply(h, 200, self.archive, headers)


@pytest.fixture
def settings(ledger_url: str, tmp_path: Path, server) -> Settings:
    settings = Settings(home=tmp_path / "home", database_url=ledger_url, offline=False,
                        remote_sources_path=tmp_path / "remote_sources.yaml",
                        gpuhunt_catalog_url=server.url("/v3"),
                        fetch_timeout_seconds=10.0, fetch_retries=1, fetch_backoff_seconds=0.1)
    declare(settings, "lambdalabs")
    return settings


def declare(settings: Settings, *providers: str, **extra: object) -> None:
    entries = [{"name": f"gpuhunt-{p}", "gpuhunt": p, **extra} for p in providers]
    settings.remote_sources_path.write_text(yaml.safe_dump({"sources": entries}),
                                            encoding="utf-8")


def fetch(settings: Settings, now: datetime = WEEK1) -> FetchReport:
    return fetch_remote_sources(settings, now=now, sleep=lambda _s: None)


def test_the_declared_layout_is_gpuhunts_own():
    """The names and the default bucket are gpuhunt's, so a mirror made for gpuhunt serves us."""
    assert GPUHUNT_CATALOG_URL == gpuhunt_catalog.CATALOG_URL
    assert GPUHUNT_PROVIDERS == tuple(gpuhunt_catalog.OFFLINE_PROVIDERS)


def test_a_catalog_is_fetched_by_its_version_and_dated_by_its_publication(settings, server):
    bucket = Bucket(server)
    [got] = fetch(settings).sources
    assert got.outcome == "fetched", got.error
    assert got.url == server.url("/v3/lambdalabs/20260428/catalog.zip")
    # Dated by the catalog's version (a date), not by the fetch (2026-11-30).
    assert got.path is not None and got.path.name == "gpuhunt-lambdalabs-2026-04-28.zip"
    parsed = read_file(got.path.name, got.path.read_bytes(), AdapterOptions())
    assert parsed.pack.rows and {r.fields["as_of"] for r in parsed.pack.rows} == {"2026-04-28"}
    # Next week, the same version: a conditional GET, nothing new to ingest.
    [again] = fetch(settings, WEEK1 + timedelta(days=7)).sources
    assert again.outcome == "not_modified" and again.path == got.path
    assert server.seen("/v3/lambdalabs/20260428/catalog.zip")[-1]["If-Modified-Since"] == \
        PUBLISHED
    # A new version is a new archive, dated by its own version.
    bucket.publish("20260505")
    [newer] = fetch(settings, WEEK1 + timedelta(days=14)).sources
    assert newer.outcome in ("fetched", "unchanged")
    assert newer.path is not None and newer.path.name == "gpuhunt-lambdalabs-2026-05-05.zip"


def test_a_version_that_is_not_a_date_is_dated_by_the_archives_last_modified(settings, server):
    Bucket(server, version="v3-build-17", last_modified="Tue, 05 May 2026 04:31:05 GMT")
    [got] = fetch(settings).sources
    assert got.path is not None and got.path.name == "gpuhunt-lambdalabs-2026-05-05.zip"


def test_a_catalog_nothing_dates_is_refused_not_dated_by_the_fetch(settings, server):
    Bucket(server, version="latest", last_modified=None)
    [got] = fetch(settings).sources
    assert got.outcome == "failed" and got.path is None
    assert got.error is not None and got.error.startswith("no publication date")


def test_a_version_file_that_names_no_version_fails_the_source_alone(settings, server):
    server.routes["/v3/lambdalabs/version"] = lambda h: reply(h, 200, b"<html>oops</html>")
    [got] = fetch(settings).sources
    assert got.outcome == "failed" and "does not name a version" in (got.error or "")


def test_a_server_that_times_out_costs_its_timeout_and_fails_alone(settings, server):
    def stalls(h: BaseHTTPRequestHandler) -> None:
        server.wait(5)

    server.routes["/v3/lambdalabs/version"] = stalls
    settings.fetch_timeout_seconds, settings.fetch_retries = 0.5, 0
    started = time.monotonic()
    [got] = fetch(settings).sources
    assert time.monotonic() - started < 3
    assert got.outcome == "failed"
    assert got.error == "the catalog's version: timed out after 0.5 s (after 1 attempt)"


def test_offline_a_run_tries_each_host_once_and_says_so_in_one_line(settings):
    """No resolver knows the host: the first source fails at once (not retried), the others on
    that host are not tried, and the run's summary says so in one line."""
    declare(settings, "lambdalabs", "aws", "gcp")
    settings.gpuhunt_catalog_url = "https://gpuhunt-mirror.invalid/v3"
    settings.fetch_retries = 3
    started = time.monotonic()
    report = fetch(settings)
    assert time.monotonic() - started < 3
    first, *rest = report.sources
    assert first.attempts == 1 and first.unreachable
    assert all(s.attempts == 0 and s.error and s.error.startswith(
        "not tried: gpuhunt-mirror.invalid could not be reached") for s in rest)
    assert report.summary() == ("3 failed; cannot reach gpuhunt-mirror.invalid (offline?): the "
                                "last good copies stand")


def test_offline_by_choice_nothing_is_tried(settings, server):
    Bucket(server)
    settings.offline = True
    report = fetch(settings)
    assert report.sources == () and server.requests == []
    assert report.summary() == ("offline (--offline): 1 remote source not fetched; their last "
                                "good copies stand")


def test_a_gpuhunt_source_names_a_provider_gpuhunt_publishes(tmp_path):
    path = tmp_path / "remote_sources.yaml"
    path.write_text("sources:\n  - name: hunt\n    gpuhunt: vastai\n", encoding="utf-8")
    with pytest.raises(RemoteSourceError, match=r"remote_sources.yaml:3 sources\[1\].gpuhunt"):
        load_remote_sources(path)
    path.write_text("sources:\n  - name: hunt\n    gpuhunt: aws\n", encoding="utf-8")
    [source] = load_remote_sources(path)
    assert source.url == f"{GPUHUNT_CATALOG_URL}/aws" and not source.local
    [mirrored] = load_remote_sources(path, "http://10.0.0.5/gpuhunt/")
    assert mirrored.url == "http://10.0.0.5/gpuhunt/aws" and mirrored.local


def test_publication_dates():
    assert str(gpuhunt.publication_date("20261130", None)) == "2026-11-30"
    assert str(gpuhunt.publication_date("20261399", "Mon, 30 Nov 2026 10:00:00 GMT")) == \
        "2026-11-30"
    assert gpuhunt.publication_date("latest", "not a date") is None
