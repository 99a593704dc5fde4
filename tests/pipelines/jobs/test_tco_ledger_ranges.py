"""A TCO input read from the ledger carries the ledger's conflict: the live values the
resolution rule did not pick widen its range, so the Monte Carlo samples them and the
tornado names the input when one of them flips the verdict (issue 39)."""

from __future__ import annotations

from datetime import date

from db.engine import Session
from pipelines.inputs.tco_scenarios import load_tco_scenario
from pipelines.jobs import tco
from tests.pipelines.conftest import edited
from tests.pipelines.jobs.test_tco_rent import OWN_OR_RENT

TODAY = date(2026, 11, 22)

# Two sources price one rack: a vendor's list price and an analyst's (a newer, higher one).
RACK_PRICES = """
sources:
  - source: {key: vendor-list, title: Vendor list price, kind: vendor_press,
             published_on: 2026-06-01}
    observations:
      - {item: rack-x, metric: system_price, value: 3.0e6, unit: USD, as_of: 2026-06-01,
         status: C}
  - source: {key: analyst-note, title: Analyst note, kind: analyst, published_on: 2026-09-01}
    observations:
      - {item: rack-x, metric: system_price, value: 4.2e6, unit: USD, as_of: 2026-09-01,
         status: C}
items:
  - {key: rack-x, name: Rack X, kind: system, vendor: V}
"""
FROM_THE_LEDGER = edited(OWN_OR_RENT, '{name: racks, cost: "7.8e6 USD", life_years: 5, it: true}',
                         "{name: racks, cost: {item: rack-x, metric: system_price, times: 2}, "
                         "life_years: 5, it: true}")


def resolved_cost(ledger, ingest, write_pack, write_scenario, clock, pack: str):
    version = ingest(write_pack("racks.yaml", pack)).dataset_version
    scenario = load_tco_scenario(write_scenario(FROM_THE_LEDGER))
    with Session(ledger) as session:
        resolved = tco.resolve_inputs(scenario, session, on=TODAY, known=clock.now,
                                      dataset_version=version)
    return scenario, resolved


def test_a_conflicting_live_value_widens_the_inputs_range(ledger, ingest, write_pack,
                                                          write_scenario, clock):
    scenario, resolved = resolved_cost(ledger, ingest, write_pack, write_scenario, clock,
                                       RACK_PRICES)
    cost = resolved.used["options.own.capex.racks.cost"]
    # The winner by the resolution rule (the vendor outranks the analyst), x 2 racks ...
    assert cost.value == 6.0e6 and cost.source == "vendor-list"
    # ... ranged over both sources' figures, and the note names the other one.
    assert (cost.low, cost.high) == (6.0e6, 8.4e6)
    assert "; ranged over the ledger's other live values (analyst-note 4.2e6 USD, 2026-09-01)" \
        in cost.note
    result = tco.evaluate(scenario, resolved, None)
    assert "options.own.capex.racks.cost" in result["uncertainty"]["ranged_inputs"]
    assert result["tornado"][0]["input"] == "options.own.capex.racks.cost"


def test_a_single_live_value_stays_a_point(ledger, ingest, write_pack, write_scenario, clock):
    single = RACK_PRICES.split("  - source: {key: analyst-note")[0] + \
        "items:\n  - {key: rack-x, name: Rack X, kind: system, vendor: V}\n"
    _, resolved = resolved_cost(ledger, ingest, write_pack, write_scenario, clock, single)
    cost = resolved.used["options.own.capex.racks.cost"]
    assert (cost.value, cost.low, cost.high) == (6.0e6, 6.0e6, 6.0e6)
    assert "ranged over" not in cost.note


def test_inputs_read_from_one_observation_are_one_draw_not_two():
    """Both options' goodput from the one published run, one price read twice: the Monte
    Carlo and the tornado move them together (at the same place in their ranges), so the
    shared figure adds no spread of its own to a comparison between the options."""
    from pipelines.ledger.figures import FigureUsed

    def ledger(name: str, observation: int) -> FigureUsed:
        return FigureUsed(name, 0.95, "1", "ledger", 0.9, 1.0, "run", "goodput", "src",
                          "2024-07-01", observation)
    used = {"options.b.goodput": ledger("options.b.goodput", 7),
            "options.a.goodput": ledger("options.a.goodput", 7),
            "options.a.pue": ledger("options.a.pue", 8),
            "options.b.pue": FigureUsed("options.b.pue", 1.3, "1", "inline")}
    assert tco.shared_figures(used) == {"options.b.goodput": "options.a.goodput"}
