"""The warehouse's `changes` view: what a dataset version recorded and superseded since the
version before it (SQLite and PostgreSQL ledgers)."""

from __future__ import annotations

from pathlib import Path

import duckdb

from tests.db.test_marts import published  # noqa: F401 - the fixture


def changes(path: Path) -> list[tuple]:
    with duckdb.connect(str(path), read_only=True) as con:
        return con.execute(
            "select dataset_version, previous_version, change, item, value from changes "
            "where item = 'c-h100-1y' and metric = 'gpu_hour_price' "
            "order by dataset_version, change, value").fetchall()


def test_each_version_lists_what_it_recorded_and_superseded(published):  # noqa: F811
    rows = changes(published)
    versions = sorted({r[0] for r in rows})
    assert len(versions) == 2
    first, second = versions
    recorded_first = [r for r in rows if r[0] == first]
    assert recorded_first and {r[1:3] for r in recorded_first} == {(None, "recorded")}
    later = [(r[1], r[2], r[4]) for r in rows if r[0] == second]
    # The corrected price list: 6.0 superseded by 2.0 in the second version.
    assert (first, "superseded", 6.0) in later and (first, "recorded", 2.0) in later


def test_changes_add_up_to_the_live_observations(published):  # noqa: F811
    with duckdb.connect(str(published), read_only=True) as con:
        (net,) = con.execute(
            "select sum(case change when 'recorded' then 1 else -1 end) from changes").fetchone()
        (live,) = con.execute(
            "select count(*) from observation where superseded_at is null").fetchone()
    assert net == live
