"""The serving model: decode is memory, prefill is compute, collectives land on their tier,
the KV cache (a sliding window's only its window) and the engine's batch limit bound the
concurrency, experts are split by TP unless `ep` says otherwise, and pipeline stages and a
disaggregated prefill pool are deployments of their own."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.c2c.spec import ClusterSpec
from models.serving.calibration import PRIOR
from models.serving.curve import (
    RESERVED_BYTES,
    USABLE_HBM_FRACTION,
    all_reduce_seconds,
    curve_point,
    decode_step,
    kv_bytes_per_sequence,
    layer_overhead,
    max_concurrency,
    serving_curve,
    usable_hbm,
    weight_bytes_per_gpu,
)
from models.serving.presets import PRESETS
from models.serving.spec import Deployment, RequestShape, WeightFormat
from tests.conftest import examples

HGX = ClusterSpec(peak_flops=1e15, hbm_bytes=80e9, hbm_bw=3.35e12, domain_gpus=8,
                  scaleup_bw=450e9, scaleout_bw=50e9, scaleup_efficiency=0.8,
                  scaleout_efficiency=0.8, scaleup_latency=5e-6, scaleout_latency=10e-6)
NVL72 = dataclasses.replace(HGX, domain_gpus=72, hbm_bytes=186e9, hbm_bw=8e12)
LLAMA, DEEPSEEK, GPT_OSS = (PRESETS[m] for m in ("llama-3.3-70b", "deepseek-r1",
                                                 "gpt-oss-120b"))
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


def test_a_sliding_window_layer_caches_only_its_window():
    dep = Deployment(tp=1, weights=WeightFormat.FP4)
    per_token_layer = 2 * 8 * 64 * 1.0 / 1          # 8 KV heads of 64, FP8, one shard
    long = kv_bytes_per_sequence(GPT_OSS, dep, 32768)
    assert long == pytest.approx((18 * 32768 + 18 * 128) * per_token_layer)
    # a 32k prompt on one 80 GB H100 fits (vLLM serves it), with room for a few of them
    h100 = dataclasses.replace(HGX, hbm_bytes=80e9)
    assert max_concurrency(GPT_OSS, dep, h100, RequestShape(32768, 1024)) >= 2


def test_datasheet_hbm_gigabytes_are_read_as_gib():
    assert usable_hbm(HGX) == pytest.approx(80 * 2**30 * USABLE_HBM_FRACTION - RESERVED_BYTES)


def test_the_engine_batch_limit_bounds_concurrency_and_has_no_hidden_cap():
    small = RequestShape(128, 128)
    free = max_concurrency(GPT_OSS, Deployment(tp=1, weights=WeightFormat.FP4), NVL72, small)
    assert free == 2048                              # DEFAULT_MAX_BATCH, not 512
    limited = Deployment(tp=1, dp=2, max_batch=256, weights=WeightFormat.FP4)
    assert max_concurrency(GPT_OSS, limited, NVL72, small) == 2 * 256


def test_decode_compute_runs_at_its_own_efficiency_not_prefills():
    slow_prefill = dataclasses.replace(PRIOR, prefill_efficiency=0.05)
    a = decode_step(LLAMA, Deployment(tp=8), HGX, SHORT, 256, PRIOR, PEAK)
    b = decode_step(LLAMA, Deployment(tp=8), HGX, SHORT, 256, slow_prefill, PEAK)
    assert a.compute == b.compute
    flops = 256 * (2 * LLAMA.active_params + 4 * 80 * 1536 * 64 * 128) / 8
    assert a.compute == pytest.approx(flops / (PEAK * PRIOR.decode_compute_efficiency))


def test_experts_are_split_by_tensor_parallelism_unless_ep_is_given():
    by_tp = Deployment(tp=8, weights=WeightFormat.FP8)
    assert weight_bytes_per_gpu(DEEPSEEK, by_tp) == pytest.approx(DEEPSEEK.total_params / 8)
    assert decode_step(DEEPSEEK, by_tp, HGX, SHORT, 64, PRIOR, PEAK).expert_parallel == 0
    by_ep = Deployment(tp=8, ep=8)
    assert decode_step(DEEPSEEK, by_ep, HGX, SHORT, 64, PRIOR, PEAK).expert_parallel > 0


def test_a_batch_of_one_sees_a_one_shot_all_reduce_latency_per_layer():
    tokens = LLAMA.hidden * 2.0                      # one token's BF16 activations
    one_shot = 2 * HGX.scaleup_latency + 7 * tokens / (HGX.scaleup_bw * 0.8)
    assert all_reduce_seconds(tokens, 8, HGX) == pytest.approx(one_shot)
    step = decode_step(LLAMA, Deployment(tp=8), HGX, SHORT, 1, PRIOR, PEAK)
    assert step.tensor_parallel == pytest.approx(2 * 80 * one_shot)
    # a large all-reduce still takes the ring
    big = 1e9
    ring = 14 * HGX.scaleup_latency + 2 * 7 / 8 * big / (HGX.scaleup_bw * 0.8)
    assert all_reduce_seconds(big, 8, HGX) == pytest.approx(ring)


def test_pipeline_stages_split_the_weights_and_a_token_crosses_every_stage():
    flat = Deployment(tp=4)
    staged = Deployment(tp=4, pp=2)
    assert weight_bytes_per_gpu(LLAMA, staged) == pytest.approx(
        weight_bytes_per_gpu(LLAMA, flat) / 2)
    assert staged.gpus == 8
    one = decode_step(LLAMA, flat, HGX, SHORT, 1, PRIOR, PEAK)
    two = decode_step(LLAMA, staged, HGX, SHORT, 1, PRIOR, PEAK)
    assert two.pipeline > 0 and two.total > one.memory    # a token still streams every layer


def test_a_disaggregated_deployment_keeps_prefill_off_the_decode_gpus():
    aggregated = Deployment(tp=8)
    split = Deployment(tp=8, prefill_gpus=8)
    request = RequestShape(8192, 1024)
    together = curve_point(LLAMA, aggregated, HGX, request, 64, PRIOR, PEAK)
    apart = curve_point(LLAMA, split, HGX, request, 64, PRIOR, PEAK)
    assert apart.tpot_s == apart.step.total < together.tpot_s
    assert apart.ttft_s > apart.prefill_s + apart.step.total       # the KV crosses the fabric
    assert split.total_gpus == 16


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
    # one token touches top-8 of 256 experts (the busiest GPU about 2.4 of its 32);
    # thousands touch nearly all of them
    assert one.memory < 0.3 * every_weight < every_weight < many.memory


@settings(max_examples=examples(60), deadline=None)
@given(tp=st.sampled_from([1, 2, 4, 8]), inputs=st.integers(1, 32768),
       outputs=st.integers(1, 8192))
def test_every_curve_point_is_finite_and_positive(tp, inputs, outputs):
    request = RequestShape(inputs, outputs)
    for point in serving_curve(LLAMA, Deployment(tp=tp, max_batch=512), NVL72, request, PRIOR,
                               PEAK):
        assert 0 < point.tok_s_per_gpu < 1e7 and 0 < point.tok_s_per_user < 1e5
        assert point.ttft_s >= point.prefill_s > 0


def test_a_deployment_wider_than_its_instance_is_refused():
    with pytest.raises(ValueError, match="ep 16 exceeds the instance's 8 GPUs"):
        Deployment(tp=8, ep=16)


def test_a_steps_per_sequence_cost_grows_with_the_batch_per_replica():
    k = dataclasses.replace(PRIOR, token_overhead_s=0.5e-6)
    one = decode_step(LLAMA, Deployment(tp=8), HGX, SHORT, 1, k, PEAK)
    many = decode_step(LLAMA, Deployment(tp=8), HGX, SHORT, 64, k, PEAK)
    assert many.overhead - one.overhead == pytest.approx(80 * 63 * 0.5e-6)
    replicated = decode_step(LLAMA, Deployment(tp=1, dp=8), HGX, SHORT, 64, k, PEAK)
    assert replicated.overhead == pytest.approx(80 * (PRIOR.layer_overhead_s + 8 * 0.5e-6))


def test_a_moe_prefill_streams_every_expert_at_least_once():
    from models.serving.curve import prefill_seconds

    dep = Deployment(tp=1, weights=WeightFormat.FP4)
    fast_math = dataclasses.replace(PRIOR, prefill_efficiency=0.90)
    prefill = prefill_seconds(GPT_OSS, dep, NVL72, SHORT, fast_math, PEAK)
    streaming = weight_bytes_per_gpu(GPT_OSS, dep) / (NVL72.hbm_bw * PRIOR.decode_hbm_efficiency)
    assert prefill == pytest.approx(streaming, rel=0.01)   # 1,024 tokens pick every expert
    dense = prefill_seconds(LLAMA, Deployment(tp=8), NVL72, SHORT, fast_math, PEAK)
    assert dense > weight_bytes_per_gpu(LLAMA, Deployment(tp=8)) / NVL72.hbm_bw   # FLOPs bind


def test_a_layers_kernels_count_what_its_attention_and_experts_launch():
    # QKV, attention, output + gate-up, down
    assert LLAMA.kernels_per_layer == 5
    # QKV, attention, output + router, experts' gate-up and down
    assert GPT_OSS.kernels_per_layer == 6
    # latent attention's 7 + (58 MoE layers: router, experts, a shared expert's two;
    # 3 dense layers: gate-up, down) over 61 layers
    assert DEEPSEEK.kernels_per_layer == pytest.approx(7 + (58 * 5 + 3 * 2) / 61)


def test_the_kernel_share_of_a_layers_overhead_grows_with_its_kernels():
    flat = dataclasses.replace(PRIOR, layer_overhead_s=40e-6, kernel_share=0.0)
    assert layer_overhead(DEEPSEEK, flat) == layer_overhead(LLAMA, flat) == 40e-6
    by_kernel = dataclasses.replace(flat, kernel_share=1.0)
    assert layer_overhead(LLAMA, by_kernel) == pytest.approx(40e-6)   # the reference layer
    assert layer_overhead(DEEPSEEK, by_kernel) == pytest.approx(
        40e-6 * DEEPSEEK.kernels_per_layer / 5)
    step = decode_step(DEEPSEEK, Deployment(tp=8), HGX, SHORT, 1, by_kernel, PEAK)
    assert step.overhead == pytest.approx(61 * layer_overhead(DEEPSEEK, by_kernel))


def test_whole_experts_on_few_sequences_wait_for_the_busiest_gpu():
    """Split by TP every GPU streams a slice of each picked expert; spread whole over EP8, the
    GPU whose experts the 4 sequences picked most streams more than the mean, and the gap
    closes as the batch picks nearly every expert."""
    split = decode_step(DEEPSEEK, Deployment(tp=8), HGX, SHORT, 4, PRIOR, PEAK)
    spread = decode_step(DEEPSEEK, Deployment(tp=8, ep=8), HGX, SHORT, 4, PRIOR, PEAK)
    assert spread.memory > 1.3 * split.memory
    big_split = decode_step(DEEPSEEK, Deployment(tp=8), HGX, SHORT, 512, PRIOR, PEAK)
    big_spread = decode_step(DEEPSEEK, Deployment(tp=8, ep=8), HGX, SHORT, 512, PRIOR, PEAK)
    assert big_spread.memory == pytest.approx(big_split.memory, rel=0.01)
