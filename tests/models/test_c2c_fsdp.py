"""ZeRO-3 as PyTorch FSDP2 runs it, PyTorch's own kernels, Hopper's own BF16 efficiency, and
bands that hold on the sets left out (docs/c2c-method.md)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from models.c2c import calibration as cal
from models.c2c.collectives import hierarchical
from models.c2c.estimate import evaluate
from models.c2c.memory import total_parameters
from models.c2c.spec import Framework, Layout, Layouts, Precision, Recompute, TransformerSpec
from models.c2c.validation import SYSTEMS, calibration_runs
from pipelines.inputs.measurements import shipped_training_runs

LLAMA3_8B = TransformerSpec(layers=32, hidden=4096, heads=32, kv_heads=8, head_dim=128,
                            ffn=14336, swiglu=True, vocab=128256, tied_embeddings=False,
                            seq_len=8192)
H100 = SYSTEMS["DGX-H100"][Precision.BF16]
FSDP2 = Framework(grad_reduce_in_fp32=True)  # the defaults: FSDP2's copies, Megatron kernels


def fsdp(gpus: int, global_batch: int | None = None) -> Layout:
    return Layout(tp=1, pp=1, dp=gpus, micro_batch=1, zero=3, recompute=Recompute.NONE,
                  global_batch=global_batch or gpus)


def t_iter(fw: Framework, layout: Layout, model: TransformerSpec = LLAMA3_8B) -> float:
    return float(evaluate(model, H100, fw, Layouts.of([layout])).t_iter[0])


def test_fsdp2_copies_cost_hbm_time_and_flat_buffers_do_not():
    """Per layer and micro-batch FSDP2 copies the gathered BF16 parameters out twice (read +
    write, forward and backward) and the gradients in once (read BF16, write fp32)."""
    layout = fsdp(64)
    copies = t_iter(FSDP2, layout) - t_iter(replace(FSDP2, pytorch_fsdp=False), layout)
    # one micro-batch (global batch = GPUs), every parameter on each GPU before sharding
    expected = (total_parameters(LLAMA3_8B) * (2 * 2 * 2 + 2 + 4)
                / (H100.hbm_bw * cal.HBM_EFFICIENCY))
    assert copies == pytest.approx(expected, rel=0.02)


def test_fsdp2_copies_leave_the_distributed_optimizer_alone():
    layout = replace(fsdp(64), zero=1)
    assert t_iter(FSDP2, layout) == t_iter(replace(FSDP2, pytorch_fsdp=False), layout)


def test_an_all_gather_over_more_ranks_pays_every_ring_step():
    """NCCL's ring over n ranks in domains of k: n - 1 steps, across - 1 on the network and
    the rest on NVLink, so the latency grows with the whole group."""
    tiny = np.array([1e3])
    one = np.array([1])

    def latency(n: int) -> float:
        return float(hierarchical("gather", one, np.array([n]), tiny, H100).total[0])

    up, out = H100.scaleup_latency, H100.scaleout_latency
    for n in (64, 1536):
        across = n // 8
        assert latency(n) == pytest.approx((n - across) * up + (across - 1) * out, rel=0.01)


def test_fsdp_exposes_more_at_scale_when_the_batch_per_gpu_shrinks():
    """A fixed global batch over more GPUs: less compute per GPU to hide each layer's gathers,
    whose latency grows with the group."""
    small, large = fsdp(384, 384), fsdp(1536, 1536)
    exposed = [float(evaluate(LLAMA3_8B, H100, FSDP2, Layouts.of([lay])).exposed["dp"].total[0])
               for lay in (small, large)]
    assert exposed[1] > 2 * exposed[0]


def test_pytorch_kernels_run_the_layers_at_their_fitted_share():
    layout = replace(fsdp(8), zero=1)
    megatron = evaluate(LLAMA3_8B, H100, FSDP2, Layouts.of([layout]))
    pytorch = evaluate(LLAMA3_8B, H100, replace(FSDP2, pytorch_native=True),
                       Layouts.of([layout]))
    assert 0.5 < cal.PYTORCH_KERNEL_EFFICIENCY < 1.0
    assert pytorch.t_iter[0] > megatron.t_iter[0]
    assert pytorch.t_iter[0] / megatron.t_iter[0] == pytest.approx(
        1 / cal.PYTORCH_KERNEL_EFFICIENCY, rel=0.03)


def test_the_torchtitan_runs_are_pytorch_fsdp2_with_fp32_reduction():
    cases = [c for c in calibration_runs(shipped_training_runs())
             if c.run.source == "torchtitan-2024-04"]
    assert len(cases) == 3
    for case in cases:
        assert case.framework.pytorch_native and case.framework.pytorch_fsdp
        assert case.framework.grad_reduce_in_fp32 and case.layout.zero == 3
    megatron_fsdp = [c for c in calibration_runs(shipped_training_runs())
                     if c.run.fsdp and c.run.framework == "megatron"]
    assert megatron_fsdp and not any(c.framework.pytorch_fsdp for c in megatron_fsdp)


def test_hopper_bf16_has_its_own_fitted_efficiency():
    assert cal.gemm_efficiency("hopper", Precision.BF16) != cal.GEMM_COMPUTE_EFFICIENCY
    assert cal.gemm_efficiency("ampere", Precision.BF16) == cal.GEMM_COMPUTE_EFFICIENCY


def test_every_band_holds_80_percent_of_each_set_left_out():
    assert cal.LEAVE_OUT_COVERAGE
    for key, (held, points, _) in cal.LEAVE_OUT_COVERAGE.items():
        assert held >= 0.8 * points, key


def test_pytorch_without_a_band_of_its_own_gets_the_widest():
    assert cal.band("ampere", pytorch=True) == cal.GENERIC_BAND
    assert cal.band("hopper", moe=False, pytorch=False) == cal.BAND["hopper/dense"]
