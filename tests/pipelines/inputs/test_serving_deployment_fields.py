"""A serving option says its whole deployment (issue 29): ep left out splits the experts by
TP, as the engines do; pp, max_batch (the engine's batch limit) and prefill_gpus (a
disaggregated prefill pool) are read; an option's own kv_cache overrides the scenario's."""

from __future__ import annotations

import re

import pytest

from models.serving.spec import DEFAULT_ENGINE, DEFAULT_MAX_BATCH
from pipelines.inputs.scenarios import ScenarioError
from pipelines.inputs.serving_scenarios import load_serving_scenario
from tests.pipelines.inputs.test_serving_scenarios import INLINE, write


def test_a_deployment_left_out_is_the_engines_default(tmp_path):
    [option] = load_serving_scenario(write(tmp_path, INLINE)).options
    dep = option.deployment
    assert (dep.tp, dep.dp, dep.ep, dep.pp, dep.prefill_gpus) == (8, 1, None, 1, 0)
    assert dep.max_batch == DEFAULT_MAX_BATCH and dep.kv_bytes == 1.0
    assert dep.engine == DEFAULT_ENGINE == "sglang"


def test_every_deployment_field_and_an_options_kv_cache_are_read(tmp_path):
    text = INLINE.replace(
        "deployment: {tp: 8}",
        "deployment: {tp: 4, pp: 2, ep: 4, max_batch: 256, prefill_gpus: 8, engine: trt}\n"
        "    kv_cache: bf16").replace(
        "model: llama-3.3-70b", "model: gpt-oss-120b")   # a MoE: ep spreads its experts
    [option] = load_serving_scenario(write(tmp_path, text)).options
    dep = option.deployment
    assert (dep.tp, dep.pp, dep.ep, dep.max_batch, dep.prefill_gpus) == (4, 2, 4, 256, 8)
    assert (dep.gpus, dep.total_gpus, dep.kv_bytes) == (8, 16, 2.0)
    assert dep.engine == "trt"


@pytest.mark.parametrize("deployment, reason", [
    ("{tp: 8, prefill_gpus: 4}", "prefill_gpus must be 0 or a multiple of tp (8)"),
    ("{tp: 8, max_batch: 0}", "must be at least 1"),
    ("{tp: 8, engine: tgi}", "engine 'tgi' is not one of sglang, trt, vllm, atom"),
])
def test_a_deployment_no_engine_runs_is_refused_naming_the_field(tmp_path, deployment,
                                                                  reason):
    text = INLINE.replace("deployment: {tp: 8}", f"deployment: {deployment}")
    with pytest.raises(ScenarioError, match=re.escape(reason)) as caught:
        load_serving_scenario(write(tmp_path, text))
    assert "options[0].deployment" in str(caught.value)

