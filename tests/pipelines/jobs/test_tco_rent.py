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
    assert "median of 3 reserved_1y offers from 3 providers in the price index" in rent.note


def test_no_offer_for_the_gpu_is_a_missing_input_naming_the_rent(
        ledger, ingest, write_pack, write_scenario, clock):
    version = ingest(write_pack("prices.yaml", PRICES)).dataset_version
    scenario = load_tco_scenario(write_scenario(edited(MARKET_RENT, "term: reserved_1y",
                                                       "term: spot")))
    with Session(ledger) as session, pytest.raises(tco.MissingInput) as error:
        tco.resolve_inputs(scenario, session, on=TODAY, known=clock.now,
                           dataset_version=version)
    assert "options.rent.rent" in str(error.value) and "no spot offer" in str(error.value)


# Three more providers' B200 contract prices beside the shipped one (Hyperstack's 5.10).
B200_CONTRACTS = """
source: {key: cloud-contracts-2026-11, title: Cloud contract prices, kind: vendor_datasheet,
         published_on: 2026-11-01}
items:
  - {key: a-b200-contract, name: A B200 contract, kind: cloud_offer}
  - {key: b-b200-contract, name: B B200 contract, kind: cloud_offer}
  - {key: c-b200-contract, name: C B200 contract, kind: cloud_offer}
observations:
  - {item: a-b200-contract, metric: gpu_hour_price, value: 3.0, unit: USD/hour,
     as_of: 2026-11-01, status: C, offer: {provider: a, term: contract, gpu: b200, region: eu}}
  - {item: b-b200-contract, metric: gpu_hour_price, value: 4.0, unit: USD/hour,
     as_of: 2026-11-01, status: C, offer: {provider: b, term: contract, gpu: b200, region: us}}
  - {item: c-b200-contract, metric: gpu_hour_price, value: 6.0, unit: USD/hour,
     as_of: 2026-11-01, status: C, offer: {provider: c, term: contract, gpu: b200, region: us}}
"""


def shipped_rent_vs_buy(ledger, ingest, write_pack, clock) -> dict:
    """The shipped own-vs-rent-B200 comparison on the shipped packs and B200_CONTRACTS."""
    from pipelines.settings import PROJECT_ROOT

    version = ingest(PROJECT_ROOT / "data" / "sources",
                     write_pack("prices.yaml", B200_CONTRACTS)).dataset_version
    scenario = load_tco_scenario(PROJECT_ROOT / "data" / "scenarios"
                                 / "tco-1t-dense-own-vs-rent-b200.yaml")
    with Session(ledger) as session:
        resolved = tco.resolve_inputs(scenario, session, on=TODAY, known=clock.now,
                                      dataset_version=version)
    return tco.evaluate(scenario, resolved, None)


def test_an_options_cost_per_gpu_hour_is_set_beside_the_markets(ledger, ingest, write_pack,
                                                                clock):
    from pipelines.cli.tco import market_lines

    result = shipped_rent_vs_buy(ledger, ingest, write_pack, clock)
    rented = result["market"]["rent-hgx-b200"]
    assert rented["gpu"] == "b200"
    contract = rented["usd_per_gpu_hour"]["contract"]
    assert contract["offers"] == 4 and contract["median"] == pytest.approx((4.0 + 5.10) / 2)
    # Own against rent on the same GPU: the owned B200s beside B200's on-demand offers.
    owned = result["market"]["own-hgx-b200"]
    assert owned["gpu"] == "b200" and owned["usd_per_gpu_hour"]["on_demand"]["offers"] >= 3
    lines = market_lines(result)
    assert [line.split(":")[0] for line in lines] == ["own-hgx-b200", "rent-hgx-b200"]
    assert "renting b200 on the market" in lines[1]


def test_owning_and_renting_one_machine_differ_by_price_alone(ledger, ingest, write_pack,
                                                              clock):
    """Issue 39: both options run one C2C scenario, so one job time and one model error:
    the speed-up is 1 in every draw, and the margin is the prices' alone."""
    result = shipped_rent_vs_buy(ledger, ingest, write_pack, clock)
    own, rent = result["options"]
    assert own["jct_days"] == rent["jct_days"]
    assert result["ranges"]["speedup"] == {"p10": 1.0, "p50": 1.0, "p90": 1.0}
    verdict = result["verdict"]
    assert verdict["cheaper"] == "own-hgx-b200"
    assert verdict["saving"] == pytest.approx(
        1 - own["usd_per_gpu_hour"] / rent["usd_per_gpu_hour"])
    # What spreads the margin is the market's contract prices (their P25-P75), not job time.
    assert verdict["saving_p10"] < verdict["saving"] < verdict["saving_p90"]
    bars = [bar["input"] for bar in result["tornado"]]
    assert "options.rent-hgx-b200.rent" in bars and "options.rent-hgx-b200.jct" not in bars


def test_the_market_beside_an_option_is_dated_by_its_offers_prices(ledger, ingest, write_pack,
                                                                   clock):
    """The rent side of rent-vs-buy carries its offers' price dates (valid time): the
    2026-11-01 prices known on the clock's day, not the dataset version's date."""
    clock.tick(days=20)
    contract = shipped_rent_vs_buy(ledger, ingest, write_pack, clock)["market"][
        "rent-hgx-b200"]["usd_per_gpu_hour"]["contract"]
    assert clock.now.date().isoformat() == "2026-11-21"  # the version's date
    # The newest price counted is the pack's; the oldest, the shipped one of 2026-08-26.
    assert contract["as_of"] == "2026-11-01"
    assert contract["price_from"] == "2026-08-26"
