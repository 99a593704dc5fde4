"""The reference packs shipped in data/sources: they ingest cleanly and keep conflicts."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime

import pytest
import yaml

from db.engine import Engine, Session
from pipelines.inputs.adapters.offers import offer_item_key
from pipelines.jobs.ingest import IngestReport
from pipelines.ledger.resolved import conflicts, resolved_value
from pipelines.settings import PROJECT_ROOT
from tests.conftest import ModuleLedger

SOURCES = PROJECT_ROOT / "data" / "sources"
ON = date(2026, 11, 22)


@dataclass(frozen=True)
class Reference:
    """The shipped packs ingested into a ledger of the module's own."""

    report: IngestReport
    ledger: Engine
    known: datetime  # the knowledge instant the tests resolve at (the ingest's)


@pytest.fixture(scope="module")
def reference(module_ledgers: Callable[[str], ModuleLedger]) -> Reference:
    """Once per module and dialect: the tests only read the ledger."""
    built = module_ledgers("reference")
    return Reference(built.ingest(SOURCES), built.engine, built.clock.now)


def test_every_reference_row_is_accepted(reference):
    report = reference.report
    assert report.total("read") >= 200
    assert report.total("rejected") == 0, [(f.path, e) for f in report.files for e in f.errors]
    assert report.total("accepted") == report.total("read")


def test_every_source_is_dated_or_its_figures_are(reference):
    for path in sorted(SOURCES.glob("*.yaml")):
        for entry in yaml.safe_load(path.read_text())["sources"]:
            source = entry["source"]
            assert source.get("url") or source.get("published_on") or all(
                o.get("as_of") for o in entry["observations"]), (path.name, source["key"])


@pytest.mark.parametrize(("item", "metric", "values"), [
    ("nvidia-qm9700", "switch_latency", {150.0, 330.0}),
    ("broadcom-tomahawk-5", "switch_power", {450.0, 500.0}),
])
def test_conflicting_sources_are_kept_side_by_side(reference, item, metric, values):
    with Session(reference.ledger) as session:
        resolved = resolved_value(session, item, metric, on=ON, known=reference.known)
        disagreeing = {(c.winner["item"], c.winner["metric"])
                       for c in conflicts(session, on=ON, known=reference.known)}
    found = {resolved.winner["value"], *(a["value"] for a in resolved.alternatives)}
    assert found == values
    assert (item, metric) in disagreeing


def test_nvlink_generations_double_per_gpu_bandwidth(reference):
    generations = ["nvlink-1", "nvlink-2", "nvlink-3", "nvlink-4", "nvlink-5", "nvlink-6"]
    with Session(reference.ledger) as session:
        per_gpu = [resolved_value(session, g, "scaleup_bw_per_gpu_bidir", on=ON,
                                  known=reference.known) for g in generations]
    values = [r.winner["value"] for r in per_gpu]
    assert values == [160, 300, 600, 900, 1800, 3600]


@pytest.mark.parametrize(("item", "expected"), [
    ("a100-sxm4-80gb", {"peak_dense_bf16": 312.0, "hbm_capacity": 80.0, "hbm_bandwidth": 2.039}),
    ("h100-sxm5", {"peak_dense_bf16": 989.5, "hbm_capacity": 80.0, "hbm_bandwidth": 3.35}),
    ("b200", {"peak_dense_bf16": 2250.0, "hbm_capacity": 180.0, "hbm_bandwidth": 8.0}),
    ("gb200", {"peak_dense_bf16": 2500.0, "hbm_capacity": 186.0, "hbm_bandwidth": 8.0}),
])
def test_gpu_compute_figures_resolve_in_canonical_units(reference, item, expected):
    """Dense BF16 TFLOP/s, HBM GB and HBM TB/s per GPU, as a performance model reads them."""
    with Session(reference.ledger) as session:
        resolved = {metric: resolved_value(session, item, metric, on=ON, known=reference.known)
                    for metric in expected}
    assert all(r is not None for r in resolved.values()), resolved
    values = {metric: r.winner["value"] for metric, r in resolved.items()}
    assert values == pytest.approx(expected)


MARKET = SOURCES / "market_2026.yaml"
# "... 55.04 USD per hour / 8 GPUs = 6.88 USD per GPU-hour", "$42.00 per hour, 4 GPUs = 10.50"
_DIVISION = re.compile(r"\$?([\d.]+)(?: USD)? per hour,? (?:/ )?(\d+) GPUs = ([\d.]+)")


def market_offers() -> list[tuple[dict, dict]]:
    return [(entry["source"], row) for entry in yaml.safe_load(MARKET.read_text())["sources"]
            for row in entry["observations"]]


@pytest.mark.parametrize(("source", "row"), market_offers(),
                         ids=lambda x: x.get("item", x.get("key")))
def test_each_current_offer_is_what_its_quote_says_and_no_newer_than_its_source(source, row):
    """The shipped current market: each price per GPU-hour is the quoted figure, or the
    quoted instance price over the instance's GPUs; its price date is no later than the day
    the source published it; its offer says who, which GPU and on what terms."""
    offer = row["offer"]
    assert {"provider", "term", "gpu", "units", "instance_type"} <= set(offer)
    assert row["as_of"] <= source["published_on"]
    assert row["as_of"].isoformat() in row["quote"] or source["published_on"].isoformat() in (
        row["quote"] + source["title"])
    divided = _DIVISION.search(row["quote"])
    if offer["units"] > 1 and divided:
        instance, gpus, per_gpu = float(divided[1]), int(divided[2]), float(divided[3])
        assert gpus == offer["units"] and per_gpu == row["value"]
        assert instance / gpus == pytest.approx(per_gpu, abs=5e-5)
    else:
        assert f"{row['value']:.2f}" in row["quote"] or str(row["value"]) in row["quote"]


def test_the_current_market_prices_each_gpu_the_briefing_compares():
    gpus = {row["offer"]["gpu"] for _, row in market_offers()
            if row["offer"]["term"] == "on_demand"}
    assert {"h100-sxm5", "h200-sxm", "b200", "gb200", "amd-mi300x"} <= gpus


def test_the_current_market_has_a_committed_price_beside_on_demand_for_the_gpus_rented():
    """Rent-vs-buy needs what renting for a term costs, not only the hourly rate."""
    committed = {row["offer"]["gpu"] for _, row in market_offers()
                 if row["offer"]["term"] in ("contract", "reserved_1y", "reserved_3y")}
    assert {"h100-sxm5", "h200-sxm", "b200"} <= committed


def _packs() -> list[tuple[str, dict]]:
    """Every shipped source pack under data/sources (YAML), by its path there."""
    return [(str(path.relative_to(SOURCES)), yaml.safe_load(path.read_text()))
            for path in sorted(SOURCES.rglob("*.yaml"))]


def _price_rows() -> list[tuple[str, dict]]:
    return [(name, row) for name, pack in _packs() if isinstance(pack, dict)
            for entry in pack.get("sources") or [] for row in entry.get("observations") or []
            if row.get("metric") == "gpu_hour_price"]


def test_every_offer_price_is_keyed_by_its_offer():
    """An offer's item key is its identity (offer_item_key: provider, instance type, region,
    term), whichever pack or price list prices it: the same offer read by two sources is one
    series. A gpu_hour_price without an offer (a cost model, an index) keeps its own key; the
    current market has none."""
    rows = _price_rows()
    assert {"market_2026.yaml", "costs.yaml"} <= {name for name, _ in rows}
    wrong = []
    for name, row in rows:
        offer = row.get("offer")
        if offer is None:
            assert name != "market_2026.yaml", row["item"]
            continue
        key = offer_item_key(offer["provider"], offer.get("instance_type"), offer.get("region"),
                             offer["term"])
        if row["item"] != key:
            wrong.append((name, row["item"], key))
    assert not wrong


def test_the_current_market_prices_only_gpus_the_ledger_tracks():
    gpus = {item["key"] for _, pack in _packs() if isinstance(pack, dict)
            for item in pack.get("items") or [] if item.get("kind") == "gpu"}
    untracked = {row["offer"]["gpu"] for _, row in market_offers()} - gpus
    assert not untracked


def test_each_current_market_source_says_what_it_left_out():
    """Transcriptions are whole: beside its observations, each source lists every row of the
    version it read that it did not transcribe, with why (or that completeness could not be
    checked, and why)."""
    for entry in yaml.safe_load(MARKET.read_text())["sources"]:
        key = entry["source"]["key"]
        left_out = entry.get("left_out")
        assert isinstance(left_out, list), key
        assert entry.get("observations") or left_out, key
        for omitted in left_out:
            assert set(omitted) == {"what", "why"}, (key, omitted)
            assert all(isinstance(omitted[k], str) and omitted[k].strip()
                       for k in ("what", "why")), (key, omitted)
