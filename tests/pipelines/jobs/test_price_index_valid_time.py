"""The price-index stage in valid time (issue 27, cases 4, 5 and 6): two weekly catalogs loaded
on one day give a week-over-week change, measured over the offers priced on both dates; an age
limit keeps old offers out of the index."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import delete

from db.engine import Session
from db.schema import PriceIndexEntry, StageRun
from pipelines.jobs.price_index import store_price_index
from pipelines.ledger.market import index_row, market_index

HEADER = ("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,"
          "SpotPrice\n")
GPU_INFO = ('"{\'Gpus\': [{\'Name\': \'H100\', \'Manufacturer\': \'NVIDIA\', \'Count\': 8.0, '
            '\'MemoryInfo\': {\'SizeInMiB\': 81920}}], \'TotalGpuMemoryInMiB\': 81920}"')


def catalog(folder: Path, name: str, prices: dict[str, float]) -> Path:
    """A Lambda vms.csv (the real file's columns) with one gpu_8x_h100_sxm5 line per region."""
    lines = [f"gpu_8x_h100_sxm5,H100,8.0,208.0,1800.0,{price},{region},{GPU_INFO},\n"
             for region, price in prices.items()]
    path = folder / name
    path.write_text(HEADER + "".join(lines))
    return path


@pytest.fixture
def weekly(tmp_path: Path) -> list[Path]:
    """Two weekly Lambda catalogs: 23.92 USD an 8-GPU instance in us-east-1 on 2026-10-25,
    21.52 on 2026-11-01, when two more regions appear at 16.00."""
    return [catalog(tmp_path, "lambda_vms_2026-10-25.csv", {"us-east-1": 23.92}),
            catalog(tmp_path, "lambda_vms_2026-11-01.csv",
                    {"us-east-1": 21.52, "us-west-1": 16.00, "us-south-1": 16.00})]


def test_two_weekly_catalogs_loaded_on_one_day_give_the_change_of_the_matched_offer(
        ingest, ledger, weekly):
    version = ingest(*weekly).dataset_version  # both on the clock's day, 2026-11-01
    with Session(ledger) as session:
        row = index_row(session, version, "h100-sxm5", "on_demand")
    assert row is not None
    assert row["n_offers"] == 3
    # us-east-1 went from 23.92 to 21.52; the two new regions at 16.00 are composition.
    assert row["wow_change"] == pytest.approx(21.52 / 23.92 - 1)
    assert row["d90_change"] != row["d90_change"]  # NaN: nothing priced 90 days before


def test_an_age_limit_leaves_out_offers_priced_too_long_before_the_versions_date(
        ingest, ledger, weekly):
    version = ingest(weekly[0]).dataset_version  # priced 2026-10-25, known 2026-11-01
    with Session(ledger) as session:
        assert not market_index(session, up_to=version).empty
    # The version indexed again with a 5-day limit: its offers are 7 days old, out.
    with Session(ledger) as session, session.begin():
        session.execute(delete(PriceIndexEntry))
        session.execute(delete(StageRun))
        store_price_index(session, version, code_version="test",
                          now=datetime(2026, 11, 1, 12, tzinfo=UTC), max_age_days=5)
    with Session(ledger) as session:
        assert index_row(session, version, "h100-sxm5", "on_demand", max_age_days=5) is None
        # A reader at another limit does not read rows built at 5 days: it indexes the
        # version's offers at its own (issue 43, case 1).
        assert index_row(session, version, "h100-sxm5", "on_demand", max_age_days=30)[
            "n_offers"] == 1


def test_a_provider_joining_the_market_moves_the_median_but_flags_no_price_move(
        ingest, ledger, weekly, clock, write_pack):
    from models.trends import TrendParams
    from pipelines.jobs.flags import flags_for_version

    first = ingest(weekly[0]).dataset_version  # lambda 23.92 / 8 = 2.99 on 2026-10-25
    clock.tick(days=7)
    # A week later: lambda's price unchanged (the same file), and a cheaper provider appears.
    second = ingest(write_pack("newcomer.yaml", NEWCOMER)).dataset_version
    with Session(ledger) as session:
        before = index_row(session, first, "h100-sxm5", "on_demand")
        after = index_row(session, second, "h100-sxm5", "on_demand")
        flags = flags_for_version(session, second, TrendParams())
    assert after["median"] < 0.8 * before["median"]  # the median of two voices fell
    assert after["wow_change"] == pytest.approx(0.0)  # lambda's matched price did not
    assert not [f for f in flags if f.kind == "price_move"]


NEWCOMER = """
source: {key: newcloud-prices, title: Newcloud price list, kind: vendor_datasheet,
         published_on: 2026-11-08}
items:
  - {key: h100-sxm5, name: H100 SXM5, kind: gpu}
  - {key: newcloud-h100, name: Newcloud H100, kind: cloud_offer}
observations:
  - {item: newcloud-h100, metric: gpu_hour_price, value: 1.5, unit: USD/hour,
     as_of: 2026-11-08, status: C, offer: {provider: newcloud, term: on_demand, gpu: h100-sxm5}}
"""


def test_each_row_keeps_its_price_dates_and_its_composition_change(ingest, ledger, weekly):
    version = ingest(*weekly).dataset_version
    with Session(ledger) as session:
        row = index_row(session, version, "h100-sxm5", "on_demand")
    # The market on 2026-11-01 holds the three offers of that day's catalog.
    assert (row["price_from"].date().isoformat(), row["price_to"].date().isoformat()) == (
        "2026-11-01", "2026-11-01")
    assert row["wow_composition"] == "lambda added 2 offers"
    assert row["d90_composition"] == "lambda added 3 offers"


@pytest.mark.parametrize(("limit", "indexed"), [(None, True), ("30", True), ("5", False)])
def test_the_settings_age_limit_reaches_the_index_of_an_ingest(tmp_path, monkeypatch, weekly,
                                                               limit, indexed):
    """`specledger ingest` indexes with SPECLEDGER_MARKET_MAX_AGE_DAYS (default 120 days): the
    2026-10-25 catalog, ingested on 2026-11-01, is 7 days old."""
    from pipelines.jobs import steps
    from pipelines.ledger.connection import connect_ledger
    from pipelines.settings import Settings

    monkeypatch.delenv("SPECLEDGER_DATABASE_URL", raising=False)
    if limit is not None:
        monkeypatch.setenv("SPECLEDGER_MARKET_MAX_AGE_DAYS", limit)
    settings = Settings(home=tmp_path / "home")
    report = steps.ingest(settings, [weekly[0]], today=datetime(2026, 11, 1).date(),
                          now=lambda: datetime(2026, 11, 1, 12, tzinfo=UTC))
    engine = connect_ledger(settings)
    with Session(engine) as session:
        row = index_row(session, report.dataset_version, "h100-sxm5", "on_demand")
    engine.dispose()
    assert (row is not None) is indexed


def test_a_reader_at_another_age_limit_than_the_stored_indexs_gets_its_own_limits_index(
        tmp_path, monkeypatch, weekly):
    """Issue 43, case 1: the stage record keeps the limit it ran with. `serving` or `tco` run
    with another SPECLEDGER_MARKET_MAX_AGE_DAYS than the ingest's read an index at their own
    limit, so one answer never prices an offer in one place and calls it absent in another."""
    from pipelines.jobs import steps
    from pipelines.ledger.connection import connect_ledger
    from pipelines.ledger.market_tiers import version_offers
    from pipelines.settings import Settings

    monkeypatch.delenv("SPECLEDGER_DATABASE_URL", raising=False)
    monkeypatch.setenv("SPECLEDGER_MARKET_MAX_AGE_DAYS", "5")
    settings = Settings(home=tmp_path / "home")
    version = steps.ingest(settings, [weekly[0]], today=datetime(2026, 11, 1).date(),
                           now=lambda: datetime(2026, 11, 1, 12, tzinfo=UTC)).dataset_version
    engine = connect_ledger(settings)
    with Session(engine) as session:
        assert session.query(StageRun.max_age_days).scalar() == 5
        assert index_row(session, version, "h100-sxm5", "on_demand") is None   # as stored
        monkeypatch.setenv("SPECLEDGER_MARKET_MAX_AGE_DAYS", "30")
        row = index_row(session, version, "h100-sxm5", "on_demand")
        tiers = version_offers(session, version)
    engine.dispose()
    assert row is not None and row["n_offers"] == len(tiers) == 1
    assert row["median"] == pytest.approx(23.92 / 8)
