"""`specledger tco`: the JSON the issue specifies, the table people read, and exit codes."""

from __future__ import annotations

import json

import pytest

from tests.pipelines.conftest import SHIPPED_SCENARIOS, SOURCES

WORKED = str(SHIPPED_SCENARIOS / "tco-worked-illustration.yaml")
SEED = str(SHIPPED_SCENARIOS / "tco-seed-30d-vs-180d.yaml")
OPTION_KEYS = {"name", "annual_capex_usd", "annual_opex_usd", "annual_total_usd",
               "usd_per_gpu_hour", "job_cost_usd"}
INPUT_KEYS = {"name", "value", "unit", "source", "as_of"}


def flat(text: str) -> str:
    """The console wraps long lines at its width: compare text with runs of spaces folded."""
    return " ".join(text.split())


def test_tco_json_has_the_issues_shape_without_a_ledger(cli):
    result = cli("tco", WORKED, "--json")
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    assert set(printed) >= {"scenario", "options", "break_even_speedup", "speedup",
                            "cheaper_option", "inputs"}
    assert all(set(option) >= OPTION_KEYS for option in printed["options"])
    assert all(set(used) >= INPUT_KEYS for used in printed["inputs"])
    assert (printed["scenario"], printed["dataset_version"]) == ("tco-worked-illustration", None)
    assert printed["break_even_speedup"] == pytest.approx(1.92, rel=0.01)
    assert (printed["speedup"], printed["cheaper_option"]) == (6.0, "nvl72")


def test_tco_prints_costs_break_even_and_the_inputs_used(cli):
    result = cli("tco", WORKED)
    assert result.exit_code == 0, result.output
    shown = flat(result.stdout)
    assert "94.1 M" in shown and "49.0 M" in shown
    assert "s* = (R_U + K) / (R_O + K) = 1.92" in shown
    assert "s = 6.00, so nvl72 costs less per job" in shown
    assert "options.nvl72.capex.retrofit.cost" in shown


def test_tco_with_ledger_defaults_and_ranges_gives_percentiles(cli):
    ingested = json.loads(cli("ingest", str(SOURCES), "--json").stdout)
    printed = json.loads(cli("tco", SEED, "--json").stdout)
    assert printed["dataset_version"] == ingested["dataset_version"]
    assert set(printed["ranges"]["break_even_speedup"]) == {"p10", "p50", "p90"}
    assert all(set(o["ranges"]["job_cost_usd"]) == {"p10", "p50", "p90"}
               for o in printed["options"])
    by_name = {u["name"]: u for u in printed["inputs"]}
    electricity = by_name["finance.electricity"]  # not in the file: the ledger's default
    assert (electricity["source"], electricity["unit"]) == ("epoch-training-cost-trends",
                                                            "USD/kWh")
    # What moves s* most: the DGX B200's price, which the ledger has two figures of.
    assert printed["tornado"][0]["input"] == "options.hgx-ndr.capex.nodes.cost"
    assert "options.nvl72.pue" in [bar["input"] for bar in printed["tornado"]]
    shown = flat(cli("tco", SEED).stdout)
    assert "P10 to P90 over the ranged inputs" in shown and "what moves" in shown


def test_the_training_run_mode_prints_epochs_breakdown(cli):
    cli("ingest", str(SOURCES))
    result = cli("tco", str(SHIPPED_SCENARIOS / "tco-gpt4-epoch.yaml"))
    assert result.exit_code == 0, result.output
    shown = flat(result.stdout)
    assert "29.9 M" in shown and "40.4 M" in shown
    assert "acquired 2020-08-19" in shown


def test_a_bad_tco_scenario_exits_2_naming_file_line_and_field(cli, write_scenario):
    text = (SHIPPED_SCENARIOS / "tco-worked-illustration.yaml").read_text()
    path = write_scenario(text.replace('it_power: "7.39 MW"', 'it_power: 7.39'))
    result = cli("tco", str(path))
    assert result.exit_code == 2
    assert f"{path}:17 options.nvl72.it_power: expected a quantity with a unit" in \
        flat(result.stderr)


def test_a_ledger_default_with_an_empty_ledger_exits_2_naming_the_input(cli):
    result = cli("tco", SEED)
    assert result.exit_code == 2
    assert "finance.electricity: no ledger is open" in flat(result.stderr)


# --- hostile and careless scenarios (issue 15): exit 2 naming file:line field, never a crash

def test_a_cost_that_overflows_its_unit_exits_2_naming_it(cli, write_scenario):
    text = (SHIPPED_SCENARIOS / "tco-worked-illustration.yaml").read_text()
    path = write_scenario(text.replace('cost: "218.4e6 USD"', 'cost: "1e400 USD"'))
    result = cli("tco", str(path), "--json")
    assert result.exit_code == 2, (result.output, result.exception)
    assert (f"{path}:15 options.nvl72.capex.racks.cost: expected a finite (not inf, nan or "
            "beyond 1.8e308) number, got '1e400 USD'") in flat(result.stderr)
    assert result.stdout == ""


def test_a_trillion_monte_carlo_samples_are_refused_naming_the_setting(cli, write_scenario):
    text = (SHIPPED_SCENARIOS / "tco-worked-illustration.yaml").read_text()
    path = write_scenario(text + "uncertainty: {samples: 1e12, seed: 1}\n")
    result = cli("tco", str(path))
    assert result.exit_code == 2, (result.output, result.exception)
    shown = flat(result.stderr)
    assert (f"{path}:33 uncertainty.samples: 1,000,000,000,000 samples is more than the limit "
            "of 1,000,000") in shown
    assert "SPECLEDGER_MAX_SAMPLES" in shown


def test_the_sample_limit_is_the_max_samples_setting(cli, write_scenario, monkeypatch):
    text = (SHIPPED_SCENARIOS / "tco-worked-illustration.yaml").read_text()
    path = write_scenario(text.replace('cost: "42e6 USD"', 'cost: ["40e6 USD", "44e6 USD"]')
                          + "uncertainty: {samples: 2000, seed: 1}\n")
    monkeypatch.setenv("SPECLEDGER_MAX_SAMPLES", "1000")
    assert "limit of 1,000" in flat(cli("tco", str(path)).stderr)
    monkeypatch.setenv("SPECLEDGER_MAX_SAMPLES", "2000")
    result = cli("tco", str(path), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["uncertainty"]["samples"] == 2000
