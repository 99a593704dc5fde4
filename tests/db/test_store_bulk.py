"""The store's bulk paths, on SQLite and PostgreSQL: items added in bulk come back with their
ids, IN-list look-ups find exactly the keys that exist, and rows inserted column by column
with constants read back as written."""

from __future__ import annotations

from datetime import UTC, date, datetime

from sqlalchemy import select

from db import store
from db.engine import Engine, Session
from db.schema import Item, Source


def _items(keys: list[str]) -> list[dict]:
    return [{"key": key, "name": key.upper(), "kind": "cloud_offer", "vendor": "azure",
             "family": "h100-sxm5", "released_on": None} for key in keys]


def test_items_added_in_bulk_come_back_with_the_ids_the_ledger_gave_them(ledger: Engine):
    with Session(ledger) as session, session.begin():
        first = store.add_items(session, _items(["a", "b"]))
        # Existing items are not added again; 1,200 keys cross the look-up's chunks.
        keys = [f"k{n:04d}" for n in range(1200)]
        added = store.add_items(session, _items(["a", *keys]))
        stored = dict(session.execute(select(Item.key, Item.id)).tuples().all())
        assert first == {"a": stored["a"], "b": stored["b"]}
        assert added == {key: stored[key] for key in keys}
        assert store.ids_of(session, Item, {"a", "k0999", "missing"}) == {
            "a": stored["a"], "k0999": stored["k0999"]}


def test_rows_inserted_with_constants_read_back_as_written(ledger: Engine):
    recorded = datetime(2026, 11, 23, 9, 30, tzinfo=UTC)
    with Session(ledger) as session, session.begin():
        store.insert_rows(session, Source.__table__, [
            {"key": "s1", "title": "One", "kind": "vendor_datasheet",
             "published_on": date(2026, 11, 1)},
            {"key": "s2", "title": "Two", "kind": "vendor_datasheet", "published_on": None},
        ], {"recorded_at": recorded, "publisher": "Microsoft"}, size=1)
        rows = session.execute(select(Source.key, Source.title, Source.published_on,
                                      Source.recorded_at, Source.publisher)
                               .order_by(Source.key)).tuples().all()
    assert [(k, t, p, r.replace(tzinfo=UTC) if r.tzinfo is None else r, pub)
            for k, t, p, r, pub in rows] == [
        ("s1", "One", date(2026, 11, 1), recorded, "Microsoft"),
        ("s2", "Two", None, recorded, "Microsoft")]
