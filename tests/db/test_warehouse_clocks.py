"""The warehouse's two clocks: spec_as_of (valid on a date, as known at the file's cut-off) and
spec_known_at (what current_value showed at an instant), on a hand-made ledger where a value
is recorded and then restated (superseded), another holds only until its valid_to, a weaker
source disagrees, and of two equal sources the one with a publication date wins. Checked
against the ledger's own resolution (pipelines.ledger.resolved)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import duckdb
import pytest

from db.engine import Engine, Session
from db.queries import dataset_version
from db.warehouse import WarehouseMeta, publish_warehouse
from models.resolve import SOURCE_KIND_RANK
from pipelines.ledger.resolved import current_values
from tests.conftest import ModuleLedger

VENDOR_V1 = """
source: {key: vendor, title: Rack A datasheet, kind: vendor_datasheet, published_on: 2024-01-10}
items:
  - {key: rack-a, name: Rack A, kind: rack}
  - {key: grid, name: Grid price, kind: energy_price}
observations:
  - {item: rack-a, metric: rack_it_power, value: 100, unit: kW, as_of: 2024-01-10, status: C}
  - {item: grid, metric: electricity_price, value: 0.08, unit: USD/kWh, as_of: 2024-01-01,
     valid_to: 2024-07-01, status: C}
"""
# The same source later: rack-a's 2024 figure restated (supersedes 100 kW), a 2025 figure.
VENDOR_V2 = VENDOR_V1.replace("value: 100,", "value: 120,") + """
  - {item: rack-a, metric: rack_it_power, value: 130, unit: kW, as_of: 2025-01-15, status: C}
"""
PRESS = """
source: {key: press, title: A trade article, kind: secondary_press, published_on: 2024-06-01}
items: [{key: rack-a, name: Rack A, kind: rack}, {key: rack-b, name: Rack B, kind: rack}]
observations:
  - {item: rack-a, metric: rack_it_power, value: 150, unit: kW, as_of: 2024-06-01, status: U}
  - {item: rack-b, metric: rack_it_power, value: 50, unit: kW, as_of: 2024-06-01, status: U}
"""
# Same kind and as_of as the press figure for rack-b, but no publication date: it loses.
BLOG = """
source: {key: blog, title: A blog post, kind: secondary_press}
items: [{key: rack-b, name: Rack B, kind: rack}]
observations:
  - {item: rack-b, metric: rack_it_power, value: 55, unit: kW, as_of: 2024-06-01, status: U}
"""
RACK_B = {"rack-b": (50.0, "press", 1)}


@dataclass(frozen=True)
class TwoClocks:
    path: Path
    first: datetime   # when VENDOR_V1 was recorded
    second: datetime  # when VENDOR_V2 and PRESS were recorded (the file's cut-off)
    ledger: Engine    # the ledger the file was published from


@pytest.fixture(scope="module")
def two_clocks(module_ledgers: Callable[[str], ModuleLedger]) -> TwoClocks:
    """Built once per module and dialect: every test only reads the file and the ledger."""
    module_ledger = module_ledgers("clocks")
    ledger, clock = module_ledger.engine, module_ledger.clock
    write_pack = module_ledger.write_pack
    module_ledger.ingest(write_pack("vendor.yaml", VENDOR_V1))
    first = clock.now
    clock.tick(days=2)
    report = module_ledger.ingest(write_pack("vendor-v2.yaml", VENDOR_V2),
                                  write_pack("press.yaml", PRESS), write_pack("blog.yaml", BLOG))
    second = clock.now
    with Session(ledger) as session:
        version = dataset_version(session, report.dataset_version)
        meta = WarehouseMeta(version.id, version.content_hash, version.cutoff_at,
                             date(2026, 11, 22), clock.tick(), "test")
    path = publish_warehouse(ledger, module_ledger.folder / "warehouse.duckdb", meta,
                             SOURCE_KIND_RANK)
    return TwoClocks(path, first, second, ledger)


def resolved(path: Path, sql: str, *, time_zone: str = "UTC") -> dict[str, tuple]:
    """item -> (value, source, alternatives) of a spec_* query, in a session's time zone."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        con.execute(f"set TimeZone = '{time_zone}'")
        rows = con.execute(f"select item, value, source, alternatives from ({sql})").fetchall()
    finally:
        con.close()
    return {item: (value, source, alternatives) for item, value, source, alternatives in rows}


def utc(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f")


def test_spec_as_of_answers_with_the_restated_value_known_at_the_cut_off(two_clocks):
    # The press figure is newer but a vendor datasheet outranks secondary press.
    assert resolved(two_clocks.path, "select * from spec_as_of(DATE '2024-06-30')") == {
        "rack-a": (120.0, "vendor", 1), "grid": (0.08, "vendor", 0), **RACK_B}


def test_spec_as_of_follows_valid_time(two_clocks):
    path = two_clocks.path
    assert resolved(path, "select * from spec_as_of(DATE '2024-01-09')") == {
        "grid": (0.08, "vendor", 0)}  # rack-a's first figure is dated the next day
    # valid_to is the first day a figure no longer holds.
    assert resolved(path, "select * from spec_as_of(DATE '2024-07-01')") == {
        "rack-a": (120.0, "vendor", 1), **RACK_B}
    assert resolved(path, "select * from spec_as_of('2025-06-30')") == {
        "rack-a": (130.0, "vendor", 1), **RACK_B}


def test_spec_known_at_shows_what_the_ledger_knew_then(two_clocks):
    before_restatement = utc(two_clocks.second - timedelta(minutes=1))
    # Valid on that day (2026), as known then: only the first figure, the grid price expired.
    assert resolved(two_clocks.path, f"select * from spec_known_at(TIMESTAMP "
                                     f"'{before_restatement}')") == {"rack-a": (100.0, "vendor", 0)}
    assert resolved(two_clocks.path, f"select * from spec_known_at(TIMESTAMP "
                                     f"'{utc(two_clocks.second)}')") == {
        "rack-a": (130.0, "vendor", 1), **RACK_B}
    assert resolved(two_clocks.path, f"select * from spec_known_at(TIMESTAMP "
                                     f"'{utc(two_clocks.first - timedelta(seconds=1))}')") == {}


def test_a_timestamp_without_a_zone_is_utc_in_any_session_time_zone(two_clocks):
    # Read as Tokyo time, this instant would fall nine hours earlier, before the restatement.
    instant = two_clocks.second + timedelta(minutes=1)
    naive = f"select * from spec_known_at(TIMESTAMP '{utc(instant)}')"
    tokyo = instant.astimezone(ZoneInfo("Asia/Tokyo")).isoformat(sep=" ")
    zoned = f"select * from spec_known_at(TIMESTAMPTZ '{tokyo}')"
    expected = {"rack-a": (130.0, "vendor", 1), **RACK_B}
    assert resolved(two_clocks.path, naive, time_zone="Asia/Tokyo") == expected
    assert resolved(two_clocks.path, zoned, time_zone="America/New_York") == expected


@pytest.mark.parametrize("time_zone", ["America/New_York", "Asia/Tokyo", "UTC"])
def test_value_as_of_reads_a_zone_less_timestamp_as_utc_in_any_session(two_clocks, time_zone):
    """Issue 43, case 7: value_as_of(d, TIMESTAMP) is what spec_known_at and `specledger
    value --known-at` answer, whatever the session's time zone: one rule, UTC."""
    on = date(2024, 6, 30)
    for instant in (two_clocks.second - timedelta(minutes=1),
                    two_clocks.second + timedelta(minutes=1)):
        naive = resolved(two_clocks.path, f"select * from value_as_of(DATE '{on}', "
                                          f"TIMESTAMP '{utc(instant)}')", time_zone=time_zone)
        zoned = resolved(two_clocks.path, f"select * from value_as_of(DATE '{on}', "
                                          f"TIMESTAMPTZ '{instant.isoformat()}')")
        assert naive == zoned


def test_current_value_is_spec_known_at_now(two_clocks):
    current = resolved(two_clocks.path, "select * from current_value")
    assert current == resolved(two_clocks.path, "select * from spec_known_at(now())")
    assert current == {"rack-a": (130.0, "vendor", 1), **RACK_B}


@pytest.mark.parametrize("on", [date(2024, 1, 9), date(2024, 3, 1), date(2024, 6, 30),
                                date(2024, 7, 1), date(2025, 6, 30)])
def test_value_as_of_agrees_with_the_ledgers_resolution(two_clocks, on):
    for known in (two_clocks.first, two_clocks.second - timedelta(seconds=1), two_clocks.second):
        with Session(two_clocks.ledger) as session:
            expected = {r.winner["item"]: (r.winner["value"], r.winner["source"],
                                           len(r.alternatives))
                        for r in current_values(session, on=on, known=known)}
        assert resolved(two_clocks.path, f"select * from value_as_of(DATE '{on}', "
                                         f"TIMESTAMPTZ '{known.isoformat()}')") == expected


def test_spec_as_of_is_value_as_of_at_the_cut_off_on_every_date(two_clocks):
    con = duckdb.connect(str(two_clocks.path), read_only=True)
    try:
        dates = con.execute("select distinct unnest([d - 1, d, d + 1]) from (select as_of as d "
                            "from observation union select valid_to from observation "
                            "where valid_to is not null) order by 1").fetchall()
        for (day,) in dates:
            spans = con.execute("select * from spec_as_of(?) order by item, metric",
                                [day]).fetchall()
            resolved_then = con.execute("select * from value_as_of(?, (select cutoff_at "
                                        "from meta)) order by item, metric", [day]).fetchall()
            assert spans == resolved_then, day
    finally:
        con.close()
    assert len(dates) >= 9  # around rack-a's, rack-b's and the grid price's dates


SHIPPED_SOURCES = Path(__file__).resolve().parents[2] / "data" / "sources"


def test_python_and_sql_resolve_every_shipped_value_alike(ledger, ingest, clock, tmp_path):
    """The resolution rule has two implementations (Python for the models and the briefing,
    SQL for the warehouse): on every (item, metric) of the shipped packs, recorded in two runs,
    at several valid dates and knowledge instants, they choose the same value and source."""
    packs = sorted(SHIPPED_SOURCES.glob("*.yaml"))
    ingest(*packs[: len(packs) // 2])
    first = clock.now
    clock.tick(days=3)
    report = ingest(*packs)
    second = clock.now
    with Session(ledger) as session:
        version = dataset_version(session, report.dataset_version)
        meta = WarehouseMeta(version.id, version.content_hash, version.cutoff_at,
                             date(2026, 11, 22), clock.tick(), "test")
    path = publish_warehouse(ledger, tmp_path / "warehouse.duckdb", meta, SOURCE_KIND_RANK)
    con = duckdb.connect(str(path), read_only=True)
    try:
        compared = 0
        for on in (date(2020, 1, 1), date(2023, 6, 30), date(2024, 12, 31), date(2026, 11, 22)):
            for known in (first, second):
                with Session(ledger) as session:
                    python = {(r.winner["item"], r.winner["metric"]):
                              (r.winner["low"], r.winner["high"], r.winner["source"],
                               len(r.alternatives))
                              for r in current_values(session, on=on, known=known)}
                sql = {(item, metric): (low, high, source, alternatives)
                       for item, metric, low, high, source, alternatives in con.execute(
                           "select item, metric, low, high, source, alternatives from "
                           f"value_as_of(DATE '{on}', TIMESTAMPTZ '{known.isoformat()}')")
                       .fetchall()}
                assert sql == python, (on, known)
                compared += len(python)
    finally:
        con.close()
    assert compared > 400  # most of the shipped values, at most of those moments
