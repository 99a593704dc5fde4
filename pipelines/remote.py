"""Remote sources: files declared by URL (data/remote_sources.yaml), fetched before the ingest.

Each source gets one conditional GET (the ETag / Last-Modified of its last good fetch, when
those bytes are still cached), retried with exponential backoff on timeouts, connection errors,
truncated bodies, 5xx and 429. Its bytes are kept by sha256 under
<home>/remote/<sha256>/<file_name>, and each fetch is logged in the ledger (remote_fetch) as
soon as it ends. A source that cannot be fetched fails alone: the report says so, the run goes
on with its last good copy, and the briefing lists it as stale.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

import httpx
import yaml

from db import fetches
from db.engine import Engine, Session, make_engine, upgrade, write_session
from db.redact import redact
from pipelines.scenarios import LINES, LineLoader, ScenarioError
from pipelines.settings import Settings

BACKOFF_CAP_SECONDS = 60.0  # no wait between two attempts is longer, Retry-After included
ALLOWED_KEYS = ("name", "url", "file_name")


class RemoteSourceError(ScenarioError):
    """The declaration file cannot be used; says where and what (`path:line field: reason`,
    as a scenario file's errors do)."""


@dataclass(frozen=True)
class RemoteSource:
    name: str
    url: str          # as declared: may hold credentials, never printed or stored as is
    file_name: str    # what the ingest sees (it picks the reader)
    line: int | None = None


# --- declarations -----------------------------------------------------------------------------

def load_remote_sources(path: Path) -> list[RemoteSource]:
    """The sources a declaration file lists; a missing file lists none."""
    if not path.exists():
        return []
    shown = str(path)
    try:
        document = yaml.load(path.read_text(encoding="utf-8"), Loader=LineLoader)  # noqa: S506
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise RemoteSourceError(shown, mark.line + 1 if mark else None, "(file)",
                                f"not valid YAML: {getattr(exc, 'problem', exc)}") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise RemoteSourceError(shown, None, "(file)", str(exc)) from exc
    if document is None:
        return []
    if not isinstance(document, dict) or not isinstance(document.get("sources") or [], list):
        raise RemoteSourceError(shown, 1, "sources", "expected `sources:` with a list of "
                                                     "{name, url, file_name}")
    sources: list[RemoteSource] = []
    for number, entry in enumerate(document.get("sources") or [], start=1):
        source = _source(shown, number, entry, document[LINES].get("sources"))
        if any(s.name == source.name for s in sources):
            raise RemoteSourceError(shown, source.line, f"sources[{number}].name",
                                    f"{source.name!r} is declared twice; names must be unique")
        sources.append(source)
    return sources


def _source(path: str, number: int, entry: Any, list_line: int | None) -> RemoteSource:
    where = f"sources[{number}]"
    if not isinstance(entry, dict):
        raise RemoteSourceError(path, list_line, where, "expected a mapping with name and url")
    lines = entry[LINES]

    def fail(key: str, reason: str) -> RemoteSourceError:
        return RemoteSourceError(path, lines.get(key) or lines[""], f"{where}.{key}", reason)

    for key in entry:
        if key != LINES and key not in ALLOWED_KEYS:
            raise fail(str(key), f"unknown field; expected {', '.join(ALLOWED_KEYS)}")
    for key in ("name", "url"):
        if not isinstance(entry.get(key), str) or not entry[key].strip():
            raise fail(key, "required, a non-empty string")
    name, url = entry["name"].strip(), entry["url"].strip()
    if not _http_url(url):
        raise fail("url", f"{without_userinfo(url)!r} is not an http:// or https:// URL "
                          "with a host")
    file_name = entry.get("file_name")
    if file_name is None:
        file_name = default_file_name(url)
        if not file_name:
            raise fail("url", "its path has no file name to read it by; give file_name")
    if not isinstance(file_name, str) or not _plain_name(file_name):
        raise fail("file_name", f"{file_name!r} is not a plain file name (no folders)")
    return RemoteSource(name, url, file_name, lines[""])


def _http_url(url: str) -> bool:
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError):  # a bad port, a space in the host, ...
        return False
    return parsed.scheme in ("http", "https") and bool(parsed.host)


def _plain_name(name: str) -> bool:
    return bool(name.strip()) and name not in (".", "..") and not any(c in name for c in "/\\\0")


# --- pure helpers -----------------------------------------------------------------------------

def without_userinfo(url: str) -> str:
    """The URL without its user:password@ part (the rest kept as declared)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def default_file_name(url: str) -> str:
    """The URL path's last segment, percent-decoded ("" when the path ends in a folder)."""
    return unquote(PurePosixPath(urlsplit(url).path).name) if not url.endswith("/") else ""


def backoff_delays(retries: int, base: float, cap: float = BACKOFF_CAP_SECONDS) -> list[float]:
    """The wait before each retry: base, 2 x base, 4 x base, ... each at most `cap`."""
    return [min(base * 2**n, cap) for n in range(max(retries, 0))]


def retry_after_seconds(value: str | None) -> float | None:
    """A Retry-After header's delta-seconds (its HTTP-date form is ignored: plain backoff)."""
    value = (value or "").strip()
    return float(value) if value.isdigit() else None


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
class Attempt:
    """What one GET came to: a status and maybe a body, or an error (status None: no response)."""

    status: int | None
    body: bytes | None = None
    etag: str | None = None
    last_modified: str | None = None
    retry_after: float | None = None
    error: str | None = None


class _TooSlow(Exception):
    pass


def attempt_get(client: httpx.Client, url: str, headers: dict[str, str], timeout: float,
                clock: Callable[[], float] = time.monotonic) -> Attempt:
    """One GET; the whole attempt (headers and body) must end within `timeout` seconds, and a
    body shorter than its Content-Length (or cut by the server closing) is a failed attempt."""
    started = clock()
    try:
        with client.stream("GET", url, headers=headers) as response:
            status = response.status_code
            retry_after = retry_after_seconds(response.headers.get("Retry-After"))
            if status != 200:
                reason = "not modified" if status == 304 else f"HTTP {status}"
                return Attempt(status, etag=response.headers.get("ETag"),
                               last_modified=response.headers.get("Last-Modified"),
                               retry_after=retry_after,
                               error=None if status == 304 else
                               f"{reason} {response.reason_phrase}".strip())
            # Chunks as they arrive (a chunk size would buffer past the deadline).
            body = b"".join(_read_within(response.iter_bytes(), started, timeout, clock))
            expected = response.headers.get("Content-Length")
            got = response.num_bytes_downloaded
            if expected and expected.isdigit() and got < int(expected):
                return Attempt(None, error=f"truncated body: received {got} of {expected} bytes")
            return Attempt(200, body, response.headers.get("ETag"),
                           response.headers.get("Last-Modified"))
    except (_TooSlow, httpx.TimeoutException):
        return Attempt(None, error=f"timed out after {timeout:g} s")
    except httpx.RemoteProtocolError as exc:
        return Attempt(None, error=f"the server closed the connection early ({exc})")
    except httpx.ConnectError as exc:
        return Attempt(None, error=f"cannot connect ({exc})")
    except httpx.HTTPError as exc:
        return Attempt(None, error=f"{type(exc).__name__}: {exc}")


def _read_within(chunks: Iterator[bytes], started: float, timeout: float,
                 clock: Callable[[], float]) -> Iterator[bytes]:
    for chunk in chunks:
        if clock() - started > timeout:
            raise _TooSlow
        yield chunk


def get_with_retries(client: httpx.Client, url: str, headers: dict[str, str], *,
                     timeout: float, retries: int, backoff: float,
                     sleep: Callable[[float], None] = time.sleep) -> tuple[Attempt, int]:
    """The last attempt and how many were made: retried after a timeout, a connection error,
    a truncated body, 5xx or 429, waiting by `backoff_delays` (or a small Retry-After)."""
    delays = backoff_delays(retries, backoff)
    attempts = 0
    while True:
        attempt = attempt_get(client, url, headers, timeout)
        attempts += 1
        if attempt.error is None or not is_retryable(attempt.status) or attempts > len(delays):
            return attempt, attempts
        wait = delays[attempts - 1]
        if attempt.retry_after is not None:
            if attempt.retry_after > BACKOFF_CAP_SECONDS:
                return Attempt(attempt.status, error=f"{attempt.error}; the server asked to "
                               f"retry after {attempt.retry_after:g} s"), attempts
            wait = max(wait, attempt.retry_after)
        sleep(wait)


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
    sources = load_remote_sources(settings.remote_sources_path)
    if not sources:
        return FetchReport()
    upgrade(settings.resolved_database_url)
    engine = make_engine(settings.resolved_database_url, settings.lock_timeout_seconds)
    cache = settings.home / "remote"
    try:
        with httpx.Client(timeout=settings.fetch_timeout_seconds, follow_redirects=True,
                          headers={"User-Agent": "specledger"}) as client:
            results = [_fetch_one(client, engine, cache, source, settings, now, sleep)
                       for source in sources]
    finally:
        engine.dispose()
    return FetchReport(tuple(results))


def _fetch_one(client: httpx.Client, engine: Engine, cache: Path, source: RemoteSource,
               settings: Settings, now: datetime, sleep: Callable[[float], None]) -> SourceFetch:
    url = without_userinfo(source.url)
    with Session(engine) as session:
        previous = fetches.last_good_fetch(session, source.name, url)
    cached = _cached(cache, previous.sha256, source.file_name) if previous else None
    headers = conditional_headers(previous.etag, previous.last_modified) if (
        previous and cached) else {}
    attempt, attempts = get_with_retries(
        client, source.url, headers, timeout=settings.fetch_timeout_seconds,
        retries=settings.fetch_retries, backoff=settings.fetch_backoff_seconds, sleep=sleep)
    try:
        result = _result(source.name, url, attempt, attempts, previous, cached, cache,
                         source.file_name, bool(headers))
    except OSError as exc:  # the cache folder cannot be written: this source fails, not the run
        result = SourceFetch(source.name, url, "failed", attempt.status, attempts,
                             error=f"cannot keep the bytes under {cache}: {exc.strerror or exc}")
    result = _scrubbed(result, source.url)
    with write_session(engine, settings.lock_timeout_seconds) as session:
        fetches.record_fetch(session, source_name=result.name, url=url, attempted_at=now,
                             outcome=result.outcome, http_status=result.http_status,
                             sha256=result.sha256, size_bytes=result.size_bytes,
                             etag=result.etag, last_modified=result.last_modified,
                             attempts=result.attempts, error=result.error)
        # A good copy that never reached the ledger (a run that died after fetching) is
        # ingested now, whatever the server says about it.
        if result.sha256 is not None:
            new = result.sha256 not in fetches.known_sha256s(session, [result.sha256])
            result = replace(result, ingest=new)
    return result


def _result(name: str, url: str, attempt: Attempt, attempts: int, previous: Any,
            cached: Path | None, cache: Path, file_name: str, conditional: bool) -> SourceFetch:
    sha = hashlib.sha256(attempt.body).hexdigest() if attempt.body is not None else None
    outcome = decide_outcome(attempt.status, sha, previous.sha256 if previous else None,
                             conditional)
    if outcome == "failed":
        error = attempt.error or f"unexpected HTTP {attempt.status}"
        plural = "s" if attempts != 1 else ""
        return SourceFetch(name, url, outcome, attempt.status, attempts,
                           error=f"{error} (after {attempts} attempt{plural})")
    if outcome == "not_modified":
        assert cached is not None and previous is not None
        return SourceFetch(name, url, outcome, 304, attempts, previous.sha256,
                           previous.size_bytes, cached,
                           etag=attempt.etag or previous.etag,
                           last_modified=attempt.last_modified or previous.last_modified)
    assert attempt.body is not None and sha is not None
    path = _keep(cache / sha / file_name, attempt.body)
    return SourceFetch(name, url, outcome, 200, attempts, sha, len(attempt.body), path,
                       etag=attempt.etag, last_modified=attempt.last_modified)


def _cached(cache: Path, sha256: str | None, file_name: str) -> Path | None:
    """The cached copy of a good fetch, if its bytes are still on disk and still those."""
    if not sha256:
        return None
    path = cache / sha256 / file_name
    try:
        return path if hashlib.sha256(path.read_bytes()).hexdigest() == sha256 else None
    except OSError:
        return None


def _keep(path: Path, data: bytes) -> Path:
    """Write `data` at `path` atomically (content-addressed: an existing copy is kept)."""
    if path.is_file() and path.stat().st_size == len(data):
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())
    tmp.replace(path)
    return path


def _scrubbed(result: SourceFetch, declared_url: str) -> SourceFetch:
    """The error text without the declared URL's credentials, whatever the library wrote."""
    if not result.error:
        return result
    error = result.error.replace(declared_url, without_userinfo(declared_url))
    userinfo = urlsplit(declared_url).netloc.rpartition("@")[0]
    secrets = [userinfo, *userinfo.split(":", 1)[1:], unquote(userinfo)]
    return replace(result, error=redact(error, secrets))
