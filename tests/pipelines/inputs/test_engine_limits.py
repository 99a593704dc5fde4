"""A TP or EP the engines cannot run with the scenario's model is refused where the scenario
is read (training and serving), naming the file, the line and the key; `specledger estimate`
and `specledger serving` exit 2 with that message."""

from __future__ import annotations

import pytest

from pipelines.inputs.scenarios import ScenarioError, load_scenario
from pipelines.inputs.serving_scenarios import load_serving_scenario
from tests.pipelines.conftest import SHIPPED_SCENARIOS
from tests.pipelines.inputs.test_scenarios_today import MOE_TODAY
from tests.pipelines.inputs.test_serving_scenarios import INLINE

MOE_SHAPE = ("model: {layers: 48, hidden: 4096, heads: 64, kv_heads: 8, total_params: 235e9, "
             "active_params: 22e9, experts: 128, top_k: 8, moe_layers: 48}")


@pytest.mark.parametrize(("old", "new", "field", "reason"), [
    ("tp: 2,", "tp: 3,", "parallel.tp", "tp=3 does not divide the 64 attention heads"),
    ("tp: 2,", "tp: 8,", "parallel.tp", "tp=8 does not divide the 4 KV heads"),
    ("ep: 32,", "ep: 256,", "parallel.ep", "ep=256 does not divide the 128 experts"),
])
def test_a_training_layout_megatron_cannot_shard_is_refused_at_the_reader(
        write_scenario, old, new, field, reason):
    path = write_scenario(MOE_TODAY.replace(old, new, 1))
    with pytest.raises(ScenarioError) as error:
        load_scenario(path)
    assert (error.value.field, error.value.line) == (field, 6)  # the parallel line
    assert str(error.value) == f"{path}:6 {field}: {reason}"


def test_the_shipped_training_scenarios_still_read():
    for path in sorted(SHIPPED_SCENARIOS.glob("[0-9gm]*.yaml")):
        assert load_scenario(path).layout.tp >= 1


@pytest.mark.parametrize(("model", "deployment", "field", "reason"), [
    ("model: llama-3.3-70b", "{tp: 3}", "tp", "tp=3 does not divide the 64 attention heads"),
    (MOE_SHAPE.replace("heads: 64, kv_heads: 8", "heads: 48, kv_heads: 6"), "{tp: 4}", "tp",
     "tp=4 neither divides the 6 KV heads nor is a multiple of them (to replicate each)"),
    (MOE_SHAPE, "{tp: 1, dp: 256, ep: 256}", "ep",
     "ep=256 is more than the 128 experts: 128 GPUs would hold none"),
])
def test_a_serving_deployment_no_engine_runs_is_refused_at_the_reader(
        tmp_path, model, deployment, field, reason):
    path = tmp_path / "serving.yaml"
    path.write_text(INLINE.replace("model: llama-3.3-70b", model)
                    .replace("deployment: {tp: 8}", f"deployment: {deployment}"))
    with pytest.raises(ScenarioError) as error:
        load_serving_scenario(path)
    assert str(error.value) == f"{path}:13 options[0].deployment.{field}: {reason}"


def test_an_uneven_expert_split_is_served(tmp_path):
    path = tmp_path / "serving.yaml"
    path.write_text(INLINE.replace("model: llama-3.3-70b", MOE_SHAPE)
                    .replace("deployment: {tp: 8}", "deployment: {tp: 1, dp: 72, ep: 72}"))
    assert load_serving_scenario(path).options[0].deployment.ep == 72


def test_estimate_and_serving_exit_2_naming_the_key(cli, write_scenario, tmp_path):
    c2c = write_scenario(MOE_TODAY.replace("ep: 32,", "ep: 256,", 1))
    result = cli("estimate", str(c2c))
    assert result.exit_code == 2
    assert f"{c2c}:6 parallel.ep: ep=256 does not divide the 128 experts" in result.output
    serving = tmp_path / "serving.yaml"
    serving.write_text(INLINE.replace("deployment: {tp: 8}", "deployment: {tp: 3}"))
    result = cli("serving", str(serving))
    assert result.exit_code == 2
    assert "options[0].deployment.tp: tp=3 does not divide" in " ".join(result.output.split())
