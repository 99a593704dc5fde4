"""Rent vs buy: a TCO option may rent its GPUs, at a price written inline or read from the
market's GPU-hour price index as of the dataset version (its P25-P75 as the range)."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from db.engine import Session
from pipelines.inputs.scenarios import ScenarioError
from pipelines.inputs.tco_scenarios import load_tco_scenario
from pipelines.jobs import tco
from tests.pipelines.conftest import edited

TODAY, NOW = date(2026, 11, 22), datetime(2026, 11, 22, tzinfo=UTC)

OWN_OR_RENT = """\
name: own-or-rent
kind: tco
finance: {cost_of_capital: 0.08, electricity: "0.083 USD/kWh"}
options:
  - name: own
    gpus: 144
    capex:
      - {name: racks, cost: "7.8e6 USD", life_years: 5, it: true}
    it_power: "264 kW"
    pue: 1.15
    colocation: "195 USD/kW/month"
    jct: "30 day"
  - name: rent
    gpus: 144
    rent: "2.50 USD/hour"
    jct: "40 day"
"""

# Three providers' 1-year H100 prices (3.0, 4.0 and 6.0 USD per GPU-hour).
PRICES = """
source: {key: cloud-prices-2026-11, title: Cloud price lists, kind: vendor_datasheet,
         published_on: 2026-11-01}
items:
  - {key: h100-sxm5, name: H100 SXM5, kind: gpu, vendor: NVIDIA, family: Hopper}
  - {key: a-h100-1y, name: A H100 1y, kind: cloud_offer}
  - {key: b-h100-1y, name: B H100 1y, kind: cloud_offer}
  - {key: c-h100-1y, name: C H100 1y, kind: cloud_offer}
observations:
  - {item: a-h100-1y, metric: gpu_hour_price, value: 3.0, unit: USD/hour, as_of: 2026-11-01,
     status: C, offer: {provider: a, term: reserved_1y, gpu: h100-sxm5, region: eu}}
  - {item: b-h100-1y, metric: gpu_hour_price, value: 4.0, unit: USD/hour, as_of: 2026-11-01,
     status: C, offer: {provider: b, term: reserved_1y, gpu: h100-sxm5, region: us}}
  - {item: c-h100-1y, metric: gpu_hour_price, value: 6.0, unit: USD/hour, as_of: 2026-11-01,
     status: C, offer: {provider: c, term: reserved_1y, gpu: h100-sxm5, region: us}}
"""
MARKET_RENT = edited(OWN_OR_RENT, 'rent: "2.50 USD/hour"',
                     "rent: {gpu: h100-sxm5, term: reserved_1y, statistic: median}")


def test_a_rented_option_pays_its_rent_for_every_gpu_hour_and_owns_nothing(write_scenario):
    scenario = load_tco_scenario(write_scenario(OWN_OR_RENT))
    result = tco.evaluate(scenario, tco.resolve_inputs(scenario, None, on=TODAY, known=NOW),
                          None)
    rent = next(o for o in result["options"] if o["name"] == "rent")
    assert rent["annual_capex_usd"] == 0
    assert rent["usd_per_gpu_hour"] == pytest.approx(2.50)
    assert rent["job_cost_usd"] == pytest.approx(2.50 * 144 * 40 * 24)


def test_an_owned_cluster_busy_half_the_year_charges_each_job_twice_its_share(
        write_scenario):
    def job_costs(text: str) -> dict[str, float]:
        scenario = load_tco_scenario(write_scenario(text))
        result = tco.evaluate(scenario, tco.resolve_inputs(scenario, None, on=TODAY,
                                                           known=NOW), None)
        return {o["name"]: o["job_cost_usd"] for o in result["options"]}

    busy = job_costs(OWN_OR_RENT)
    half = job_costs(OWN_OR_RENT.replace('    jct: "30 day"', '    jct: "30 day"\n'
                                         '    utilisation: 0.5').replace(
        '    jct: "40 day"', '    jct: "40 day"\n    utilisation: 0.5'))
    assert half["own"] == pytest.approx(2 * busy["own"])
    assert half["rent"] == pytest.approx(busy["rent"])   # a rent is paid for the hours rented


@pytest.mark.parametrize("old,new,field,reason", [
    ('rent: "2.50 USD/hour"', 'rent: "2.50 USD/hour"\n    capex: []', "options.rent.capex",
     "owns nothing"),
    ('rent: "2.50 USD/hour"', 'rent: "2.50 USD"', "options.rent.rent", ""),
    ('rent: "2.50 USD/hour"', "rent: {gpu: h100-sxm5, term: weekly}", "options.rent.rent.term",
     "expected one of"),
    ('rent: "2.50 USD/hour"', "rent: {gpu: h100-sxm5, statistic: mean}",
     "options.rent.rent.statistic", "median"),
])
def test_a_bad_rent_names_its_field(write_scenario, old, new, field, reason):
    with pytest.raises(ScenarioError) as error:
        load_tco_scenario(write_scenario(edited(OWN_OR_RENT, old, new)))
    assert error.value.field == field and reason in str(error.value)


def test_the_market_rent_is_the_index_median_with_its_quartiles_as_range(
        ledger, ingest, write_pack, write_scenario, clock):
    version = ingest(write_pack("prices.yaml", PRICES)).dataset_version
    scenario = load_tco_scenario(write_scenario(MARKET_RENT))
    with Session(ledger) as session:
        resolved = tco.resolve_inputs(scenario, session, on=TODAY, known=clock.now,
                                      dataset_version=version)
    rent = resolved.used["options.rent.rent"]
    assert (rent.value, rent.low, rent.high) == (4.0, 3.5, 5.0)
    assert rent.origin == "market" and rent.item == "h100-sxm5"
    assert "median of 3 reserved_1y offer(s) from 3 provider(s)" in rent.note


def test_no_offer_for_the_gpu_is_a_missing_input_naming_the_rent(
        ledger, ingest, write_pack, write_scenario, clock):
    version = ingest(write_pack("prices.yaml", PRICES)).dataset_version
    scenario = load_tco_scenario(write_scenario(edited(MARKET_RENT, "term: reserved_1y",
                                                       "term: spot")))
    with Session(ledger) as session, pytest.raises(tco.MissingInput) as error:
        tco.resolve_inputs(scenario, session, on=TODAY, known=clock.now,
                           dataset_version=version)
    assert "options.rent.rent" in str(error.value) and "no spot offer" in str(error.value)


def shipped_rent_vs_buy(ledger, ingest, write_pack, clock) -> dict:
    """The shipped own-NVL72-vs-rent-H100 comparison on the shipped packs and PRICES."""
    from pipelines.settings import PROJECT_ROOT

    version = ingest(PROJECT_ROOT / "data" / "sources",
                     write_pack("prices.yaml", PRICES)).dataset_version
    scenario = load_tco_scenario(PROJECT_ROOT / "data" / "scenarios"
                                 / "tco-1t-dense-own-nvl72-vs-rent-h100.yaml")
    with Session(ledger) as session:
        resolved = tco.resolve_inputs(scenario, session, on=TODAY, known=clock.now,
                                      dataset_version=version)
    return tco.evaluate(scenario, resolved, None)


def test_an_options_cost_per_gpu_hour_is_set_beside_the_markets(ledger, ingest, write_pack,
                                                                clock):
    from pipelines.cli.tco import market_lines

    result = shipped_rent_vs_buy(ledger, ingest, write_pack, clock)
    h100 = result["market"]["rent-h100"]
    assert h100["gpu"] == "h100-sxm5"
    assert h100["usd_per_gpu_hour"]["reserved_1y"]["offers"] >= 3
    # The owned NVL72 beside GB200's two shipped offers, each per GPU: Spheron's Superchip
    # (2 GPUs, 2026-03-17) and CoreWeave's 4-GPU slice of an NVL72 rack (2026-09-20).
    gb200 = result["market"]["own-nvl72"]["usd_per_gpu_hour"]["on_demand"]
    assert result["market"]["own-nvl72"]["gpu"] == "gb200"
    assert (gb200["cheapest_provider"], gb200["median"], gb200["as_of"]) == (
        "spheron", pytest.approx((9.08 / 2 + 42.00 / 4) / 2), "2026-09-20")
    lines = market_lines(result)
    assert [line.split(":")[0] for line in lines] == ["own-nvl72", "rent-h100"]
    assert "renting h100-sxm5 on the market" in lines[1]


def test_the_market_beside_an_option_is_dated_by_its_offers_prices(ledger, ingest, write_pack,
                                                                   clock):
    """The rent side of rent-vs-buy carries its offers' price dates (valid time): the
    2026-11-01 prices known on the clock's day, not the dataset version's date."""
    clock.tick(days=20)
    reserved = shipped_rent_vs_buy(ledger, ingest, write_pack, clock)["market"]["rent-h100"][
        "usd_per_gpu_hour"]["reserved_1y"]
    assert clock.now.date().isoformat() == "2026-11-21"  # the version's date
    # The newest price counted is the pack's; the oldest, a shipped 2025 list price.
    assert reserved["as_of"] == "2026-11-01"
    assert reserved["price_from"] < "2026-01-01" < reserved["as_of"]
