"""The TCO recompute over the reference packs, on SQLite and PostgreSQL: defaults come from the
ledger with their sources, JCTs from the C2C model, one result per scenario and dataset
version, reused while nothing it reads changes."""

from __future__ import annotations

import json
import shutil
from datetime import date

import pytest

from db.engine import Session
from db.results import c2c_results_frame, tco_results_frame
from pipelines.inputs.tco_scenarios import load_tco_scenario
from pipelines.jobs import c2c, tco
from tests.pipelines.conftest import B200_TDP_PACK, SHIPPED_SCENARIOS, SOURCES

ON = date(2026, 11, 22)
TCO = ["tco-gpt4-epoch", "tco-seed-30d-vs-180d", "tco-1t-dense-nvl72-vs-hgx-ndr"]
C2C = ["1t-dense-nvl72", "1t-dense-hgx-ndr"]  # the 1T TCO scenario takes its JCTs from these

# A later, higher colocation price: the default every option without its own reads.
COLO_PACK = """
source: {key: cbre-2026, title: CBRE North America Data Center Trends 2026, kind: analyst,
         published_on: 2026-09-01}
items:
  - {key: colo-na-primary-250-500kw, name: "Colocation, North America primary markets",
     kind: cost_benchmark, vendor: CBRE, family: Colocation}
observations:
  - {item: colo-na-primary-250-500kw, metric: colocation_price, value: 230, unit: USD/kW/month,
     as_of: 2026-06, status: C}
"""


@pytest.fixture
def scenarios(tmp_path):
    folder = tmp_path / "scenarios"
    folder.mkdir()
    for name in TCO + C2C:
        shutil.copy(SHIPPED_SCENARIOS / f"{name}.yaml", folder)
    return folder


@pytest.fixture
def run(ledger, scenarios, clock):
    def recompute_version(version):
        # The graph's order: TCO prices jobs with the version's stored C2C estimates.
        c2c.recompute(ledger, scenarios, version, on=ON, now=clock(), code_version="test")
        return tco.recompute(ledger, scenarios, version, on=ON, now=clock(),
                             code_version="test")
    return recompute_version


def stored(ledger, version=None):
    with Session(ledger) as session:
        return tco_results_frame(session, version)


def result_of(frame, scenario):
    return json.loads(frame.set_index("scenario").loc[scenario, "result_json"])


# The file's ~11 s (its tests ingest the shipped packs), half per dialect: its weight in the
# order of ./dev test (tests/conftest.py), so it does not start last.
@pytest.mark.slow(seconds=6)
def test_epochs_gpt4_figure_is_reproduced_from_the_ledger(ledger, ingest, run):
    version = ingest(SOURCES).dataset_version
    assert sorted(run(version).computed) == sorted(TCO)
    result = result_of(stored(ledger, version), "tco-gpt4-epoch")
    assert result["total_usd"] == pytest.approx(40.1e6, rel=0.01)
    assert (result["hardware_usd"], result["interconnect_usd"], result["energy_usd"]) == \
        pytest.approx((29.66e6, 6.96e6, 3.50e6), rel=0.01)
    inputs = {u["name"]: u for u in result["inputs"]}
    price = inputs["training_run.price_per_chip"]
    assert (price["value"], price["item"], price["as_of"]) == (24_875, "dgx-a100", "2020-05-14")
    assert result["price_date"] == "2020-05-14"  # the price observation's date
    assert inputs["training_run.electricity"]["value"] == 0.0806  # valid on 2023-03-14


def test_every_ledger_input_carries_its_source_and_date(ledger, ingest, run):
    version = ingest(SOURCES).dataset_version
    run(version)
    for scenario in TCO:
        for used in result_of(stored(ledger, version), scenario)["inputs"]:
            assert used["origin"] in {"inline", "ledger", "default", "c2c"}, used
            if used["origin"] == "ledger":   # dated, or saying its source gives no date
                assert used["source"] and used["observation_id"], used
                assert used["as_of"] or "undated (its source gives no date" in used["note"], used
            else:
                assert used["source"] is None and used["note"], used
    seed = {u["name"]: u for u in result_of(stored(ledger), "tco-seed-30d-vs-180d")["inputs"]}
    colo = seed["options.nvl72.colocation"]  # not in the file: the ledger's default
    assert (colo["item"], colo["value"]) == ("colo-na-primary-250-500kw", 194.95)
    assert colo["note"].startswith("default: CBRE")


def test_a_ranged_ledger_value_gives_percentiles(ledger, ingest, run):
    run(ingest(SOURCES).dataset_version)
    result = result_of(stored(ledger), "tco-seed-30d-vs-180d")
    # The DLC PUE is a range (1.10-1.20); the DGX B200's price and the NVL72 rack's power are
    # ranged over the ledger's other live values ($379k and $515k; 120 and 132 kW).
    assert result["uncertainty"]["ranged_inputs"] == [
        "options.hgx-ndr.capex.nodes.cost", "options.nvl72.it_power", "options.nvl72.pue"]
    inputs = {u["name"]: u for u in result["inputs"]}
    assert "ranged over the ledger's other live values" in \
        inputs["options.hgx-ndr.capex.nodes.cost"]["note"]
    band = result["ranges"]["break_even_speedup"]
    assert band["p10"] < band["p50"] < band["p90"]
    # The winning price ($379k) is its range's low end: the point estimate sits at one end of
    # what that input spreads, which the tornado's bar for it shows.
    bar = next(b for b in result["tornado"] if b["input"] == "options.hgx-ndr.capex.nodes.cost")
    assert result["break_even_speedup"] in [pytest.approx(v) for v in bar["break_even_speedup"]]


def test_a_jct_from_the_c2c_model_matches_its_time_to_train(ledger, ingest, run, scenarios,
                                                             clock):
    version = ingest(SOURCES).dataset_version
    run(version)
    c2c.recompute(ledger, scenarios, version, on=ON, now=clock(), code_version="test")
    with Session(ledger) as session:
        days = c2c_results_frame(session, version).set_index("scenario")["time_to_train_days"]
    result = result_of(stored(ledger, version), "tco-1t-dense-nvl72-vs-hgx-ndr")
    jct = {o["name"]: o["jct_days"] for o in result["options"]}
    # The wall clock: failure-free time ÷ (availability × goodput), goodput the ledger's.
    used = {u["name"]: u for u in result["inputs"]}
    stretch = {name: used[f"options.{name}.goodput"]["value"] for name in jct}
    assert used["options.nvl72.goodput"]["item"] == "meta-llama3-405b-16k-h100"
    assert jct == pytest.approx({"nvl72": days["1t-dense-nvl72"] / stretch["nvl72"],
                                 "hgx-ndr": days["1t-dense-hgx-ndr"] / stretch["hgx-ndr"]})
    assert result["speedup"] == pytest.approx(days["1t-dense-hgx-ndr"] / days["1t-dense-nvl72"])
    assert result["c2c"]["nvl72"]["gpus"] == 3072
    origin = {u["name"]: u for u in result["inputs"]}["options.nvl72.jct"]
    assert origin["origin"] == "c2c" and "1t-dense-nvl72" in origin["note"]


def test_results_are_reused_until_an_input_they_read_changes(ledger, ingest, write_pack, run):
    first = ingest(SOURCES).dataset_version
    run(first)
    assert sorted(run(first).unchanged) == sorted(TCO)  # already stored for this version

    unrelated = ingest(write_pack("unrelated.yaml", B200_TDP_PACK)).dataset_version
    assert sorted(run(unrelated).reused) == sorted(TCO)

    dearer = ingest(write_pack("colo.yaml", COLO_PACK)).dataset_version
    report = run(dearer)
    # The seed and 1T scenarios read the default colocation price; GPT-4's run does not.
    assert sorted(report.computed) == ["tco-1t-dense-nvl72-vs-hgx-ndr", "tco-seed-30d-vs-180d"]
    assert report.reused == ["tco-gpt4-epoch"]
    before = result_of(stored(ledger, first), "tco-seed-30d-vs-180d")
    after = result_of(stored(ledger, dearer), "tco-seed-30d-vs-180d")
    assert after["options"][0]["annual_opex_usd"] > before["options"][0]["annual_opex_usd"]


def test_a_broken_tco_scenario_fails_alone(ledger, ingest, run, scenarios):
    (scenarios / "broken.yaml").write_text(
        "name: broken\nkind: tco\nfinance: {cost_of_capital: 0.1}\noptions: []\n")
    report = run(ingest(SOURCES).dataset_version)
    assert sorted(report.computed) == sorted(TCO)
    assert report.failed == {"broken": f"{scenarios / 'broken.yaml'}:4 options: a comparison "
                                       "needs at least two options"}


def test_a_c2c_scenario_on_another_gpu_count_is_contradictory(ledger, ingest, run, scenarios):
    path = scenarios / "tco-1t-dense-nvl72-vs-hgx-ndr.yaml"
    path.write_text(path.read_text().replace("gpus: 3072\n    c2c_scenario: 1t-dense-nvl72",
                                             "gpus: 4032\n    c2c_scenario: 1t-dense-nvl72"))
    report = run(ingest(SOURCES).dataset_version)
    assert "contradictory: C2C scenario '1t-dense-nvl72' runs on 3072 GPUs but the option " \
           "has 4032" in report.failed["tco-1t-dense-nvl72-vs-hgx-ndr"]
    assert load_tco_scenario(path).c2c_links[0].scenario == "1t-dense-nvl72"
