"""The layouts and formats people train with today: head width, context parallelism, expert
tensor and data parallelism, shared experts, first-k dense layers, uneven pipeline stages,
FSDP and low-precision GEMMs, as usage examples of the C2C model."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from models.c2c import calibration as cal
from models.c2c.estimate import evaluate, usable_memory
from models.c2c.memory import activation_bytes, parameters_per_gpu, total_parameters
from models.c2c.spec import (
    ClusterSpec,
    Framework,
    Layout,
    Layouts,
    Precision,
    Recompute,
    TransformerSpec,
)
from models.c2c.stages import stage_layers
from models.c2c.sweep import enumerate_layouts
from models.c2c.validation import MEMORY_MISSES, calibration_runs, published_runs, run_results
from pipelines.inputs.measurements import shipped_training_runs

# A GB200-like GPU in a 72-GPU NVLink domain; FP8 at twice the BF16 peak.
GB200 = ClusterSpec(peak_flops=2500e12, gemm_peak_flops=5000e12, hbm_bytes=186e9, hbm_bw=8e12,
                    domain_gpus=72, scaleup_bw=900e9, scaleout_bw=50e9,
                    scaleup_efficiency=0.82, scaleout_efficiency=0.94, scaleup_latency=3.4e-6,
                    scaleout_latency=14e-6, arch="blackwell")
# The same GPU in 8-GPU boards.
B200_8 = replace(GB200, domain_gpus=8)
LLAMA_8B = TransformerSpec(layers=32, hidden=4096, heads=32, kv_heads=8, ffn=14336, swiglu=True,
                           seq_len=8192, vocab=128256, tied_embeddings=False)
# Qwen3-style: 64 heads of 128 on a hidden size of 4096, 128 experts, top 8.
QWEN_MOE = TransformerSpec(layers=94, hidden=4096, heads=64, kv_heads=4, head_dim=128,
                           ffn=12288, swiglu=True, experts=128, top_k=8, moe_ffn=1536,
                           seq_len=4096, vocab=151936, tied_embeddings=False)


BF16 = Framework()


def one(model: TransformerSpec, layout: Layout, hw: ClusterSpec = GB200,
        fw: Framework = BF16):
    return evaluate(model, hw, fw, Layouts.of([layout]))


def test_head_dim_sets_the_attention_width_apart_from_the_hidden_size():
    assert QWEN_MOE.kv_channels == 128 and QWEN_MOE.attention_width == 8192
    narrow = replace(QWEN_MOE, head_dim=64)
    assert total_parameters(narrow) < total_parameters(QWEN_MOE)
    assert one(narrow, Layout(ep=8, dp=8, global_batch=64)).t_compute[0] \
        < one(QWEN_MOE, Layout(ep=8, dp=8, global_batch=64)).t_compute[0]


def test_a_hidden_size_that_heads_do_not_divide_needs_head_dim():
    with pytest.raises(ValueError, match="model.head_dim"):
        TransformerSpec(layers=2, hidden=2880, heads=64 + 1, seq_len=128, vocab=100)
    assert TransformerSpec(layers=2, hidden=2880, heads=64, head_dim=64, seq_len=128,
                           vocab=100).attention_width == 4096


def test_context_parallelism_splits_compute_and_activations_and_sends_keys_and_values():
    plain = one(LLAMA_8B, Layout(dp=8, global_batch=64))
    split = one(LLAMA_8B, Layout(cp=2, dp=4, global_batch=64))
    assert split.exposed["cp"].total[0] >= 0 and split.link["cp"].total[0] > 0
    assert plain.link["cp"].total[0] == 0
    # Each GPU handles half the tokens of a micro-batch, twice as many micro-batches.
    lay = Layouts.of([Layout(cp=2, dp=4, global_batch=64)])
    assert activation_bytes(LLAMA_8B, Framework(), lay)[0] < activation_bytes(
        LLAMA_8B, Framework(), Layouts.of([Layout(dp=8, global_batch=64)]))[0]
    assert Layout(cp=2, dp=4).gpus == 8


def test_context_parallel_ranks_on_one_board_use_nvlink_and_across_boards_the_nics():
    inside = one(LLAMA_8B, Layout(tp=4, cp=2, dp=1, global_batch=8), hw=B200_8)
    across = one(LLAMA_8B, Layout(tp=8, cp=2, dp=1, global_batch=8), hw=B200_8)
    assert inside.link["cp"].scale_out[0] == 0 and inside.link["cp"].scale_up[0] > 0
    assert across.link["cp"].scale_out[0] > 0


def test_expert_tensor_parallelism_changes_expert_traffic_not_expert_flops():
    same = Layout(tp=2, ep=8, dp=8, global_batch=64)
    own = replace(same, etp=1)
    a, b = one(QWEN_MOE, same, hw=B200_8), one(QWEN_MOE, own, hw=B200_8)
    assert a.model_flops_per_gpu[0] * a.t_iter[0] == pytest.approx(
        b.model_flops_per_gpu[0] * b.t_iter[0])
    # ep ranks etp apart: with etp 2 an 8-GPU board holds 4 of the 8, with etp 1 all 8.
    assert b.link["ep"].scale_out[0] == 0 < a.link["ep"].scale_out[0]
    assert own.expert_dp == 2 * 8 // (1 * 8) and same.expert_dp == 1


def test_shared_experts_and_first_dense_layers_add_their_parameters():
    shared = replace(QWEN_MOE, shared_experts=1)
    assert shared.shared_ffn_width == 1536
    assert total_parameters(shared) - total_parameters(QWEN_MOE) == pytest.approx(
        QWEN_MOE.layers * 3 * 4096 * 1536)
    dense_start = replace(QWEN_MOE, first_dense_layers=3)
    assert dense_start.moe_layers == 91
    with pytest.raises(ValueError, match="shared_experts"):
        replace(LLAMA_8B, shared_experts=1)


def test_uneven_stages_put_the_given_layers_first_and_last_and_split_the_rest():
    lay = Layouts.of([Layout(pp=4, first_stage_layers=22, last_stage_layers=22,
                             global_batch=4)])
    split = stage_layers(QWEN_MOE, lay)
    assert (split.first[0], split.middle[0], split.last[0]) == (22, 25, 22)
    even = stage_layers(QWEN_MOE, Layouts.of([Layout(pp=4, global_batch=4)]))
    assert even.most[0] == 24  # 94 over 4: 24, 24, 24, 22
    # The busiest stage holds the most parameters.
    dense, _ = parameters_per_gpu(QWEN_MOE, lay)
    dense_even, _ = parameters_per_gpu(QWEN_MOE, Layouts.of([Layout(pp=4, global_batch=4)]))
    assert dense[0] > dense_even[0]


def test_fsdp_exposes_the_parameter_gathers_that_one_layers_compute_cannot_hide():
    """ZeRO-3 on the NICs: tiny micro-batches leave too little compute per layer to hide each
    layer's gather, so FSDP is slower than the distributed optimizer and shows exposed DP."""
    small_batch = {"dp": 64, "global_batch": 64, "micro_batch": 1}
    fsdp = one(LLAMA_8B, Layout(zero=3, **small_batch), hw=B200_8)
    optimizer = one(LLAMA_8B, Layout(zero=1, **small_batch), hw=B200_8)
    assert fsdp.exposed["dp"].total[0] > optimizer.exposed["dp"].total[0]
    assert fsdp.t_iter[0] > optimizer.t_iter[0]
    # Its gathers repeat every micro-batch: with 4 micro-batches the link time grows.
    more = one(LLAMA_8B, Layout(zero=3, dp=64, global_batch=256, micro_batch=1), hw=B200_8)
    assert more.link["dp"].total[0] > 3 * fsdp.link["dp"].total[0]


def test_fp8_runs_the_gemms_at_the_fp8_peak_and_attention_in_bf16():
    layout = Layout(dp=8, global_batch=64)
    bf16 = one(LLAMA_8B, layout)
    fp8 = one(LLAMA_8B, layout, fw=Framework(precision=Precision.FP8))
    assert fp8.t_compute[0] < bf16.t_compute[0]
    # Not twice as fast: attention, norms and the output layer stay in BF16.
    assert fp8.t_compute[0] > bf16.t_compute[0] / 2
    assert fp8.mfu[0] < bf16.mfu[0]  # MFU is against the precision's own peak


def test_each_architecture_has_its_own_efficiency_and_unknown_ones_get_the_pooled_value():
    assert cal.gemm_efficiency("hopper", Precision.BF16) == cal.GEMM_EFFICIENCY[
        ("hopper", Precision.BF16)]
    pooled = cal.gemm_efficiency("some-new-gpu", Precision.FP8)
    fp8 = [v for (_, p), v in cal.GEMM_EFFICIENCY.items() if p == Precision.FP8]
    assert pooled == pytest.approx(np.mean(fp8))


def test_the_sweep_searches_context_and_expert_tensor_parallelism():
    layouts = enumerate_layouts(QWEN_MOE, Framework(), 64, 256, {"pp": 1, "zero": 1})
    assert set(layouts.etp.tolist()) >= {1, 2}
    long = replace(LLAMA_8B, seq_len=16384)
    assert set(enumerate_layouts(long, Framework(), 16, 32, {"pp": 1, "zero": 1}).cp.tolist()) \
        >= {1, 2, 4}
    # Chunks shorter than 2,048 tokens are not searched.
    assert set(enumerate_layouts(LLAMA_8B, Framework(), 16, 32, {"pp": 1}).cp.tolist()) \
        == {1, 2, 4}


def test_every_published_run_of_a_known_system_is_evaluated_with_a_finite_error():
    cases = published_runs(shipped_training_runs())
    results = run_results(cases)
    assert len(results) == len(cases) >= 50
    assert all(np.isfinite(r.error) for r in results)
    assert {c.run.precision for c in cases} == {"bf16", "fp8", "mxfp8", "fp4"}


def test_the_fitted_efficiencies_keep_each_published_table_within_its_stated_error():
    """The errors docs/c2c-method.md states for the NeMo / Megatron-Bridge tables (in sample,
    with calibration.py's fitted values): a model change that loses accuracy fails here."""
    stated = {"nemo-24.07": 5.0, "megatron-bridge-25.11": 15.0,
              "megatron-bridge-26.04.01": 8.5}
    cases = calibration_runs(shipped_training_runs())
    results = run_results(cases)
    for source, bound in stated.items():
        errors = [abs(r.error) for c, r in zip(cases, results, strict=True)
                  if c.run.source == source]
        assert errors and np.mean(errors) <= bound, (source, np.mean(errors))


def test_each_architecture_has_a_band_and_an_unknown_one_the_widest():
    for arch in ("ampere", "hopper", "blackwell", "blackwell_ultra"):
        low, high, basis = cal.band(arch)
        assert 0 < low < 1 < high and basis
    # A scheme with its own runs has its own band; one without falls back to the architecture.
    assert cal.band("blackwell", moe=True) == cal.BAND["blackwell/moe"]
    assert cal.band("hopper", moe=True) == cal.BAND["hopper"]
    low, high, _ = cal.band("some-new-gpu")
    assert low == min(b[0] for b in cal.BAND.values())
    assert high == max(b[1] for b in cal.BAND.values())


def test_every_calibration_layout_fits_but_the_listed_memory_misses():
    """The runs happened, so they fit: the memory model must agree, save for MEMORY_MISSES,
    each with its reason (and the list names only runs that really miss)."""
    misses = set()
    for case in calibration_runs(shipped_training_runs()):
        estimate = evaluate(case.model, case.hw, case.framework, Layouts.of([case.layout]))
        if not estimate.fits[0]:
            misses.add((case.run.source, case.run.system, case.run.model, case.run.precision))
    assert misses == set(MEMORY_MISSES)
    assert all(reason for reason in MEMORY_MISSES.values())


def test_usable_memory_is_capacity_less_a_reserve_and_fragmentation():
    assert usable_memory(GB200) == pytest.approx(
        186e9 * cal.USABLE_HBM_FRACTION - cal.HBM_RESERVE_BYTES)
    assert 0.9 < usable_memory(GB200) / GB200.hbm_bytes < 1


def test_offloaded_layers_leave_hbm_and_cost_time_only_where_the_copy_outlasts_compute():
    model = replace(LLAMA_8B, layers=16)
    kept = Layout(dp=8, global_batch=64, micro_batch=2, zero=3)
    half = replace(kept, offload_layers=8)
    fw = Framework(precision=Precision.FP8)
    base, offloaded = one(model, kept, fw=fw), one(model, half, fw=fw)
    layers = Layouts.of([kept])
    per_layer = activation_bytes(model, fw, layers)[0] / 16
    assert base.memory_bytes[0] - offloaded.memory_bytes[0] == pytest.approx(8 * per_layer)
    # Over NVLink-C2C the copies hide behind compute; over a slow link they show.
    fast = one(model, half, hw=replace(GB200, host_bw=10e12), fw=fw)
    slow = one(model, half, hw=replace(GB200, host_bw=5e9), fw=fw)
    assert fast.t_iter[0] == pytest.approx(base.t_iter[0])
    assert slow.t_iter[0] > base.t_iter[0] * 1.05


def test_block_recompute_sits_between_none_and_full_in_memory_and_time():
    none = Layout(dp=8, global_batch=64, micro_batch=2)
    full = replace(none, recompute=Recompute.FULL)
    block = replace(full, recompute_layers=8)
    runs = [one(LLAMA_8B, lay) for lay in (none, block, full)]
    memory = [r.memory_bytes[0] for r in runs]
    time = [r.t_iter[0] for r in runs]
    assert memory[0] > memory[1] > memory[2]
    assert time[0] < time[1] < time[2]


def test_the_embedding_and_loss_take_a_layers_place_in_the_first_and_last_chunks():
    """126 layers on PP16 x VP4: 128 slots, 2 a chunk; the first stage holds 7 layers and its
    first chunk one, so fewer activations wait than 126 / 16 rounded up would keep."""
    model = replace(LLAMA_8B, layers=126)
    lay = Layout(tp=4, pp=16, interleave=4, dp=1, global_batch=64, sequence_parallel=True)
    split = stage_layers(model, Layouts.of([lay]))
    assert split.embedded[0] and split.first[0] == 7 and split.middle[0] == 8
    even = replace(model, layers=128)
    assert activation_bytes(model, BF16, Layouts.of([lay]))[0] \
        < activation_bytes(even, BF16, Layouts.of([lay]))[0] * 127 / 158 * 1.01


def test_expert_parallel_overlap_hides_the_all_to_all_behind_compute():
    lay = Layout(ep=8, dp=64, global_batch=512, micro_batch=1)
    plain = one(QWEN_MOE, lay, hw=B200_8)
    overlapped = one(QWEN_MOE, lay, hw=B200_8, fw=replace(BF16, ep_overlap=True))
    assert overlapped.exposed["ep"].total[0] < plain.exposed["ep"].total[0]
    assert overlapped.t_iter[0] < plain.t_iter[0]
