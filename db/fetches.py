"""The log of remote-source fetches: record each one, find the last good copy, list the stale.

Append-only, like the rest of the ledger: a fetch is never updated. "Good" means the run had
the source's bytes afterwards (fetched, unchanged or not_modified); a source is stale when its
latest fetch known at a moment failed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from db.schema import FETCH_OUTCOMES, RawFile, RemoteFetch

GOOD_OUTCOMES = tuple(o for o in FETCH_OUTCOMES if o != "failed")


@dataclass(frozen=True)
class StaleFetch:
    """A source whose latest fetch failed, with its last good fetch (None: never fetched)."""

    source_name: str
    url: str
    failed_at: datetime
    http_status: int | None
    error: str | None
    last_good_at: datetime | None


def record_fetch(session: Session, *, source_name: str, url: str, attempted_at: datetime,
                 outcome: str, attempts: int, http_status: int | None = None,
                 sha256: str | None = None, size_bytes: int | None = None,
                 etag: str | None = None, last_modified: str | None = None,
                 error: str | None = None) -> RemoteFetch:
    """Append one fetch; `url` must already be stripped of credentials."""
    row = RemoteFetch(source_name=source_name, url=url, attempted_at=attempted_at,
                      outcome=outcome, http_status=http_status, sha256=sha256,
                      size_bytes=size_bytes, etag=etag, last_modified=last_modified,
                      attempts=attempts, error=error)
    session.add(row)
    session.flush()
    return row


def last_good_fetch(session: Session, source_name: str, url: str | None = None,
                    known_at: datetime | None = None) -> RemoteFetch | None:
    """The source's newest good fetch (of `url` when given: the validators of another URL
    mean nothing to this one), as known at `known_at` (default: everything recorded)."""
    query = select(RemoteFetch).where(RemoteFetch.source_name == source_name,
                                      RemoteFetch.outcome.in_(GOOD_OUTCOMES))
    if url is not None:
        query = query.where(RemoteFetch.url == url)
    if known_at is not None:
        query = query.where(RemoteFetch.attempted_at <= known_at)
    return session.scalar(query.order_by(RemoteFetch.attempted_at.desc(),
                                         RemoteFetch.id.desc()).limit(1))


def stale_sources(session: Session, known_at: datetime) -> list[StaleFetch]:
    """Every source whose latest fetch recorded by `known_at` failed, by name."""
    rows = session.scalars(select(RemoteFetch).where(RemoteFetch.attempted_at <= known_at)
                           .order_by(RemoteFetch.attempted_at, RemoteFetch.id))
    latest: dict[str, RemoteFetch] = {}
    last_good: dict[str, datetime] = {}
    for row in rows:  # oldest first: the last row seen per name is the latest
        latest[row.source_name] = row
        if row.outcome in GOOD_OUTCOMES:
            last_good[row.source_name] = row.attempted_at
    return [StaleFetch(name, row.url, row.attempted_at, row.http_status, row.error,
                       last_good.get(name))
            for name, row in sorted(latest.items()) if row.outcome == "failed"]


def known_sha256s(session: Session, digests: Iterable[str]) -> set[str]:
    """Which of these sha256s the ledger already keeps as raw files (ingested before)."""
    wanted = sorted(set(digests))
    if not wanted:
        return set()
    return set(session.scalars(select(RawFile.sha256).where(RawFile.sha256.in_(wanted))))
