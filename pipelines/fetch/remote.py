"""Remote sources: files declared by URL (data/remote_sources.yaml), fetched before the ingest.

Each source gets one conditional GET (the ETag / Last-Modified of its last good fetch, when
those bytes are still cached), retried with exponential backoff on timeouts, connection errors,
truncated bodies, 5xx and 429. Its bytes are kept by sha256 under
<home>/remote/<sha256>/<file_name>, and each fetch is logged in the ledger (remote_fetch) as
soon as it ends. A source that cannot be fetched fails alone: the report says so, the run goes
on with its last good copy, and the briefing lists it as stale.

A server is input like any other: each attempt (connecting, headers, body) ends by its deadline,
a body larger than SPECLEDGER_FETCH_MAX_BYTES (compressed or decoded) is refused while it
arrives, and a source reaches only public addresses over http(s), every redirect hop included,
unless it is declared `local: true` (pipelines/fetch/guard.py). A refusal is a failed fetch.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import httpx

from db import fetches
from db.engine import Engine, Session, make_engine, upgrade, write_session
from db.redact import redact
from pipelines.fetch import gpuhunt
from pipelines.fetch.attempt import Attempt
from pipelines.fetch.body import ACCEPT_ENCODING, Incomplete, content_codings, decoded
from pipelines.fetch.guard import Guard, Refused, guarded_client
from pipelines.fetch.pages import follow_next_links
from pipelines.inputs.remote_sources import (
    RemoteSource,
    load_remote_sources,
    without_userinfo,
)
from pipelines.retry import Backoff, with_retries
from pipelines.settings import Settings

MAX_REDIRECTS = 10
# A longer ETag or Last-Modified (an HTTP date is 29 characters) from a server is no validator
# at all, whatever the database would take.
MAX_ETAG, MAX_LAST_MODIFIED = 500, 100
MAX_ERROR_CHARS = 1000
# What resolvers say of a host name they do not know (glibc, macOS).
_UNKNOWN_NAME = ("Name or service not known", "nodename nor servname")


# --- pure helpers -----------------------------------------------------------------------------

def retry_after_seconds(value: str | None) -> float | None:
    """A Retry-After header's delta-seconds (its HTTP-date form is ignored: plain backoff)."""
    value = (value or "").strip()
    return float(value) if value.isascii() and value.isdigit() else None


def conditional_headers(etag: str | None, last_modified: str | None) -> dict[str, str]:
    """The validators of the last good fetch, sent back so an unchanged file costs a 304."""
    headers = {}
    if etag:
        headers["If-None-Match"] = etag
    if last_modified:
        headers["If-Modified-Since"] = last_modified
    return headers


def is_retryable(status: int | None) -> bool:
    """Worth another attempt: no response at all (timeout, connection, truncation), 5xx, 429."""
    return status is None or status == 429 or status >= 500


def decide_outcome(status: int | None, sha256: str | None, previous_sha256: str | None,
                   conditional: bool) -> str:
    """fetched (new bytes) | unchanged (the last good bytes again) | not_modified | failed."""
    if status == 304 and conditional:
        return "not_modified"
    if status != 200 or sha256 is None:
        return "failed"
    return "unchanged" if sha256 == previous_sha256 else "fetched"


# --- one fetch ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Fetcher:
    """What every attempt of one source goes through: its client and guard, and its bounds."""

    client: httpx.Client
    guard: Guard
    timeout: float                    # the whole attempt: connecting, headers and body
    max_bytes: int                    # the body, compressed and decoded
    spool: Path                       # where a body is written while it arrives

    def deadline(self) -> AbstractContextManager[None]:
        return self.guard.deadline.of(self.timeout)


class _TooSlow(Exception):
    pass


def attempt_get(fetcher: Fetcher, url: str, headers: dict[str, str]) -> Attempt:
    """One GET, its redirects followed; the whole attempt must end within the fetcher's
    timeout, its body within its byte limit, and a body shorter than its Content-Length (or cut
    by the server closing) is a failed attempt. Never raises for what the server does."""
    timeout = fetcher.timeout
    try:
        with fetcher.deadline():
            return _get(fetcher, httpx.URL(url), headers)
    except Refused as exc:
        return Attempt(None, error=f"refused: {exc}", final=True)
    except httpx.ConnectTimeout:
        return Attempt(None, error=f"timed out after {timeout:g} s", unreachable=True)
    except (_TooSlow, httpx.TimeoutException):
        return Attempt(None, error=f"timed out after {timeout:g} s")
    except Incomplete as exc:
        return Attempt(None, error=f"truncated body: {exc}")
    except httpx.RemoteProtocolError as exc:
        return Attempt(None, error=f"the server closed the connection early ({exc})")
    except httpx.ConnectError as exc:
        # A name no resolver knows (offline, or a typo) stays unknown a few seconds later.
        unknown = any(t in str(exc) for t in _UNKNOWN_NAME)
        return Attempt(None, error=f"cannot connect ({exc})", final=unknown, unreachable=True)
    except httpx.HTTPError as exc:
        return Attempt(None, error=f"{type(exc).__name__}: {exc}")
    except (httpx.InvalidURL, ValueError) as exc:  # a Location or header httpx cannot take
        return Attempt(None, error=f"unusable response ({exc})", final=True)
    except OSError as exc:  # the spool file cannot be written: the next attempt could not either
        return Attempt(None, error=f"cannot keep the bytes under {fetcher.spool.parent}: "
                                   f"{exc.strerror or exc}", final=True)


def _get(fetcher: Fetcher, url: httpx.URL, headers: dict[str, str]) -> Attempt:
    for _ in range(MAX_REDIRECTS + 1):
        with fetcher.client.stream("GET", url, headers=headers) as response:
            if not response.has_redirect_location:
                return _answer(fetcher, response)
            url = _redirect_target(url, response.headers["Location"])
    raise Refused(f"more than {MAX_REDIRECTS} redirects")


def _redirect_target(current: httpx.URL, location: str) -> httpx.URL:
    """Where a redirect leads, if a source may go there: http(s) only. (Its address is the
    guard's to check, as it connects.) A relative Location keeps the current URL's
    credentials; another host never receives them."""
    target = current.join(location)
    if target.scheme not in ("http", "https") or not target.host:
        shown = one_line(without_userinfo(location), 300)
        raise Refused(f"redirected to {shown!r}: only http:// and "
                      "https:// URLs with a host are followed")
    return target


def _answer(fetcher: Fetcher, response: httpx.Response) -> Attempt:
    status = response.status_code
    validators = _validators(response.headers)
    if status != 200:  # its body is never read
        reason = "not modified" if status == 304 else f"HTTP {status}"
        return Attempt(status, **validators,
                       retry_after=retry_after_seconds(response.headers.get("Retry-After")),
                       error=None if status == 304 else
                       one_line(f"{reason} {response.reason_phrase}".strip(), 200))
    limit = fetcher.max_bytes
    text = response.headers.get("Content-Length", "").strip()
    announced = int(text) if text.isascii() and text.isdigit() else None
    if announced is not None and announced > limit:
        raise Refused(f"the body would be {announced} bytes, more than the "
                      f"{limit} bytes SPECLEDGER_FETCH_MAX_BYTES allows")
    codings = content_codings(response.headers.get("Content-Encoding"))
    body, sha256, size = _spool(fetcher, decoded(response.iter_raw(), codings),
                                lambda: response.num_bytes_downloaded)
    got = response.num_bytes_downloaded
    if announced is not None and got < announced:
        body.unlink(missing_ok=True)
        return Attempt(None, error=f"truncated body: received {got} of {announced} bytes")
    return Attempt(200, body, sha256, size, **validators)


def _spool(fetcher: Fetcher, pieces: Iterator[bytes], raw_bytes: Callable[[], int]
           ) -> tuple[Path, str, int]:
    """Write the decoded body to a spool file as it arrives, hashing it; stop as soon as the
    raw or the decoded bytes pass the limit (never more than one piece is held in memory)."""
    limit, digest, size = fetcher.max_bytes, hashlib.sha256(), 0
    fetcher.spool.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(dir=fetcher.spool, suffix=".part")
    path = Path(name)
    try:
        with os.fdopen(handle, "wb") as out:
            for piece in pieces:
                fetcher.guard.deadline.cap(None, _TooSlow)  # bytes already buffered count too
                size += len(piece)
                if size > limit or raw_bytes() > limit:
                    what = "decoded " if size > raw_bytes() else ""
                    raise Refused(f"the {what}body passed {limit} bytes, the limit "
                                  "SPECLEDGER_FETCH_MAX_BYTES sets; reading stopped there")
                digest.update(piece)
                out.write(piece)
            out.flush()
            os.fsync(out.fileno())
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return path, digest.hexdigest(), size


def _validators(headers: httpx.Headers) -> dict[str, str | None]:
    """The ETag and Last-Modified to send back next time; an absurdly long one (or one with
    control characters) is no validator: the next fetch is then a plain GET."""
    etag, modified = headers.get("ETag"), headers.get("Last-Modified")
    return {"etag": etag if _storable(etag, MAX_ETAG) else None,
            "last_modified": modified if _storable(modified, MAX_LAST_MODIFIED) else None}


def _storable(value: str | None, longest: int) -> bool:
    return bool(value) and len(value) <= longest and value.isprintable()


def one_line(text: str, longest: int = MAX_ERROR_CHARS) -> str:
    """`text` on one line and at most `longest` characters: what reports and the ledger show."""
    flat = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    return flat if len(flat) <= longest else flat[:longest - 1] + "…"


def get_with_retries(fetcher: Fetcher, url: str, headers: dict[str, str], *, retries: int,
                     backoff: float, sleep: Callable[[float], None] = time.sleep
                     ) -> tuple[Attempt, int]:
    """The last attempt and how many were made: retried after a timeout, a connection error,
    a truncated body, 5xx or 429, waiting by the backoff (or a small Retry-After); never
    after a refusal."""
    tried = with_retries(lambda: attempt_get(fetcher, url, headers), Backoff(retries, backoff),
                         failed=worth_retrying, asked_wait=lambda a: a.retry_after,
                         sleep=sleep)
    attempt = tried.last
    if tried.refused_wait is not None:
        attempt = Attempt(attempt.status, error=f"{attempt.error}; the server asked to "
                          f"retry after {tried.refused_wait:g} s")
    return attempt, tried.attempts


def worth_retrying(attempt: Attempt) -> bool:
    """A failed attempt the same request might turn into a good one."""
    return attempt.error is not None and not attempt.final and is_retryable(attempt.status)


# --- the run -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class SourceFetch:
    """What one source's fetch came to (the URL without credentials)."""

    name: str
    url: str
    outcome: str                  # fetched | unchanged | not_modified | failed
    http_status: int | None
    attempts: int
    sha256: str | None = None     # the bytes the run now has (any outcome but failed)
    size_bytes: int | None = None
    path: Path | None = None      # where those bytes are cached
    error: str | None = None
    ingest: bool = False          # bytes the ledger does not hold yet
    unreachable: bool = False     # failed without reaching its host
    etag: str | None = field(default=None, repr=False)
    last_modified: str | None = field(default=None, repr=False)

    def describe(self) -> str:
        """One line for logs and run summaries."""
        what = f"{self.name} ({self.url}): {self.outcome.replace('_', ' ')}"
        if self.http_status is not None:
            what += f", HTTP {self.http_status}"
        if self.size_bytes is not None:
            what += f", {self.size_bytes} bytes"
        return what + (f"; {self.error}" if self.error else "")


@dataclass(frozen=True)
class FetchReport:
    sources: tuple[SourceFetch, ...] = ()
    offline: bool = False         # --offline: nothing was tried
    declared: int = 0             # how many sources the declaration file lists

    def summary(self) -> str:
        """One line for the run: what was fetched, or that the run was offline."""
        if self.offline:
            return (f"offline (--offline): {self.declared} remote source"
                    f"{'s' * (self.declared != 1)} not fetched; their last good copies stand")
        if not self.sources:
            return "no remote sources declared"
        counts: dict[str, int] = {}
        for source in self.sources:
            counts[source.outcome] = counts.get(source.outcome, 0) + 1
        text = ", ".join(f"{n} {outcome.replace('_', ' ')}" for outcome, n in counts.items())
        hosts = sorted({urlsplit(s.url).hostname or "" for s in self.sources if s.unreachable})
        if hosts:
            text += (f"; cannot reach {', '.join(hosts)} (offline?): the last good copies "
                     "stand")
        return text

    @property
    def paths_to_ingest(self) -> list[Path]:
        """The cached files whose bytes the ledger does not hold yet: what the ingest reads."""
        return [s.path for s in self.sources if s.ingest and s.path is not None]

    @property
    def failed(self) -> list[SourceFetch]:
        return [s for s in self.sources if s.outcome == "failed"]


def fetch_remote_sources(settings: Settings, *, now: datetime,
                         sleep: Callable[[float], None] = time.sleep) -> FetchReport:
    """Fetch every declared source, keep new bytes by sha256, log each fetch in the ledger
    (attempted at `now`). Never raises for a source that cannot be fetched."""
    sources = load_remote_sources(settings.remote_sources_path, settings.gpuhunt_catalog_url)
    if not sources or settings.offline:
        return FetchReport(offline=settings.offline, declared=len(sources))
    upgrade(settings.resolved_database_url)
    engine = make_engine(settings.resolved_database_url, settings.lock_timeout_seconds)
    cache = settings.home / "remote"
    results: list[SourceFetch] = []
    unreachable: dict[str, str] = {}  # host -> why: a host this run could not reach is not
    try:                               # tried again (offline, a run loses seconds, not minutes)
        for source in sources:
            if source.host in unreachable:
                result = _recorded(engine, settings, now, SourceFetch(
                    source.name, without_userinfo(source.url), "failed", None, 0,
                    unreachable=True, error=one_line(f"not tried: {source.host} could not be "
                                                     f"reached earlier in this run "
                                                     f"({unreachable[source.host]})")))
            else:
                result = _fetch_one(engine, cache, source, settings, now, sleep)
                if result.unreachable:
                    unreachable[source.host] = result.error or "no connection"
            results.append(result)
    finally:
        engine.dispose()
    return FetchReport(tuple(results), declared=len(sources))


def _fetch_one(engine: Engine, cache: Path, source: RemoteSource, settings: Settings,
               now: datetime, sleep: Callable[[float], None]) -> SourceFetch:
    limit = settings.fetch_max_bytes
    # A client of its own: a connection a `local: true` source opened is never reused by
    # another source, whose redirects might lead to the same private host.
    guard = Guard(allow_private=source.local)
    with guarded_client(guard, settings.fetch_timeout_seconds,
                        {"User-Agent": "specledger", "Accept-Encoding": ACCEPT_ENCODING}
                        ) as client:
        fetcher = Fetcher(client, guard, settings.fetch_timeout_seconds, limit,
                          cache / ".incoming")

        def get(link: str, headers: dict[str, str]) -> tuple[Attempt, int]:
            return get_with_retries(fetcher, link, headers, retries=settings.fetch_retries,
                                    backoff=settings.fetch_backoff_seconds, sleep=sleep)

        declared, named, before = source.url, _named_by_fetch(source, now), 0
        if source.gpuhunt:  # the catalog's newest version first, then its archive
            found = _gpuhunt_version(get, source)
            if found.error is not None:
                return _recorded(engine, settings, now, _scrubbed(SourceFetch(
                    source.name, without_userinfo(source.url), "failed", found.status,
                    found.attempts, error=found.error, unreachable=found.unreachable),
                    source.url))
            declared, before = gpuhunt.catalog_url(source.url, found.version), found.attempts
            named = _named_by_publication(source, found.version)
        url = without_userinfo(declared)
        with Session(engine) as session:
            previous = fetches.last_good_fetch(session, source.name, url)
        kept_as = named(previous.last_modified) if previous else None
        cached = (_cached(cache, previous.sha256, kept_as, limit)
                  if previous and kept_as else None)
        headers = conditional_headers(previous.etag, previous.last_modified) if (
            previous and cached) else {}
        attempt, attempts = get(declared, headers)
        attempts += before
        if source.paging == "next_link" and attempt.status == 200:
            attempt, more = follow_next_links(
                lambda link: get(link, {}), declared, attempt, spool=fetcher.spool,
                max_bytes=fetcher.max_bytes, max_pages=source.max_pages)
            attempts += more
    try:
        file_name = named(attempt.last_modified or (previous.last_modified if previous
                                                     else None))
        if file_name is None and attempt.status in (200, 304):
            result = _undated(source.name, url, attempt, attempts)
        else:
            result = _result(source.name, url, attempt, attempts, previous, cached, cache,
                             file_name or source.file_name, bool(headers))
    except OSError as exc:  # the cache folder cannot be written: this source fails, not the run
        result = SourceFetch(source.name, url, "failed", attempt.status, attempts,
                             error=f"cannot keep the bytes under {cache}: {exc.strerror or exc}")
    finally:
        if attempt.body is not None:
            attempt.body.unlink(missing_ok=True)  # kept by now (moved), or not to be kept
    return _recorded(engine, settings, now, _scrubbed(result, declared))


def _recorded(engine: Engine, settings: Settings, now: datetime,
              result: SourceFetch) -> SourceFetch:
    """The fetch logged in the ledger, and whether its bytes are new to it."""
    with write_session(engine, settings.lock_timeout_seconds) as session:
        fetches.record_fetch(session, source_name=result.name, url=result.url,
                             attempted_at=now, outcome=result.outcome,
                             http_status=result.http_status, sha256=result.sha256,
                             size_bytes=result.size_bytes, etag=result.etag,
                             last_modified=result.last_modified, attempts=result.attempts,
                             error=result.error)
        # A good copy that never reached the ledger (a run that died after fetching) is
        # ingested now, whatever the server says about it.
        if result.sha256 is not None:
            new = result.sha256 not in fetches.known_sha256s(session, [result.sha256])
            result = replace(result, ingest=new)
    return result


def _named_by_fetch(source: RemoteSource, now: datetime) -> Callable[[str | None], str | None]:
    """A declared file's name: `{date}` is the fetch's date (a file that carries none)."""
    name = dated_name(source.file_name, now)
    return lambda _last_modified: name


def _named_by_publication(source: RemoteSource, version: str
                          ) -> Callable[[str | None], str | None]:
    """A gpuhunt catalog's name: `{date}` is its publication (its version when that is a
    date, else the archive's Last-Modified); None when neither gives one."""
    def name(last_modified: str | None) -> str | None:
        day = gpuhunt.publication_date(version, last_modified)
        return None if day is None else source.file_name.replace("{date}", day.isoformat())
    return name


@dataclass(frozen=True)
class _Version:
    """What a gpuhunt provider's `version` file said: a version, or why there is none."""

    attempts: int
    version: str = ""
    status: int | None = None
    error: str | None = None
    unreachable: bool = False


def _gpuhunt_version(get: Callable[[str, dict[str, str]], tuple[Attempt, int]],
                     source: RemoteSource) -> _Version:
    """The newest catalog version the provider's `version` file names."""
    attempt, attempts = get(gpuhunt.version_url(source.url), {})
    try:
        if attempt.status != 200 or attempt.body is None:
            error = attempt.error or f"unexpected HTTP {attempt.status}"
            plural = "s" * (attempts != 1)
            return _Version(attempts, status=attempt.status, unreachable=attempt.unreachable,
                            error=one_line(f"the catalog's version: {error} (after "
                                           f"{attempts} attempt{plural})"))
        with open(attempt.body, "rb") as body:
            return _Version(attempts, gpuhunt.parse_version(body.read(1024)), 200)
    except ValueError as exc:
        return _Version(attempts, status=attempt.status, error=one_line(str(exc)))
    finally:
        if attempt.body is not None:
            attempt.body.unlink(missing_ok=True)


def _undated(name: str, url: str, attempt: Attempt, attempts: int) -> SourceFetch:
    """A catalog nothing dates: refused, since the fetch's own date would be a false one."""
    return SourceFetch(name, url, "failed", attempt.status, attempts, error=(
        "no publication date: the version is not a date and the server sent no "
        "Last-Modified; the fetch's own date is not the catalog's"))


def _result(name: str, url: str, attempt: Attempt, attempts: int, previous: Any,
            cached: Path | None, cache: Path, file_name: str, conditional: bool) -> SourceFetch:
    outcome = decide_outcome(attempt.status, attempt.sha256,
                             previous.sha256 if previous else None, conditional)
    if outcome == "failed":
        error = attempt.error or f"unexpected HTTP {attempt.status}"
        plural = "s" if attempts != 1 else ""
        return SourceFetch(name, url, outcome, attempt.status, attempts,
                           error=one_line(f"{error} (after {attempts} attempt{plural})"),
                           unreachable=attempt.unreachable)
    if outcome == "not_modified":
        assert cached is not None and previous is not None
        return SourceFetch(name, url, outcome, 304, attempts, previous.sha256,
                           previous.size_bytes, cached,
                           etag=attempt.etag or previous.etag,
                           last_modified=attempt.last_modified or previous.last_modified)
    assert attempt.body is not None and attempt.sha256 is not None
    path = _keep(cache / attempt.sha256 / file_name, attempt.body)
    return SourceFetch(name, url, outcome, 200, attempts, attempt.sha256, attempt.size_bytes,
                       path, etag=attempt.etag, last_modified=attempt.last_modified)


def dated_name(file_name: str, now: datetime) -> str:
    """The file name with `{date}` replaced by the fetch's date (aws-vms-{date}.csv): readers
    of undated files (a SkyPilot catalog) take their as-of date from it."""
    return file_name.replace("{date}", now.date().isoformat())


def _cached(cache: Path, sha256: str | None, file_name: str, max_bytes: int) -> Path | None:
    """The cached copy of a good fetch, if its bytes are still on disk, still those and within
    the size limit (a copy kept before a lower limit is fetched again, and refused)."""
    if not sha256:
        return None
    path = cache / sha256 / file_name
    try:
        if path.stat().st_size > max_bytes:
            return None
        with open(path, "rb") as kept:
            return path if hashlib.file_digest(kept, "sha256").hexdigest() == sha256 else None
    except OSError:
        return None


def _keep(path: Path, spooled: Path) -> Path:
    """Move a spooled body (written and synced) to `path` atomically; content-addressed, so an
    existing copy of the same size is kept as it is."""
    if path.is_file() and path.stat().st_size == spooled.stat().st_size:
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    spooled.replace(path)
    return path


def _scrubbed(result: SourceFetch, declared_url: str) -> SourceFetch:
    """The error text without the declared URL's credentials, whatever the library wrote."""
    if not result.error:
        return result
    error = result.error.replace(declared_url, without_userinfo(declared_url))
    userinfo = urlsplit(declared_url).netloc.rpartition("@")[0]
    secrets = [userinfo, *userinfo.split(":", 1)[1:], unquote(userinfo)]
    return replace(result, error=redact(error, secrets))
