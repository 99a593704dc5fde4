"""A hostile or careless server is input like any other: a slow one is cut at the attempt's
deadline, an oversized body or a gzip bomb is refused while it arrives, and a source reaches
only public addresses over http(s), every redirect hop included, unless it is declared
`local: true`. A refused source is a failed fetch, logged and listed as stale; the run goes on."""

from __future__ import annotations

import gzip
import ipaddress
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from sqlalchemy import select

from db.engine import Session
from db.schema import Observation, Source
from db.store import latest_dataset_version
from pipelines.briefing.context import stale_known_at, stale_sources
from pipelines.fetch.guard import Guard, address_problem, guarded_client, resolve
from pipelines.fetch.remote import Attempt, Fetcher, attempt_get
from pipelines.settings import Settings
from tests.conftest import NVLINK_PACK
from tests.pipelines.fetch.http_server import Server, reply
from tests.pipelines.fetch.test_remote_sources import (
    RACK_CSV,
    WEEK1,
    File,
    briefing_html,
    cached_files,
    declare,
    fetch,
    logged,
    week,
)

KIB = 1024


@pytest.fixture
def settings(ledger_url: str, tmp_path: Path) -> Settings:
    # A generous attempt timeout: on a loaded machine a refusal must not turn into a timeout and
    # a retry. The tests of timeouts set their own.
    return Settings(home=tmp_path / "home", database_url=ledger_url, offline=False,
                    remote_sources_path=tmp_path / "remote_sources.yaml",
                    fetch_timeout_seconds=10.0, fetch_retries=2, fetch_backoff_seconds=0.5,
                    fetch_max_bytes=64 * KIB)


@contextmanager
def fetcher(tmp_path: Path, guard: Guard | None = None, timeout: float = 1.0,
            max_bytes: int = 64 * KIB) -> Iterator[Fetcher]:
    """What one source's attempts go through (a local source unless a guard is given)."""
    guard = guard or Guard(allow_private=True)
    with guarded_client(guard, timeout, {}) as client:
        yield Fetcher(client, guard, timeout, max_bytes, tmp_path / "spool")


def redirect(to: str):
    return lambda h: reply(h, 302, b"", {"Location": to})


def endless(server: Server, sent: list[int], headers: dict[str, str]):
    """A 200 whose body never ends (no Content-Length): counts what it managed to send."""
    def route(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        for name, value in headers.items():
            h.send_header(name, value)
        h.end_headers()
        chunk = b"\0" * (64 * KIB)
        sent.append(0)
        while not server.stopping.is_set():
            h.wfile.write(chunk)
            sent[0] += len(chunk)
    return route


# --- the address rule ------------------------------------------------------------------------

@pytest.mark.parametrize(("address", "problem"), [
    ("127.0.0.1", "a loopback address"),
    ("::1", "a loopback address"),
    ("::ffff:127.0.0.1", "a loopback address"),     # IPv4-mapped: the same host
    ("169.254.169.254", "a link-local address"),    # the cloud metadata service
    ("fe80::1", "a link-local address"),
    ("0.0.0.0", "an unspecified address"),
    ("10.1.2.3", "a private address"),
    ("172.16.0.9", "a private address"),
    ("192.168.1.1", "a private address"),
    ("fd00::7", "a private address"),
    ("100.64.0.1", "not a public address"),         # carrier-grade NAT
    ("93.184.215.14", None),
    ("2606:4700:4700::1111", None),
])
def test_only_public_addresses_are_open_to_a_remote_source(address, problem):
    assert address_problem(ipaddress.ip_address(address)) == problem


def test_a_source_at_a_loopback_address_is_refused_and_told_how_to_allow_it(settings, server):
    server.routes["/nvlink.yaml"] = File(NVLINK_PACK.encode())
    declare(settings, local=False, nvlink=server.url("/nvlink.yaml"))
    sleeps: list[float] = []

    [got] = fetch(settings, sleeps=sleeps).sources
    assert (got.outcome, got.attempts, sleeps) == ("failed", 1, [])  # never retried
    assert got.error.startswith("refused: 127.0.0.1, a loopback address; a remote source may "
                                "reach only public addresses (declare the source with "
                                "`local: true` to allow it)")
    assert server.requests == []  # refused before connecting
    [row] = logged(settings)
    assert (row.outcome, row.error) == ("failed", got.error)


def test_a_source_declared_local_may_reach_loopback(settings, server):
    server.routes["/nvlink.yaml"] = File(NVLINK_PACK.encode())
    declare(settings, local=True, nvlink=server.url("/nvlink.yaml"))
    [got] = fetch(settings).sources
    assert got.outcome == "fetched" and got.path.read_bytes() == NVLINK_PACK.encode()


def public_except(*names: str) -> Guard:
    """A guard that takes the test server (127.0.0.1) for a public host, and resolves `names`
    (`name=address`) as a DNS server would: the address rule, anywhere past the first hop."""
    table = dict(n.split("=") for n in names)

    class Guard127(Guard):
        def connect_tcp(self, host, port, *args, **kwargs):
            if host == "127.0.0.1":  # the first hop only: let it through unchecked
                return self.inner.connect_tcp(host, port, *args, **kwargs)
            return super().connect_tcp(host, port, *args, **kwargs)

    return Guard127(resolver=lambda host, port: [table[host]] if host in table
                    else resolve(host, port))


@pytest.mark.parametrize(("location", "reason"), [
    ("http://127.0.0.2:{port}/x.csv", "127.0.0.2, a loopback address"),
    ("http://intranet.example/x.csv", "intranet.example resolves to 10.0.0.5, a private address"),
    ("http://metadata.example/latest", "resolves to 169.254.169.254, a link-local address"),
    ("file:///etc/passwd", "redirected to 'file:///etc/passwd': only http:// and https://"),
    ("ftp://hub.example/x.csv", "only http:// and https://"),
])
def test_every_redirect_hop_is_checked_by_its_resolved_address_and_its_scheme(
        tmp_path, server, location, reason):
    port = server.httpd.server_address[1]
    server.routes["/moved.csv"] = redirect(location.format(port=port))
    guard = public_except("intranet.example=10.0.0.5", "metadata.example=169.254.169.254")
    with fetcher(tmp_path, guard) as remote:
        attempt = attempt_get(remote, server.url("/moved.csv"), {})
    assert attempt.final and attempt.status is None
    assert reason in attempt.error and "refused" in attempt.error
    assert server.seen("/x.csv") == []


def test_a_redirect_to_a_public_address_is_followed_and_a_loop_ends(tmp_path, server):
    server.routes["/old.csv"] = redirect("/new.csv")
    server.routes["/new.csv"] = File(RACK_CSV.encode())
    server.routes["/loop.csv"] = redirect("/loop.csv")
    with fetcher(tmp_path, public_except()) as remote:
        moved = attempt_get(remote, server.url("/old.csv"), {})
        looping = attempt_get(remote, server.url("/loop.csv"), {})
    assert (moved.status, moved.body.read_bytes()) == (200, RACK_CSV.encode())
    assert looping.final and "more than 10 redirects" in looping.error


# --- the deadline ----------------------------------------------------------------------------

def test_a_server_sending_a_header_byte_at_a_time_is_cut_at_the_deadline(settings, server):
    def slow_headers(h: BaseHTTPRequestHandler) -> None:
        h.wfile.write(b"HTTP/1.1 200 OK\r\n")
        for _ in range(200):  # each byte well within a read timeout, the whole never
            if server.stopping.is_set():
                return
            h.wfile.write(b"X")
            h.wfile.flush()
            server.wait(0.05)

    server.routes["/slow.csv"] = slow_headers
    settings.fetch_timeout_seconds, settings.fetch_retries = 0.5, 0
    declare(settings, slow=server.url("/slow.csv"))
    started = time.monotonic()
    [got] = fetch(settings).sources
    assert time.monotonic() - started < 1.5
    assert got.outcome == "failed" and got.error == "timed out after 0.5 s (after 1 attempt)"


def test_a_name_that_takes_too_long_to_resolve_is_cut_at_the_deadline(tmp_path):
    guard = Guard(resolver=lambda host, port: time.sleep(3) or ["93.184.215.14"])
    started = time.monotonic()
    with fetcher(tmp_path, guard, timeout=0.3) as remote:
        attempt = attempt_get(remote, "http://slow-dns.example/a.csv", {})
    assert time.monotonic() - started < 1.0
    assert attempt == Attempt(None, error="timed out after 0.3 s", unreachable=True)


# --- the size limit --------------------------------------------------------------------------

def test_a_body_announced_larger_than_the_limit_is_refused_unread(settings, server):
    server.routes["/big.csv"] = lambda h: reply(h, 200, b"x" * (65 * KIB))
    declare(settings, big=server.url("/big.csv"))
    [got] = fetch(settings).sources
    assert (got.outcome, got.attempts) == ("failed", 1)
    assert ("refused: the body would be 66560 bytes, more than the 65536 bytes "
            "SPECLEDGER_FETCH_MAX_BYTES allows") in got.error
    assert cached_files(settings) == []


def test_an_endless_body_is_stopped_as_soon_as_it_passes_the_limit(settings, server):
    sent: list[int] = []
    server.routes["/endless.csv"] = endless(server, sent, {})
    declare(settings, endless=server.url("/endless.csv"))
    [got] = fetch(settings).sources
    assert got.outcome == "failed" and got.attempts == 1
    assert "the body passed 65536 bytes, the limit SPECLEDGER_FETCH_MAX_BYTES sets" in got.error
    assert cached_files(settings) == []  # the partial spool file is gone too
    assert sent[0] < 64 * 1024 * KIB  # what the sockets buffered, not an endless read


def test_a_gzip_bomb_is_refused_by_its_decoded_size(settings, server):
    bomb = gzip.compress(b"\0" * (64 * 1024 * KIB))  # 64 MiB of zeros in about 64 KiB
    assert len(bomb) < 65 * KIB
    server.routes["/bomb.csv"] = lambda h: reply(h, 200, bomb, {"Content-Encoding": "gzip"})
    settings.fetch_max_bytes = 1024 * KIB
    declare(settings, bomb=server.url("/bomb.csv"))
    started = time.monotonic()
    [got] = fetch(settings).sources
    assert time.monotonic() - started < 2.0
    assert got.outcome == "failed" and "the decoded body passed 1048576 bytes" in got.error
    assert cached_files(settings) == []


def test_a_gzip_body_within_the_limit_is_kept_decoded(settings, server):
    server.routes["/rack.csv"] = lambda h: reply(h, 200, gzip.compress(RACK_CSV.encode()),
                                                 {"Content-Encoding": "gzip"})
    declare(settings, rack=server.url("/rack.csv"))
    [got] = fetch(settings).sources
    assert got.outcome == "fetched" and got.path.read_bytes() == RACK_CSV.encode()
    assert got.size_bytes == len(RACK_CSV.encode())
    assert server.seen("/rack.csv")[0]["Accept-Encoding"] == "gzip, deflate"


@pytest.mark.parametrize(("headers", "body", "reason"), [
    ({"Content-Encoding": "br"}, b"\x0b\x00\x80", "Content-Encoding 'br'; only gzip and deflate"),
    ({"Content-Encoding": "gzip"}, b"not gzip at all", "the body is not valid gzip"),
])
def test_a_body_that_cannot_be_decoded_is_refused(settings, server, headers, body, reason):
    server.routes["/odd.csv"] = lambda h: reply(h, 200, body, headers)
    declare(settings, odd=server.url("/odd.csv"))
    [got] = fetch(settings).sources
    assert got.outcome == "failed" and got.attempts == 1 and reason in got.error


def test_absurdly_long_validators_are_not_kept_nor_sent_back(settings, server):
    server.routes["/rack.csv"] = File(RACK_CSV.encode(), etag='"' + "e" * 600 + '"',
                                      last_modified="M" * 200)
    declare(settings, rack=server.url("/rack.csv"))
    [got] = fetch(settings).sources
    assert (got.outcome, got.etag, got.last_modified) == ("fetched", None, None)
    [row] = logged(settings)
    assert (row.outcome, row.etag, row.last_modified) == ("fetched", None, None)
    fetch(settings, WEEK1 + timedelta(days=7))
    assert "If-None-Match" not in server.seen("/rack.csv")[1]


# --- the run goes on ---------------------------------------------------------------------------

def test_a_refused_source_is_listed_stale_while_the_others_are_ingested(settings, server,
                                                                       ingest, clock, ledger):
    server.routes["/packs/rack.csv"] = File(RACK_CSV.encode())
    server.routes["/bomb.csv"] = lambda h: reply(h, 200, gzip.compress(b"\0" * (1 << 20)),
                                                 {"Content-Encoding": "gzip"})
    settings.remote_sources_path.write_text(
        "sources:\n"
        f"  - {{name: rack-press, url: '{server.url('/packs/rack.csv')}', local: true}}\n"
        f"  - {{name: bomb, url: '{server.url('/bomb.csv')}', local: true}}\n"
        f"  - {{name: intranet, url: '{server.url('/packs/rack.csv')}'}}\n")

    report = week(settings, ingest, clock, WEEK1)
    assert [s.outcome for s in report.sources] == ["fetched", "failed", "failed"]
    with Session(ledger) as session:
        landed = session.scalars(select(Observation.value).join(Source)
                                 .where(Source.key == "remote-rack-press")).all()
        assert sorted(landed) == [60.0, 140.0, 150.0]
        later = WEEK1 + timedelta(days=1)
        version = latest_dataset_version(session)
        stale = stale_sources(session, stale_known_at(version, later.date()))
    assert [s.name for s in stale] == ["bomb", "intranet"]
    assert "decoded body passed 65536 bytes" in stale[0].error
    assert "a loopback address" in stale[1].error and "`local: true`" in stale[1].error
    html = briefing_html(settings, later.date())
    block = html[html.index('id="remote-sources"'):]
    assert "bomb" in block and "intranet" in block and "local: true" in block
