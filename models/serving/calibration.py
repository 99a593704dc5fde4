"""The serving model's constants per GPU architecture and its error band.

A constant fitted on measured serving points says so in SOURCE; until a family has points,
it runs on the prior below and its band is the wide uncalibrated one, so a briefing never
prints a model figure more precisely than it is known. bench/serving_fit.py refits them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final


@dataclass(frozen=True)
class ServingConstants:
    """decode_hbm_efficiency: the share of HBM bandwidth a decode step streams weights and
    KV cache at; prefill_efficiency: the share of the weight precision's dense peak a
    prefill achieves; decode_compute_efficiency: the share of that peak a decode step's
    FLOPs run at (its own: a large decode batch's GEMMs are not a prefill's);
    layer_overhead_s: the fixed cost per layer per decode step of a layer of five kernels
    (kernel launches, scheduling, sampling spread over the layers), which dominates at batch
    1; kernel_share: the share of it that grows with the kernels a model's layer launches
    (curve.layer_overhead: DeepSeek-R1's latent attention and shared expert launch about twice
    a dense layer's); token_overhead_s: the cost per sequence per layer of a decode step
    beyond its bytes and FLOPs (attention kernels walking each sequence's pages, MoE token
    permutation, per-request scheduling), which makes a step grow with the batch;
    expert_gemm_scale: the share of a dense GEMM's rate that a MoE's routed experts' grouped
    GEMMs reach, in prefill and decode alike (each expert's few tokens, their permutation and
    the groups' uneven sizes), so a dense model's efficiencies are not a MoE's."""

    decode_hbm_efficiency: float
    prefill_efficiency: float
    layer_overhead_s: float
    decode_compute_efficiency: float
    token_overhead_s: float = 0.0
    kernel_share: float = 0.0
    expert_gemm_scale: float = 1.0


@dataclass(frozen=True)
class EngineConstants:
    """How one serving engine's decode differs from the reference engine's (SGLang's, whose
    overhead_scale is 1 and whose difference the family constants carry): overhead_scale
    multiplies the family's fixed cost per layer and step (an engine's own launches, scheduler
    and sampling per step: vLLM's and TensorRT-LLM's differ from SGLang's); ep_layer_s: the
    fixed seconds an expert-parallel dispatch and combine costs per MoE layer beside its bytes
    and the links' latency (the all-to-all kernels' launches and synchronisation across the
    group, which dominate at a small batch). Fitted on every family's points together, so an
    engine's terms rest on every GPU it was measured on."""

    overhead_scale: float = 1.0
    ep_layer_s: float = 0.0


# Priors: what a well-tuned engine reaches in public profiles (decode streams at about
# 70 % of HBM bandwidth, prefill at about half the peak, a large decode batch's GEMMs at
# about 40 % of it -- the 35-55 % the engines' decode kernels reach at batch 256 and more --,
# a few tens of microseconds per layer and step). Used where no family fit exists, and the
# fit's starting point.
PRIOR: Final = ServingConstants(decode_hbm_efficiency=0.70, prefill_efficiency=0.50,
                                layer_overhead_s=40e-6, decode_compute_efficiency=0.40)
# Fitted by bench/serving_fit.py on the points of data/measurements/serving_points.yaml:
# InferenceX's MoE curves (DeepSeek-R1 on H200 and B200, SGLang and TensorRT-LLM; gpt-oss-120b on
# H100, H200 and B200, vLLM and TensorRT-LLM; DeepSeek-R1 on MI300X, MI325X and MI355X, SGLang and
# ATOM; gpt-oss-120b on MI355X, ATOM; aggregated, no speculative decoding; 1k/1k, 1k/8k and
# 8k/1k), MLPerf Inference v4.1 / v5.0 Llama-2-70B (Offline and Server, TensorRT-LLM on H100, H200
# and B200, vLLM on MI300X and MI325X), MLPerf Inference v6.0 gpt-oss-120b (TensorRT-LLM on B200
# and GB200, vLLM on H200, B200 and MI355X) and AMD's Llama 3.1 70B static batches on MI300X
# (vLLM, TP8), with the measured GPUs' figures (models/serving/validation.py HARDWARE). They are
# effective values of this model, not measurements of the hardware. The dense points set the GEMM
# shares (prefill 0.39 of the FP8 peak on Hopper; decode compute 0.68 on Hopper, at its 0.90 bound
# on Blackwell), and a MoE's routed experts run at expert_gemm_scale of them (0.225 on Hopper,
# 0.725 on Blackwell; on CDNA 3 at its 0.1 floor, with the HBM share at 0.35: SGLang's DeepSeek-R1
# on MI300X / MI325X, 27-45 ms a token at 4 sequences, and vLLM's Llama 3.1 70B on MI300X, 8 ms a
# token at one, do not fit one set of constants; CDNA 4, with no dense point, keeps 1 and its
# prefill share near the floor). The per-sequence cost takes up the decode steps' growth with the
# batch beyond streaming and FLOPs; the per-layer overhead stands for the kernel launches and
# syncs a batch-1 step pays beyond the all-reduce latencies, and on B200, MI300X and MI355X most
# or half of it grows with the kernels a layer launches. The constants describe SGLang, the
# reference engine: the other engines' terms (ENGINES) are fitted with them on every family's
# points together.
_FIT: Final = "fitted by bench/serving_fit.py on"
_POINTS: Final = "(data/measurements/serving_points.yaml)"
CONSTANTS: Final[dict[str, ServingConstants]] = {
    "hopper": ServingConstants(decode_hbm_efficiency=0.75, prefill_efficiency=0.3875,
                               layer_overhead_s=72.5e-6, decode_compute_efficiency=0.675,
                               token_overhead_s=0.3e-6, kernel_share=0.0,
                               expert_gemm_scale=0.225),
    "blackwell": ServingConstants(decode_hbm_efficiency=0.85, prefill_efficiency=0.15,
                                  layer_overhead_s=50e-6, decode_compute_efficiency=0.90,
                                  token_overhead_s=0.125e-6, kernel_share=0.675,
                                  expert_gemm_scale=0.725),
    "cdna3": ServingConstants(decode_hbm_efficiency=0.35, prefill_efficiency=0.25,
                              layer_overhead_s=30e-6, decode_compute_efficiency=0.375,
                              token_overhead_s=0.625e-6, kernel_share=1.0,
                              expert_gemm_scale=0.1),
    "cdna4": ServingConstants(decode_hbm_efficiency=0.85, prefill_efficiency=0.0625,
                              layer_overhead_s=75e-6, decode_compute_efficiency=0.25,
                              token_overhead_s=0.075e-6, kernel_share=0.6,
                              expert_gemm_scale=1.0),
}
SOURCE: Final[dict[str, str]] = {
    "hopper": f"{_FIT} 181 H100 / H200 serving points: InferenceX DeepSeek-R1 FP8 and "
              f"gpt-oss-120b, MLPerf Inference Llama-2-70B FP8 and gpt-oss-120b {_POINTS}",
    "blackwell": f"{_FIT} 213 B200 / GB200 serving points: InferenceX DeepSeek-R1 FP8 / FP4 "
                 f"and gpt-oss-120b, MLPerf Inference Llama-2-70B FP4 and gpt-oss-120b "
                 f"{_POINTS}",
    "cdna3": f"{_FIT} 56 MI300X / MI325X serving points: InferenceMAX DeepSeek-R1 FP8, MLPerf "
             f"Inference Llama-2-70B FP8, AMD's Llama 3.1 70B FP8 {_POINTS}",
    "cdna4": f"{_FIT} 112 MI355X serving points: InferenceMAX DeepSeek-R1 FP8 / MXFP4 and "
             f"gpt-oss-120b, MLPerf Inference gpt-oss-120b {_POINTS}",
}
# The models the measured points are of (data/measurements/serving_points.yaml): every constant,
# band and paired band rests on them. A scenario of a model with the shape of one of them
# (Llama 3.3 70B is Llama 3.1 70B's architecture, post-trained: the same layers, widths and
# parameters, so the same work per token) is measured too; a scenario of another model gets the
# same bands, but the model's error on it is not measured, and its answer says so.
MEASURED_MODELS: Final = ("deepseek-r1", "gpt-oss-120b", "llama-2-70b", "llama-3.1-70b")


def model_measured(model: str) -> bool:
    """Whether `model` (a preset's key) is among the models the constants are fitted on, or
    has the shape of one of them (models.serving.presets.same_shape)."""
    from models.serving.presets import PRESETS, same_shape

    if model in MEASURED_MODELS:
        return True
    preset = PRESETS.get(model)
    return preset is not None and any(same_shape(preset, PRESETS[measured])
                                      for measured in MEASURED_MODELS)


def unmeasured_model(model: str) -> str:
    """What a serving answer's verdict adds (page 1, `specledger serving`) for a model that is
    not among them."""
    return f"no {model} run among the model's measurements"


# A family without measured points of its own runs on the constants fitted on every measured
# family's points together (bench/serving_fit.py prints them), not on the prior.
POOLED: Final = ServingConstants(decode_hbm_efficiency=0.7125, prefill_efficiency=0.2875,
                                 layer_overhead_s=50.0e-6, decode_compute_efficiency=0.90,
                                 token_overhead_s=0.425e-6, kernel_share=0.600,
                                 expert_gemm_scale=0.25)
POOLED_SOURCE: Final = (f"{_FIT} every measured family's points together (562 InferenceX, "
                        "MLPerf and AMD points of H100, H200, B200, MI300X, MI325X and MI355X) "
                        f"{_POINTS}: this family has none")
UNFITTED_SOURCE: Final = (f"{_FIT} every fitted family's points together (562 InferenceX, "
                          f"MLPerf and AMD points) {_POINTS}: this family's points are of one "
                          "model on one engine, so they are not fitted but check these")

# The model's error: measured / predicted tokens/s per GPU at a matched interactivity, banded per
# family from its left-out points (each model x GPU x engine set left out of the fit in turn). A
# band's shape (BAND_SHAPE: which percentiles of those left-out ratios, taken outward to measured
# ratios, widened about their median in log space by what factor) is the narrowest of a small grid
# (P10-P90, P5-P95, P2.5-P97.5, P0-P100; x1 to x5) whose band, built again without a set, holds at
# least 80 % of the family's left-out points pooled over its sets (LEFT_OUT says how many): a
# configuration the fit has not seen is what a scenario asks about. One rule, a shape per family:
# one shape for all (P10-P90 x5 is the narrowest that meets it everywhere) would widen Hopper's
# band to 0.30-4.5 for the others' sake. Pooled over the sets, not for each set as the C2C band is
# (models/c2c/calibration.py BAND_SHAPE): a set can sit wholly outside the others' band
# (gpt-oss-120b on MI355X with ATOM, predicted from DeepSeek-R1's points alone), and no band short
# of absurd holds it. CDNA 3's and CDNA 4's bands are absurd all the same (wider than 0.2-10: one
# set of each lies far off the others, AMD's Llama 3.1 70B at TP8 on MI300X and ATOM's
# gpt-oss-120b on MI355X), Blackwell's spans 30x, and their basis says so: the model does not know
# those families' configurations it was not fitted on. bench/serving_fit.py prints shapes and
# bands, rounded outward.
Shape = tuple[tuple[float, float], float]   # (lower, upper) percentiles, widening
BAND_SHAPE: Final[dict[str, Shape]] = {
    "blackwell": ((10.0, 90.0), 1.5),
    "cdna3": ((2.5, 97.5), 4.0),
    "cdna4": ((5.0, 95.0), 3.0),
    "hopper": ((10.0, 90.0), 1.25),
}
BAND: Final[dict[str, tuple[float, float, str]]] = {
    "blackwell": (0.321, 9.627,
        "213 InferenceX / MLPerf B200 / GB200 DeepSeek-R1, gpt-oss-120b, Llama-2-70B points "
        "(aggregated, no speculative decoding), each model x GPU x engine set left out of the fit"
        " in turn; P10-P90 widened x1.5 about the median"),
    "cdna3": (0.001, 105184232.973,
        "56 InferenceX / MLPerf / AMD MI300X / MI325X DeepSeek-R1, Llama-2-70B, Llama 3.1 70B "
        "points (aggregated, no speculative decoding), each model x GPU x engine set left out of "
        "the fit in turn; P2.5-P97.5 widened x4 about the median, wider than 0.2-10 (measured / "
        "predicted): what holding 80 % of a set left out takes"),
    "cdna4": (0.124, 5147.937,
        "112 InferenceX / MLPerf MI355X DeepSeek-R1, gpt-oss-120b points (aggregated, no "
        "speculative decoding), each model x GPU x engine set left out of the fit in turn; P5-P95"
        " widened x3 about the median, wider than 0.2-10 (measured / predicted): what holding 80 "
        "% of a set left out takes"),
    "hopper": (0.727, 1.429,
        "181 InferenceX / MLPerf H100 / H200 DeepSeek-R1, gpt-oss-120b, Llama-2-70B points "
        "(aggregated, no speculative decoding), each model x GPU x engine set left out of the fit"
        " in turn; P10-P90 widened x1.25 about the median"),
}
# A family with no measured point of its own (or too few to fit: fewer than 10) carries the
# band of the measured families each left out whole and predicted with the others' constants:
# the error a family the fit never saw has, in the narrowest shape whose band built without a
# family holds 80 % of the left-out families' points pooled: 467 of 562, all of Hopper's 181,
# 110 of CDNA 4's 112, 146 of Blackwell's 213 and 30 of CDNA 3's 56 (315 % off with the others'
# constants).
UNCALIBRATED_SHAPE: Final[Shape] = ((10.0, 90.0), 1.5)
UNCALIBRATED_BAND: Final = (0.218, 3.437,
                            "no fit of this family's own (no or too few measured points, or all "
                            "of one model on one engine): the band of 562 InferenceX / MLPerf / "
                            "AMD points of the measured families, each family left out of the "
                            "fit whole, P10-P90 widened x1.5 about the median; a band built "
                            "without a family holds 467 of them (83 %)")
@dataclass(frozen=True)
class LeftOut:
    """A fitted family's error on points its fit did not see (bench/serving_fit.py prints it).
    `points`: the left-out points its band is built from (each model x GPU x engine set left
    out of the fit in turn); `mean_abs_error` and `max_abs_error`: theirs, |predicted -
    measured| in % of measured; `sets`: per set (name, points, held): how many of the set's
    left-out points the band built from the other sets' alone holds, the band's coverage on a
    configuration it has not seen; `family_mean_abs_error`: the family's points with the
    constants fitted on the other families alone (None while it is the only one fitted)."""

    points: int
    mean_abs_error: float
    max_abs_error: float
    sets: tuple[tuple[str, int, int], ...]
    family_mean_abs_error: float | None = None

    @property
    def held(self) -> int:
        return sum(held for _, _, held in self.sets)

    @property
    def coverage(self) -> float:
        return self.held / self.points


# What makes a family's estimates decision-grade (issue 41): on configurations left out of
# its fit, a mean |error| of at most 20 %, and a band that holds at least 80 % of those points
# while spanning at most 2.5x (high / low of measured / predicted). A family short of any of
# them gives no band on page 1; it says so in one number.
TARGET_MEAN_ABS_ERROR: Final = 20.0
TARGET_COVERAGE: Final = 0.8
TARGET_SPAN: Final = 2.5


def short_of_targets(arch: str, engine: str | None = None) -> tuple[str, str, str] | None:
    """None when `arch`'s estimates (on `engine`, where that engine has a band of its own on
    the family: ENGINE_BAND) meet the targets above; else the one number that says why not, as
    (family, figure, target): ("Blackwell", "62.7 % off", "≤ 20 %"), ("Hopper with
    TensorRT-LLM", "22.3 % off", "≤ 20 %") on the configurations left out of its fit. A family
    without a fit of its own has no left-out figure: ("Ampere", "not fitted", "a fit of its
    own")."""
    name = FAMILY_NAMES.get(arch, arch)
    if engine is not None and (arch, engine) in ENGINE_LEFT_OUT:
        name = f"{name} with {ENGINE_NAMES.get(engine, engine)}"
    found = left_out_of(arch, engine)
    if found is None:
        return name, "not fitted", "a fit of its own"
    if found.mean_abs_error > TARGET_MEAN_ABS_ERROR:
        return name, f"{found.mean_abs_error:.1f} % off", f"≤ {TARGET_MEAN_ABS_ERROR:.0f} %"
    if found.coverage < TARGET_COVERAGE:
        return (name, f"a band holding {100 * found.coverage:.0f} %",
                f"≥ {100 * TARGET_COVERAGE:.0f} %")
    low, high, _ = band(arch, engine)
    if high / low > TARGET_SPAN:
        return name, f"a band of {high / low:.1f}x", f"≤ {TARGET_SPAN}x"
    return None


def short_text(short: Iterable[Sequence[str]]) -> str:
    """Families short of the targets, each as (family, figure, target), as page 1 and
    `specledger serving` say why there is no band: "model 22.7 % off on Hopper, 66.5 % off on
    Blackwell"; "" for none."""
    misses = [f"{figure} on {family}" for family, figure, _ in short]
    return "model " + ", ".join(misses) if misses else ""


def target_standing() -> list[dict[str, Any]]:
    """Per fitted family, its standing against the targets on configurations left out of its
    fit (`specledger validate`): mean |error|, band coverage and span, and short_of_targets'
    one number when it is short."""
    rows = []
    standing = [((arch, None), record) for arch, record in {**LEFT_OUT, **UNFITTED}.items()]
    standing += list(ENGINE_LEFT_OUT.items())
    for (arch, engine), left_out in sorted(standing, key=lambda row: (row[0][0],
                                                                      row[0][1] or "")):
        low, high, _ = band(arch, engine)
        short = short_of_targets(arch, engine)
        rows.append({
            "family": arch, "engine": engine, "left_out_points": left_out.points,
            "left_out_mean_abs_error": left_out.mean_abs_error,
            "band_coverage": left_out.coverage, "band_span": high / low,
            "targets": {"mean_abs_error": TARGET_MEAN_ABS_ERROR,
                        "band_coverage": TARGET_COVERAGE, "band_span": TARGET_SPAN},
            "decision_grade": short is None,
            "short": None if short is None else {"figure": short[1], "target": short[2]}})
    return rows


FAMILY_NAMES: Final = {"hopper": "Hopper", "blackwell": "Blackwell",
                       "blackwell_ultra": "Blackwell Ultra", "cdna3": "CDNA 3",
                       "cdna4": "CDNA 4", "ampere": "Ampere", "volta": "Volta"}


def constants(arch: str) -> tuple[ServingConstants, str]:
    """The constants for `arch` and where they come from."""
    if arch in CONSTANTS:
        return CONSTANTS[arch], SOURCE.get(arch, "fitted")
    if arch in UNFITTED:
        return POOLED, UNFITTED_SOURCE
    return POOLED, POOLED_SOURCE


def band(arch: str, engine: str | None = None) -> tuple[float, float, str]:
    """(low, high, basis) of measured / predicted throughput for `arch`: on `engine`, that
    engine's band where its points on the family span two sets (ENGINE_BAND), else the
    family's."""
    if engine is not None and (arch, engine) in ENGINE_BAND:
        return ENGINE_BAND[(arch, engine)]
    return BAND.get(arch, UNCALIBRATED_BAND)


def left_out_of(arch: str, engine: str | None = None) -> LeftOut | None:
    """The left-out record a band rests on: the engine's on the family (ENGINE_LEFT_OUT), else
    the family's (LEFT_OUT, or UNFITTED for a family measured but not fitted), else None."""
    if engine is not None and (arch, engine) in ENGINE_LEFT_OUT:
        return ENGINE_LEFT_OUT[(arch, engine)]
    return LEFT_OUT.get(arch) or UNFITTED.get(arch)


# Each fitted family's error on the points of the sets left out (bench/serving_fit.py prints
# it), and how many of each set's points the family's band (its BAND_SHAPE) built from the
# other sets' alone holds: at least 80 % pooled over the sets, by the choice of the shape
# (Hopper 149 of 181, Blackwell 173 of 213, CDNA 3 46 of 56, CDNA 4 90 of 112). A set can
# still fall mostly outside (gpt-oss-120b on MI355X with ATOM: 4 of 26; Llama 3.1 70B on
# MI300X: 6 of 16): a configuration the fit has not seen (another engine, GPU or model) can fall
# outside its family's band. A set left out is left out of the engines' terms too.
LEFT_OUT: Final[dict[str, LeftOut]] = {
    "blackwell": LeftOut(213, 66.5, 641.1, (
        ("deepseek-r1 B200 sglang", 41, 41),
        ("deepseek-r1 B200 trt", 40, 25),
        ("gpt-oss-120b B200 trt", 63, 38),
        ("gpt-oss-120b B200 vllm", 58, 58),
        ("gpt-oss-120b GB200 trt", 5, 5),
        ("llama-2-70b B200 trt", 6, 6),
    ), 51.6),
    "cdna3": LeftOut(56, 87.9, 420.7, (
        ("deepseek-r1 MI300X sglang", 15, 15),
        ("deepseek-r1 MI325X sglang", 15, 15),
        ("llama-2-70b MI300X vllm", 8, 8),
        ("llama-2-70b MI325X vllm", 2, 2),
        ("llama-3.1-70b MI300X vllm", 16, 6),
    ), 314.6),
    "cdna4": LeftOut(112, 46.5, 331.4, (
        ("deepseek-r1 MI355X atom", 39, 39),
        ("deepseek-r1 MI355X sglang", 35, 35),
        ("gpt-oss-120b MI355X atom", 26, 4),
        ("gpt-oss-120b MI355X vllm", 12, 12),
    ), 79.0),
    "hopper": LeftOut(181, 22.7, 232.6, (
        ("deepseek-r1 H200 sglang", 13, 13),
        ("deepseek-r1 H200 trt", 20, 16),
        ("gpt-oss-120b H100 vllm", 43, 29),
        ("gpt-oss-120b H200 vllm", 53, 39),
        ("llama-2-70b H100 trt", 32, 32),
        ("llama-2-70b H200 trt", 20, 20),
    ), 35.2),
}

# A family whose measured points are all of one model on one engine (Blackwell Ultra's MLPerf
# Inference v6.0 gpt-oss-120b runs, TensorRT-LLM on B300 nodes and GB300 racks) has no other
# model or engine of its own to check a fit on, so it is not fitted (tests/support/
# serving_fit.py fits a family of two models or engines or more): it runs on POOLED, which
# never saw its points, and those points are its left-out error. Its band stays the
# uncalibrated one: one model on one engine says nothing of how far another would be off.
# Here `sets` holds its points (one group) and how many UNCALIBRATED_BAND holds;
# tests/models/serving/test_calibration_targets.py recomputes it.
UNFITTED: Final[dict[str, LeftOut]] = {
    "blackwell_ultra": LeftOut(22, 7.6, 62.8, (("gpt-oss-120b B300 / GB300 trt", 22, 22),)),
}


# The engines a measured point or a scenario names (models.serving.spec.ENGINES): SGLang, the
# reference (measured on every family), TensorRT-LLM, vLLM and AMD's ATOM. Fitted by
# bench/serving_fit.py with the families' constants on every point: one set of terms an engine,
# resting on every family it was measured on (vLLM's fixed cost per layer comes out 6 % above
# SGLang's, TensorRT-LLM's and ATOM's an eighth to a quarter below it; TensorRT-LLM pays 20 us
# more per expert-parallel MoE layer; vLLM and ATOM have no expert-parallel points). Terms of an
# engine per family were tried, both and the fixed-cost scale alone: in sample they fit a little
# better, left out worse (on the points before MLPerf v6.0's: Hopper 26.8-27.6 % against 23.4 %,
# Blackwell 74.3-75.0 % against 61.7 %, CDNA 3 no better): a set left out often takes with it all
# that an engine shows on its family of a layout, expert parallelism most of all.
REFERENCE_ENGINE: Final = "sglang"
ENGINES: Final[dict[str, EngineConstants]] = {
    "sglang": EngineConstants(overhead_scale=1.0, ep_layer_s=0e-6),
    "trt": EngineConstants(overhead_scale=0.75, ep_layer_s=20e-6),
    "vllm": EngineConstants(overhead_scale=1.0625, ep_layer_s=0e-6),
    "atom": EngineConstants(overhead_scale=0.875, ep_layer_s=0e-6),
}
# Fitted beside POOLED (one set of constants for every family's points): the terms a family
# without a fit of its own runs with.
POOLED_ENGINES: Final[dict[str, EngineConstants]] = {
    "sglang": EngineConstants(overhead_scale=1.0, ep_layer_s=0e-6),
    "trt": EngineConstants(overhead_scale=0.6875, ep_layer_s=5e-6),
    "vllm": EngineConstants(overhead_scale=1.0625, ep_layer_s=0e-6),
    "atom": EngineConstants(overhead_scale=1.25, ep_layer_s=0e-6),
}


# The engine is an input (a deployment's `engine`): one engine's band on a family, where its
# left-out points there span two sets or more (one set cannot be left out against others),
# chosen as the family's is (the narrowest of the grid whose band, built without each of the
# engine's sets, holds 80 % of its left-out points) from the same left-out errors
# (bench/serving_fit.py prints them). An engine with one set on a family (SGLang on Hopper and
# on Blackwell, vLLM on Blackwell and on CDNA 4) or none, or whose sets no shape on the grid
# holds 80 % of (vLLM on CDNA 3: Llama-2-70B and Llama 3.1 70B), carries the family's band.
# An engine's band may be wider than its family's (vLLM on Hopper: its gpt-oss-120b sets lie
# apart from TensorRT-LLM's), or narrower (TensorRT-LLM on Hopper): it is that engine's.
ENGINE_NAMES: Final = {"sglang": "SGLang", "trt": "TensorRT-LLM", "vllm": "vLLM",
                       "atom": "ATOM"}
ENGINE_BAND_SHAPE: Final[dict[tuple[str, str], Shape]] = {
    ("blackwell", "trt"): ((5.0, 95.0), 1.75),
    ("cdna3", "sglang"): ((10.0, 90.0), 1.0),
    ("cdna4", "atom"): ((5.0, 95.0), 4.0),
    ("hopper", "trt"): ((10.0, 90.0), 1.25),
    ("hopper", "vllm"): ((0.0, 100.0), 2.5),
}
ENGINE_BAND: Final[dict[tuple[str, str], tuple[float, float, str]]] = {
    ("blackwell", "trt"): (0.053, 28.718,
        "114 InferenceX / MLPerf B200 / GB200 DeepSeek-R1, gpt-oss-120b, Llama-2-70B points on "
        "trt (aggregated, no speculative decoding), each model x GPU x engine set left out of "
        "the fit in turn; P5-P95 widened x1.75 about the median, wider than 0.2-10 (measured "
        "/ predicted): what holding 80 % of a set left out takes"),
    ("cdna3", "sglang"): (0.235, 1.309,
        "30 InferenceX MI300X / MI325X DeepSeek-R1 points on sglang (aggregated, no "
        "speculative decoding), each model x GPU x engine set left out of the fit in turn; "
        "P10-P90"),
    ("cdna4", "atom"): (0.039, 116940.029,
        "65 InferenceX MI355X DeepSeek-R1, gpt-oss-120b points on atom (aggregated, no "
        "speculative decoding), each model x GPU x engine set left out of the fit in turn; "
        "P5-P95 widened x4 about the median, wider than 0.2-10 (measured / predicted): what "
        "holding 80 % of a set left out takes"),
    ("hopper", "trt"): (0.731, 1.346,
        "72 InferenceX / MLPerf H100 / H200 DeepSeek-R1, Llama-2-70B points on trt (aggregated,"
        " no speculative decoding), each model x GPU x engine set left out of the fit in turn; "
        "P10-P90 widened x1.25 about the median"),
    ("hopper", "vllm"): (0.268, 3.421,
        "96 InferenceX / MLPerf H100 / H200 gpt-oss-120b points on vllm (aggregated, no "
        "speculative decoding), each model x GPU x engine set left out of the fit in turn; "
        "P0-P100 widened x2.5 about the median"),
}
ENGINE_LEFT_OUT: Final[dict[tuple[str, str], LeftOut]] = {
    ("blackwell", "trt"): LeftOut(114, 90.8, 641.1, (
        ("deepseek-r1 B200 trt", 40, 30), ("gpt-oss-120b B200 trt", 63, 52),
        ("gpt-oss-120b GB200 trt", 5, 5), ("llama-2-70b B200 trt", 6, 6))),
    ("cdna3", "sglang"): LeftOut(30, 102.3, 420.7, (
        ("deepseek-r1 MI300X sglang", 15, 15), ("deepseek-r1 MI325X sglang", 15, 11))),
    ("cdna4", "atom"): LeftOut(65, 55.6, 128.5, (
        ("deepseek-r1 MI355X atom", 39, 35), ("gpt-oss-120b MI355X atom", 26, 17))),
    ("hopper", "trt"): LeftOut(72, 22.3, 232.6, (
        ("deepseek-r1 H200 trt", 20, 15), ("llama-2-70b H100 trt", 32, 32),
        ("llama-2-70b H200 trt", 20, 11))),
    ("hopper", "vllm"): LeftOut(96, 24.0, 83.2, (
        ("gpt-oss-120b H100 vllm", 43, 33), ("gpt-oss-120b H200 vllm", 53, 48))),
}

# Two options estimated with one engine are not wrong independently: two configurations of one
# family share its constants and most of its error with them, two of different families each
# family's leaning. The margin between two model estimates is banded by one configuration's
# left-out error against another's of the same model, precision, engine and request shape at a
# matched interactivity (models.serving.validation.paired_ratios; bench/serving_fit.py prints
# them), by (family of the one, family of the other), with the comparisons it rests on. Its
# shape (PAIRED_SHAPE) is chosen as BAND_SHAPE is, with the groups of one model, precision,
# engine and request shape for the sets: the narrowest whose band built without a group holds
# 80 % of the comparisons pooled. Only pairs of families with at
# least 30 comparisons have one (tests/support/serving_fit.py MIN_COMPARISONS; CDNA 4 within
# itself has 14); the others keep the widest combination of the two bands. Blackwell's
# comparisons within the family are between B200 layouts (InferenceX has no aggregated GB200
# points); Hopper's and CDNA 3's compare two GPUs as well. On Blackwell most of the error is
# shared (family band 0.32-9.63, paired 0.54-1.85); on Hopper it is mostly each
# configuration's own (the paired band 0.55-1.90 is wider than the family's 0.73-1.43).
PAIRED_SHAPE: Final[dict[tuple[str, str], Shape]] = {
    ("blackwell", "blackwell"): ((10.0, 90.0), 1.0),
    ("blackwell", "cdna4"): ((10.0, 90.0), 1.0),
    ("blackwell", "hopper"): ((10.0, 90.0), 1.25),
    ("cdna3", "cdna3"): ((5.0, 95.0), 1.0),
    ("cdna4", "blackwell"): ((5.0, 95.0), 1.0),
    ("hopper", "blackwell"): ((10.0, 90.0), 1.25),
    ("hopper", "hopper"): ((5.0, 95.0), 1.0),
}
_SHAPE: Final = "model, precision, engine and request shape"
PAIRED_BAND: Final[dict[tuple[str, str], tuple[float, float, str]]] = {
    ("blackwell", "blackwell"): (0.542, 1.845,
        "288 comparisons of left-out points of two B200 / GB200 configurations (GPU or layout) in"
        " 18 groups of one model, precision, engine and request shape, P10-P90; a band built "
        "without a group holds 232 of them (81 %)"),
    ("blackwell", "cdna4"): (0.680, 3.766,
        "31 comparisons of left-out points of a B200 / GB200 configuration against an MI355X one "
        "in 6 groups of one model, precision, engine and request shape, P10-P90; a band built "
        "without a group holds 25 of them (81 %)"),
    ("blackwell", "hopper"): (0.469, 1.804,
        "293 comparisons of left-out points of a B200 / GB200 configuration against an H100 / "
        "H200 one in 9 groups of one model, precision, engine and request shape, P10-P90 widened "
        "x1.25 about the median; a band built without a group holds 259 of them (88 %)"),
    ("cdna3", "cdna3"): (0.838, 1.240,
        "30 comparisons of left-out points of two MI300X / MI325X configurations (GPU or layout) "
        "in 3 groups of one model, precision, engine and request shape, P5-P95; a band built "
        "without a group holds 28 of them (93 %)"),
    ("cdna4", "blackwell"): (0.239, 1.876,
        "53 comparisons of left-out points of an MI355X configuration against a B200 / GB200 one "
        "in 6 groups of one model, precision, engine and request shape, P5-P95; a band built "
        "without a group holds 47 of them (89 %)"),
    ("hopper", "blackwell"): (0.563, 2.045,
        "292 comparisons of left-out points of an H100 / H200 configuration against a B200 / "
        "GB200 one in 9 groups of one model, precision, engine and request shape, P10-P90 widened"
        " x1.25 about the median; a band built without a group holds 258 of them (88 %)"),
    ("hopper", "hopper"): (0.552, 1.896,
        "469 comparisons of left-out points of two H100 / H200 configurations (GPU or layout) in "
        "9 groups of one model, precision, engine and request shape, P5-P95; a band built without"
        " a group holds 410 of them (87 %)"),
}


def paired_bands() -> dict[tuple[str, str], tuple[float, float]]:
    """(low, high) of PAIRED_BAND by (family of the one, family of the other), as
    models.serving.cost.cheaper_at_target takes them."""
    return {families: (low, high) for families, (low, high, _) in PAIRED_BAND.items()}


def engine_constants(engine: str, arch: str | None = None) -> EngineConstants:
    """The stored terms of `engine`: those fitted with the families' own constants, or, on an
    `arch` without a fit of its own, those fitted with POOLED. A KeyError names an engine the
    model does not know."""
    table = ENGINES if arch is None or arch in CONSTANTS else POOLED_ENGINES
    return table[engine]
