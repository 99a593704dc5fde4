"""Every tuned constant of the C2C model, in one place, with where it comes from.

Fitted once, jointly, on the calibration sets of docs/c2c-method.md#calibration-and-error
(Korthikanti et al. 2022 Table 5 on A100; Megatron-Core's 2024 H100 table) and never per
configuration: the same numbers serve every GPU, model and layout. tests/models pins the
resulting errors; bench/ is where their speed is measured.
"""

from __future__ import annotations

from typing import Final

from models.c2c.spec import Precision

# --- compute: a GEMM of F FLOPs moving Q bytes takes F/(peak*EFF) + Q/(hbm*EFF) + OVERHEAD.
# Compute and memory time are summed (Calculon's "no_overlap"), which is what makes small and
# skinny GEMMs slower per FLOP and fast-FLOP/slow-HBM GPUs (H100) reach a lower fraction of
# peak than A100 on the same shapes.
GEMM_COMPUTE_EFFICIENCY: Final = 0.86  # fitted (BF16, Ampere and Hopper)
HBM_EFFICIENCY: Final = 0.80  # fitted; also used for element-wise kernels and the optimizer
KERNEL_OVERHEAD_S: Final = 6e-6  # fitted; launch + tail per GEMM call
# A fused (flash) attention kernel runs the causal half of QK^T and attention x V at this
# fraction of peak; its backward pass recomputes and costs 2.5x its forward.
FUSED_ATTENTION_EFFICIENCY: Final = 0.45  # fitted (Hopper)

# Per architecture and precision: the fraction of the datasheet's dense peak a large GEMM
# reaches, and of the BF16 peak a fused attention kernel reaches (attention stays in BF16 in
# every precision). An architecture not listed gets the mean of the listed ones for that
# precision. Ampere BF16: fitted with the constants above on Korthikanti Table 5. The rest:
# fitted by bench/c2c_fit.py, Hopper BF16 on Megatron-Core's 2024 H100 table (MFU), the others
# on the NeMo 24.07 and Megatron-Bridge 25.11 / 26.04.01 performance summaries
# (data/measurements/training_runs.yaml, 56 runs: DGX H100, DGX B200, GB200 NVL72, GB300 NVL72);
# a value those tables give fewer than 3 runs for (Blackwell BF16 and FP4) takes the
# architecture's FP8 value.
GEMM_EFFICIENCY: Final[dict[tuple[str, Precision], float]] = {
    ("ampere", Precision.BF16): GEMM_COMPUTE_EFFICIENCY,
    ("hopper", Precision.BF16): 0.80,
    ("hopper", Precision.FP8): 0.67,
    ("hopper", Precision.MXFP8): 0.67,
    ("blackwell", Precision.BF16): 0.62,
    ("blackwell", Precision.FP8): 0.62,
    ("blackwell", Precision.MXFP8): 0.56,
    ("blackwell", Precision.FP4): 0.62,
    ("blackwell_ultra", Precision.BF16): 0.88,
    ("blackwell_ultra", Precision.FP8): 0.88,
    ("blackwell_ultra", Precision.MXFP8): 0.85,
    ("blackwell_ultra", Precision.FP4): 0.88,
}
# PyTorch's own modules (Framework.pytorch_native: torchtitan's eager Llama with FSDP2) run a
# layer at this share of the rate Megatron-Core's fused kernels reach on the same GPU: fitted by
# bench/c2c_fit.py on torchtitan's 64 x A100 FSDP2 runs without and with full recompute
# (its performance page, 2024-04-24: training_runs.yaml has the link).
PYTORCH_KERNEL_EFFICIENCY: float = 0.89
ATTENTION_EFFICIENCY: Final[dict[str, float]] = {
    "ampere": FUSED_ATTENTION_EFFICIENCY,
    "hopper": FUSED_ATTENTION_EFFICIENCY,
    "blackwell": 0.32,
    # Blackwell Ultra (GB300, B300) doubles the exponent units attention's softmax runs on,
    # yet the fit gives it Blackwell's share: its GEMM share is what rose.
    "blackwell_ultra": 0.32,
}

# --- the model's error: what the measured throughput was, relative to the predicted one, on
# runs of each architecture and parallel scheme ("hopper/dense", "blackwell/moe"; the
# architecture alone where a scheme has fewer than 5 runs), with each published set left out of
# the fit in turn: predicted / measured tokens/s (or MFU), the band [low, high] and what it
# rests on. The iteration time's band is t x [low, high]. Its shape (BAND_SHAPE: which
# percentiles of those left-out ratios, widened about their median by what factor) is the
# narrowest whose band, built again without a set, holds at least 80 % of that set's left-out
# points for every set (LEAVE_OUT_COVERAGE). bench/c2c_fit.py prints them all.
BAND_SHAPE: Final = ((5.0, 95.0), 1.5)
_LEFT_OUT = "each set left out of the fit in turn; P5-P95 widened x1.5 about the median"
BAND: Final[dict[str, tuple[float, float, str]]] = {
    "ampere": (0.951, 1.041, "8 Korthikanti Table 5 points, in sample (the constants were "
                             "fitted on them); P5-P95 widened x1.5 about the median"),
    "ampere/dense": (0.951, 1.041, "8 Korthikanti Table 5 points, in sample (the constants "
                                   "were fitted on them); P5-P95 widened x1.5 about the median"),
    "hopper": (0.765, 1.244, f"30 H100 runs (NeMo / Megatron-Bridge FP8, Megatron-Core's 2024 "
                             f"BF16 table), {_LEFT_OUT}"),
    "hopper/dense": (0.790, 1.201, f"26 H100 dense runs (NeMo / Megatron-Bridge FP8, "
                                   f"Megatron-Core's 2024 BF16 table), {_LEFT_OUT}"),
    "blackwell": (0.764, 1.562, f"21 Megatron-Bridge B200 / GB200 runs, {_LEFT_OUT}"),
    "blackwell/dense": (0.791, 1.206, f"14 Megatron-Bridge B200 / GB200 dense runs, "
                                      f"{_LEFT_OUT}"),
    "blackwell/moe": (0.825, 1.711, f"7 Megatron-Bridge B200 / GB200 MoE runs, {_LEFT_OUT}"),
    "blackwell_ultra": (0.878, 1.213, f"14 Megatron-Bridge GB300 runs, {_LEFT_OUT}"),
    "blackwell_ultra/dense": (0.908, 1.220, f"10 Megatron-Bridge GB300 dense runs, "
                                            f"{_LEFT_OUT}"),
}
# An architecture (or PyTorch's own stack: 3 torchtitan runs, too few for a band of their own)
# without its own: the widest of them.
GENERIC_BAND: Final = (min(b[0] for b in BAND.values()), max(b[1] for b in BAND.values()),
                       "the widest band of the fitted architectures (none of its own)")
# Per calibration set (its key): how many of its points the band holds when the set is left
# out of the fit and of the band, of how many, and how (Korthikanti's Table 5 fixed the Ampere
# constants: its fit is in sample, its band is built without it).
_OUT = "left out"
LEAVE_OUT_COVERAGE: Final[dict[str, tuple[int, int, str]]] = {
    "korthikanti-2022-table5": (8, 8, "band left out, fit in sample"),
    "megatron-core-2024-h100": (8, 9, _OUT),
    "nemo-24.07": (12, 12, _OUT),
    "megatron-bridge-25.11": (20, 22, _OUT),
    "megatron-bridge-26.04.01": (22, 22, _OUT),
    "torchtitan-2024-04": (3, 3, _OUT),
}


def band(arch: str, moe: bool = False, pytorch: bool = False) -> tuple[float, float, str]:
    """(low, high, basis): measured/predicted iteration time stays within [low, high] for at
    least 80 % of each calibration set's runs of `arch` and its parallel scheme (dense or MoE),
    else of `arch`, else the widest band, with that set left out; PyTorch's own stack
    (`pytorch`) has its band where it has enough runs, else the widest."""
    if pytorch:
        return BAND.get(f"{arch}/pytorch") or BAND.get("pytorch") or GENERIC_BAND
    scheme = f"{arch}/{'moe' if moe else 'dense'}"
    return BAND.get(scheme) or BAND.get(arch) or GENERIC_BAND


GENERIC_ARCH: Final = "generic"
# Bytes per GEMM operand element in each precision (block scales included), and the bytes a
# cast to it moves per activation element (read BF16, write the low-precision copy and, for
# the block formats, its scales).
OPERAND_BYTES: Final = {Precision.BF16: 2.0, Precision.FP8: 1.0, Precision.MXFP8: 1.03125,
                        Precision.FP4: 0.5625}
QUANTIZE_BYTES: Final = {Precision.BF16: 0.0, Precision.FP8: 3.0, Precision.MXFP8: 3.03125,
                         Precision.FP4: 2.5625}
# GPU families (the ledger item's `family`) -> the architecture the efficiencies are kept for.
ARCH_OF_FAMILY: Final = {"ampere": "ampere", "hopper": "hopper", "blackwell": "blackwell",
                         "blackwell ultra": "blackwell_ultra",
                         "blackwell_ultra": "blackwell_ultra"}


def gemm_efficiency(arch: str, precision: Precision) -> float:
    """The GEMM efficiency of `arch` in `precision`; the pooled value where none was fitted."""
    found = GEMM_EFFICIENCY.get((arch, precision))
    if found is not None:
        return found
    pooled = [v for (_, p), v in GEMM_EFFICIENCY.items() if p == precision]
    return sum(pooled) / len(pooled) if pooled else GEMM_COMPUTE_EFFICIENCY


def attention_efficiency(arch: str) -> float:
    found = ATTENTION_EFFICIENCY.get(arch)
    if found is not None:
        return found
    return sum(ATTENTION_EFFICIENCY.values()) / len(ATTENTION_EFFICIENCY)

# Element-wise passes over activations per layer, forward (bytes = passes * elements * 2).
# Backward costs twice the forward passes (read the gradient and the saved input).
HIDDEN_PASSES: Final = 15.0  # 2 layer norms (2), 2 dropouts (2.5), 2 residual adds (3)
SCORE_PASSES: Final = 4.5  # softmax (2) and its dropout (2.5) on b*a*s^2, unfused attention
FFN_PASSES_GELU: Final = 2.0  # read + write
FFN_PASSES_SWIGLU: Final = 3.0  # read gate and up, write
# Small kernels (norms, dropouts, residuals, activations, reshapes) launched per layer
# forward; each costs KERNEL_OVERHEAD_S on top of its bytes, which is what makes small
# models launch-bound.
ELEMENTWISE_KERNELS_PER_LAYER: Final = 16.0
LOSS_BYTES_PER_LOGIT: Final = 24.0  # fp32 logits: upcast, max, exp-sum, loss, gradient
# MoE routing per layer, forward: the router's fp32 scores (softmax, top-k: passes over
# tokens x experts), and the permutation of each token's top-k copies to their experts and
# back (read + write, twice: dispatch and combine), with their small kernels.
ROUTER_SCORE_PASSES: Final = 4.0  # x 4 bytes (fp32) x tokens x experts
PERMUTE_PASSES: Final = 4.0  # x 2 bytes x tokens x top_k x hidden
MOE_KERNELS_PER_LAYER: Final = 12.0
OPTIMIZER_BYTES_PER_PARAM: Final = 30.0  # Adam: fp32 master, m, v read+write; grad; bf16 param

# --- memory
BYTES_PER_ELEMENT: Final = 2  # bf16 activations and weights
GRAD_REDUCE_BYTES: Final = 4  # with Framework.grad_reduce_in_fp32 (Megatron-LM 2022); else 2
# What a framework can fill: capacity less a fixed reserve (CUDA context ~0.6 GiB, NCCL
# communicators' buffers ~1-2 GiB, cuBLAS / Transformer Engine workspaces and TP-overlap user
# buffers ~1 GiB), of which the caching allocator loses a few percent to fragmentation (little,
# with expandable segments, as today's recipes run). An engineering estimate, not a fit: the
# calibration layouts bound it (every one of them ran, so each must fit; docs/c2c-method.md).
USABLE_HBM_FRACTION: Final = 0.97
HBM_RESERVE_BYTES: Final = 4 * 2**30

# --- communication defaults, used when the ledger has no measured bus bandwidth.
# docs/c2c-method.md#communication-defaults: ring busbw ~0.82 x NVLink line rate
# (H100, nccl-tests #212); 46-48 GB/s of 50 on NDR (nccl-tests #290), i.e. 0.92-0.96 of
# NIC line rate.
SCALEUP_EFFICIENCY: Final = 0.82
SCALEOUT_EFFICIENCY: Final = 0.94
# The fabric the scale-out default was measured on: on any other (RoCE) it is borrowed, and
# the briefing says so beside the option it prices.
SCALEOUT_EFFICIENCY_MEASURED_ON: Final = "InfiniBand"
# NCCL tuner (Simple protocol) per-step latencies: NVLink 3.4 us, network 14 us.
SCALEUP_LATENCY_S: Final = 3.4e-6
SCALEOUT_LATENCY_S: Final = 14e-6
# Compute slows while it shares SMs with overlapped communication (Calculon's
# processor_usage: 15 % on the NVLink tier, 2 % on the network tier).
OVERLAP_SLOWDOWN_SCALEUP: Final = 0.15
OVERLAP_SLOWDOWN_SCALEOUT: Final = 0.02
DEFAULTS_REF: Final = "docs/c2c-method.md#defaults"
# The cluster figures a scenario may leave out: (value, unit, why), cited where they are used.
CLUSTER_DEFAULTS: Final = {
    "scaleup_efficiency": (SCALEUP_EFFICIENCY, "fraction", "ring busbw / NVLink line rate, "
                           f"H100 (nccl-tests #212), {DEFAULTS_REF}"),
    "scaleout_efficiency": (SCALEOUT_EFFICIENCY, "fraction",
                            f"46-48 GB/s of 50 on NDR (nccl-tests #290), {DEFAULTS_REF}"),
    "scaleup_latency": (SCALEUP_LATENCY_S, "s", f"NCCL tuner NVLink step, {DEFAULTS_REF}"),
    "scaleout_latency": (SCALEOUT_LATENCY_S, "s", f"NCCL tuner NET step, {DEFAULTS_REF}"),
    "nics_per_gpu": (1.0, "NICs", "one NIC per GPU (rail-optimised node)"),
}

# --- classes (docs/c2c-method.md#classes-and-fabric): C2C below 0.2 is compute-bound,
# above 0.6 communication-bound.
COMPUTE_BOUND_BELOW: Final = 0.2
COMMUNICATION_BOUND_ABOVE: Final = 0.6
