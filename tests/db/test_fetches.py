"""The remote-fetch log: append-only rows, the last good copy per source and URL, and which
sources are stale as known at a moment."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.exc import IntegrityError

from db import fetches
from db.engine import Session, write_session

MONDAY = datetime(2026, 11, 16, 6, 0, tzinfo=UTC)
URL = "https://hub.example/rack.csv"


def week(n: int) -> datetime:
    return MONDAY + timedelta(days=7 * n)


def log(ledger, name: str, outcome: str, when: datetime, url: str = URL, **fields) -> None:
    good = outcome != "failed"
    defaults = {"sha256": f"{when:%j}".ljust(64, "0") if good else None,
                "size_bytes": 10 if good else None, "http_status": 200 if good else 503,
                "error": None if good else "HTTP 503 (after 4 attempts)"}
    with write_session(ledger) as session:
        fetches.record_fetch(session, source_name=name, url=url, attempted_at=when,
                             outcome=outcome, attempts=1, **{**defaults, **fields})


def test_the_last_good_fetch_skips_failures_and_other_urls(ledger):
    log(ledger, "rack", "fetched", week(0), etag='"a"')
    log(ledger, "rack", "not_modified", week(1), etag='"a"')
    log(ledger, "rack", "failed", week(2))
    log(ledger, "rack", "fetched", week(3), url="https://mirror.example/rack.csv")
    with Session(ledger) as session:
        last = fetches.last_good_fetch(session, "rack", URL)
        assert (last.outcome, last.attempted_at, last.etag) == ("not_modified", week(1), '"a"')
        assert fetches.last_good_fetch(session, "rack").attempted_at == week(3)
        assert fetches.last_good_fetch(session, "rack", URL, known_at=week(0)).outcome == \
            "fetched"
        assert fetches.last_good_fetch(session, "other") is None


def test_a_source_is_stale_while_its_latest_fetch_known_at_a_moment_failed(ledger):
    log(ledger, "rack", "fetched", week(0))
    log(ledger, "rack", "failed", week(1))
    log(ledger, "rack", "failed", week(2))
    log(ledger, "rack", "unchanged", week(3))
    log(ledger, "epoch", "failed", week(2))
    with Session(ledger) as session:
        assert fetches.stale_sources(session, week(0)) == []
        epoch, rack = fetches.stale_sources(session, week(2))  # by name
        assert (rack.source_name, rack.last_good_at, rack.failed_at) == ("rack", week(0), week(2))
        assert rack.error == "HTTP 503 (after 4 attempts)" and rack.http_status == 503
        assert (epoch.source_name, epoch.last_good_at) == ("epoch", None)  # never fetched
        assert [s.source_name for s in fetches.stale_sources(session, week(3))] == ["epoch"]


def test_fetch_times_come_back_in_utc_on_every_dialect(ledger):
    local = MONDAY.astimezone(datetime.now().astimezone().tzinfo)
    log(ledger, "rack", "fetched", local)
    with Session(ledger) as session:
        assert fetches.last_good_fetch(session, "rack").attempted_at == MONDAY
        assert fetches.last_good_fetch(session, "rack").attempted_at.tzinfo == UTC


def test_an_outcome_outside_the_vocabulary_is_refused_by_the_ledger(ledger):
    with pytest.raises(IntegrityError):
        log(ledger, "rack", "skipped", MONDAY)


def test_known_sha256s_names_the_bytes_the_ledger_already_keeps(ledger, ingest, nvlink_pack):
    report = ingest(nvlink_pack)
    kept = report.files[0].sha256
    with Session(ledger) as session:
        assert fetches.known_sha256s(session, [kept, "0" * 64]) == {kept}
        assert fetches.known_sha256s(session, []) == set()
