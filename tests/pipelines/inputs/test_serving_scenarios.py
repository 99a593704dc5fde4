"""`kind: serving` scenario files: the shipped ones read, a bad one names file, line and field."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from models.c2c.spec import Precision
from models.serving.spec import WeightFormat
from pipelines.inputs.scenarios import ScenarioError, scenario_paths
from pipelines.inputs.serving_scenarios import load_serving_scenario
from tests.conftest import examples
from tests.pipelines.conftest import SHIPPED_SCENARIOS

INLINE = """\
name: serving-inline
kind: serving
model: llama-3.3-70b
precision: fp8
request: {input_tokens: 1024, output_tokens: 256}
target_tok_s_per_user: 40
options:
  - name: fast
    cluster:
      gpu_specs: {peak: 1000 TFLOP/s, peak_fp8: 2000 TFLOP/s, hbm: 141 GB, hbm_bw: 4800 GB/s}
      scale_up: {domain_gpus: 8, bw_per_gpu_bidir: 900 GB/s}
      scale_out: {nic_rate: 400 Gb/s}
    deployment: {tp: 8}
    price: {usd_per_gpu_hour: 3.0}
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "serving.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def test_every_shipped_serving_scenario_reads_and_only_they_are_of_their_kind():
    paths = scenario_paths(SHIPPED_SCENARIOS, "serving")
    assert {p.stem for p in paths} == {"serving-llama-3.3-70b-fp8", "serving-deepseek-r1-fp8",
                                       "serving-deepseek-r1-fp4", "serving-gpt-oss-120b-chat"}
    for path in paths:
        scenario = load_serving_scenario(path)
        assert scenario.name == path.stem and len(scenario.options) >= 3
    assert not set(paths) & set(scenario_paths(SHIPPED_SCENARIOS, "c2c"))


def test_an_inline_scenario_reads_its_model_request_options_and_precision(tmp_path):
    scenario = load_serving_scenario(write(tmp_path, INLINE))
    assert (scenario.model_key, scenario.weights, scenario.target_tok_s_per_user) == (
        "llama-3.3-70b", WeightFormat.FP8, 40.0)
    [option] = scenario.options
    assert option.deployment.tp == 8 and option.price.usd_per_gpu_hour == 3.0
    assert option.cluster.precision == Precision.FP8   # the peak the weights run at
    assert option.cluster.inline["gpu_specs.hbm"].value == 141e9


@pytest.mark.parametrize("change, line, field, reason", [
    (("model: llama-3.3-70b", "model: llama-9"), 3, "model", "unknown model 'llama-9'"),
    (("precision: fp8", "precision: int3"), 4, "precision", "expected one of bf16, fp8, fp4"),
    (("{tp: 8}", "{tp: 8, ep: 16}"), 13, "options[0].deployment",
     "ep 16 exceeds the instance's 8 GPUs"),
    (("{usd_per_gpu_hour: 3.0}", "{usd_per_gpu_hour: -3}"), 14,
     "options[0].price.usd_per_gpu_hour", "expected a non-negative number"),
    (("hbm: 141 GB", "hbm: lots"), 10, "options[0].cluster.gpu_specs.hbm",
     "expected a quantity with a unit"),
    (("target_tok_s_per_user: 40", "target_tok_s_per_user: 0"), 6, "target_tok_s_per_user",
     "must be positive"),
    # Issue 43, case 3: what the C2C and TCO readers refuse, this one refuses too.
    (("{tp: 8}", "{tp: 1, pp: 81}"), 13, "options[0].deployment.pp",
     "pp=81 is more than the model's 80 layers"),
    (("{tp: 8}", "{tp: 8, ep: 8}"), 13, "options[0].deployment.ep",
     "ep=8 on a dense model: it has no experts to spread"),
    (("name: fast", "name: " + "f" * 400), 8, "options[0].name",
     "400 characters; a name is at most 80"),
    (("name: serving-inline", "name: " + "s" * 81), 1, "name", "81 characters"),
])
def test_a_bad_field_is_named_with_its_file_and_line(tmp_path, change, line, field, reason):
    path = write(tmp_path, INLINE.replace(*change))
    with pytest.raises(ScenarioError) as raised:
        load_serving_scenario(path)
    assert (raised.value.path, raised.value.line, raised.value.field) == (str(path), line, field)
    assert reason in raised.value.reason


def test_two_prices_for_one_option_are_refused(tmp_path):
    text = INLINE.replace("{usd_per_gpu_hour: 3.0}",
                          "{usd_per_gpu_hour: 3.0, market: {gpu: h100-sxm5}}")
    with pytest.raises(ScenarioError, match="give exactly one of usd_per_gpu_hour, market, tco"):
        load_serving_scenario(write(tmp_path, text))


MOE = """\
name: serving-moe
kind: serving
model:
  layers: 4
  hidden: 64
  heads: 4
  total_params: 2e6
  active_params: 1e6
  experts: 8
  top_k: 2
precision: bf16
request: {input_tokens: 16, output_tokens: 16}
target_tok_s_per_user: 10
options:
  - name: one
    cluster: {gpu: h100-sxm5}
    price: {usd_per_gpu_hour: 2}
"""


def test_a_moe_of_its_own_shape_reads(tmp_path):
    model = load_serving_scenario(write(tmp_path, MOE)).model
    assert (model.name, model.experts, model.top_k, model.routed_layers) == (
        "serving-moe", 8, 2, 4)
    assert model.expert_params == pytest.approx(1e6 / 0.75)


@pytest.mark.parametrize("change, line, field, reason", [
    # Every expert picked: the experts' weights divide by 1 - top_k / experts = 0.
    (("top_k: 2", "top_k: 8"), 10, "model.top_k", "top_k equal to experts (8)"),
    (("  experts: 8", "  moe_layers: 5\n  experts: 8"), 9, "model.moe_layers",
     "5 MoE layers is more than the model's 4 layers"),
    (("top_k: 2", "top_k: 9"), 4, "model", "serving-moe: top_k must be in 1..experts"),
    (("  heads: 4", "  heads: 4\n  kv_heads: 3"), 4, "model",
     "kv_heads (3) must divide heads (4)"),
    # A key written twice: which value was meant cannot be told.
    (("precision: bf16", "precision: bf16\nprecision: fp8"), 12, "precision",
     "written twice (first on line 11)"),
    (("  hidden: 64", "  hidden: 64\n  hidden: 128"), 6, "model.hidden", "written twice"),
    (("{usd_per_gpu_hour: 2}", "{usd_per_gpu_hour: 2, usd_per_gpu_hour: 3}"), 17,
     "options[0].price.usd_per_gpu_hour", "written twice"),
])
def test_a_hostile_model_or_a_repeated_key_is_refused_by_name(tmp_path, change, line, field,
                                                              reason):
    path = write(tmp_path, MOE.replace(*change))
    with pytest.raises(ScenarioError) as raised:
        load_serving_scenario(path)
    assert (raised.value.path, raised.value.line, raised.value.field) == (str(path), line, field)
    assert reason in raised.value.reason



@given(layers=st.integers(1, 200), pp=st.integers(1, 400), ep=st.integers(1, 16),
       experts=st.sampled_from([0, 16]))
@settings(max_examples=examples(60), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_the_reader_refuses_stages_past_the_layers_and_experts_a_model_lacks(
        tmp_path, layers, pp, ep, experts):
    """Issue 43, case 3, as a property: a layout is read iff pp fits the layers and ep has
    experts to spread (at most as many GPUs as it has experts); a refusal names the key."""
    moe = f"\n  experts: {experts}\n  top_k: 2" if experts else ""
    text = MOE.replace("  layers: 4", f"  layers: {layers}").replace(
        "\n  experts: 8\n  top_k: 2", moe).replace(
        "    price: {usd_per_gpu_hour: 2}",
        f"    deployment: {{tp: 1, dp: {ep}, ep: {ep}, pp: {pp}}}\n"
        "    price: {usd_per_gpu_hour: 2}")
    path = tmp_path / f"p{layers}-{pp}-{ep}-{experts}.yaml"
    path.write_text(text)
    refused = pp > layers or (ep > 1 and not experts) or ep > max(experts, 1)
    if not refused:
        [option] = load_serving_scenario(path).options
        assert (option.deployment.pp, option.deployment.ep) == (pp, ep)
        return
    with pytest.raises(ScenarioError) as raised:
        load_serving_scenario(path)
    assert raised.value.field in {"options[0].deployment.pp", "options[0].deployment.ep"}
