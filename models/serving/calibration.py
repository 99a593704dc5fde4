"""The serving model's constants per GPU architecture and its error band.

A constant fitted on measured serving points says so in SOURCE; until a family has points,
it runs on the prior below and its band is the wide uncalibrated one, so a briefing never
prints a model figure more precisely than it is known. bench/serving_fit.py refits them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True)
class ServingConstants:
    """decode_hbm_efficiency: the share of HBM bandwidth a decode step streams weights and
    KV cache at; prefill_efficiency: the share of the weight precision's dense peak a
    prefill achieves; decode_compute_efficiency: the share of that peak a decode step's
    FLOPs run at (its own: a large decode batch's GEMMs are not a prefill's);
    layer_overhead_s: the fixed cost per layer per decode step (kernel launches, scheduling,
    sampling spread over the layers), which dominates at batch 1; token_overhead_s: the cost
    per sequence per layer of a decode step beyond its bytes and FLOPs (attention kernels
    walking each sequence's pages, MoE token permutation, per-request scheduling), which
    makes a step grow with the batch."""

    decode_hbm_efficiency: float
    prefill_efficiency: float
    layer_overhead_s: float
    decode_compute_efficiency: float
    token_overhead_s: float = 0.0


# Priors: what a well-tuned engine reaches in public profiles (decode streams at about
# 70 % of HBM bandwidth, prefill at about half the peak, a large decode batch's GEMMs at
# about 40 % of it -- the 35-55 % the engines' decode kernels reach at batch 256 and more --,
# a few tens of microseconds per layer and step). Used where no family fit exists, and the
# fit's starting point.
PRIOR: Final = ServingConstants(decode_hbm_efficiency=0.70, prefill_efficiency=0.50,
                                layer_overhead_s=40e-6, decode_compute_efficiency=0.40)
# Fitted by bench/serving_fit.py on the InferenceX points of data/measurements/serving_points.yaml
# (DeepSeek-R1 on H200 and B200, SGLang and TensorRT-LLM; gpt-oss-120b on H100, H200 and B200,
# vLLM and TensorRT-LLM; aggregated serving, no speculative decoding; 1k/1k, 1k/8k and 8k/1k),
# with the measured GPUs' ledger figures (models/serving/validation.py HARDWARE). They are
# effective values of this model, not measurements of the hardware: the measured decode steps
# grow with the batch faster than streaming and FLOPs explain, which the per-sequence cost
# (0.3-0.4 microsecond per sequence and layer) takes up, with the decode compute share at
# its floor (0.25: left free, the fit lowers it to 0.05 and a dense model's decode turns
# compute-bound, issue 29); the per-layer overhead stands for the kernel launches and syncs a
# batch-1 step pays beyond the all-reduce latencies.
_FIT: Final = "fitted by bench/serving_fit.py on"
_POINTS: Final = "(data/measurements/serving_points.yaml)"
CONSTANTS: Final[dict[str, ServingConstants]] = {
    "hopper": ServingConstants(decode_hbm_efficiency=0.73, prefill_efficiency=0.11,
                               layer_overhead_s=76e-6, decode_compute_efficiency=0.25,
                               token_overhead_s=0.30e-6),
    "blackwell": ServingConstants(decode_hbm_efficiency=0.67, prefill_efficiency=0.17,
                                  layer_overhead_s=39e-6, decode_compute_efficiency=0.25,
                                  token_overhead_s=0.41e-6),
}
SOURCE: Final[dict[str, str]] = {
    "hopper": f"{_FIT} 127 InferenceX H100 / H200 DeepSeek-R1 FP8 and gpt-oss-120b serving "
              f"points {_POINTS}",
    "blackwell": f"{_FIT} 197 InferenceX B200 DeepSeek-R1 FP8 / FP4 and gpt-oss-120b serving "
                 f"points {_POINTS}",
}
# A family without measured points of its own runs on the constants fitted on every measured
# family's points together (bench/serving_fit.py prints them), not on the prior.
POOLED: Final = ServingConstants(decode_hbm_efficiency=0.66, prefill_efficiency=0.12,
                                 layer_overhead_s=40e-6, decode_compute_efficiency=0.25,
                                 token_overhead_s=0.83e-6)
POOLED_SOURCE: Final = (f"{_FIT} every measured family's points together (324 InferenceX "
                        f"points of H100, H200 and B200) {_POINTS}: this family has none")

# The model's error: measured / predicted tokens/s per GPU at a matched interactivity stays
# within [low, high] on 80 % of a family's points (the P10 and P90 of the left-out points,
# taken outward to measured ratios and rounded outward: bench/serving_fit.py prints them).
_LEFT_OUT: Final = ("points (aggregated, no speculative decoding), each model x GPU x engine "
                    "set left out of the fit in turn")
BAND: Final[dict[str, tuple[float, float, str]]] = {
    "hopper": (0.656, 1.402,
               f"127 InferenceX H100 / H200 DeepSeek-R1 and gpt-oss-120b {_LEFT_OUT}"),
    "blackwell": (0.280, 3.754,
                  f"197 InferenceX B200 DeepSeek-R1 and gpt-oss-120b {_LEFT_OUT}"),
}
# A family with no measured point of its own (or too few to fit: fewer than 10) carries the
# band of the measured families each left out whole and predicted with the other's constants:
# the error a family the fit never saw has (P10-P90 of those 324 points, rounded outward).
UNCALIBRATED_BAND: Final = (0.445, 4.868, "no fit of this family's own (no or too few "
                            "measured points): the band of 324 InferenceX points of the measured "
                            "families, each family left out of the fit whole")


def constants(arch: str) -> tuple[ServingConstants, str]:
    """The constants for `arch` and where they come from."""
    if arch in CONSTANTS:
        return CONSTANTS[arch], SOURCE.get(arch, "fitted")
    return POOLED, POOLED_SOURCE


def band(arch: str) -> tuple[float, float, str]:
    """(low, high, basis) of measured / predicted throughput for `arch`."""
    return BAND.get(arch, UNCALIBRATED_BAND)
