"""Answering a serving scenario: each option's curve and cost, the cheaper one at the target,
and a measured curve preferred to the model's when the ledger has one for the option's whole
deployment."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pandas as pd
import pytest

from pipelines.inputs.serving_scenarios import load_serving_scenario
from pipelines.jobs import serving
from tests.pipelines.inputs.test_serving_scenarios import INLINE, write

ON, KNOWN = date(2026, 11, 25), datetime(2026, 11, 25, tzinfo=UTC)
SECOND = """\
  - name: slow
    cluster:
      gpu: slow-gpu
      gpu_specs: {peak: 500 TFLOP/s, peak_fp8: 1000 TFLOP/s, hbm: 80 GB, hbm_bw: 2000 GB/s}
      scale_up: {domain_gpus: 8, bw_per_gpu_bidir: 600 GB/s}
      scale_out: {nic_rate: 200 Gb/s}
    deployment: {tp: 8}
    price: {usd_per_gpu_hour: 2.0}
"""


def answer(tmp_path, text, measured=None, search=False):
    """The scenario's answer; pinned to the file's layouts unless `search` (most tests here
    are of one deployment's curve: the search is tested on its own below)."""
    if not search:
        text = text.replace("\noptions:\n", "\nlayout: pinned\noptions:\n", 1)
    scenario = load_serving_scenario(write(tmp_path, text))
    return serving.evaluate(scenario, None, on=ON, known=KNOWN, dataset_version=None,
                            measured=measured)


def test_each_option_has_a_curve_its_point_at_the_target_and_a_cost(tmp_path):
    result = answer(tmp_path, INLINE + SECOND)
    assert set(result) >= {"options", "target_tok_s_per_user", "cheaper_option", "margin",
                           "band"}
    fast, slow = result["options"]
    for option in (fast, slow):
        assert option["source"] == "model"
        assert set(option["curve"][0]) == {"concurrency", "tok_s_per_gpu", "tok_s_per_user",
                                           "ttft_s", "usd_per_mtok_out"}
        assert option["at_target"]["tok_s_per_user"] == pytest.approx(40)
        point = option["at_target"]
        assert point["usd_per_mtok_out"] == pytest.approx(
            option["usd_per_gpu_hour"] / 3600 / point["tok_s_per_gpu"] * 1e6)
    cheaper = min((fast, slow), key=lambda o: o["at_target"]["usd_per_mtok_out"])
    assert result["cheaper_option"] == cheaper["name"]
    assert result["band"]["p10"] <= result["margin"] <= result["band"]["p90"]
    assert fast["band"]["basis"].startswith("no fit of this family's own")
    assert fast["deployment"] == {"tp": 8, "dp": 1, "ep": None, "pp": 1, "max_batch": 2048,
                                  "prefill_gpus": 0, "kv_cache": "fp8", "engine": "sglang"}


def measured(**columns) -> pd.DataFrame:
    """Inference points as the ledger returns them (db.queries.inference_points): three
    concurrencies of llama-3.3-70b FP8 on the `slow` option's GPU at TP8, 1k/256, vLLM."""
    return pd.DataFrame({
        "id": [1, 2, 3], "hardware": "slow-gpu", "model": "llama-3.3-70b", "precision": "fp8",
        "framework": "vllm", "framework_version": "v0.13.0", "source_key": "inferencex-2026-01-02",
        "as_of": date(2026, 1, 2), "input_tokens": 1024,
        "output_tokens": 256, "disaggregated": False, "gpus": 8, "tp": 8, "ep": 1, "dp": 1,
        "prefill_gpus": None, "decode_gpus": None,
        "concurrency": [4, 16, 64], "tok_s_per_gpu": [100.0, 300.0, 700.0],
        "tok_s_per_user": [60.0, 45.0, 20.0], "ttft_s": [0.1, 0.2, None]} | columns)


def test_a_measured_curve_for_the_same_hardware_model_and_precision_is_preferred(tmp_path):
    points = measured()
    result = answer(tmp_path, INLINE + SECOND, measured=points)
    fast, slow = result["options"]
    assert (fast["source"], slow["source"]) == ("model", "measured")
    assert [p["tok_s_per_gpu"] for p in slow["curve"]] == [100.0, 300.0, 700.0]
    assert 300 < slow["at_target"]["tok_s_per_gpu"] < 700
    assert slow["band"] == {"low": 1.0, "high": 1.0, "basis": (
        "measured: 3 points, vllm v0.13.0, inferencex-2026-01-02 (run of 2026-01-02)")}
    other_shape = points.assign(output_tokens=1024)   # another request shape: not this one
    assert answer(tmp_path, INLINE + SECOND, other_shape)["options"][1]["source"] == "model"


@pytest.mark.parametrize("layout", [
    {"gpus": 1, "tp": 1},                       # a TP1 point never answers for a TP8 option
    {"gpus": 8, "tp": 8, "dp": 8},              # DP attention is another deployment
    {"disaggregated": True, "prefill_gpus": 8, "decode_gpus": 8},
])
def test_a_measured_curve_of_another_deployment_is_not_the_options(tmp_path, layout):
    """Issue 30, case 5: the same GPU, model, precision and shape, another layout."""
    result = answer(tmp_path, INLINE + SECOND, measured(**layout))
    assert result["options"][1]["source"] == "model"


def test_a_measured_curve_is_one_frameworks_latest_runs(tmp_path):
    newer = measured(id=[4, 5, 6], as_of=date(2026, 3, 1), tok_s_per_gpu=[110.0, 330.0, 770.0])
    other = measured(id=[7, 8], framework="sglang", concurrency=[4, 16],
                     tok_s_per_gpu=[1.0, 2.0], tok_s_per_user=[60.0, 45.0], ttft_s=[0.1, 0.2])
    result = answer(tmp_path, INLINE + SECOND, pd.concat([measured(), newer, other]))
    slow = result["options"][1]
    assert slow["source"] == "measured"
    assert [p["tok_s_per_gpu"] for p in slow["curve"]] == [110.0, 330.0, 770.0]
    assert slow["band"]["basis"].endswith("(run of 2026-03-01)")


def test_an_option_that_cannot_reach_the_target_is_named_and_left_out_of_the_verdict(tmp_path):
    result = answer(tmp_path, (INLINE + SECOND).replace("target_tok_s_per_user: 40",
                                                        "target_tok_s_per_user: 5000"))
    assert result["unreached"] == ["fast", "slow"]
    assert result["cheaper_option"] is None and result["band"] is None


def test_a_data_parallel_attention_deployment_carries_the_wider_band(tmp_path):
    from models.serving.calibration import band
    from models.serving.validation import dp_attention_band
    from pipelines.inputs.measurements import shipped_serving_points

    replicated = (INLINE + SECOND).replace("deployment: {tp: 8}", "deployment: {tp: 1, dp: 8}", 1)
    fast = answer(tmp_path, replicated)["options"][0]
    family = band("generic")
    scheme = dp_attention_band(shipped_serving_points().points)
    assert scheme is not None and scheme[2].startswith("24 InferenceX")
    assert (fast["band"]["low"], fast["band"]["high"]) == (min(family[0], scheme[0]),
                                                           max(family[1], scheme[1]))
    assert "data-parallel-attention" in fast["band"]["basis"]


def test_an_option_carries_its_engines_band_where_that_engine_has_one(tmp_path):
    """TensorRT-LLM on Hopper has a band of its own (its three sets left out); SGLang, one
    set on Hopper, carries the family's; and the verdict's miss names the engine's."""
    from models.serving.calibration import BAND, ENGINE_BAND

    hopper = (INLINE + SECOND).replace("gpu_specs: {", "gpu_specs: {arch: hopper, ")
    on_trt = hopper.replace("deployment: {tp: 8}", "deployment: {tp: 8, engine: trt}")
    result = answer(tmp_path, on_trt)
    for option in result["options"]:
        assert option["deployment"]["engine"] == "trt"
        assert (option["band"]["low"], option["band"]["high"]) == ENGINE_BAND[
            ("hopper", "trt")][:2]
    assert ["Hopper with TensorRT-LLM", "22.3 % off", "≤ 20 %"] in result["short_of_targets"]
    on_sglang = answer(tmp_path, hopper)["options"][0]
    assert on_sglang["deployment"]["engine"] == "sglang"
    assert (on_sglang["band"]["low"], on_sglang["band"]["high"]) == BAND["hopper"][:2]


def test_two_estimates_on_one_familys_fit_carry_the_paired_band(tmp_path):
    """Both options on Hopper's constants and one engine: the margin's band is the paired
    one (one configuration's error against the other's), not the widest combination."""
    from models.serving.calibration import PAIRED_BAND

    hopper = (INLINE + SECOND).replace("gpu_specs: {", "gpu_specs: {arch: hopper, ")
    result = answer(tmp_path, hopper)
    assert [o["arch"] for o in result["options"]] == ["hopper", "hopper"]
    low, high, _ = PAIRED_BAND[("hopper", "hopper")]
    ratio = 1 - result["margin"]            # cost of the cheaper / cost of the dearer
    note = result["band"].pop("note")
    # Llama 3.3 70B has the shape of a measured model (Llama 3.1 70B): the band rests on it.
    assert result["band"].pop("model_measured") is True
    assert result["band"] == pytest.approx(
        {"p10": 1 - ratio / low, "p90": 1 - ratio / high, "basis": "paired"})
    assert note.startswith(PAIRED_BAND[("hopper", "hopper")][2])
    assert "is among the measured ones" not in note


def test_estimates_of_two_families_take_their_pairs_band_and_two_engines_the_widest(tmp_path):
    from models.serving.calibration import PAIRED_BAND

    hopper = (INLINE + SECOND).replace("gpu_specs: {", "gpu_specs: {arch: hopper, ")
    two_families = hopper.replace("arch: hopper, ", "arch: blackwell, ", 1)
    result = answer(tmp_path, two_families)
    assert [o["arch"] for o in result["options"]] == ["blackwell", "hopper"]
    assert result["cheaper_option"] == "fast" and result["band"]["basis"] == "paired"
    low, high, _ = PAIRED_BAND[("blackwell", "hopper")]
    assert result["band"]["p10"] == pytest.approx(1 - (1 - result["margin"]) / low)
    two_engines = hopper.replace("deployment: {tp: 8}", "deployment: {tp: 8, engine: vllm}", 1)
    assert answer(tmp_path, two_engines)["band"]["basis"] == "widest"
    no_fit = (INLINE + SECOND).replace("gpu_specs: {", "gpu_specs: {arch: hopper, ", 1)
    assert answer(tmp_path, no_fit)["band"]["basis"] == "widest"   # "generic": no fit


def test_a_searched_option_runs_at_its_best_layout_with_the_files_beside_it(tmp_path):
    """Issue 39: each option at its best layout, as in training; the file's layout is kept
    for reference, with its cost at the target."""
    pinned = answer(tmp_path, INLINE + SECOND)["options"]
    searched = answer(tmp_path, INLINE + SECOND, search=True)["options"]
    for file_layout, best in zip(pinned, searched, strict=True):
        layout = best["layout"]
        assert layout["mode"] == "search" and layout["note"] == f"best of {layout['candidates']}"
        assert layout["candidates"] >= 100         # tp, dp, pp and prefill pools
        assert layout["file"]["label"] == "TP8"
        assert layout["file"]["usd_per_mtok_out"] == pytest.approx(
            file_layout["at_target"]["usd_per_mtok_out"])
        # No fit of its own ("generic"): every layout carries the widest band, the file's
        # TP8 was among those tried, and the search takes the most throughput.
        assert best["at_target"]["usd_per_mtok_out"] <= \
            file_layout["at_target"]["usd_per_mtok_out"] + 1e-12
        assert best["deployment"]["engine"] == "sglang"
    # A disaggregated prefill pool frees the decode GPUs of prefills: the model's best here.
    assert searched[0]["layout"]["label"] == "TP2 + 4 prefill GPUs"


def test_a_pinned_option_answers_at_the_files_layout_and_says_so(tmp_path):
    [fast, _] = answer(tmp_path, INLINE + SECOND)["options"]
    assert fast["layout"]["mode"] == "pinned" and fast["layout"]["candidates"] == 0
    assert fast["layout"]["note"] == "pinned by the scenario"
    assert fast["layout"]["label"] == fast["layout"]["file"]["label"] == "TP8"


def test_the_search_takes_a_measured_layout_the_file_did_not_write(tmp_path):
    """The ledger measured the slow GPU at TP4 (far faster than the model says): the search
    finds that curve, and answers with it, though the file wrote TP8."""
    tp4 = measured(gpus=4, tp=4, tok_s_per_gpu=[1e4, 3e4, 7e4])
    slow = answer(tmp_path, INLINE + SECOND, tp4, search=True)["options"][1]
    assert (slow["layout"]["label"], slow["source"]) == ("TP4", "measured")
    assert slow["band"]["low"] == slow["band"]["high"] == 1.0
    assert slow["layout"]["file"] | {"usd_per_mtok_out": None, "tok_s_per_gpu": None} == {
        "label": "TP8", "source": "model", "usd_per_mtok_out": None, "tok_s_per_gpu": None,
        "deployment": slow["layout"]["file"]["deployment"]}


def test_a_files_layout_no_measurement_ran_carries_the_widest_band(tmp_path):
    from models.serving.calibration import UNCALIBRATED_BAND, band

    staged = (INLINE + SECOND).replace("gpu_specs: {", "gpu_specs: {arch: hopper, ").replace(
        "deployment: {tp: 8}", "deployment: {tp: 4, pp: 2}", 1)
    fast = answer(tmp_path, staged)["options"][0]
    hopper = band("hopper")
    assert (fast["band"]["low"], fast["band"]["high"]) == (
        min(hopper[0], UNCALIBRATED_BAND[0]), max(hopper[1], UNCALIBRATED_BAND[1]))
    assert "never-measured configuration's band: outside the measured layouts" in \
        fast["band"]["basis"]
    assert fast["layout"]["covered"] is False


@pytest.mark.parametrize("arch", ["generic", "hopper", "blackwell"])
def test_the_search_chooses_what_every_layout_evaluated_one_by_one_would(tmp_path, arch):
    """The array model ranks every candidate; evaluating each with the scalar model and
    choosing with layouts.best gives the same layout and the same answer, on a family without
    a fit (one band for all) and on fitted ones (unmeasured layouts at the widest band)."""
    from models.serving import layouts

    text = (INLINE + SECOND).replace("gpu_specs: {", f"gpu_specs: {{arch: {arch}, ")
    scenario = load_serving_scenario(write(tmp_path, text))
    for option, got in zip(scenario.options,
                           serving.evaluate(scenario, None, on=ON, known=KNOWN,
                                            dataset_version=None)["options"], strict=True):
        hw, _ = serving.option_hardware(option, None, on=ON, known=KNOWN)
        space = serving.search_space(scenario, hw)
        each = [serving.at_layout(scenario, option, space.deployment(i, option.deployment), hw,
                                  None) for i in range(len(space))]
        pick = layouts.best([a.evaluated() for a in each])
        assert got["layout"]["label"] == layouts.layout_label(pick.deployment)
        assert got["at_target"]["tok_s_per_gpu"] == pytest.approx(pick.tok_s_per_gpu,
                                                                  rel=1e-9)
        assert got["layout"]["candidates"] == len(space)


def test_a_moe_is_not_searched_at_layouts_whose_expert_collective_the_model_lacks():
    """DP attention with the experts split by TP across replicas has no term for combining the
    replicas' tokens over each other's expert slices: outside what a measurement ran, the
    search leaves it out (it would win for the cost it does not count)."""
    from types import SimpleNamespace

    from models.serving import layouts
    from models.serving.presets import PRESETS
    from tests.models.serving.test_curve import NVL72

    deepseek = SimpleNamespace(model=PRESETS["deepseek-r1"])
    space = serving.search_space(deepseek, NVL72)
    everything = layouts.candidates(deepseek.model, NVL72.domain_gpus)
    covered = serving.shipped_coverage().covers_rows(space)
    assert ((space.dp == 1) | (space.ep > 0) | covered).all()
    assert 0 < len(space) < len(everything)
    assert (space.ep > 0).any() and (space.pp > 1).any() and (space.prefill_gpus > 0).any()
    llama = SimpleNamespace(model=PRESETS["llama-3.3-70b"])   # dense: replicas need nothing
    assert len(serving.search_space(llama, NVL72)) == len(
        layouts.candidates(llama.model, NVL72.domain_gpus))
