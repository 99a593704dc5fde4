"""The C2C recompute over the reference packs, on SQLite and PostgreSQL: figures come from the
ledger with their origins, one result per scenario and dataset version, and a result is reused
when nothing it reads has changed."""

from __future__ import annotations

import json
import shutil
from datetime import date

import pytest
from sqlalchemy import select

from db.engine import Session
from db.results import c2c_results_frame
from db.schema import Scenario
from pipelines.inputs.scenarios import load_scenario
from pipelines.jobs.c2c import recompute
from pipelines.ledger.cluster_specs import resolve_cluster
from tests.pipelines.conftest import B200_TDP_PACK, SHIPPED_SCENARIOS, SOURCES, edited

ON = date(2026, 11, 22)
ON_B200 = ["13b-dp-only-hgx-ndr", "gpt3-175b-tp8-hgx-ndr"]  # they read b200's figures
ON_GB200 = ["gpt3-175b-tp8-nvl72"]
ALL = ON_B200 + ON_GB200

# A standard outranks the vendor's datasheet, so this becomes b200's peak.
B200_PEAK_PACK = """
source: {key: b200-standard, title: A standard's B200 figures, kind: standard_body,
         published_on: 2026-06-01}
items:
  - {key: b200, name: "B200 (HGX)", kind: gpu, vendor: NVIDIA, family: Blackwell}
observations:
  - {item: b200, metric: peak_dense_bf16, value: 2000, unit: TFLOP/s, as_of: 2026-06-01,
     status: C}
"""


@pytest.fixture
def reference(ingest):
    """The reference packs, ingested: dataset version 1."""
    return ingest(SOURCES)


@pytest.fixture
def scenarios(tmp_path):
    """A folder holding copies of three shipped scenarios."""
    folder = tmp_path / "scenarios"
    folder.mkdir()
    for name in ALL:
        shutil.copy(SHIPPED_SCENARIOS / f"{name}.yaml", folder)
    return folder


@pytest.fixture
def run(ledger, scenarios, clock):
    """recompute() for a dataset version over the scenario folder, at the clock's time."""

    def recompute_version(version):
        return recompute(ledger, scenarios, version, on=ON, now=clock(), code_version="test")

    return recompute_version


def stored(ledger, version=None):
    with Session(ledger) as session:
        return c2c_results_frame(session, version)


# The file's ~11 s (its tests ingest the shipped packs), half per dialect: its weight in the
# order of ./dev test (tests/conftest.py), so it does not start last.
@pytest.mark.slow(seconds=6)
def test_the_shipped_hgx_scenario_reads_its_figures_from_the_ledger(ledger, reference, clock):
    scenario = load_scenario(SHIPPED_SCENARIOS / "gpt3-175b-tp8-hgx-ndr.yaml")
    with Session(ledger) as session:
        hw, used = resolve_cluster(scenario.cluster, session, on=ON, known=clock.now)
    figures = {s.name: s for s in used}

    peak = figures["peak_flops"]
    assert (peak.value, peak.origin, peak.item, peak.metric) == (
        2.25e15, "ledger", "b200", "peak_dense_bf16")
    assert (peak.source, peak.as_of) == ("nvidia-dgx-b200-page", "2024-03-18")
    assert peak.observation_id is not None
    domain = figures["domain_gpus"]
    assert (domain.value, domain.item, domain.metric) == (8, "dgx-b200", "gpus_per_system")
    nic = figures["scaleout_bw_per_nic"]
    assert (nic.origin, nic.item, nic.metric) == ("measured", "ib-ndr", "nic_busbw_measured")
    assert nic.value == pytest.approx(47e9)  # the middle of the measured 46-48 GB/s
    assert figures["scaleout_efficiency"].value == 1.0  # a measurement already includes it
    assert (hw.peak_flops, hw.domain_gpus, hw.scaleout_efficiency) == (2.25e15, 8, 1.0)
    assert hw.scaleout_bw == pytest.approx(47e9)


def test_recompute_stores_one_result_per_scenario_and_version(ledger, reference, run):
    first = run(reference.dataset_version)
    assert (sorted(first.computed), first.reused, first.unchanged, first.failed) == (
        ALL, [], [], {})
    results = stored(ledger, reference.dataset_version)
    assert results["scenario"].tolist() == ALL
    assert results["dataset_version_id"].tolist() == [reference.dataset_version] * 3
    assert results["reused_from_id"].isna().all()
    assert (results["t_iter_s"] > 0).all() and results["fits"].all()
    assert set(results["code_version"]) == {"test"}

    again = run(reference.dataset_version)

    assert (sorted(again.unchanged), again.computed, again.reused) == (ALL, [], [])
    assert stored(ledger)["result_id"].tolist() == results["result_id"].tolist()


def test_a_new_version_that_changes_no_figure_read_reuses_every_result(
        ledger, reference, run, ingest, write_pack, clock):
    run(reference.dataset_version)
    clock.tick()
    newer = ingest(write_pack("tdp.yaml", B200_TDP_PACK))
    assert newer.dataset_changed

    report = run(newer.dataset_version)

    assert (sorted(report.reused), report.computed) == (ALL, [])
    old, new = stored(ledger, reference.dataset_version), stored(ledger, newer.dataset_version)
    assert new["reused_from_id"].tolist() == old["result_id"].tolist()
    assert new["t_iter_s"].tolist() == old["t_iter_s"].tolist()
    assert new["inputs_sha256"].tolist() == old["inputs_sha256"].tolist()


def test_a_better_ranked_source_recomputes_the_scenarios_that_read_its_figure(
        ledger, reference, run, ingest, write_pack, clock):
    run(reference.dataset_version)
    clock.tick()
    newer = ingest(write_pack("peak.yaml", B200_PEAK_PACK))

    report = run(newer.dataset_version)

    assert (sorted(report.computed), report.reused) == (ON_B200, ON_GB200)
    old = stored(ledger, reference.dataset_version).set_index("scenario")
    new = stored(ledger, newer.dataset_version).set_index("scenario")
    for name in ON_B200:  # a slower GPU: each iteration takes longer
        assert new.loc[name, "t_iter_s"] > old.loc[name, "t_iter_s"]
        peak = {s["name"]: s for s in json.loads(new.loc[name, "result_json"])["specs"]}
        assert (peak["peak_flops"]["value"], peak["peak_flops"]["source"]) == (
            2e15, "b200-standard")
    assert new.loc[ON_GB200[0], "t_iter_s"] == old.loc[ON_GB200[0], "t_iter_s"]


def broken_copy(folder, name, old, new):
    """A copy of the shipped HGX scenario named `name`, with one edit."""
    text = (SHIPPED_SCENARIOS / "gpt3-175b-tp8-hgx-ndr.yaml").read_text(encoding="utf-8")
    text = edited(edited(text, "name: gpt3-175b-tp8-hgx-ndr", f"name: {name}"), old, new)
    (folder / f"{name}.yaml").write_text(text, encoding="utf-8")


def test_a_scenario_the_model_cannot_run_fails_alone(ledger, reference, run, scenarios):
    broken_copy(scenarios, "tp7", "tp: 8,", "tp: 7,")
    broken_copy(scenarios, "no-gpu", "gpu: b200", "gpu: no-such-gpu")

    report = run(reference.dataset_version)

    assert sorted(report.computed) == ALL
    assert sorted(report.failed) == ["no-gpu", "tp7"]
    assert report.failed["tp7"].endswith(
        "tp7.yaml:9 parallel.tp: tp=7 does not divide the 96 attention heads")
    assert report.failed["no-gpu"].startswith(
        "cluster.gpu_specs.peak: the ledger has no peak_dense_bf16 for item 'no-such-gpu'")
    assert stored(ledger)["scenario"].tolist() == ALL
    with Session(ledger) as session:  # a failed scenario leaves no row behind
        assert sorted(session.scalars(select(Scenario.name))) == ALL


def test_a_scenario_file_that_cannot_be_read_fails_alone(ledger, reference, run, scenarios):
    broken_copy(scenarios, "bare-number", "gpu: b200", "gpu: b200\n  gpu_specs: {hbm: 80}")
    broken_copy(scenarios, "malformed", "  gpus: 1024", "  gpus: 1024: 2")

    report = run(reference.dataset_version)  # the error is reported, not raised

    assert sorted(report.computed) == ALL
    assert sorted(report.failed) == ["bare-number", "malformed"]  # named by file
    assert "bare-number.yaml:14 cluster.gpu_specs.hbm: expected a quantity" in (
        report.failed["bare-number"])
    assert "malformed.yaml:16 (file): not valid YAML" in report.failed["malformed"]
    assert stored(ledger)["scenario"].tolist() == ALL


def test_each_result_lists_the_figures_it_used_with_their_origins(ledger, reference, run):
    run(reference.dataset_version)
    for row in stored(ledger).itertuples():
        result = json.loads(row.result_json)
        assert result["scenario"] == row.scenario
        assert result["dataset_version"] == reference.dataset_version
        origins = {s["name"]: s["origin"] for s in result["specs"]}
        assert {k: origins[k] for k in ("peak_flops", "hbm_bytes", "scaleup_bw",
                                        "scaleout_bw_per_nic", "nics_per_gpu",
                                        "scaleup_latency")} == {
            "peak_flops": "ledger", "hbm_bytes": "ledger", "scaleup_bw": "ledger",
            "scaleout_bw_per_nic": "measured", "nics_per_gpu": "inline",
            "scaleup_latency": "default"}
        from_ledger = [s for s in result["specs"] if s["origin"] in ("ledger", "measured")]
        assert all(s["source"] and s["as_of"] and s["observation_id"] for s in from_ledger)


def test_each_scenario_is_stored_at_its_best_covered_layout(ledger, reference, run, scenarios):
    # The shipped GPT-3 scenario pins its layout; a copy that searches is stored at its best.
    broken_copy(scenarios, "searched", "layout: pinned", "layout: search")
    run(reference.dataset_version)
    results = stored(ledger).set_index("scenario")
    searched = json.loads(results.loc["searched", "result_json"])
    pinned = json.loads(results.loc["gpt3-175b-tp8-hgx-ndr", "result_json"])

    choice = searched["layout_choice"]
    assert choice["mode"] == "search" and choice["fit"] > 1
    assert searched["band"]["covered"] and searched["band"]["scheme"].startswith("TP")
    # The file's own layout is kept beside, and the search found one at least as fast.
    assert choice["written"]["parallel"] == pinned["parallel"]
    assert searched["t_iter_s"] <= choice["written"]["t_iter_s"] == pinned["t_iter_s"]
    assert searched["parallel"]["global_batch"] == pinned["parallel"]["global_batch"]
    assert pinned["layout_choice"] == {"mode": "pinned"}
    assert pinned["parallel"]["tp"] == 8
