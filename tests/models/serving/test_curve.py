"""The serving model: decode is memory, prefill is compute, collectives land on their tier,
and the KV cache bounds the concurrency."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.c2c.spec import ClusterSpec
from models.serving.calibration import PRIOR
from models.serving.curve import (
    decode_step,
    kv_bytes_per_sequence,
    max_concurrency,
    serving_curve,
    weight_bytes_per_gpu,
)
from models.serving.presets import PRESETS
from models.serving.spec import Deployment, RequestShape, WeightFormat

HGX = ClusterSpec(peak_flops=1e15, hbm_bytes=80e9, hbm_bw=3.35e12, domain_gpus=8,
                  scaleup_bw=450e9, scaleout_bw=50e9, scaleup_efficiency=0.8,
                  scaleout_efficiency=0.8, scaleup_latency=5e-6, scaleout_latency=10e-6)
NVL72 = dataclasses.replace(HGX, domain_gpus=72, hbm_bytes=186e9, hbm_bw=8e12)
LLAMA, DEEPSEEK = PRESETS["llama-3.3-70b"], PRESETS["deepseek-r1"]
SHORT = RequestShape(1024, 1024)
PEAK = 2e15


def test_a_batch_of_one_streams_the_weights_once_per_token():
    dep = Deployment(tp=8, weights=WeightFormat.FP8)
    step = decode_step(LLAMA, dep, HGX, SHORT, 1, PRIOR, PEAK)
    weights = LLAMA.total_params / 8   # one byte a parameter, split eight ways
    assert weight_bytes_per_gpu(LLAMA, dep) == pytest.approx(weights)
    assert step.memory == pytest.approx(
        (weights + kv_bytes_per_sequence(LLAMA, dep, 1536)) / (HGX.hbm_bw * 0.70))
    assert step.memory > step.compute        # decode at batch 1 is memory-bound


def test_throughput_grows_and_interactivity_falls_as_concurrency_doubles():
    curve = serving_curve(LLAMA, Deployment(tp=8), HGX, SHORT, PRIOR, PEAK)
    assert [p.concurrency for p in curve[:4]] == [1, 2, 4, 8]
    per_gpu = [p.tok_s_per_gpu for p in curve]
    per_user = [p.tok_s_per_user for p in curve]
    assert per_gpu == sorted(per_gpu) and per_user == sorted(per_user, reverse=True)
    assert curve[-1].concurrency == max_concurrency(LLAMA, Deployment(tp=8), HGX, SHORT)


def test_the_kv_cache_bounds_concurrency_and_fp4_weights_leave_room_for_more():
    fp8 = max_concurrency(LLAMA, Deployment(tp=8), HGX, SHORT)
    fp4 = max_concurrency(LLAMA, Deployment(tp=8, weights=WeightFormat.FP4), HGX, SHORT)
    longer = max_concurrency(LLAMA, Deployment(tp=8), HGX, RequestShape(8192, 1024))
    assert fp4 > fp8 > longer > 0
    assert max_concurrency(LLAMA, Deployment(tp=1, weights=WeightFormat.BF16), HGX, SHORT) == 0
    assert serving_curve(LLAMA, Deployment(tp=1, weights=WeightFormat.BF16), HGX, SHORT,
                         PRIOR, PEAK) == []


def test_a_latent_kv_cache_is_not_split_by_tensor_parallelism():
    one = kv_bytes_per_sequence(DEEPSEEK, Deployment(tp=1, dp=8, ep=8), 1000)
    eight = kv_bytes_per_sequence(DEEPSEEK, Deployment(tp=8, ep=8), 1000)
    assert one == eight == 1000 * 61 * 576 * 1.0


def test_wide_expert_parallelism_pays_the_nics_beyond_the_nvlink_domain():
    dep = Deployment(tp=1, dp=16, ep=16)
    across_nics = decode_step(DEEPSEEK, dep, HGX, SHORT, 1024, PRIOR, PEAK)
    in_domain = decode_step(DEEPSEEK, dep, NVL72, SHORT, 1024, PRIOR, PEAK)
    assert across_nics.expert_parallel > 5 * in_domain.expert_parallel
    assert decode_step(LLAMA, Deployment(tp=8), HGX, SHORT, 8, PRIOR, PEAK).expert_parallel == 0


def test_a_moe_step_reads_only_the_experts_its_tokens_pick():
    dep = Deployment(tp=1, dp=8, ep=8)
    one = decode_step(DEEPSEEK, dep, NVL72, SHORT, 1, PRIOR, PEAK)
    many = decode_step(DEEPSEEK, dep, NVL72, SHORT, 4096, PRIOR, PEAK)
    streaming = NVL72.hbm_bw * PRIOR.decode_hbm_efficiency
    every_weight = weight_bytes_per_gpu(DEEPSEEK, dep) / streaming
    # one token touches top-8 of 256 experts; thousands touch nearly all of them
    assert one.memory < 0.2 * every_weight < every_weight < many.memory


@settings(max_examples=60, deadline=None)
@given(tp=st.sampled_from([1, 2, 4, 8]), inputs=st.integers(1, 32768),
       outputs=st.integers(1, 8192))
def test_every_curve_point_is_finite_and_positive(tp, inputs, outputs):
    request = RequestShape(inputs, outputs)
    for point in serving_curve(LLAMA, Deployment(tp=tp), NVL72, request, PRIOR, PEAK, cap=512):
        assert 0 < point.tok_s_per_gpu < 1e7 and 0 < point.tok_s_per_user < 1e5
        assert point.ttft_s >= point.prefill_s > 0


def test_a_deployment_wider_than_its_instance_is_refused():
    with pytest.raises(ValueError, match="ep 16 exceeds the instance's 8 GPUs"):
        Deployment(tp=8, ep=16)
