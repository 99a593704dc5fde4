"""Remote sources, served by a real HTTP server on 127.0.0.1: conditional requests, retries with
backoff, timeouts, truncated bodies and credentials; each fetch logged in the ledger, new bytes
ingested once, and a source that fails listed as stale in the briefing."""

from __future__ import annotations

import base64
import hashlib
import socket
import time
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
import yaml
from sqlalchemy import select

from db.engine import Session, make_engine
from db.schema import Observation, RemoteFetch, Source
from db.store import latest_dataset_version
from models.trends import TrendParams
from pipelines.briefing.comparison import load_comparison
from pipelines.briefing.context import (
    BriefingInputs,
    briefing_context,
    stale_known_at,
    stale_sources,
)
from pipelines.fetch.remote import (
    FetchReport,
    conditional_headers,
    decide_outcome,
    fetch_remote_sources,
    retry_after_seconds,
)
from pipelines.inputs.remote_sources import (
    RemoteSourceError,
    default_file_name,
    load_remote_sources,
    without_userinfo,
)
from pipelines.settings import PROJECT_ROOT, Settings
from reports.briefing import render_html
from tests.conftest import NVLINK_PACK
from tests.pipelines.fetch.http_server import reply

WEEK1 = datetime(2026, 11, 16, 6, 0, tzinfo=UTC)
WEEK2, WEEK3 = WEEK1 + timedelta(days=7), WEEK1 + timedelta(days=14)
NVLINK_V2 = NVLINK_PACK.replace("value: 1.8,", "value: 1.9,")
RACK_CSV = (
    "source,source_title,source_kind,source_published_on,item,item_kind,metric,value,unit,"
    "as_of,status\n"
    "remote-rack-press,Rack press,vendor_press,2026-10-01,big-rack,rack,rack_it_power,140,kW,"
    "2026-10-01,S\n"
    "remote-rack-press,,,,big-rack,,rack_it_power,150,kW,2026-09-01,U\n"
    "remote-rack-press,,,,small-rack,rack,rack_it_power,60,kW,2025-06-01,S\n")


# --- the server ------------------------------------------------------------------------------

@dataclass
class File:
    """A file with validators that answers 304 when the client already has this ETag, or
    `down` (an error status) while the server is broken."""

    body: bytes
    etag: str = '"v1"'
    last_modified: str = "Mon, 16 Nov 2026 05:00:00 GMT"
    down: int | None = None

    def __call__(self, h: BaseHTTPRequestHandler) -> None:
        if self.down is not None:
            reply(h, self.down, b"bad gateway")
        elif h.headers.get("If-None-Match") == self.etag:
            reply(h, 304, headers={"ETag": self.etag})
        else:
            reply(h, 200, self.body, {"ETag": self.etag, "Last-Modified": self.last_modified})


@pytest.fixture
def settings(ledger_url: str, tmp_path: Path) -> Settings:
    # A generous attempt timeout: on a loaded machine a 404 must not turn into a timeout and a
    # retry. The tests of timeouts set their own.
    return Settings(home=tmp_path / "home", database_url=ledger_url, offline=False,
                    remote_sources_path=tmp_path / "remote_sources.yaml",
                    fetch_timeout_seconds=10.0, fetch_retries=2, fetch_backoff_seconds=0.5)


def declare(settings: Settings, *, local: bool = True, **urls: str) -> None:
    """Declare sources by name; the test servers listen on 127.0.0.1, so they are `local`."""
    entries = [{"name": name, "url": url, "local": local} for name, url in urls.items()]
    settings.remote_sources_path.write_text(yaml.safe_dump({"sources": entries}),
                                            encoding="utf-8")


def fetch(settings: Settings, now: datetime = WEEK1,
          sleeps: list[float] | None = None) -> FetchReport:
    """Fetch without waiting: the backoff's sleeps are collected instead."""
    waits = sleeps if sleeps is not None else []
    return fetch_remote_sources(settings, now=now, sleep=waits.append)


def logged(settings: Settings) -> list[RemoteFetch]:
    engine = make_engine(settings.resolved_database_url)
    try:
        with Session(engine) as session:
            return list(session.scalars(select(RemoteFetch).order_by(RemoteFetch.id)))
    finally:
        engine.dispose()


def cached_files(settings: Settings) -> list[Path]:
    return sorted(p for p in (settings.home / "remote").rglob("*") if p.is_file())


# --- declarations ------------------------------------------------------------------------------

def test_the_shipped_declaration_reads_the_public_keyless_price_sources():
    """On by default: gpuhunt's catalog of every provider it publishes, and Azure's Retail
    Prices API, none of them allowed past the public internet."""
    from pipelines.inputs.remote_sources import GPUHUNT_PROVIDERS

    sources = load_remote_sources(PROJECT_ROOT / "data" / "remote_sources.yaml")
    assert sorted(s.gpuhunt for s in sources if s.gpuhunt) == sorted(GPUHUNT_PROVIDERS)
    [azure] = [s for s in sources if not s.gpuhunt]
    assert azure.url.startswith("https://prices.azure.com/api/retail/prices?")
    assert azure.paging == "next_link" and "{date}" in azure.file_name
    assert not any(s.local for s in sources)


def test_without_a_declaration_file_nothing_is_fetched_and_no_ledger_is_opened(tmp_path):
    settings = Settings(home=tmp_path / "home", remote_sources_path=tmp_path / "absent.yaml")
    assert fetch(settings).sources == ()
    assert not (tmp_path / "home").exists()


def test_an_empty_sources_list_declares_nothing(tmp_path):
    path = tmp_path / "remote.yaml"
    path.write_text("# nothing yet\nsources:\n")
    assert load_remote_sources(path) == []


def test_a_declared_source_reads_by_the_url_paths_file_name_unless_given(tmp_path):
    path = tmp_path / "remote.yaml"
    path.write_text("sources:\n"
                    "  - {name: a, url: 'https://hub.example/x/ml_hardware.csv?rev=3'}\n"
                    "  - {name: b, url: 'https://hub.example/download', file_name: b.yaml}\n")
    a, b = load_remote_sources(path)
    assert (a.name, a.file_name, a.line, a.local) == ("a", "ml_hardware.csv", 2, False)
    assert (b.name, b.file_name, b.line) == ("b", "b.yaml", 3)


def test_a_source_on_the_local_network_says_so_with_local_true(tmp_path):
    path = tmp_path / "remote.yaml"
    path.write_text("sources:\n  - {name: lab, url: 'http://10.0.0.5/rack.csv', local: true}\n")
    [lab] = load_remote_sources(path)
    assert lab.local is True


@pytest.mark.parametrize(("entries", "line", "field", "reason"), [
    ("  - {name: a, url: 'ftp://hub.example/a.csv'}\n", 2, "sources[1].url", "not an http"),
    ("  - {name: a, url: 'https://hub.example:port/a.csv'}\n", 2, "sources[1].url",
     "not an http"),
    ("  - {name: a, url: 'https://hub.example/a.csv'}\n"
     "  - {name: a, url: 'https://hub.example/b.csv'}\n", 3, "sources[2].name", "twice"),
    ("  - name: a\n    url: 'https://hub.example/a.csv'\n    token: x\n", 4, "sources[1].token",
     "unknown field"),
    ("  - name: a\n", 2, "sources[1].url", "required"),
    ("  - {name: a, url: 'https://hub.example/folder/'}\n", 2, "sources[1].url", "file_name"),
    ("  - name: a\n    url: 'https://hub.example/a.csv'\n    file_name: ../a.csv\n", 4,
     "sources[1].file_name", "plain file name"),
    ("  - name: a\n    url: 'https://hub.example/a.csv'\n    local: 'sometimes'\n", 4,
     "sources[1].local", "not true or false"),
    (f"  - {{name: {'n' * 201}, url: 'https://hub.example/a.csv'}}\n", 2, "sources[1].name",
     "longer than 200"),
    (f"  - {{name: a, url: 'https://hub.example/{'p' * 2000}.csv'}}\n", 2, "sources[1].url",
     "longer than 2000"),
])
def test_a_bad_declaration_names_the_file_the_line_and_the_field(tmp_path, entries, line, field,
                                                                 reason):
    path = tmp_path / "remote.yaml"
    path.write_text("sources:\n" + entries)
    with pytest.raises(RemoteSourceError) as error:
        load_remote_sources(path)
    assert (error.value.line, error.value.field) == (line, field)
    assert str(error.value).startswith(f"{path}:{line} {field}: ") and reason in str(error.value)


def test_a_declaration_error_never_prints_the_urls_credentials(tmp_path):
    path = tmp_path / "remote.yaml"
    path.write_text("sources:\n  - {name: a, url: 'ftp://bob:hunter22@hub.example/a.csv'}\n")
    with pytest.raises(RemoteSourceError) as error:
        load_remote_sources(path)
    assert "hunter22" not in str(error.value) and "hub.example/a.csv" in str(error.value)


# --- pure helpers ----------------------------------------------------------------------------

def test_conditional_headers_send_back_only_the_validators_there_are():
    assert conditional_headers('"abc"', "Mon, 16 Nov 2026 05:00:00 GMT") == {
        "If-None-Match": '"abc"', "If-Modified-Since": "Mon, 16 Nov 2026 05:00:00 GMT"}
    assert conditional_headers(None, None) == {}


@pytest.mark.parametrize(("status", "sha", "previous", "conditional", "outcome"), [
    (200, "new", None, False, "fetched"),
    (200, "new", "old", True, "fetched"),
    (200, "same", "same", True, "unchanged"),
    (304, None, "same", True, "not_modified"),
    (304, None, None, False, "failed"),      # a 304 to a request that asked for nothing
    (500, None, "old", True, "failed"),
    (None, None, "old", True, "failed"),     # no response at all
])
def test_the_outcome_follows_the_status_and_the_bytes(status, sha, previous, conditional,
                                                     outcome):
    assert decide_outcome(status, sha, previous, conditional) == outcome


def test_retry_after_is_read_in_seconds_only():
    assert retry_after_seconds("3") == 3.0
    assert retry_after_seconds("Wed, 21 Oct 2026 07:28:00 GMT") is None
    assert retry_after_seconds(None) is None


def test_urls_lose_their_credentials_and_keep_the_rest():
    assert without_userinfo("https://bob:pw@hub.example:8443/a.csv?rev=2") == \
        "https://hub.example:8443/a.csv?rev=2"
    assert without_userinfo("https://hub.example/a.csv") == "https://hub.example/a.csv"
    assert default_file_name("https://hub.example/x/ml%20hardware.csv?rev=2") == \
        "ml hardware.csv"


# --- fetching ----------------------------------------------------------------------------------

def test_a_file_is_fetched_once_and_then_answered_with_304_from_its_validators(
        settings, server, ingest, clock):
    server.routes["/nvlink.yaml"] = File(NVLINK_PACK.encode())
    declare(settings, nvlink=server.url("/nvlink.yaml"))

    first = fetch(settings)
    [got] = first.sources
    digest = hashlib.sha256(NVLINK_PACK.encode()).hexdigest()
    assert (got.outcome, got.http_status, got.sha256, got.attempts) == ("fetched", 200, digest, 1)
    assert got.path == settings.home / "remote" / digest / "nvlink.yaml"
    assert got.path.read_bytes() == NVLINK_PACK.encode()
    assert first.paths_to_ingest == [got.path]
    ingest(*first.paths_to_ingest)

    again = fetch(settings, WEEK2)
    second_request = server.seen("/nvlink.yaml")[1]
    assert second_request["If-None-Match"] == '"v1"'
    assert second_request["If-Modified-Since"] == "Mon, 16 Nov 2026 05:00:00 GMT"
    [same] = again.sources
    assert (same.outcome, same.http_status, same.sha256, same.path) == (
        "not_modified", 304, digest, got.path)
    assert again.paths_to_ingest == []
    rows = logged(settings)
    assert [(r.outcome, r.http_status, r.sha256, r.etag) for r in rows] == [
        ("fetched", 200, digest, '"v1"'), ("not_modified", 304, digest, '"v1"')]
    assert [r.attempted_at for r in rows] == [WEEK1, WEEK2]


def test_new_bytes_are_fetched_under_their_own_sha256_and_offered_to_the_ingest(
        settings, server, ingest):
    route = server.routes["/nvlink.yaml"] = File(NVLINK_PACK.encode())
    declare(settings, nvlink=server.url("/nvlink.yaml"))
    ingest(*fetch(settings).paths_to_ingest)

    route.body, route.etag = NVLINK_V2.encode(), '"v2"'
    report = fetch(settings, WEEK2)
    [changed] = report.sources
    assert changed.outcome == "fetched"
    assert changed.sha256 == hashlib.sha256(NVLINK_V2.encode()).hexdigest()
    assert report.paths_to_ingest == [changed.path]
    assert len(cached_files(settings)) == 2  # both versions kept, by sha256
    assert ingest(*report.paths_to_ingest).files[0].superseded == 1


def test_the_same_bytes_under_a_new_etag_are_unchanged_and_not_ingested_again(
        settings, server, ingest):
    route = server.routes["/nvlink.yaml"] = File(NVLINK_PACK.encode())
    declare(settings, nvlink=server.url("/nvlink.yaml"))
    ingest(*fetch(settings).paths_to_ingest)

    route.etag = '"rebuilt"'
    report = fetch(settings, WEEK2)
    [got] = report.sources
    assert (got.outcome, got.http_status) == ("unchanged", 200)
    assert report.paths_to_ingest == []
    assert logged(settings)[-1].etag == '"rebuilt"'  # the next run sends the new one back
    fetch(settings, WEEK3)
    assert server.seen("/nvlink.yaml")[-1]["If-None-Match"] == '"rebuilt"'


def test_bytes_fetched_but_never_ingested_are_offered_again_even_on_a_304(settings, server,
                                                                           ingest):
    server.routes["/nvlink.yaml"] = File(NVLINK_PACK.encode())
    declare(settings, nvlink=server.url("/nvlink.yaml"))
    fetch(settings)  # the run died here, before its ingest

    report = fetch(settings, WEEK2)
    assert report.sources[0].outcome == "not_modified"
    assert report.paths_to_ingest == [report.sources[0].path]
    ingest(*report.paths_to_ingest)
    assert fetch(settings, WEEK3).paths_to_ingest == []


def test_a_source_slower_than_the_timeout_fails_after_its_retries_and_the_run_goes_on(
        settings, server):
    server.routes["/slow.yaml"] = lambda h: (server.wait(5), reply(h, 200, b"late"))
    server.routes["/ok.yaml"] = File(NVLINK_PACK.encode())
    declare(settings, slow=server.url("/slow.yaml"), ok=server.url("/ok.yaml"))
    settings.fetch_timeout_seconds = 0.3
    sleeps: list[float] = []

    started = time.monotonic()
    report = fetch(settings, sleeps=sleeps)
    elapsed = time.monotonic() - started

    slow, ok = report.sources
    assert (slow.outcome, slow.attempts, slow.http_status) == ("failed", 3, None)
    assert "timed out after 0.3 s" in slow.error and "after 3 attempts" in slow.error
    assert len(server.seen("/slow.yaml")) == 3 and sleeps == [0.5, 1.0]
    assert elapsed < 3 * 0.3 + 2.5  # three timeouts, not three five-second waits
    assert ok.outcome == "fetched" and report.paths_to_ingest == [ok.path]
    assert [r.outcome for r in logged(settings)] == ["failed", "fetched"]


def test_a_body_that_trickles_in_past_the_timeout_fails_the_attempt(settings, server):
    def trickle(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Length", "40")
        h.end_headers()
        for _ in range(40):  # a byte every 0.1 s: each read is quick, the whole is not
            if server.stopping.is_set():
                return
            h.wfile.write(b"x")
            h.wfile.flush()
            server.wait(0.1)

    server.routes["/trickle.csv"] = trickle
    settings.fetch_retries, settings.fetch_timeout_seconds = 0, 0.5
    declare(settings, trickle=server.url("/trickle.csv"))
    [got] = fetch(settings).sources
    assert got.outcome == "failed" and "timed out" in got.error
    assert cached_files(settings) == []


def test_two_server_errors_then_success_take_three_attempts_with_growing_waits(settings,
                                                                              server):
    answers = iter([500, 503, 200])
    server.routes["/flaky.yaml"] = lambda h: (
        reply(h, 200, NVLINK_PACK.encode()) if (status := next(answers)) == 200
        else reply(h, status, b"busy"))
    declare(settings, flaky=server.url("/flaky.yaml"))
    sleeps: list[float] = []

    [got] = fetch(settings, sleeps=sleeps).sources
    assert (got.outcome, got.attempts, got.http_status) == ("fetched", 3, 200)
    assert sleeps == [0.5, 1.0] and sleeps[1] > sleeps[0]
    assert logged(settings)[0].attempts == 3


def test_too_many_requests_waits_at_least_as_long_as_retry_after_says(settings, server):
    answers = iter([429, 200])
    server.routes["/limited.yaml"] = lambda h: (
        reply(h, 200, NVLINK_PACK.encode()) if next(answers) == 200
        else reply(h, 429, b"slow down", {"Retry-After": "7"}))
    declare(settings, limited=server.url("/limited.yaml"))
    sleeps: list[float] = []
    [got] = fetch(settings, sleeps=sleeps).sources
    assert (got.outcome, got.attempts, sleeps) == ("fetched", 2, [7.0])


def test_a_retry_after_longer_than_a_minute_ends_the_fetch_at_once(settings, server):
    server.routes["/busy.yaml"] = lambda h: reply(h, 503, b"busy", {"Retry-After": "120"})
    declare(settings, busy=server.url("/busy.yaml"))
    sleeps: list[float] = []
    [got] = fetch(settings, sleeps=sleeps).sources
    assert (got.outcome, got.http_status, got.attempts, sleeps) == ("failed", 503, 1, [])
    assert "the server asked to retry after 120 s (after 1 attempt)" in got.error


def test_a_404_is_not_retried(settings, server):
    declare(settings, missing=server.url("/missing.csv"))
    sleeps: list[float] = []
    report = fetch(settings, sleeps=sleeps)
    [got] = report.sources
    assert (got.outcome, got.http_status, got.attempts) == ("failed", 404, 1)
    assert "HTTP 404" in got.error
    assert len(server.seen("/missing.csv")) == 1 and sleeps == []
    assert report.paths_to_ingest == []


def test_a_truncated_body_fails_and_nothing_is_written_or_ingested(settings, server):
    def truncated(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Length", "1000")
        h.end_headers()
        h.wfile.write(b"0123456789")
        h.close_connection = True

    server.routes["/cut.csv"] = truncated
    declare(settings, cut=server.url("/cut.csv"))
    report = fetch(settings)
    [got] = report.sources
    assert (got.outcome, got.attempts, got.sha256, got.path) == ("failed", 3, None, None)
    assert "closed the connection early" in got.error
    assert cached_files(settings) == [] and report.paths_to_ingest == []
    [row] = logged(settings)
    assert (row.outcome, row.sha256, row.size_bytes) == ("failed", None, None)


def test_credentials_in_a_url_are_used_but_never_reported_logged_or_stored(settings, server):
    secret = "s3cret-pass"
    expected = "Basic " + base64.b64encode(f"alice:{secret}".encode()).decode()
    server.routes["/private.yaml"] = lambda h: (
        reply(h, 200, NVLINK_PACK.encode()) if h.headers.get("Authorization") == expected
        else reply(h, 401, b"who are you"))
    server.routes["/private-broken.yaml"] = lambda h: reply(h, 500, secret.encode())
    with socket.socket() as probe:  # a port nobody listens on: connection refused
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    declare(settings,
            private=server.url("/private.yaml", f"alice:{secret}@"),
            broken=server.url("/private-broken.yaml", f"alice:{secret}@"),
            refused=f"http://alice:{secret}@127.0.0.1:{closed_port}/x.yaml")

    report = fetch(settings)
    private, broken, refused = report.sources
    assert private.outcome == "fetched"  # the server saw the credentials as basic auth
    assert (broken.outcome, refused.outcome) == ("failed", "failed")
    assert private.url == server.url("/private.yaml")
    stored = [str([getattr(r, c.key) for c in RemoteFetch.__table__.columns])
              for r in logged(settings)]
    for text in [repr(report), *(s.describe() for s in report.sources), *stored]:
        assert secret not in text and "alice" not in text


# --- end to end ----------------------------------------------------------------------------------

def week(settings: Settings, ingest, clock, now: datetime) -> FetchReport:
    """The weekly run's first steps: fetch, then ingest what is new a minute later."""
    report = fetch(settings, now)
    clock.now = now + timedelta(minutes=1)
    if report.paths_to_ingest:
        ingest(*report.paths_to_ingest)
    return report


def briefing_html(settings: Settings, as_of: date) -> str:
    """Both documents of the briefing, the main one then its appendix (which lists the
    remote sources)."""
    engine = make_engine(settings.resolved_database_url)
    try:
        with Session(engine) as session:
            version = latest_dataset_version(session)
            inputs = BriefingInputs(TrendParams(),
                                    load_comparison(PROJECT_ROOT / "data" / "comparison.yaml"))
            context = briefing_context(session, as_of=as_of, version=version,
                                       code_version="test", inputs=inputs)
        return render_html(context) + render_html(context, document="appendix")
    finally:
        engine.dispose()


def test_a_remote_pack_is_ingested_once_and_the_briefing_says_since_when_it_is_stale(
        settings, server, ingest, clock, ledger):
    route = server.routes["/packs/rack.csv"] = File(RACK_CSV.encode())
    declare(settings, **{"rack-press": server.url("/packs/rack.csv")})

    first = week(settings, ingest, clock, WEEK1)
    assert first.sources[0].outcome == "fetched"
    with Session(ledger) as session:
        landed = session.scalars(select(Observation.value).join(Source)
                                 .where(Source.key == "remote-rack-press")).all()
    assert sorted(landed) == [60.0, 140.0, 150.0]

    second = week(settings, ingest, clock, WEEK2)
    assert second.sources[0].outcome == "not_modified" and second.paths_to_ingest == []
    assert 'id="remote-sources"' not in briefing_html(settings, WEEK2.date())

    route.down = 502
    third = week(settings, ingest, clock, WEEK3)
    assert third.sources[0].outcome == "failed"

    with Session(ledger) as session:
        version = latest_dataset_version(session)
        assert version.cutoff_at < WEEK3  # nothing new: last week's version stands
        [stale] = stale_sources(session, stale_known_at(version, WEEK3.date()))
        assert stale_sources(session, stale_known_at(version, WEEK2.date())) == ()
    assert (stale.name, stale.url) == ("rack-press", server.url("/packs/rack.csv"))
    assert (stale.last_good_at, stale.failed_at) == (WEEK2, WEEK3)
    assert "HTTP 502" in stale.error

    html = briefing_html(settings, WEEK3.date())
    assert html == briefing_html(settings, WEEK3.date())  # the same ledger, the same page
    block = html[html.index('id="remote-sources"'):]
    assert "rack-press" in block and server.url("/packs/rack.csv") in block
    assert "2026-11-23" in block and "2026-11-30" in block  # last good fetch, last tried
    assert "HTTP 502" in block
    assert "Stale remote source: rack-press could not be fetched" in html
