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
    prefill achieves; layer_overhead_s: the fixed cost per layer per decode step (kernel
    launches, scheduling, sampling spread over the layers), which dominates at batch 1."""

    decode_hbm_efficiency: float
    prefill_efficiency: float
    layer_overhead_s: float


# Priors: what a well-tuned engine reaches in public profiles (decode streams at about
# 70 % of HBM bandwidth, prefill at about half the peak, a few tens of microseconds per
# layer and step). Used where no family fit exists.
PRIOR: Final = ServingConstants(decode_hbm_efficiency=0.70, prefill_efficiency=0.50,
                                layer_overhead_s=40e-6)
# Fitted by bench/serving_fit.py on the InferenceX points of data/measurements/serving_points.yaml
# (DeepSeek-R1, aggregated serving, no speculative decoding; SGLang and TensorRT-LLM; 1k/1k,
# 1k/8k and 8k/1k), with the measured GPUs' ledger figures (models/serving/validation.py
# HARDWARE). They are effective values of this model, not measurements of the hardware: the
# model's tensor-parallel all-reduces pay NCCL ring latencies (2 (tp - 1) steps of 3.4 us per
# all-reduce) that the engines' one-shot kernels beat, so the fit drives the per-layer overhead
# to (nearly) zero to reach the fastest measured points; and decode's FLOPs run at the
# prefill efficiency, which the fit lowers to make decode steps grow with the batch as fast as
# the measured ones do.
_FIT: Final = "fitted by bench/serving_fit.py on"
_POINTS: Final = "(data/measurements/serving_points.yaml)"
CONSTANTS: Final[dict[str, ServingConstants]] = {
    "hopper": ServingConstants(decode_hbm_efficiency=0.70, prefill_efficiency=0.13,
                               layer_overhead_s=5e-6),
    "blackwell": ServingConstants(decode_hbm_efficiency=0.58, prefill_efficiency=0.09,
                                  layer_overhead_s=0.0),
}
SOURCE: Final[dict[str, str]] = {
    "hopper": f"{_FIT} 33 InferenceX H200 DeepSeek-R1 FP8 serving points {_POINTS}",
    "blackwell": f"{_FIT} 76 InferenceX B200 DeepSeek-R1 FP8 and FP4 serving points {_POINTS}",
}

# The model's error: measured / predicted tokens/s per GPU at a matched interactivity stays
# within [low, high] on 80 % of a family's points (the P10 and P90 of the left-out points,
# taken outward to measured ratios and rounded outward: bench/serving_fit.py prints them).
# Without points of its own, a family gets the uncalibrated band.
_LEFT_OUT: Final = ("(aggregated, no speculative decoding), each engine x sequence-shape set "
                    "left out of the fit in turn")
BAND: Final[dict[str, tuple[float, float, str]]] = {
    "hopper": (0.500, 1.677, f"33 InferenceX H200 DeepSeek-R1 points {_LEFT_OUT}"),
    "blackwell": (0.456, 1.498, f"76 InferenceX B200 DeepSeek-R1 points {_LEFT_OUT}"),
}
UNCALIBRATED_BAND: Final = (0.6, 1.5, "no measured serving point of this architecture: the "
                                      "priors, not a fit; the band is a deliberate guess")


def constants(arch: str) -> tuple[ServingConstants, str]:
    """The constants for `arch` and where they come from."""
    if arch in CONSTANTS:
        return CONSTANTS[arch], SOURCE.get(arch, "fitted")
    return PRIOR, "prior (no measured serving point of this architecture)"


def band(arch: str) -> tuple[float, float, str]:
    """(low, high, basis) of measured / predicted throughput for `arch`."""
    return BAND.get(arch, UNCALIBRATED_BAND)
