"""How the C2C performance model behaves, as usage examples on small hand-made specs.

Formulas are those of docs/c2c-method.md (memory, collectives, iteration time).
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import replace
from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from models.c2c.classify import (
    COMMUNICATION_BOUND,
    COMPUTE_BOUND,
    ETHERNET,
    INFINIBAND,
    PERFORMANCE_SENSITIVE,
    SCALE_UP,
    c2c_class,
)
from models.c2c.collectives import Tier, hierarchical, ring_all_reduce, ring_gather, tiers
from models.c2c.estimate import evaluate
from models.c2c.memory import (
    activation_bytes,
    activation_bytes_per_layer,
    parameters_per_gpu,
    state_bytes,
)
from models.c2c.spec import ClusterSpec, Framework, Layout, Layouts, Recompute, TransformerSpec
from models.c2c.sweep import (
    NoValidLayout,
    TooManyLayouts,
    divisors,
    enumerate_layouts,
    layout_choices,
    sweep,
)
from models.c2c.validation import A100_SELENE

GiB = 2**30
# An H100-like node: 8 GPUs per NVLink domain, one 400 Gb/s NIC per GPU.
H100 = ClusterSpec(peak_flops=989e12, hbm_bytes=80e9, hbm_bw=3.35e12, domain_gpus=8,
                   scaleup_bw=450e9, scaleout_bw=50e9, scaleup_efficiency=0.82,
                   scaleout_efficiency=0.94, scaleup_latency=3.4e-6, scaleout_latency=14e-6)
SMALL = TransformerSpec(layers=8, hidden=2048, heads=16, seq_len=2048, vocab=32000)
MOE = replace(SMALL, experts=8, top_k=2)
GPT_22B = TransformerSpec(layers=48, hidden=6144, heads=64, seq_len=2048, vocab=51200)
GPT3 = TransformerSpec(layers=96, hidden=12288, heads=96, seq_len=2048, vocab=51200)
UNFUSED = Framework(flash_attention=False, dropout=True)  # as Korthikanti et al. ran


def layouts(*items: Layout) -> Layouts:
    return Layouts.of(items)


# --- activation memory (Korthikanti et al. 2022, section 4; docs/c2c-method.md#memory)

def test_tp_only_activations_follow_korthikanti_and_give_59_25_gib_for_22b():
    s, b, h, a, t, layers = 2048, 4, 6144, 64, 8, 48
    lay = layouts(Layout(tp=t, micro_batch=b, global_batch=b, recompute=Recompute.NONE))
    per_layer = activation_bytes_per_layer(GPT_22B, UNFUSED, lay)[0]
    assert per_layer == pytest.approx(s * b * h * (10 + 24 / t + 5 * a * s / (h * t)))
    assert per_layer * layers / GiB == pytest.approx(59.25)


def test_sequence_parallel_with_selective_recompute_keeps_34_sbh_over_t():
    s, b, h, t, layers = 2048, 4, 6144, 8, 48
    lay = layouts(Layout(tp=t, micro_batch=b, global_batch=b, sequence_parallel=True,
                         recompute=Recompute.SELECTIVE))
    per_layer = activation_bytes_per_layer(GPT_22B, UNFUSED, lay)[0]
    assert per_layer == pytest.approx(34 * s * b * h / t)
    assert per_layer * layers / GiB == pytest.approx(9.5625)


def test_full_recompute_keeps_only_each_layers_input():
    lay = layouts(Layout(tp=8, micro_batch=4, global_batch=4, recompute=Recompute.FULL))
    assert activation_bytes_per_layer(GPT_22B, UNFUSED, lay)[0] == 2 * 2048 * 4 * 6144


# --- weights, gradients and optimizer states (Megatron dist_optimizer.md)

@pytest.mark.parametrize(("zero", "dp", "bytes_per_parameter"), [
    (0, 8, 18),  # bf16 weights + fp32 gradients + fp32 master and two Adam moments
    (1, 8, 6 + 12 / 8),  # distributed optimizer: the 12 optimizer bytes shard over dp
    (1, 64, 6 + 12 / 64),
])
def test_state_bytes_per_parameter_by_zero_stage(zero, dp, bytes_per_parameter):
    lay = layouts(Layout(tp=2, dp=dp, global_batch=dp, zero=zero))
    dense, expert = parameters_per_gpu(SMALL, lay)
    assert state_bytes(SMALL, lay)[0] / (dense + expert)[0] == pytest.approx(bytes_per_parameter)


@pytest.mark.parametrize(("zero", "dp", "bytes_per_parameter"), [
    (0, 8, 20),  # bf16 weights + bf16 gradients + fp32 master, main gradients, two moments
    (1, 8, 4 + 16 / 8),  # distributed optimizer with bf16 gradients
])
def test_gradients_in_bf16_keep_fp32_main_gradients_in_the_optimizer(zero, dp,
                                                                      bytes_per_parameter):
    lay = layouts(Layout(tp=2, dp=dp, global_batch=dp, zero=zero))
    dense, expert = parameters_per_gpu(SMALL, lay)
    per_parameter = state_bytes(SMALL, lay, grads_in_fp32=False)[0] / (dense + expert)[0]
    assert per_parameter == pytest.approx(bytes_per_parameter)


# --- collectives (docs/c2c-method.md#collectives)

def test_ring_all_reduce_without_latency_is_2_n_minus_1_over_n_size_over_bandwidth():
    n = np.array([2.0, 4.0, 8.0])
    seconds = ring_all_reduce(n, np.full(3, 1e9), Tier(bw=100e9, alpha=0.0))
    assert np.allclose(seconds, 2 * (n - 1) / n * 1e9 / 100e9)


def test_a_collective_over_one_rank_costs_nothing():
    assert ring_all_reduce(np.array([1.0]), np.array([1e9]), Tier(100e9, 1e-5))[0] == 0
    assert ring_gather(np.array([1.0]), np.array([1e9]), Tier(100e9, 1e-5))[0] == 0


def test_hierarchical_keeps_a_group_inside_its_domain_on_scale_up():
    inside = hierarchical("all_reduce", np.array([1]), np.array([8]), np.array([1e9]), H100)
    assert inside.scale_up[0] > 0
    assert inside.scale_out[0] == 0


def test_hierarchical_sends_a_group_spanning_domains_partly_over_scale_out():
    spanning = hierarchical("all_reduce", np.array([1]), np.array([32]), np.array([1e9]), H100)
    assert spanning.scale_up[0] > 0
    assert spanning.scale_out[0] > 0


# --- which tier a layout's traffic lands on

def test_tp_16_crosses_the_nics_on_8_gpu_domains_but_not_on_72_gpu_domains():
    lay = layouts(Layout(tp=16, dp=4, global_batch=16, sequence_parallel=True))
    node8 = evaluate(SMALL, H100, Framework(), lay)
    nvl72 = evaluate(SMALL, replace(H100, domain_gpus=72), Framework(), lay)
    assert node8.link["tp"].scale_out[0] > 0
    assert nvl72.link["tp"].scale_out[0] == 0
    assert nvl72.c2c_scale_out[0] == 0
    # A TP group wider than an 8-GPU node asks for NVL72-class scale-up on either cluster.
    assert node8.recommended_fabric[0] == nvl72.recommended_fabric[0] == SCALE_UP


def test_data_parallel_traffic_inside_a_72_gpu_domain_needs_no_infiniband():
    lay = layouts(Layout(dp=64, global_batch=64, zero=1))
    no_overlap = Framework(dp_overlap=False)  # all gradient traffic exposed
    node8 = evaluate(SMALL, H100, no_overlap, lay)
    nvl72 = evaluate(SMALL, replace(H100, domain_gpus=72), no_overlap, lay)
    assert 0.2 <= node8.c2c_scale_out[0] <= 0.6
    assert node8.recommended_fabric[0] == INFINIBAND
    assert nvl72.c2c_scale_out[0] == 0
    assert nvl72.recommended_fabric[0] == ETHERNET


# --- monotonicity

MIXED = layouts(
    Layout(tp=8, dp=8, micro_batch=1, global_batch=64, sequence_parallel=True),
    Layout(tp=2, pp=4, dp=8, micro_batch=1, global_batch=64, interleave=2, zero=1),
    Layout(tp=1, dp=64, micro_batch=2, global_batch=128, zero=3),
    Layout(tp=4, pp=2, dp=8, micro_batch=2, global_batch=64, recompute=Recompute.FULL, zero=0),
    Layout(tp=16, dp=4, micro_batch=1, global_batch=16, sequence_parallel=True,
           recompute=Recompute.SELECTIVE),
)


@pytest.mark.parametrize("bandwidth", ["scaleup_bw", "scaleout_bw"])
@pytest.mark.parametrize("fw", [Framework(), Framework(tp_overlap=True), UNFUSED],
                         ids=["default", "tp_overlap", "unfused"])
def test_more_bandwidth_never_makes_an_iteration_slower(bandwidth, fw):
    times = [evaluate(SMALL, replace(H100, **{bandwidth: getattr(H100, bandwidth) * f}), fw,
                      MIXED).t_iter for f in (0.25, 0.5, 1, 2, 4)]
    assert all(np.all(slow >= fast) for slow, fast in pairwise(times))


def test_a_faster_gpu_computes_faster():
    faster = replace(H100, peak_flops=2 * H100.peak_flops)
    slow, fast = (evaluate(SMALL, hw, Framework(), MIXED).t_compute for hw in (H100, faster))
    assert np.all(fast < slow)


# --- sequence parallelism and recomputation

def test_sequence_parallel_moves_plain_tp_bytes_plus_two_backward_regathers():
    """SP's 4 all-gathers + 4 reduce-scatters move the bytes of plain TP's 4 all-reduces;
    Megatron also re-gathers the two sharded GEMM inputs in backward
    (docs/c2c-method.md#communication-per-dimension)."""
    plain, sp = (Layout(tp=8, global_batch=1, sequence_parallel=flag) for flag in (False, True))
    link = evaluate(SMALL, H100, Framework(), layouts(plain, sp)).link["tp"].total
    activation = 1 * SMALL.seq_len * SMALL.hidden * 2  # b s h, bf16
    regathers = 2 * ring_gather(np.array([8.0]), np.array([activation]), tiers(H100)[0])[0]
    assert link[1] - SMALL.layers * regathers == pytest.approx(link[0])


def test_sequence_parallel_cuts_activation_memory():
    plain, sp = (Layout(tp=8, global_batch=1, sequence_parallel=flag) for flag in (False, True))
    without, with_sp = activation_bytes(SMALL, Framework(), layouts(plain, sp))
    assert with_sp < without


@pytest.mark.parametrize("fw", [Framework(), UNFUSED], ids=["flash", "unfused"])
def test_full_recompute_adds_about_a_third_of_forward_plus_backward(fw):
    none, full = (Layout(tp=4, micro_batch=2, global_batch=8, recompute=mode, zero=0)
                  for mode in (Recompute.NONE, Recompute.FULL))
    t_none, t_full = evaluate(SMALL, H100, fw, layouts(none, full)).t_compute
    assert t_full / t_none - 1 == pytest.approx(1 / 3, abs=0.05)


# --- pipeline bubble

@pytest.mark.parametrize("v", [1, 2, 4])
def test_bubble_is_p_minus_1_over_v_micro_batch_stage_times(v):
    """Two batches that differ only in micro-batch count give the per-micro-batch time."""
    p, m1, m2 = 4, 8, 16
    few, many = (Layout(tp=2, pp=p, global_batch=m, interleave=v, zero=0) for m in (m1, m2))
    estimate = evaluate(SMALL, H100, Framework(), layouts(few, many))
    per_micro_batch = (estimate.t_iter[1] - estimate.t_iter[0]) / (m2 - m1)
    assert estimate.t_bubble[0] == pytest.approx((p - 1) / v * per_micro_batch)


def test_interleaving_shrinks_the_bubble_by_v():
    lay = layouts(*(Layout(tp=2, pp=4, global_batch=16, interleave=v) for v in (1, 2, 4)))
    bubble = evaluate(SMALL, H100, Framework(), lay).t_bubble
    # Only the PP sends (x v) keep the ratio off exactly v.
    assert bubble[0] / bubble[1:] == pytest.approx([2, 4], rel=0.05)


def test_no_pipeline_no_bubble():
    assert evaluate(SMALL, H100, Framework(), layouts(Layout(tp=8))).t_bubble[0] == 0


# --- mixture of experts

def test_expert_parallelism_sends_all_to_all_traffic_only_when_ep_above_1():
    lay = layouts(Layout(dp=8, ep=8, global_batch=8), Layout(dp=8, ep=1, global_batch=8))
    ep = evaluate(MOE, H100, Framework(), lay).link["ep"]
    assert ep.total[0] > 0
    assert ep.total[1] == 0


def test_expert_parallelism_across_domains_uses_the_nics():
    inside = Layout(tp=1, dp=8, ep=8, global_batch=8)  # 8 experts, one per GPU of a node
    across = Layout(tp=2, dp=8, ep=8, global_batch=8)  # EP ranks tp apart: 2 nodes
    ep = evaluate(MOE, H100, Framework(), layouts(inside, across)).link["ep"]
    assert ep.scale_out[0] == 0
    assert ep.scale_out[1] > 0


def test_dense_model_has_no_expert_traffic():
    lay = layouts(Layout(tp=2, dp=4, global_batch=8))
    assert evaluate(SMALL, H100, Framework(), lay).link["ep"].total[0] == 0


# --- results

def test_time_to_train_is_iterations_times_iteration_time():
    lay = layouts(Layout(tp=8, dp=8, global_batch=64))
    tokens = 1e12
    estimate = evaluate(SMALL, H100, Framework(), lay, tokens=tokens)
    iterations = tokens / (64 * SMALL.seq_len)
    assert estimate.time_to_train_s[0] == pytest.approx(iterations * estimate.t_iter[0])
    assert evaluate(SMALL, H100, Framework(), lay).time_to_train_s is None


def test_c2c_class_boundaries_belong_to_the_middle_class():
    """<0.2 compute-bound, 0.2-0.6 performance-sensitive, >0.6 communication-bound."""
    classes = c2c_class(np.array([0.1, 0.2, 0.5, 0.6, 0.7]))
    assert classes.tolist() == [COMPUTE_BOUND, PERFORMANCE_SENSITIVE, PERFORMANCE_SENSITIVE,
                                PERFORMANCE_SENSITIVE, COMMUNICATION_BOUND]


@pytest.mark.parametrize(("model", "fw"), [(SMALL, Framework()), (SMALL, UNFUSED),
                                            (MOE, Framework(tp_overlap=True))],
                         ids=["dense", "dense-unfused", "moe-tp-overlap"])
def test_evaluating_layouts_together_equals_evaluating_each_alone(model, fw):
    mixed = MIXED if not model.is_moe else layouts(
        Layout(tp=2, dp=8, ep=8, global_batch=16, sequence_parallel=True),
        Layout(tp=1, pp=2, dp=16, ep=4, global_batch=32, interleave=2, zero=3),
        Layout(tp=4, dp=4, ep=2, global_batch=8, recompute=Recompute.FULL))
    together = evaluate(model, H100, fw, mixed)
    for i in range(len(mixed)):
        alone = evaluate(model, H100, fw, mixed.take(np.array([i])))
        for name in ("t_iter", "t_compute", "t_bubble", "mfu", "memory_bytes", "c2c"):
            assert np.allclose(getattr(alone, name), getattr(together, name)[i]), name
        for dim in together.link:
            for kind in ("link", "exposed"):
                one, many = getattr(alone, kind)[dim], getattr(together, kind)[dim]
                assert np.allclose(one.scale_up, many.scale_up[i]), (kind, dim)
                assert np.allclose(one.scale_out, many.scale_out[i]), (kind, dim)


# --- sweep

def test_sweep_returns_the_fastest_fitting_layouts_for_gpt3_on_1024_a100():
    result = sweep(GPT3, A100_SELENE, Framework(), 1024, 1536, top=5)
    best, lay = result.best, result.best.layouts
    assert len(lay) == 5
    assert np.all(np.diff(best.t_iter) >= 0)
    assert best.fits.all()
    assert np.all(lay.tp * lay.pp * lay.dp == 1024)
    assert np.all(1536 % (lay.micro_batch * lay.dp) == 0)
    assert result.valid <= result.evaluated


def test_sweep_holds_a_fixed_dimension():
    result = sweep(GPT3, A100_SELENE, Framework(), 1024, 1536, fixed={"tp": 8}, top=3)
    assert np.all(result.best.layouts.tp == 8)


def test_sweep_names_the_heads_when_fixed_tp_cannot_divide_them():
    with pytest.raises(NoValidLayout, match="tp=7 does not divide the 96 attention heads"):
        sweep(GPT3, A100_SELENE, Framework(), 1024, 1536, fixed={"tp": 7})


def test_sweep_names_memory_when_nothing_fits():
    ten_trillion = TransformerSpec(layers=128, hidden=81920, heads=128, seq_len=2048,
                                   vocab=51200)
    with pytest.raises(NoValidLayout, match="no layout fits in memory"):
        sweep(ten_trillion, H100, Framework(), 8, 8)


def test_sweep_on_fewer_gpus_than_tp_times_pp_masks_them_out_without_a_warning():
    """tp x pp > gpus would leave dp = 0 (and a division by zero): such layouts never reach
    the rules or the model, and nothing warns."""
    assert max(layout_choices(SMALL, Framework(), 8, 8)["tp"]) \
        * max(layout_choices(SMALL, Framework(), 8, 8)["pp"]) > 8  # such candidates exist
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a RuntimeWarning from numpy fails here, not by config
        result = sweep(SMALL, H100, Framework(), 8, 8)
        layouts = enumerate_layouts(SMALL, Framework(), 8, 8)
    assert np.all(layouts.dp >= 1) and np.all(layouts.gpus == 8)
    assert result.evaluated == len(layouts) and np.all(result.best.layouts.gpus == 8)


@given(st.integers(min_value=1, max_value=5000))
def test_divisors_are_every_divisor_in_order(n):
    assert divisors(n) == [d for d in range(1, n + 1) if n % d == 0]


def test_divisors_of_a_count_near_a_billion_take_milliseconds():
    started = time.perf_counter()
    found = divisors(735_134_400)  # 1,344 divisors: the most of any number below 10^9
    assert len(found) == 1344 and found[-1] == 735_134_400
    assert time.perf_counter() - started < 1.0


def test_a_search_beyond_its_limit_is_refused_with_its_size_before_any_array():
    """Every count 720,720 (240 divisors): 1.3 billion candidates, ~150 GiB of arrays."""
    huge = TransformerSpec(layers=720720, hidden=720720, heads=720720, seq_len=2048,
                           vocab=51200)
    started = time.perf_counter()
    with pytest.raises(TooManyLayouts) as refused:
        sweep(huge, H100, Framework(), 720720, 720720, max_layouts=2_000_000)
    assert time.perf_counter() - started < 1.0
    error = refused.value
    assert (error.count, error.limit) == (1_327_104_000, 2_000_000)
    assert error.choices["tp"] == error.choices["pp"] == error.choices["micro_batch"] == 240
    assert "1,327,104,000 candidate layouts" in str(error) and "bytes of arrays each" in str(error)


def test_the_limit_counts_candidates_as_enumerate_layouts_would_make_them():
    choices = layout_choices(SMALL, Framework(), 8, 8, {"tp": 2})
    count = math.prod(len(v) for v in choices.values())
    assert len(enumerate_layouts(SMALL, Framework(), 8, 8, {"tp": 2}, max_layouts=count)) > 0
    with pytest.raises(TooManyLayouts, match=f"{count:,} candidate layouts"):
        enumerate_layouts(SMALL, Framework(), 8, 8, {"tp": 2}, max_layouts=count - 1)
