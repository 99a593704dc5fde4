"""The serving model against the measured points: the measured GPUs carry the ledger's figures,
each point is compared at its own interactivity, and the per-family rows a briefing prints
have the expected shape."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import yaml

from models.c2c import calibration as c2c_calibration
from models.c2c.validation import SetReport
from models.serving import calibration
from models.serving.arrivals import load_at_limit
from models.serving.cost import at_target
from models.serving.measured_points import ARCH_OF_ITEM
from models.serving.validation import (
    FAMILIES,
    HARDWARE,
    PEAKS,
    PointError,
    configurations,
    deployment,
    fidelity_report,
    memory_misses,
    paired_ratios,
    point_errors,
    serving_fidelity,
)
from models.units import si_factor
from pipelines.inputs.measurements import shipped_serving_points

SOURCES_DIR = Path(__file__).resolve().parents[3] / "data" / "sources"
TABLE = shipped_serving_points()
POINTS, SOURCES = TABLE.points, {s.key: s for s in TABLE.sources}


HOPPER_FP4 = {("h100-sxm5", "fp4"), ("h200-sxm", "fp4")}


def pack_value(pack: str, item: str, metric: str, unit: str) -> float:
    """The value of `metric` for `item` in a source pack, in the SI `unit` (the sources that
    give it agree)."""
    data = yaml.safe_load((SOURCES_DIR / pack).read_text())
    found = {round(float(o["value"]) * si_factor(o["unit"], unit), 6)
             for s in data["sources"] for o in s["observations"]
             if o["item"] == item and o["metric"] == metric}
    assert len(found) == 1, (pack, item, metric, found)
    return found.pop()


@pytest.mark.parametrize(("item", "nvlink", "node"), [("h100-sxm5", "nvlink-4", "hgx-h100-8gpu"),
                                                      ("h200-sxm", "nvlink-4", "hgx-h100-8gpu"),
                                                      ("b200", "nvlink-5", "dgx-b200")])
def test_the_measured_gpus_carry_the_figures_of_the_ledgers_packs(item, nvlink, node):
    hw = HARDWARE[item]
    assert hw.peak_flops == pytest.approx(
        pack_value("gpu_compute.yaml", item, "peak_dense_bf16", "FLOP/s"))
    assert hw.hbm_bytes == pytest.approx(pack_value("gpu_compute.yaml", item, "hbm_capacity", "B"))
    assert hw.hbm_bw == pytest.approx(
        pack_value("gpu_compute.yaml", item, "hbm_bandwidth", "B/s"))
    assert hw.domain_gpus == pack_value("gpu_compute.yaml", node, "gpus_per_system", "GPUs")
    assert hw.scaleup_bw == pytest.approx(
        pack_value("nvlink.yaml", nvlink, "scaleup_bw_per_gpu_bidir", "B/s") / 2)
    assert hw.scaleout_bw == pytest.approx(
        pack_value("infiniband.yaml", "ib-ndr", "port_rate", "B/s"))
    for (gpu, precision), peak in PEAKS.items():
        if gpu == item:   # FP4 weights on Hopper (no FP4 peak) run at its FP8 peak
            metric = "peak_dense_fp8" if (item, precision) in HOPPER_FP4 else \
                f"peak_dense_{precision}"
            assert peak == pytest.approx(pack_value("gpu_compute.yaml", item, metric, "FLOP/s"))
    items = yaml.safe_load((SOURCES_DIR / "gpus.yaml").read_text())["items"]
    family = next(i["family"] for i in items if i["key"] == item)
    assert c2c_calibration.ARCH_OF_FAMILY[family.lower()] == hw.arch == ARCH_OF_ITEM[item]
    assert (hw.scaleup_efficiency, hw.scaleup_latency) == (
        c2c_calibration.SCALEUP_EFFICIENCY, c2c_calibration.SCALEUP_LATENCY_S)


@pytest.mark.parametrize("item", ["amd-mi300x", "amd-mi325x", "amd-mi355x"])
def test_the_amd_gpus_carry_their_datasheets_figures(item):
    """The packs hold no AMD Instinct HBM or peak (validation.py cites AMD's pages): the node
    is the same 8-GPU shape, the FP8 peak twice BF16's and MXFP4's (CDNA 4) twice FP8's."""
    hw = HARDWARE[item]
    assert hw.arch == ARCH_OF_ITEM[item] and hw.domain_gpus == 8
    assert PEAKS[(item, "fp8")] == pytest.approx(2 * hw.peak_flops, rel=0.01)
    if (item, "fp4") in PEAKS:
        assert PEAKS[(item, "fp4")] == pytest.approx(2 * PEAKS[(item, "fp8")], rel=0.01)
    assert {p.hardware for p in POINTS} >= {item}


def test_the_layout_maps_to_the_models_instance():
    dpa = next(p for p in POINTS if p.dp_attention and p.tp == 8 and p.ep == 8)
    assert (deployment(dpa).tp, deployment(dpa).dp, deployment(dpa).ep) == (1, 8, 8)
    # ep 1: the experts split across the GPUs by tensor parallelism (no all-to-all)
    tensor = next(p for p in POINTS if not p.dp_attention and p.tp == 8 and p.ep == 1)
    assert (deployment(tensor).tp, deployment(tensor).dp, deployment(tensor).ep) == (8, 1, None)
    assert deployment(tensor).expert_shards == 8
    assert all(deployment(p).gpus == p.gpus for p in POINTS)


def test_each_point_is_compared_at_its_own_interactivity():
    configs = configurations(POINTS)
    assert sum(len(c.points) for c in configs) == len(POINTS)
    errors = point_errors(configs)
    by_config = {c.name: c for c in configs}
    for e in errors:
        assert e.predicted * e.ratio == pytest.approx(e.point.tok_s_per_gpu)
        assert e.error == pytest.approx(100 * (e.predicted / e.point.tok_s_per_gpu - 1))
        curve = by_config[e.configuration].curve(calibration.constants(e.point.arch)[0])
        if e.point.scenario == "offline":   # throughput alone: the curve's most
            assert e.predicted == pytest.approx(max(c.tok_s_per_gpu for c in curve))
            continue
        if e.point.scenario == "server":    # Poisson arrivals held to the p99 limit
            found = load_at_limit(curve, e.point.tpot_p99_limit_s)
            assert e.reached and e.predicted == pytest.approx(found.tok_s_per_gpu)
            assert e.predicted <= max(c.tok_s_per_gpu for c in curve)
            continue
        found = at_target(curve, e.point.tok_s_per_user)
        if e.reached:
            assert e.predicted == pytest.approx(found.tok_s_per_gpu)
        else:   # the model's fastest point is slower per user: the shortfall counts
            assert found is None and e.ratio > 1
            fastest = max(curve, key=lambda c: c.tok_s_per_user)
            assert math.log(e.ratio) >= math.log(e.point.tok_s_per_user / fastest.tok_s_per_user)


def test_every_measured_configuration_fits_the_models_hbm_budget():
    """DeepSeek-R1 FP8 at TP4 on B200 ran in SGLang and TensorRT-LLM; with the datasheet's
    180 GB read as GiB (models/serving/curve.py) the model holds its weights too."""
    configs = configurations(POINTS)
    assert memory_misses(configs) == []
    assert len(point_errors(configs)) == len(POINTS)
    tight = [c for c in configs if c.name == "deepseek-r1 fp8 b200 trt 1024/1024 tp4 ep1"]
    assert tight and tight[0].curve(calibration.constants("blackwell")[0])


def test_serving_fidelity_gives_a_row_per_family_with_its_error_and_band():
    rows = {r.family: r for r in serving_fidelity(POINTS)}
    assert tuple(rows) == FAMILIES
    assert set(FAMILIES) >= {"hopper", "blackwell", "blackwell_ultra", "cdna3", "cdna4"}
    for family in FAMILIES:
        row = rows[family]
        if family in calibration.CONSTANTS:
            assert row.points >= 10 and "deepseek-r1" in row.models
            assert set(row.sources) <= set(SOURCES) and row.sources
            assert 0 < row.mean_abs_error <= row.max_abs_error
            assert 0 <= row.unreached < row.points
            assert (row.band_low, row.band_high, row.basis) == calibration.BAND[family]
            assert row.basis.startswith(f"{row.points} InferenceX")
            assert row.constants == calibration.SOURCE[family]
            # What it does on points its fit did not see, beside the in-sample error.
            left_out = calibration.LEFT_OUT[family]
            assert row.left_out_mean_abs_error == left_out.mean_abs_error > row.mean_abs_error
            assert (row.left_out_held, row.left_out_points) == (left_out.held, row.points)
        elif family in calibration.UNFITTED:
            # Measured, not fitted: its points check the pooled constants, its band is the
            # uncalibrated one, its left-out record is those points.
            unfitted = calibration.UNFITTED[family]
            assert (row.points, row.models) == (unfitted.points, ("gpt-oss-120b",))
            assert row.mean_abs_error == pytest.approx(unfitted.mean_abs_error, abs=0.05)
            assert (row.left_out_held, row.left_out_points) == (unfitted.held, unfitted.points)
            assert (row.band_low, row.band_high, row.basis) == calibration.UNCALIBRATED_BAND
            assert row.constants == calibration.UNFITTED_SOURCE
        else:
            assert (row.points, row.unreached, row.models, row.sources) == (0, 0, (), ())
            assert row.mean_abs_error is None and row.max_abs_error is None
            assert row.left_out_mean_abs_error is None and row.left_out_held is None
            assert (row.band_low, row.band_high, row.basis) == calibration.UNCALIBRATED_BAND
            assert row.constants == calibration.POOLED_SOURCE


def test_the_stored_constants_give_the_errors_they_were_fitted_to():
    """A quick deterministic check of the calibration (the full refit is in
    test_serving_fit.py, run by `./dev trials`): the in-sample errors with the stored
    constants, as bench/serving_fit.py printed them."""
    rows = {r.family: r for r in serving_fidelity(POINTS)}
    assert (rows["hopper"].points, rows["blackwell"].points) == (181, 213)
    assert (rows["cdna3"].points, rows["cdna4"].points) == (56, 112)
    assert rows["hopper"].mean_abs_error == pytest.approx(15.5, abs=0.1)
    assert rows["hopper"].max_abs_error == pytest.approx(236.3, abs=0.1)
    assert rows["blackwell"].mean_abs_error == pytest.approx(37.8, abs=0.1)
    assert rows["blackwell"].max_abs_error == pytest.approx(516.5, abs=0.1)
    assert rows["cdna3"].mean_abs_error == pytest.approx(60.4, abs=0.1)
    assert rows["cdna4"].mean_abs_error == pytest.approx(25.5, abs=0.1)
    # six B200 points and two MI300X ones are faster per user than the model's batch of one
    assert (rows["hopper"].unreached, rows["blackwell"].unreached) == (0, 6)
    assert rows["cdna3"].unreached == 2


def test_each_sets_title_says_what_its_band_holds_left_out():
    for report in fidelity_report(TABLE):
        family = report.published.key.removeprefix("inferencex-serving-")
        if family in calibration.UNFITTED:   # its points check constants fitted without them
            found = calibration.UNFITTED[family]
            assert "not fitted (one model on one engine)" in report.published.title
            assert f"mean |error| {found.mean_abs_error:.1f} %" in report.published.title
            assert f"holds {found.held} of its {found.points} points" in report.published.title
            continue
        found = calibration.LEFT_OUT[family]
        assert f"holds {found.held} of its {found.points} points" in report.published.title
        assert f"left out, mean |error| {found.mean_abs_error:.1f} %" in report.published.title


def test_fidelity_report_keeps_the_c2c_set_shape():
    reports = fidelity_report(TABLE)
    assert all(isinstance(r, SetReport) for r in reports)
    assert [r.published.key for r in reports] == ["inferencex-serving-blackwell",
                                                  "inferencex-serving-blackwell_ultra",
                                                  "inferencex-serving-cdna3",
                                                  "inferencex-serving-cdna4",
                                                  "inferencex-serving-hopper"]
    rows = {r.family: r for r in serving_fidelity(POINTS)}
    for report in reports:
        family = report.published.key.removeprefix("inferencex-serving-")
        assert len(report.results) == rows[family].points
        assert report.mean_abs_error == pytest.approx(rows[family].mean_abs_error)
        assert report.published.error_unit == "%"
        assert report.published.url in {s.url for s in SOURCES.values()}


def test_two_configurations_wrong_by_one_factor_are_paired_to_no_error():
    """A family's constants off by a factor make every configuration of it wrong alike: the
    ratio of one configuration's error to another's, at a matched interactivity, is 1."""
    configs = [c for c in configurations(POINTS)
               if c.points[0].model == "gpt-oss-120b" and c.points[0].engine == "vllm"
               and c.points[0].input_tokens == 1024 and c.points[0].output_tokens == 1024
               and c.arch == "hopper"]
    assert len({c.points[0].hardware for c in configs}) == 2     # H100 and H200
    errors = [PointError(p, c.name, 2.0, True) for c in configs for p in c.points]
    pairs = paired_ratios(errors)
    [(key, ratios)] = pairs.items()
    assert key[:3] == ("hopper", "hopper", "gpt-oss-120b")
    assert ratios and all(r == pytest.approx(1.0) for r in ratios)


def test_paired_ratios_compare_points_of_one_group_at_a_matched_interactivity():
    errors = point_errors(configurations(POINTS))
    pairs = paired_ratios(errors)
    assert {key[:2] for key in pairs} >= {("hopper", "hopper"), ("hopper", "blackwell"),
                                          ("blackwell", "hopper")}

    def of(arch: str, group: list[object]) -> list[PointError]:
        return [e for e in errors if e.point.arch == arch and [
            e.point.model, e.point.precision, e.point.engine, e.point.input_tokens,
            e.point.output_tokens] == group]

    for (first, second, *group), ratios in pairs.items():
        mine, theirs = of(first, group), {e.configuration for e in of(second, group)}
        # At most one comparison per point and configuration of the other side (not itself).
        others = len(theirs) - (first == second)
        assert 0 < len(ratios) <= len(mine) * others
    # Both orders are kept: a pair of families' log-ratios mirror its reverse's.
    group = ("gpt-oss-120b", "fp4", "vllm", 1024, 1024)
    there = [math.log(r) for r in pairs[("hopper", "blackwell", *group)]]
    back = [-math.log(r) for r in pairs[("blackwell", "hopper", *group)]]
    assert abs(np.median(there) - np.median(back)) < 0.1


def test_no_pair_is_made_across_interactivities_further_apart_than_allowed():
    errors = point_errors(configurations(POINTS))
    assert sum(map(len, paired_ratios(errors, within=1.0001).values())) < \
        sum(map(len, paired_ratios(errors).values()))
