"""`specledger estimate` and `specledger sweep`: the JSON shapes and exit codes."""

from __future__ import annotations

import json
import time

import pytest
from typer.testing import CliRunner

from pipelines.cli.app import app
from tests.conftest import pg_url_or_skip, reset_pg
from tests.pipelines.conftest import GPT3_INLINE, SHIPPED_SCENARIOS, SOURCES, edited

ESTIMATE_KEYS = {
    "scenario", "gpus", "t_iter_s", "t_compute_s", "t_bubble_s", "t_comm_link_s",
    "t_comm_exposed_s", "c2c", "c2c_scale_up", "c2c_scale_out", "class", "recommended_fabric",
    "model_tflops_per_gpu", "hw_tflops_per_gpu", "mfu", "memory_gib_per_gpu", "fits",
    "time_to_train_days", "dataset_version",
}
DIMENSIONS = {"tp", "cp", "pp", "dp", "ep"}
SHIPPED_HGX = str(SHIPPED_SCENARIOS / "gpt3-175b-tp8-hgx-ndr.yaml")


def test_estimate_and_sweep_have_help():
    for command in ("estimate", "sweep"):
        result = CliRunner().invoke(app, [command, "--help"])
        assert result.exit_code == 0, command
        assert "Usage" in result.output


def test_estimate_json_on_an_inline_scenario_needs_no_ledger(cli, write_scenario):
    result = cli("estimate", str(write_scenario()), "--json", "--as-written")
    assert result.exit_code == 0, result.output
    estimate = json.loads(result.stdout)
    assert set(estimate) >= ESTIMATE_KEYS
    assert set(estimate["t_comm_link_s"]) == set(estimate["t_comm_exposed_s"]) == DIMENSIONS
    assert (estimate["scenario"], estimate["gpus"], estimate["dataset_version"]) == (
        "gpt3-175b-tp8-pp8", 64, None)  # tp 8 x pp 8 x dp 1
    assert estimate["t_iter_s"] == pytest.approx(
        estimate["t_compute_s"] + estimate["t_bubble_s"]
        + sum(estimate["t_comm_exposed_s"].values()))
    assert 0 < estimate["mfu"] < 1 and estimate["fits"] is True
    assert estimate["time_to_train_days"] > 0
    assert {s["origin"] for s in estimate["specs"]} == {"inline", "default"}


def test_estimate_prints_the_figures_used(cli, write_scenario):
    result = cli("estimate", str(write_scenario()), "--as-written")
    assert result.exit_code == 0, result.output
    assert "gpt3-175b-tp8-pp8 on 64 GPUs, the file's own layout" in result.stdout
    assert "figures used" in result.stdout
    assert "peak_flops" in result.stdout and "inline" in result.stdout


def test_sweep_json_gives_the_fastest_layouts_first(cli, write_scenario):
    free_layout = edited(GPT3_INLINE, "parallel: {tp: 8, pp: 8, dp: 1, ep: 1, micro_batch: 1, "
                         "global_batch: 64, interleave: 1,\n           sequence_parallel: "
                         "false, recompute: full, zero: 1}", "parallel: {global_batch: 64}")
    path = write_scenario(edited(free_layout, "gpus: 1024", "gpus: 64"))
    result = cli("sweep", str(path), "--top", "3", "--json")
    assert result.exit_code == 0, result.output
    sweep = json.loads(result.stdout)
    assert sweep["evaluated"] >= sweep["valid"] >= 3 and sweep["seconds"] >= 0
    best = sweep["best"]
    assert len(best) == 3
    assert [b["t_iter_s"] for b in best] == sorted(b["t_iter_s"] for b in best)
    for layout in (b["parallel"] for b in best):
        assert layout["tp"] * layout["pp"] * layout["dp"] == 64
        assert layout["global_batch"] == 64
    assert all(b["fits"] and set(b) >= ESTIMATE_KEYS for b in best)


@pytest.mark.parametrize(("command", "old", "new", "field"), [
    ("estimate", 'hbm: "80 GiB"', "hbm: 80", "cluster.gpu_specs.hbm"),
    ("sweep", 'hbm: "80 GiB"', "hbm: 80", "cluster.gpu_specs.hbm"),
    ("estimate", "recompute: full", "recompute: partial", "parallel.recompute"),
    ("estimate", "tp: 8,", "tp: 7,", "parallel.tp"),
    ("sweep", "tp: 8,", "tp: 7,", "parallel.tp"),
    ("estimate", "tp: 8,", "tp: 0,", "parallel.tp"),
    ("estimate", "  gpus: 1024", "  gpus: 1024: 2", "(file)"),
])
def test_a_bad_scenario_exits_2_naming_file_and_field(cli, write_scenario, command, old, new,
                                                      field):
    path = write_scenario(edited(GPT3_INLINE, old, new))
    result = cli(command, str(path), "--json")
    assert result.exit_code == 2, (result.output, result.exception)
    assert str(path) in result.stderr
    assert field in result.stderr
    assert result.stdout == ""


def test_a_figure_missing_without_a_ledger_exits_2_naming_it(cli, write_scenario):
    path = write_scenario(edited(GPT3_INLINE, 'peak: "312 TFLOP/s", ', ""))
    result = cli("estimate", str(path))
    assert result.exit_code == 2
    assert "cluster.gpu_specs.peak" in result.stderr


def test_a_missing_scenario_file_exits_2_naming_it(cli):
    result = cli("estimate", "no/such/scenario.yaml")
    assert result.exit_code == 2
    assert "no/such/scenario.yaml" in result.stderr


def test_estimate_on_a_shipped_scenario_reads_the_ingested_ledger(cli):
    ingested = json.loads(cli("ingest", str(SOURCES), "--json").stdout)
    result = cli("estimate", SHIPPED_HGX, "--json")
    assert result.exit_code == 0, result.output
    estimate = json.loads(result.stdout)
    assert estimate["dataset_version"] == ingested["dataset_version"]
    assert isinstance(estimate["dataset_version"], int)
    peak = next(s for s in estimate["specs"] if s["name"] == "peak_flops")
    assert (peak["value"], peak["origin"], peak["item"]) == (2.25e15, "ledger", "b200")


def test_estimate_on_a_ledger_scenario_with_an_empty_ledger_exits_2(cli):
    result = cli("estimate", SHIPPED_HGX)
    assert result.exit_code == 2
    assert "cluster.gpu_specs.peak" in result.stderr


@pytest.mark.postgres
def test_estimate_reads_a_postgresql_ledger_from_the_database_url(cli, monkeypatch):
    url = pg_url_or_skip()
    reset_pg(url)
    monkeypatch.setenv("SPECLEDGER_DATABASE_URL", url)
    ingested = json.loads(cli("ingest", str(SOURCES), "--json").stdout)
    result = cli("estimate", SHIPPED_HGX, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["dataset_version"] == ingested["dataset_version"]


# --- hostile and careless scenarios (issue 15): exit 2 naming file:line field, never a crash

FREE_LAYOUT = edited(GPT3_INLINE, "parallel: {tp: 8, pp: 8, dp: 1, ep: 1, micro_batch: 1, "
                     "global_batch: 64, interleave: 1,\n           sequence_parallel: false, "
                     "recompute: full, zero: 1}", "parallel: {global_batch: 64}")


def test_a_sweep_of_a_billion_layouts_is_refused_at_once_with_its_size(cli, write_scenario):
    """Every count 720,720 (240 divisors) once asked numpy for a 9.9 GiB array."""
    huge = edited(edited(FREE_LAYOUT, "layers: 96, hidden: 12288, heads: 96",
                         "layers: 720720, hidden: 720720, heads: 720720"),
                  "global_batch: 64", "global_batch: 720720")
    path = write_scenario(edited(huge, "gpus: 1024", "gpus: 720720"))
    started = time.perf_counter()
    result = cli("sweep", str(path), "--json", "--as-written")
    assert time.perf_counter() - started < 5
    assert result.exit_code == 2, (result.output, result.exception)
    message = " ".join(result.stderr.split())
    assert message.startswith(f"error: {path}:3 parallel: the search asks for 1,327,104,000 "
                              "candidate layouts")
    assert "limit of 2,000,000" in message and "bytes of arrays each" in message
    assert "fix some of parallel.tp (240 values)" in message
    assert "SPECLEDGER_SWEEP_MAX_LAYOUTS" in message and result.stdout == ""


def test_a_trillion_gpus_is_refused_at_once_naming_the_field(cli, write_scenario):
    path = write_scenario(edited(FREE_LAYOUT, "gpus: 1024", "gpus: 1e12"))
    started = time.perf_counter()
    result = cli("sweep", str(path))
    assert time.perf_counter() - started < 5
    assert result.exit_code == 2, (result.output, result.exception)
    assert f"{path}:8 cluster.gpus: must be at most 1,000,000,000" in result.stderr


def test_the_sweep_limit_is_the_sweep_max_layouts_setting(cli, write_scenario, monkeypatch):
    path = write_scenario(edited(FREE_LAYOUT, "gpus: 1024", "gpus: 64"))
    monkeypatch.setenv("SPECLEDGER_SWEEP_MAX_LAYOUTS", "100")
    result = cli("sweep", str(path))
    assert result.exit_code == 2, (result.output, result.exception)
    assert "more than the limit of 100 " in " ".join(result.stderr.split())
    monkeypatch.setenv("SPECLEDGER_SWEEP_MAX_LAYOUTS", "100000")
    assert cli("sweep", str(path)).exit_code == 0


@pytest.mark.parametrize(("command", "old", "new", "where"), [
    ("sweep", "gpus: 1024", "gpus: .inf", ":8 cluster.gpus: expected a finite"),
    ("sweep", "gpus: 1024", "gpus: .nan", ":8 cluster.gpus: expected a finite"),
    ("estimate", "tokens: 300e9", "tokens: inf", ":10 tokens: expected a finite"),
    ("estimate", 'hbm: "80 GiB"', 'hbm: "1e400 GiB"', ":6 cluster.gpu_specs.hbm: expected a "
                                                      "positive, finite quantity"),
    ("estimate", "  gpus: 1024", "  gpus: 1024\n  gpu: [a, b]",
     ":10 cluster.gpu: expected the key of a ledger item, got a list of 2"),
    ("estimate", '"312 TFLOP/s"', '"1e-300 TFLOP/s"',
     ":10 tokens: the model gives no finite time_to_train_days"),
])
def test_a_non_finite_or_non_scalar_value_exits_2_with_file_line_and_field(
        cli, write_scenario, command, old, new, where):
    path = write_scenario(edited(FREE_LAYOUT if command == "sweep" else GPT3_INLINE, old, new))
    result = cli(command, str(path), "--json")
    assert result.exit_code == 2, (result.output, result.exception)
    assert f"{path}{where}" in " ".join(result.stderr.split())
    assert result.stdout == ""  # no "Infinity" for a JSON reader to choke on


def test_validate_prints_every_calibration_set_with_its_points_and_errors(cli):
    result = cli("validate", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    titles = [s["title"] for s in report["sets"]]
    assert any("Korthikanti" in t for t in titles) and any("Megatron-Bridge" in t for t in titles)
    for calibration_set in report["sets"]:
        errors = [abs(p["error"]) for p in calibration_set["points"]]
        assert calibration_set["mean_abs_error"] == pytest.approx(sum(errors) / len(errors))
        assert calibration_set["max_abs_error"] == pytest.approx(max(errors))
        assert calibration_set["url"].startswith("https://")
    summary = cli("validate", "--summary")
    assert summary.exit_code == 0 and "mean abs" in summary.stdout
    assert "Model error per calibration set" in summary.stdout   # C2C and serving sets
    brief = json.loads(cli("validate", "--summary", "--json").stdout)
    assert [s["points"] for s in brief["sets"]] == [len(s["points"]) for s in report["sets"]]
    # Each C2C set says how many of its points the band holds with the set left out (>= 80 %).
    held = {s["title"]: s["band_coverage"] for s in report["sets"] if s["band_coverage"]}
    assert any("Megatron-Bridge" in t for t in held) and any("torchtitan" in t for t in held)
    for coverage in held.values():
        assert coverage["points"] == next(len(s["points"]) for s in report["sets"]
                                          if s["band_coverage"] == coverage)
        assert coverage["inside"] >= 0.8 * coverage["points"]
    assert "band holds" in summary.stdout and "left out" in summary.stdout
    # Issue 41: each fitted serving family against the targets, with the one number it misses.
    # A family's row, and an engine's on it where that engine has a band of its own.
    families = {(row["family"], row["engine"]): row for row in brief["serving_targets"]}
    assert families == {(row["family"], row["engine"]): row
                        for row in report["serving_targets"]}
    assert ("hopper", None) in families and ("hopper", "trt") in families

    def label(row: dict) -> list[str]:
        return [row["family"]] + ([row["engine"]] if row["engine"] else [])
    for row in families.values():
        meets = (row["left_out_mean_abs_error"] <= row["targets"]["mean_abs_error"]
                 and row["band_coverage"] >= row["targets"]["band_coverage"]
                 and row["band_span"] <= row["targets"]["band_span"])
        assert row["decision_grade"] == meets and (row["short"] is None) == meets
    short = next(row for row in families.values() if row["short"])
    shown = next(line for line in summary.stdout.splitlines()
                 if line.split()[:len(label(short))] == label(short)
                 and line.split()[len(label(short))].isdigit())
    assert f"{short['left_out_mean_abs_error']:.1f}%" in shown
    assert shown.split()[-len(short["short"]["figure"].split()):] == short["short"][
        "figure"].split()   # the one number it misses, whole, in the last column
    for row in families.values():   # a span past 0.2-10 is said to be absurd, not printed
        shown = next(line for line in summary.stdout.splitlines()
                     if line.split()[:len(label(row))] == label(row)
                     and line.split()[len(label(row))].isdigit())
        assert ("absurd" in shown) == (row["band_span"] > 50)
    # The published rows the serving model is not scored on: counted, each reason named.
    unexpressed = report["serving_unexpressed"]
    assert unexpressed == brief["serving_unexpressed"]
    assert all(row["rows"] >= len(row["what"]) >= 1 for row in unexpressed)
    gh200 = next(row for row in unexpressed if row["why"].startswith("gh200:"))
    assert any("GH200" in what for what in gh200["what"])
    assert "Published serving rows the model cannot express" in summary.stdout
    assert f"{sum(row['rows'] for row in unexpressed)} rows in all" in summary.stdout


def test_a_layout_that_does_not_fit_says_why_and_gives_no_time_to_train(cli, write_scenario):
    # GPT-3 175B on one GPU per replica: its weights and optimizer alone are terabytes.
    path = write_scenario(edited(GPT3_INLINE, "tp: 8, pp: 8, dp: 1", "tp: 1, pp: 1, dp: 1"))
    result = cli("estimate", str(path), "--as-written")
    assert result.exit_code == 1
    shown = " ".join(result.stdout.split())
    assert "does not fit: the layout needs" in shown
    assert "the GPU has 80.0 GiB of HBM (90 % usable)" in shown
    assert "time to train" not in shown
