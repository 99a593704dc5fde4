"""TCO scenario files: what they may say, and the error each mistake gets (file:line field)."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from pipelines.inputs.limits import InputLimits
from pipelines.inputs.scenarios import ScenarioError, scenario_paths
from pipelines.inputs.tco_scenarios import load_tco_scenario
from pipelines.jobs import tco
from tests.pipelines.conftest import SHIPPED_SCENARIOS, edited

TODAY, NOW = date(2026, 11, 22), datetime(2026, 11, 22, tzinfo=UTC)

# Two options, every number inline: no ledger needed. Line numbers matter to the tests.
TWO_OPTIONS = """\
name: small
kind: tco
finance: {cost_of_capital: 0.08, electricity: "0.083 USD/kWh"}
time_cost_per_year: "2e6 USD"
options:
  - name: nvl72
    gpus: 144
    capex:
      - {name: racks, cost: "7.8e6 USD", life_years: 5, it: true}
    it_power: "264 kW"
    pue: 1.15
    colocation: "195 USD/kW/month"
    jct: "30 day"
  - name: hgx
    gpus: 144
    capex:
      - {name: nodes, cost: "3.7e6 USD", life_years: 5, it: true}
    it_power: "200 kW"
    pue: 1.4
    colocation: "195 USD/kW/month"
    jct: "60 day"
"""


def run(path):
    scenario = load_tco_scenario(path)
    resolved = tco.resolve_inputs(scenario, None, on=TODAY, known=NOW)
    return tco.evaluate(scenario, resolved, None)


def test_an_inline_comparison_needs_no_ledger(write_scenario):
    result = run(write_scenario(TWO_OPTIONS))
    assert (result["scale_up"], result["scale_out"], result["speedup"]) == ("nvl72", "hgx", 2.0)
    up, out = result["options"]
    assert up["annual_total_usd"] == pytest.approx(up["annual_capex_usd"]
                                                   + up["annual_opex_usd"])
    k = result["time_cost_per_year_usd"]
    assert k == 2e6  # "USD" on a per-year field is USD per year
    assert result["break_even_speedup"] == pytest.approx(
        (up["annual_total_usd"] + k) / (out["annual_total_usd"] + k))
    assert result["cheaper_option"] == min((up, out), key=lambda o: o["job_cost_usd"])["name"]
    assert result["ranges"] == {} and result["uncertainty"] is None and result["tornado"] == []


def test_every_input_says_where_it_came_from(write_scenario):
    inputs = {u["name"]: u for u in run(write_scenario(TWO_OPTIONS))["inputs"]}
    assert inputs["options.nvl72.it_power"] | {"note": None} == {
        "name": "options.nvl72.it_power", "value": 264.0, "unit": "kW", "origin": "inline",
        "low": None, "high": None, "item": None, "metric": None, "source": None,
        "as_of": None, "observation_id": None, "note": None, "as_of_precision": None}
    assert inputs["options.hgx.power_fraction"]["origin"] == "default"
    assert "conservative" in inputs["options.hgx.power_fraction"]["note"]


def test_a_range_gives_percentiles_and_a_tornado_and_the_same_seed_the_same_answer(
        write_scenario):
    ranged = edited(TWO_OPTIONS, 'cost: "3.7e6 USD"', 'cost: ["3.0e6 USD", "4.4e6 USD"]')
    ranged += "uncertainty: {samples: 2000, seed: 3}\n"
    path = write_scenario(ranged)
    first, again = run(path), run(path)
    assert first == again
    band = first["ranges"]["break_even_speedup"]
    assert band["p10"] < first["break_even_speedup"] < band["p90"]
    hgx = first["options"][1]
    assert set(hgx["ranges"]) == {"annual_capex_usd", "annual_opex_usd", "annual_total_usd",
                                  "usd_per_gpu_hour", "usd_per_useful_gpu_hour", "job_cost_usd"}
    assert [bar["input"] for bar in first["tornado"]] == ["options.hgx.capex.nodes.cost"]
    assert first["uncertainty"]["samples"] == 2000


@pytest.mark.parametrize(("old", "new", "line", "field", "reason"), [
    ("    it_power: \"264 kW\"\n", "", 6, "options.nvl72.it_power", "missing"),
    ('it_power: "264 kW"', "it_power: 264", 10, "options.nvl72.it_power",
     'expected a quantity with a unit, e.g. "264 kW"'),
    ('it_power: "264 kW"', 'it_power: "264 kB"', 10, "options.nvl72.it_power",
     "is a data unit"),
    ('jct: "30 day"', 'jct: "30 kW"', 13, "options.nvl72.jct", "does not fit"),
    ("pue: 1.15", "pue: 0.9", 11, "options.nvl72.pue", "must be at least 1"),
    ('cost: "3.7e6 USD"', 'cost: ["4e6 USD", "3e6 USD"]', 17, "options.hgx.capex.nodes.cost",
     "contradictory range"),
    ('jct: "30 day"', 'jct: "30 day"\n    c2c_scenario: 1t-dense-nvl72', 14,
     "options.nvl72.c2c_scenario", "contradictory: give jct or c2c_scenario"),
    ("  - name: hgx", "  - name: nvl72", 14, "options[1].name", "two options are named"),
    ("kind: tco\n", "kind: tco\ntraining_run: {chips: 8}\n", 3, "options",
     "contradictory: give options (a comparison) or training_run"),
    ("    pue: 1.4\n", "    pue: 1.4\n    speed: 2\n", 20, "options[1].speed", "unknown key"),
    ("finance: {cost_of_capital: 0.08, ", "finance: {", 3, "finance.cost_of_capital",
     "missing"),
])
def test_a_bad_scenario_names_file_line_and_field(write_scenario, old, new, line, field, reason):
    path = write_scenario(edited(TWO_OPTIONS, old, new))
    with pytest.raises(ScenarioError) as caught:
        run(path)
    error = caught.value
    assert (error.path, error.line, error.field) == (str(path), line, field)
    assert reason in error.reason
    assert str(error).startswith(f"{path}:{line} {field}: ")


def test_compare_names_which_options_are_u_and_o(write_scenario):
    swapped = TWO_OPTIONS + "compare: {scale_up: hgx, scale_out: nvl72}\n"
    assert run(write_scenario(swapped))["speedup"] == 0.5
    with pytest.raises(ScenarioError, match=r"compare.scale_up: no option named 'gb300'"):
        run(write_scenario(TWO_OPTIONS + "compare: {scale_up: gb300}\n"))


def test_a_residual_above_the_cost_is_contradictory(write_scenario):
    path = write_scenario(edited(TWO_OPTIONS, 'cost: "3.7e6 USD",',
                                 'cost: "3.7e6 USD", residual: "5e6 USD",'))
    with pytest.raises(ScenarioError, match="options.hgx.capex.nodes.residual: contradictory"):
        run(path)


def test_a_ledger_reference_without_a_ledger_names_the_input(write_scenario):
    path = write_scenario(edited(TWO_OPTIONS, "pue: 1.4", "pue: {item: ai-datacenter-design, "
                                                          "metric: pue}"))
    with pytest.raises(tco.MissingInput, match=r"scenario.yaml:19 options.hgx.pue: no ledger"):
        run(path)


def test_a_missing_default_from_the_ledger_is_named_too(write_scenario):
    path = write_scenario(edited(TWO_OPTIONS, 'electricity: "0.083 USD/kWh"', "electricity: "
                                 "{item: us-industrial-electricity, metric: electricity_price}"))
    with pytest.raises(tco.MissingInput, match="finance.electricity"):
        run(path)


def test_the_shipped_tco_scenarios_all_load():
    paths = scenario_paths(SHIPPED_SCENARIOS, "tco")
    names = {load_tco_scenario(p).name for p in paths}
    assert names == {p.stem for p in paths}
    assert {"tco-worked-illustration", "tco-gpt4-epoch", "tco-seed-30d-vs-180d",
            "tco-1t-dense-nvl72-vs-hgx-ndr", "tco-1t-dense-nvl72-vs-hgx-800gbe"} <= names
    # and the C2C scenario list does not pick them up
    assert not set(scenario_paths(SHIPPED_SCENARIOS)) & set(paths)


def test_the_shipped_worked_illustration_reproduces_its_hand_calculation():
    result = run(SHIPPED_SCENARIOS / "tco-worked-illustration.yaml")
    up, out = result["options"]
    assert (up["annual_total_usd"], out["annual_total_usd"]) == pytest.approx((94.1e6, 49.0e6),
                                                                              rel=0.01)
    assert result["break_even_speedup"] == pytest.approx(1.92, rel=0.01)
    assert (up["job_cost_usd"], out["job_cost_usd"]) == pytest.approx((7.7e6, 24.2e6), rel=0.01)


@pytest.mark.parametrize(("old", "new", "line", "field", "reason"), [
    ('cost: "7.8e6 USD"', 'cost: "1e400 USD"', 9, "options.nvl72.capex.racks.cost",
     "expected a finite (not inf, nan or beyond 1.8e308) number, got '1e400 USD'"),
    ('cost: "7.8e6 USD"', 'cost: ["1e6 USD", "1e400 USD"]', 9,
     "options.nvl72.capex.racks.cost", "expected a finite"),
    ("pue: 1.15", "pue: .nan", 11, "options.nvl72.pue", "expected a finite"),
    ("pue: 1.15", "pue: .inf", 11, "options.nvl72.pue", "expected a finite"),
    ("gpus: 144\n    capex:\n      - {name: racks", "gpus: 1" + "0" * 400
     + "\n    capex:\n      - {name: racks", 7, "options.nvl72.gpus", "expected a finite"),
    ("cost_of_capital: 0.08", "cost_of_capital: [0.08]", 3, "finance.cost_of_capital",
     "a range is [low, high]"),
    ("pue: 1.15", "pue: {item: x, metric: pue, times: 1e400}", 11, "options.nvl72.pue.times",
     "expected a finite"),
    ("pue: 1.15", "pue: {item: x, metric: pue, per: .nan}", 11, "options.nvl72.pue.per",
     "expected a finite"),
    ("name: small\n", "name: small\nuncertainty: {samples: 1e12}\n", 2, "uncertainty.samples",
     "1,000,000,000,000 samples is more than the limit of 1,000,000"),
    ("name: small\n", "name: small\nuncertainty: {samples: [10]}\n", 2, "uncertainty.samples",
     "expected a whole number >= 1, got a list of 1"),
])
def test_a_non_finite_huge_or_non_scalar_value_names_file_line_and_field(
        write_scenario, old, new, line, field, reason):
    path = write_scenario(edited(TWO_OPTIONS, old, new))
    with pytest.raises(ScenarioError) as caught:
        run(path)
    error = caught.value
    assert (error.path, error.line, error.field) == (str(path), line, field)
    assert reason in error.reason


def test_the_sample_limit_is_an_argument(write_scenario):
    path = write_scenario(edited(TWO_OPTIONS, "name: small\n",
                                 "name: small\nuncertainty: {samples: 5000}\n"))
    with pytest.raises(ScenarioError, match="5,000 samples is more than the limit of 4,999"):
        load_tco_scenario(path, InputLimits(max_samples=4999))
    assert load_tco_scenario(path, InputLimits(max_samples=5000)).samples == 5000


def test_finite_inputs_whose_costs_overflow_are_an_error_not_inf(write_scenario):
    path = write_scenario(edited(edited(TWO_OPTIONS, 'cost: "7.8e6 USD"', 'cost: "1e308 USD"'),
                                 'cost: "3.7e6 USD"', 'cost: ["1e307 USD", "1.7e308 USD"]'))
    with pytest.raises(ScenarioError, match="the cost model gives no finite") as caught:
        run(path)
    assert caught.value.field == "(scenario)" and caught.value.path == str(path)


def test_a_scale_out_option_that_costs_nothing_is_an_error_not_a_division_by_zero(
        write_scenario):
    free = TWO_OPTIONS.replace('time_cost_per_year: "2e6 USD"', 'time_cost_per_year: "0 USD"')
    free = edited(edited(edited(free, 'electricity: "0.083 USD/kWh"', 'electricity: '
                                "\"0 USD/kWh\""), 'cost: "3.7e6 USD"', 'cost: "0 USD"'),
                  'jct: "60 day"', 'jct: "60 day"\n    colocation: "0 USD/kW/month"')
    path = write_scenario(free.replace('    colocation: "195 USD/kW/month"\n    jct: "60 day"',
                                       '    jct: "60 day"'))
    with pytest.raises(ScenarioError, match="the scale-out option costs nothing a year"):
        run(path)


def test_a_key_written_twice_names_the_key_and_both_lines(write_scenario):
    path = write_scenario(edited(TWO_OPTIONS, "pue: 1.4\n", "pue: 1.4\n    pue: 1.2\n"))
    with pytest.raises(ScenarioError) as caught:
        load_tco_scenario(path)
    error = caught.value
    assert (error.path, error.line, error.field) == (str(path), 20, "options[1].pue")
    assert error.reason == "written twice (first on line 19); give it once"


def test_each_owned_options_capex_says_which_categories_no_item_covers(write_scenario):
    """Issue 39: capex read against one set of categories (compute, network, cooling,
    facility): the NVL72's all-in racks are compute and network, its retrofit cooling; the
    HGX nodes compute only. Facility is the colocation's (an opex) here, so only the missing
    cooling and network of the HGX are "not in the ledger"."""
    text = edited(edited(TWO_OPTIONS, '{name: racks, cost: "7.8e6 USD", life_years: 5, it: true}',
                         '{name: racks, category: [compute, network], cost: "7.8e6 USD", '
                         'life_years: 5, it: true}\n      - {name: retrofit, category: cooling, '
                         'cost: "1e6 USD", life_years: 10}'),
                  '{name: nodes, cost', '{name: nodes, category: compute, cost')
    up, out = run(write_scenario(text))["options"]
    assert up["capex"] == {"items": [
        {"name": "racks", "categories": ["compute", "network"], "cost_usd": 7.8e6},
        {"name": "retrofit", "categories": ["cooling"], "cost_usd": 1e6}],
        "missing": [], "facility_in_colocation": True}
    assert out["capex"]["missing"] == ["network", "cooling"]
    # A scenario that names no category covers none: every one is missing.
    _, plain = run(write_scenario(TWO_OPTIONS))["options"]
    assert plain["capex"]["missing"] == ["compute", "network", "cooling"]


def test_a_capex_category_outside_the_list_names_its_field(write_scenario):
    path = write_scenario(edited(TWO_OPTIONS, "{name: racks, cost", "{name: racks, "
                                 "category: [compute, gold], cost"))
    with pytest.raises(ScenarioError) as caught:
        run(path)
    assert (caught.value.line, caught.value.field) == (9, "options.nvl72.capex.racks.category")
    assert "expected one of compute, network, cooling, facility or a list of them" in \
        caught.value.reason
