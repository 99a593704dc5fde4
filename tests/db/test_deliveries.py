"""Each delivery of a briefing is recorded (channel, target, status, attempts, Message-ID,
error), and the last briefing that reached its readers is found, on both dialects."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
from sqlalchemy.exc import IntegrityError

from db import outputs, queries
from db.engine import Engine, Session, write_session

AT = datetime(2026, 11, 23, 6, 0, tzinfo=UTC)


def briefing_of(ledger: Engine, version: int, day: date) -> int:
    with write_session(ledger) as session:
        return outputs.record_briefing(
            session, dataset_version=version, as_of=day, path=f"/b/briefing-{day}.pdf",
            sha256="0" * 64, size_bytes=10, pages=1, code_version="test", rendered_at=AT).id


def deliver(ledger: Engine, briefing_id: int, **fields: object) -> None:
    with write_session(ledger) as session:
        outputs.record_delivery(session, **{
            "briefing_id": briefing_id, "channel": "email", "target": "a@example.com",
            "status": "delivered", "attempts": 1, "message_id": None, "error": None,
            "delivered_at": AT, **fields})


def test_a_briefings_deliveries_are_recorded_in_order(ledger, versions):
    briefing = briefing_of(ledger, versions[0], date(2026, 11, 16))
    deliver(ledger, briefing, target="a@example.com,b@example.com",
            message_id="<1.2@specledger.example>")
    deliver(ledger, briefing, status="failed", channel="folder", target="/mnt/share", attempts=4,
            error="/mnt/share: Permission denied")
    with Session(ledger) as session:
        rows = outputs.deliveries_of(session, briefing)
        assert outputs.deliveries_of(session, briefing + 1) == []
    assert [(r.channel, r.target, r.status, r.attempts, r.message_id, r.error, r.delivered_at)
            for r in rows] == [
        ("email", "a@example.com,b@example.com", "delivered", 1, "<1.2@specledger.example>",
         None, AT),
        ("folder", "/mnt/share", "failed", 4, None, "/mnt/share: Permission denied", AT)]


@pytest.mark.parametrize("field, value", [("channel", "pigeon"), ("status", "lost")])
def test_a_channel_or_status_outside_the_vocabulary_is_refused(ledger, versions, field, value):
    briefing = briefing_of(ledger, versions[0], date(2026, 11, 16))
    with pytest.raises(IntegrityError, match=f"ck_briefing_delivery_{field}"):
        deliver(ledger, briefing, **{field: value})


def test_the_last_delivered_briefing_skips_those_that_never_reached_a_reader(ledger, versions):
    first, second = versions
    delivered = briefing_of(ledger, first, date(2026, 11, 16))
    deliver(ledger, delivered)
    undelivered = briefing_of(ledger, first, date(2026, 11, 17))  # newer, but only failed
    deliver(ledger, undelivered, status="failed", attempts=4, error="refused")
    with Session(ledger) as session:
        later = queries.dataset_version(session, second)
        earlier = queries.dataset_version(session, first)
        assert outputs.last_briefing_before(session, later).id == undelivered
        assert outputs.last_delivered_briefing_before(session, later).id == delivered
        assert outputs.last_delivered_briefing_before(session, earlier) is None


def test_a_briefing_compares_with_what_its_readers_last_received(ledger, versions):
    first, second = versions
    with Session(ledger) as session:
        later = queries.dataset_version(session, second)
        # No briefing yet: the dataset version before.
        assert [v.id if v else None for v in outputs.compared_version(session, later)] == [
            first, None]
    rendered = briefing_of(ledger, first, date(2026, 11, 16))
    with Session(ledger) as session:   # rendered, never delivered: the last rendered one
        version, briefing = outputs.compared_version(session, later)
        assert (version.id, briefing.id) == (first, rendered)
    delivered = briefing_of(ledger, first, date(2026, 11, 9))
    deliver(ledger, delivered)
    deliver(ledger, rendered, status="failed", attempts=4, error="refused")
    with Session(ledger) as session:   # a delivery on record: the one the readers have
        version, briefing = outputs.compared_version(session, later)
        assert (version.id, briefing.id) == (first, delivered)
