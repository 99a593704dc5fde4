"""The warehouse's `changes`: what each dataset version changed in the resolved values, old ->
new with unit and source; and `observation_changes`, the observations it recorded and
superseded since the version before it (SQLite and PostgreSQL ledgers)."""

from __future__ import annotations

from pathlib import Path

import duckdb

from tests.db.test_marts import published  # noqa: F401 - the fixture


def query(path: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(path), read_only=True) as con:
        return con.execute(sql).fetchall()


def observation_changes(path: Path) -> list[tuple]:
    return query(path, "select dataset_version, previous_version, change, item, value "
                       "from observation_changes "
                       "where item = 'c-h100-1y' and metric = 'gpu_hour_price' "
                       "order by dataset_version, change, value")


def test_a_corrected_price_shows_old_and_new_with_its_unit_and_source(published):  # noqa: F811
    (first, second), = query(published, "select min(id), max(id) from dataset_version")
    rows = query(published, "select dataset_version, previous_version, change, old_value, "
                            "new_value, unit, old_source, new_source from changes "
                            f"where dataset_version = {second} order by item, metric")
    assert len(rows) == 1  # only the corrected price moved
    version, previous, change, old, new, unit, old_source, new_source = rows[0]
    assert (version, previous, change, old, new) == (second, first, "changed", 6.0, 2.0)
    assert unit.startswith("USD") and old_source and old_source == new_source


def test_the_first_version_adds_what_current_value_showed_at_its_cut_off(published):  # noqa: F811
    (first,), = query(published, "select min(id) from dataset_version")
    added = query(published, "select distinct change, previous_version from changes "
                             f"where dataset_version = {first}")
    assert added == [("added", None)]
    (count,), = query(published, "select count(*) from changes "
                                 f"where dataset_version = {first}")
    (shown,), = query(published, "select count(*) from spec_known_at((select cutoff_at from "
                                 f"dataset_version where id = {first}))")
    assert count == shown > 0


def test_the_changes_replayed_give_what_current_value_shows_at_the_newest_cut_off(
        published):  # noqa: F811
    replayed: dict[tuple[str, str], float] = {}
    for item, metric, change, new in query(
            published, "select item, metric, change, new_value from changes "
                       "order by dataset_version"):
        if change == "removed":
            del replayed[(item, metric)]
        else:
            replayed[(item, metric)] = new
    newest = query(published, "select item, metric, value from spec_known_at("
                              "(select max(cutoff_at) from dataset_version))")
    assert replayed == {(item, metric): value for item, metric, value in newest}


def test_each_version_lists_the_observations_it_recorded_and_superseded(
        published):  # noqa: F811
    rows = observation_changes(published)
    versions = sorted({r[0] for r in rows})
    assert len(versions) == 2
    first, second = versions
    recorded_first = [r for r in rows if r[0] == first]
    assert recorded_first and {r[1:3] for r in recorded_first} == {(None, "recorded")}
    later = [(r[1], r[2], r[4]) for r in rows if r[0] == second]
    # The corrected price list: 6.0 superseded by 2.0 in the second version.
    assert (first, "superseded", 6.0) in later and (first, "recorded", 2.0) in later


def test_observation_changes_add_up_to_the_live_observations(published):  # noqa: F811
    (net,), = query(published, "select sum(case change when 'recorded' then 1 else -1 end) "
                               "from observation_changes")
    (live,), = query(published, "select count(*) from observation where superseded_at is null")
    assert net == live
