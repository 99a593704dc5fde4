"""Which layouts the calibration covers, and a best-layout search that stays inside them.

The covered space comes from the shipped calibration runs, so these tests read them as a
user's install would; the hardware is a GB200 NVL72-like cluster written inline.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from models.c2c.measured_runs import MeasuredRun
from models.c2c.schemes import MIN_RUNS, covered_choices, covered_space, scheme_of
from models.c2c.spec import ClusterSpec, Framework, Layout, Precision, TransformerSpec
from models.c2c.sweep import sweep
from pipelines.inputs.measurements import shipped_training_runs

NVL72 = ClusterSpec(peak_flops=2.5e15, hbm_bytes=186e9, hbm_bw=8e12, domain_gpus=72,
                    scaleup_bw=900e9, scaleout_bw=50e9, scaleup_efficiency=0.8,
                    scaleout_efficiency=0.9, scaleup_latency=3e-6, scaleout_latency=10e-6,
                    gemm_peak_flops=5e15, arch="blackwell")
HGX = replace(NVL72, domain_gpus=8)
ONE_T = TransformerSpec(layers=128, hidden=25600, heads=160, seq_len=2048, vocab=51200)
FP8 = Framework(tp_overlap=True, precision=Precision.FP8)


def run(**kw: object) -> MeasuredRun:
    base: dict[str, object] = {
        "source": "s", "system": "DGX-H100", "model": "m", "gpus": 64, "precision": "fp8",
        "global_batch": 128, "micro_batch": 1, "seq_len": 2048, "fsdp": False, "tp": 1,
        "pp": 1, "cp": 1, "vp": 1, "ep": 1, "tokens_per_s_per_gpu": 1.0,
        "model_tflops_per_gpu": None}
    return MeasuredRun(**{**base, **kw})  # type: ignore[arg-type]


def test_a_setting_is_covered_up_to_what_enough_runs_reach():
    runs = [run(tp=8), run(tp=8), run(tp=4), run(tp=16)] + [run(fsdp=True, gpus=64)] * 3
    space = covered_space(runs)
    assert MIN_RUNS == 3
    assert space.max_tp == 8          # one TP16 run is an anecdote
    assert space.fsdp_max_gpus == 64
    assert covered_space(runs[:4]).fsdp_max_gpus == 0   # no FSDP run: none covered


def test_the_shipped_runs_cover_megatron_layouts_but_not_fsdp_at_scale():
    space = covered_space(shipped_training_runs().runs)
    assert space.max_tp == 8 and space.max_pp >= 8
    assert 0 < space.fsdp_max_gpus < 3072
    fsdp = scheme_of(Layout(tp=8, dp=384, global_batch=3072, zero=3), NVL72, space)
    assert not fsdp.covered
    assert "ZeRO-3 (FSDP) on 3,072 GPUs" in fsdp.uncovered[0]
    across = scheme_of(Layout(tp=16, pp=8, dp=24, global_batch=3072), HGX, space)
    assert "TP16 spans scale-up domains of 8 GPUs" in across.uncovered
    megatron = scheme_of(Layout(tp=8, pp=8, dp=48, global_batch=3072), NVL72, space)
    assert megatron.covered
    assert megatron.name == "TP8 x PP8 x DP48, ZeRO-1 (distributed optimizer), TP inside one " \
                            "scale-up domain"


@pytest.mark.parametrize("hw", [NVL72, HGX], ids=["nvl72", "hgx"])
def test_the_default_search_keeps_to_the_covered_space(hw: ClusterSpec):
    space = covered_space(shipped_training_runs().runs)
    free = sweep(ONE_T, hw, FP8, 3072, 3072, top=1)
    kept = sweep(ONE_T, hw, FP8, 3072, 3072, top=1, limit=covered_choices(space, hw, 3072))
    best = kept.best.layouts.layout(0)
    assert scheme_of(best, hw, space).covered
    # Left free, the search finds something at least as fast: the limit is what kept it out.
    assert free.best.t_iter[0] <= kept.best.t_iter[0]
    assert kept.evaluated < free.evaluated


def test_a_limit_never_overrides_a_fixed_choice():
    space = covered_space(shipped_training_runs().runs)
    pinned = sweep(ONE_T, HGX, FP8, 3072, 3072, top=1, fixed={"tp": 16, "zero": 1},
                   limit=covered_choices(space, HGX, 3072))
    assert pinned.best.layouts.layout(0).tp == 16
