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
CONSTANTS: Final[dict[str, ServingConstants]] = {}
SOURCE: Final[dict[str, str]] = {}

# The model's error: measured / predicted tokens/s per GPU at a matched interactivity stays
# within [low, high] on 80 % of a family's points. Without points of its own, a family gets
# the uncalibrated band.
BAND: Final[dict[str, tuple[float, float, str]]] = {}
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
