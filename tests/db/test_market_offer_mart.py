"""The market_offer mart (issue 27): the market on the build's date, one row per current offer
with its price date, age and flags: stale past the age limit, spot that is not spot, and a
robust outlier naming the offer."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date
from pathlib import Path

import duckdb
import pytest

from db.engine import Session
from db.marts import MARTS
from db.queries import dataset_version
from db.warehouse import WarehouseMeta, publish_warehouse
from models.market.valid_time import MAX_OFFER_AGE_DAYS
from models.resolve import SOURCE_KIND_RANK
from pipelines.ledger.market import market_index, price_index_rows
from tests.conftest import ModuleLedger

ON = date(2026, 11, 22)


def offer(key: str, price: float, as_of: str, *, provider: str, term: str = "on_demand",
          region: str = "us", units: int = 8) -> str:
    return (f"  - {{item: {key}, metric: gpu_hour_price, value: {price}, unit: USD/hour, "
            f"as_of: {as_of}, status: C, offer: {{provider: {provider}, term: {term}, "
            f"gpu: h100-sxm5, region: {region}, units: {units}}}}}\n")


OFFERS = {  # key: (price per GPU-hour, as_of, provider, term)
    "a-od": (3.0, "2026-11-01", "a", "on_demand"),
    "b-od": (3.2, "2026-11-01", "b", "on_demand"),
    "c-od": (2.9, "2026-10-20", "c", "on_demand"),
    "d-od": (3.1, "2026-11-10", "d", "on_demand"),
    "e-od": (12.0, "2026-11-01", "e", "on_demand"),    # four times the others
    "f-od": (2.0, "2025-03-01", "f", "on_demand"),     # 631 days old
    "a-spot": (3.0, "2026-11-01", "a", "spot"),        # = a's on-demand: not spot
    "b-spot": (1.1, "2026-11-01", "b", "spot"),
}
PACK = ("source: {key: cloud-prices, title: Cloud price lists, kind: vendor_datasheet}\n"
        "items:\n  - {key: h100-sxm5, name: H100 SXM5, kind: gpu}\n"
        + "".join(f"  - {{key: {k}, name: {k}, kind: cloud_offer}}\n" for k in OFFERS)
        + "observations:\n"
        + "".join(offer(k, p, d, provider=v, term=t) for k, (p, d, v, t) in OFFERS.items()))


@pytest.fixture(scope="module")
def warehouse(module_ledgers: Callable[[str], ModuleLedger]) -> Path:
    """Built once per module and dialect: its tests only read the file."""
    return built_warehouse(module_ledgers("offers"), PACK)


def built_warehouse(built: ModuleLedger, pack: str) -> Path:
    """The pack ingested into the ledger and published, with its price index."""
    ledger = built.engine
    report = built.ingest(built.write_pack("prices.yaml", pack))
    with Session(ledger) as session:
        version = dataset_version(session, report.dataset_version)
        index = price_index_rows(market_index(session, up_to=version.id))
        meta = WarehouseMeta(version.id, version.content_hash, version.cutoff_at, ON,
                             built.clock.tick(), "test")
    return publish_warehouse(ledger, built.folder / "warehouse.duckdb", meta, SOURCE_KIND_RANK,
                             price_index=index)


def rows(path: Path) -> dict[str, dict]:
    with duckdb.connect(str(path), read_only=True) as con:
        cursor = con.execute("select * from market_offer")
        names = [d[0] for d in cursor.description]
        return {row[names.index("offer")]: dict(zip(names, row, strict=True))
                for row in cursor.fetchall()}


def test_one_row_per_current_offer_with_its_price_date_and_age(warehouse):
    found = rows(warehouse)
    assert set(found) == set(OFFERS)
    d = found["d-od"]
    assert (d["provider"], d["term"], d["gpu"], d["gpus"]) == ("d", "on_demand", "h100-sxm5", 8)
    assert d["price_date"] == date(2026, 11, 10) and d["age_days"] == 12
    assert d["usd_per_instance_hour"] == pytest.approx(3.1 * 8)
    assert d["flags"] == ""


def test_an_offer_past_the_age_limit_is_stale(warehouse):
    found = rows(warehouse)
    assert found["f-od"]["stale"] and found["f-od"]["flags"] == "stale"
    assert found["f-od"]["age_days"] == (ON - date(2025, 3, 1)).days
    assert not found["c-od"]["stale"]


def test_spot_at_on_demand_is_flagged_and_a_cheaper_spot_is_not(warehouse):
    found = rows(warehouse)
    assert found["a-spot"]["false_spot"] and found["a-spot"]["flags"] == "false spot"
    assert not found["b-spot"]["false_spot"]


def test_a_price_far_from_its_gpu_and_terms_median_is_an_outlier(warehouse):
    found = rows(warehouse)
    # Fresh on-demand: 2.9, 3.0, 3.1, 3.2, 12.0; median 3.1, MAD 0.1, scaled 0.148.
    assert found["e-od"]["outlier"] and found["e-od"]["flags"] == "outlier"
    assert found["e-od"]["market_median_usd"] == pytest.approx(3.1)
    assert [k for k, r in found.items() if r["outlier"]] == ["e-od"]


def test_the_marts_age_limit_is_the_builds_setting_not_a_number_of_its_own(
        module_ledgers: Callable[[str], ModuleLedger]):
    """Issue 43, case 1: the mart hard-coded 120 days while the price index applied
    SPECLEDGER_MARKET_MAX_AGE_DAYS. It reads the build's limit (meta.market_max_age_days)."""
    sql = next(m for m in MARTS if m.name == "market_offer").sql.read_text()
    assert not re.findall(r"age_days > \d", sql)
    built = module_ledgers("offers-30-days")
    report = built.ingest(built.write_pack("prices.yaml", PACK))
    with Session(built.engine) as session:
        version = dataset_version(session, report.dataset_version)
        meta = WarehouseMeta(version.id, version.content_hash, version.cutoff_at, ON,
                             built.clock.tick(), "test", market_max_age_days=30)
    found = rows(publish_warehouse(built.engine, built.folder / "w30.duckdb", meta,
                                   SOURCE_KIND_RANK))
    # c-od is 33 days old: stale under a 30-day limit, fresh under the default 120.
    assert found["c-od"]["stale"] and not found["d-od"]["stale"]
    assert MAX_OFFER_AGE_DAYS == WarehouseMeta.__dataclass_fields__[
        "market_max_age_days"].default


ODD_PACK = ("source: {key: odd-prices, title: Odd price lists, kind: vendor_datasheet}\n"
            "items:\n  - {key: h100-sxm5, name: H100 SXM5, kind: gpu}\n"
            "  - {key: q-quote, name: q-quote, kind: cloud_offer}\n"
            "  - {key: t-od, name: t-od, kind: cloud_offer}\n"
            "observations:\n"
            + offer("q-quote", 2.5, "2026-11-01", provider="q", term="quote")
            + offer("t-od", 3.0, "2026-11-01", provider="t").replace("gpu: h100-sxm5",
                                                                    "gpu: h100-sxmm"))


def test_what_ingest_accepted_is_published_a_quote_term_and_an_undeclared_gpu_said(
        module_ledgers: Callable[[str], ModuleLedger]):
    """Issue 43, case 8: an offer on a vendor's quote (a term ingest accepts) and one naming a
    GPU no pack declared (a typo) used to fail the warehouse's checks after their ingest was
    committed, and every publish after it. Both are published; the second says so."""
    built = module_ledgers("odd-offers")
    report = built.ingest(built.write_pack("odd.yaml", ODD_PACK))
    assert sum(f.accepted for f in report.files) == 2
    with Session(built.engine) as session:
        version = dataset_version(session, report.dataset_version)
        index = price_index_rows(market_index(session, up_to=version.id))
        meta = WarehouseMeta(version.id, version.content_hash, version.cutoff_at, ON,
                             built.clock.tick(), "test")
    path = publish_warehouse(built.engine, built.folder / "odd.duckdb", meta,
                             SOURCE_KIND_RANK, price_index=index)
    found = rows(path)
    assert (found["q-quote"]["term"], found["q-quote"]["gpu_known"]) == ("quote", True)
    assert (found["t-od"]["gpu"], found["t-od"]["gpu_known"]) == ("h100-sxmm", False)
    assert found["t-od"]["flags"] == "unknown gpu" and found["q-quote"]["flags"] == ""


def test_the_market_median_is_over_providers_as_the_price_index_s(
        module_ledgers: Callable[[str], ModuleLedger]):
    """One median everywhere: a provider listing five regions is one voice, in the mart as in
    the price index (over offers the median would be that provider's 2.0)."""
    listed = {f"big-{r}": (2.0, "2026-11-01", "big", r) for r in "abcde"}
    listed |= {"x-od": (4.0, "2026-11-01", "x", "us"), "y-od": (5.0, "2026-11-01", "y", "us")}
    pack = ("source: {key: cloud-prices, title: Cloud price lists, kind: vendor_datasheet}\n"
            "items:\n  - {key: h100-sxm5, name: H100 SXM5, kind: gpu}\n"
            + "".join(f"  - {{key: {k}, name: {k}, kind: cloud_offer}}\n" for k in listed)
            + "observations:\n"
            + "".join(offer(k, p, d, provider=v, region=r) for k, (p, d, v, r) in
                      listed.items()))
    path = built_warehouse(module_ledgers("voices"), pack)
    medians = [r["market_median_usd"] for r in rows(path).values()]
    assert medians == [pytest.approx(4.0)] * len(listed)
    with duckdb.connect(str(path), read_only=True) as con:
        [(indexed,)] = con.execute("select median_usd from price_index where gpu = 'h100-sxm5' "
                                   "and term = 'on_demand'").fetchall()
    assert indexed == pytest.approx(4.0)
