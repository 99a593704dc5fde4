"""Score two public analytical LLM-performance tools, llm-analysis (PyPI llm-analysis, github
cli99/llm-analysis) and GenZ (PyPI genz-llm, github abhibambhaniya/GenZ-LLM-Analyzer), beside
the project's serving model on the measured serving points
(pipelines.inputs.measurements.shipped_serving_points), each read the same way, and print the
mean |error| (with the median: an over-prediction's error has no upper bound) and the mean
signed error per GPU family, on the points all three express and on each tool's own
expressible points, with what each cannot express and why, and the wall time.

The peers are not project dependencies: install them into a virtualenv of their own, then let
it see the project and its dependencies through a .pth file (written after the install, so pip
does not see the project's packages), and run this from the repository root:

    python3.11 -m venv /tmp/peers-venv
    /tmp/peers-venv/bin/pip install llm-analysis==0.2.2 genz-llm==0.0.16
    printf '%s\\n' "$PWD/.venv/lib/python3.11/site-packages" "$PWD" \\
        > /tmp/peers-venv/lib/python3.11/site-packages/specledger.pth
    /tmp/peers-venv/bin/python -m bench.serving_peers [--jobs N] [--defaults]

`--jobs N` builds the peers' curves in N processes (default 2); `--defaults` runs both peers
at their own default efficiencies (1.0, the ideal roofline) instead of the stated pair below.

What it measures. For each measured configuration (validation.configurations: one curve) a
peer is asked, for batches 1, 2, 4, ... up to what fits in its own HBM accounting at the full
length (and the engine's batch limit, Deployment.max_batch per attention replica), for the
decode time of one step of the whole batch at the mean context (input + output / 2 tokens) and
for the prefill time of one request of input_tokens. These make the steady-state
continuous-batching point of the project's curve (models/serving/curve.py `_point`,
aggregated): cycle = B x prefill / dp + output_tokens x step, tokens/s per GPU =
B x output_tokens / cycle / GPUs, tokens/s per user = output_tokens / (cycle - prefill) (1 / step
at B = 1). validation.configuration_errors reads that curve exactly as it reads the project's
(a fixed concurrency at the measured tokens/s per user, Offline at the most throughput, Server
at the load Poisson arrivals reach under the p99 TPOT limit, an unreached point with its
interactivity shortfall); the error is (predicted - measured) / measured. The project's model
runs with its stored constants (validation.point_errors), so its figures are in sample; the
peers are not fitted to anything. Neither peer models the serving engine, so configurations
alike but for the engine share a peer curve.

Settings. Both peers run at 0.7 compute and 0.7 memory efficiency: llm-analysis's README gives
"up to 0.7" flops efficiency for inference and its infer() notes benchmarks show 0.6-0.7 HBM
efficiency in inference (its defaults, 1.0, are the latency lower bound it documents); GenZ
documents no value (its system_eff defaults to 1.0), so it gets the same pair, and the two
differ only in what they model. Every tool gets the same GPU figures: validation.HARDWARE (HBM
bytes and bandwidth, BF16 peak, NVLink / Infinity Fabric bandwidth one way) and PEAKS (the
dense peak in the weights' precision, which each peer's GEMMs are set to run at); link
latencies are the peers' own (llm-analysis's shipped GPUs' 8 us, GenZ's 1 us default).

- llm-analysis 0.2.2: each model as its Hugging Face reading (config.get_model_config_from_hf)
  builds it from config.json, so the FFN is its default two matrices of 4 x hidden (it has no
  gated MLP: Llama 70B comes to about 55 B parameters, not 69-71 B; for Llama 2 70B this is its
  shipped upstage_Llama-2-70b-instruct-v2 config). FP8 is its dtype w8a8e16, FP4 w4a4e16 (its
  FP4 peak), the KV cache at the deployment's bytes (FP8). The instance is one tp-wide tensor
  parallel group running the whole batch. Prefill and the batch limit
  (decode_max_batch_size_per_gpu) are its inference() at batch 1 and the full length; the
  decode step is inference()'s decode part (get_latency_fwd of one token plus loading and
  storing the KV cache at the mean context) called directly, since inference() at a large
  batch also asserts that a prefill of the whole batch fits.
- GenZ (genz-llm 0.0.16): its presets for Llama 2 70B and Llama 3.1 70B; gpt-oss-120b from its
  config.json (GenZ has no preset); DeepSeek-R1 as its DeepSeek-V3 preset with each routed
  expert at moe_intermediate_size (2,048), because its decode and prefill paths size every
  expert by intermediate_size (18,432, the dense layers'), about 6 T parameters. bits is the
  weights' precision (GenZ holds weights, activations and the KV cache in one), Bb = 1 (no beam
  search), tensor_parallel = tp / ep and expert_parallel = ep (GenZ splits attention over both,
  the experts over ep); the batch limit is its own weights and KV cache at the full length
  (decode_moddeling's model profile) in all of HBM. GenZ writes its layer tables as CSV files
  under /tmp/genz/data.

Not expressible points are counted and named, not dropped. Data-parallel attention: neither
peer has it; llm-analysis would leave such points out (none is dense), GenZ runs the instance
as one attention group over all its GPUs on the whole batch, so its cycle takes dp = 1.
llm-analysis cannot express the MoE models (MOE_IN_LLM_ANALYSIS). GenZ's MoE is scored as it
models it: every layer routed (no shared expert or dense layers), DeepSeek's latent attention as
its preset's two KV heads, gpt-oss's sliding window ignored, each GPU reading the top-k experts'
weights whatever the batch, and an FP4 KV cache with FP4 weights.
"""

from __future__ import annotations

import copy
import os
import sys
import time
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, fields
from importlib import metadata
from typing import Any, Final

import numpy as np

from models.serving import calibration
from models.serving.calibration import EngineConstants, ServingConstants
from models.serving.cost import Point
from models.serving.curve import concurrencies
from models.serving.measured_points import MeasuredPoint
from models.serving.presets import PRESETS
from models.serving.validation import (
    HARDWARE,
    PEAKS,
    Configuration,
    PointError,
    configuration_errors,
    configurations,
    memory_misses,
    point_errors,
)
from pipelines.inputs.measurements import shipped_serving_points

PEERS: Final = ("llm-analysis", "GenZ")
TOOLS: Final = ("project", *PEERS)
DISTRIBUTIONS: Final = {"llm-analysis": "llm-analysis", "GenZ": "genz-llm"}
INSTALL: Final = ("bench.serving_peers needs llm-analysis and genz-llm, which are not "
                  "importable here: install them into a separate virtualenv that also sees the "
                  "project (`pip install llm-analysis==0.2.2 genz-llm==0.0.16`; see this "
                  "module's docstring) and run it with that virtualenv's python")
# One stated pair for both peers (the docstring says why); --defaults: the peers' own 1.0.
EFFICIENCY: Final = 0.7
# llm-analysis's shipped GPU configs all give this intra-node minimum message latency.
LLM_ANALYSIS_LINK_LATENCY_S: Final = 8e-6

MOE_IN_LLM_ANALYSIS: Final = (
    "MoE: llm-analysis's inference latency streams every expert's weights each step and counts "
    "one dense 4 x hidden MLP's FLOPs (no top-k routing), and takes head_dim as hidden / heads "
    "(no latent attention, no 64-wide gpt-oss heads)")
DPA_IN_LLM_ANALYSIS: Final = "data-parallel attention: llm-analysis has tensor parallelism only"
UNFIT_LLM_ANALYSIS: Final = ("the weights and one full-length sequence do not fit "
                             "llm-analysis's HBM at the measured tensor parallelism")
UNFIT_GENZ: Final = ("the weights and one full-length sequence do not fit GenZ's HBM at the "
                     "measured layout")
LAYOUT_GENZ: Final = "ep does not divide tp: no GenZ layout of tp GPUs"
UNFIT_PROJECT: Final = ("the weights do not fit the project model's HBM budget at the measured "
                        "tensor parallelism (validation.memory_misses)")

# config.json fields llm-analysis's Hugging Face reading takes (get_model_config_from_hf).
LLM_ANALYSIS_MODELS: Final[dict[str, dict[str, Any]]] = {
    # meta-llama/Llama-2-70b-hf config.json
    "llama-2-70b": {"name": "meta-llama_Llama-2-70b-hf", "num_layers": 80, "n_head": 64,
                    "hidden_dim": 8192, "vocab_size": 32000, "max_seq_len": 4096,
                    "num_key_value_heads": 8, "model_type": "llama"},
    # meta-llama/Llama-3.1-70B-Instruct config.json
    "llama-3.1-70b": {"name": "meta-llama_Llama-3.1-70B-Instruct", "num_layers": 80,
                      "n_head": 64, "hidden_dim": 8192, "vocab_size": 128256,
                      "max_seq_len": 131072, "num_key_value_heads": 8, "model_type": "llama"},
}
LLM_ANALYSIS_DTYPES: Final = {"fp8": "w8a8e16", "fp4": "w4a4e16"}
GENZ_PRESETS: Final = {"llama-2-70b": "meta-llama/Llama-2-70B",
                       "llama-3.1-70b": "meta-llama/Llama-3.1-70B",
                       "deepseek-r1": "deepseek-ai/DeepSeek-V3-Base"}


@dataclass(frozen=True)
class Settings:
    """Each peer's efficiency (compute and memory alike); None: the peer's own default."""

    efficiency: float | None

    def describe(self) -> str:
        if self.efficiency is None:
            return ("llm-analysis and GenZ at their own defaults (flops / HBM efficiency 1.0, "
                    "system_eff 1.0)")
        e = self.efficiency
        return (f"llm-analysis flops_efficiency {e}, hbm_memory_efficiency {e}; "
                f"GenZ system_eff {e} (compute and memory)")


@dataclass(frozen=True)
class Outcome:
    """A peer's curve for one configuration, or why it cannot express it."""

    curve: tuple[Point, ...] = ()
    why: str | None = None


def steady_curve(batches: Iterable[int], step_s: Callable[[int], float], prefill_s: float,
                 output_tokens: int, gpus: int, dp: int = 1) -> tuple[Point, ...]:
    """The steady-state continuous-batching curve of models/serving/curve.py `_point`
    (aggregated): each cycle serves every request's prefill and output_tokens decode steps."""
    out = []
    for b in batches:
        step = step_s(b)
        cycle = b * prefill_s / dp + output_tokens * step
        tpot = (cycle - prefill_s) / output_tokens if b > 1 else step
        out.append(Point(b, b * output_tokens / cycle / gpus, 1 / tpot, prefill_s + step))
    return tuple(out)


def _batches(config: Configuration, peer_limit: int) -> list[int]:
    """1, 2, 4, ... up to the peer's HBM limit and the engine's batch limit."""
    return concurrencies(min(peer_limit, config.deployment.max_batch * config.deployment.dp))


# --- llm-analysis --------------------------------------------------------------------------------

def _llm_analysis_gpu(hardware: str) -> Any:
    from llm_analysis.config import GPUConfig
    hw = HARDWARE[hardware]
    fp8 = PEAKS[(hardware, "fp8")]
    return GPUConfig(
        name=hardware, mem_per_GPU_in_GB=hw.hbm_bytes / 1e9,
        hbm_bandwidth_in_GB_per_sec=hw.hbm_bw / 1e9,
        intra_node_bandwidth_in_GB_per_sec=hw.scaleup_bw / 1e9,
        intra_node_min_message_latency=LLM_ANALYSIS_LINK_LATENCY_S,
        peak_fp16_TFLOPS=hw.peak_flops / 1e12, peak_i8_TFLOPS=fp8 / 1e12,
        peak_i4_TFLOPS=PEAKS.get((hardware, "fp4"), fp8) / 1e12,
        inter_node_bandwidth_in_GB_per_sec=hw.scaleout_bw / 1e9)


def llm_analysis_curve(config: Configuration, settings: Settings) -> Outcome:
    """llm-analysis's curve for a dense configuration (its inference path has no MoE routing)."""
    from llm_analysis.analysis import LLMAnalysis
    from llm_analysis.config import ModelConfig, ParallelismConfig, get_dtype_config_by_name
    from llm_analysis.constant import BYTES_FP16
    p, dep, request = config.points[0], config.deployment, config.request
    if config.llm.is_moe:
        return Outcome(why=MOE_IN_LLM_ANALYSIS)
    if p.dp_attention:
        return Outcome(why=DPA_IN_LLM_ANALYSIS)
    model = ModelConfig(**LLM_ANALYSIS_MODELS[p.model])
    analysis = LLMAnalysis(model, _llm_analysis_gpu(p.hardware),
                           get_dtype_config_by_name(LLM_ANALYSIS_DTYPES[p.precision]),
                           ParallelismConfig(tp_size=dep.tp),
                           flops_efficiency=settings.efficiency,
                           hbm_memory_efficiency=settings.efficiency)
    try:
        full = analysis.inference(batch_size_per_gpu=1, seq_len=request.input_tokens,
                                  num_tokens_to_generate=request.output_tokens,
                                  kv_cache_dtype_bytes=dep.kv_bytes)
    except AssertionError:  # its memory checks are assertions
        return Outcome(why=UNFIT_LLM_ANALYSIS)
    context = request.input_tokens + request.output_tokens / 2

    def step(batch: int) -> float:
        # inference()'s decode step: one token's forward, plus loading and storing the cache.
        forward, _ = analysis.get_latency_fwd(batch, 1, is_inference=True,
                                              layernorm_dtype_bytes=BYTES_FP16)
        kv = analysis.get_memory_kv_cache_per_layer(
            batch, context, kv_cache_dtype_bytes=dep.kv_bytes) * model.num_layers
        return forward + 2 * kv / (analysis.get_gpu_hbm_bandwidth() * 1e9)

    batches = _batches(config, full["decode_max_batch_size_per_gpu"])
    if not batches:
        return Outcome(why=UNFIT_LLM_ANALYSIS)
    return Outcome(steady_curve(batches, step, full["prefill_latency"],
                                request.output_tokens, dep.gpus))


# --- GenZ ----------------------------------------------------------------------------------------

def _genz_model(model: str) -> Any:
    from GenZ import ModelConfig, get_configs
    if model == "gpt-oss-120b":
        # openai/gpt-oss-120b config.json (GenZ has no preset): 36 layers of 128 experts, top 4.
        return ModelConfig(model="openai/gpt-oss-120b", vocab_size=201088,
                           max_model_len=131072, hidden_size=2880, intermediate_size=2880,
                           num_ffi=2, num_decoder_layers=36, num_attention_heads=64,
                           head_dim=64, num_key_value_heads=8, num_experts=128,
                           expert_top_k=4, sliding_window=128)
    preset = get_configs(GENZ_PRESETS[model])
    if not preset.is_moe:
        return preset
    # Its decode and prefill FFNs size each routed expert by intermediate_size.
    found = copy.copy(preset)
    found.intermediate_size = preset.moe_intermediate_size
    return found


def _genz_system(hardware: str, precision: str) -> dict[str, Any]:
    """A custom GenZ system of the GPU's figures; its Flops is the BF16 peak its `bits`
    multiply, so it is set for the weights' precision to run at PEAKS."""
    from GenZ import System
    hw = HARDWARE[hardware]
    speedup = 1 / System.compute_multiplier[precision]
    return {"Flops": PEAKS[(hardware, precision)] / speedup / 1e12,
            "Memory_size": hw.hbm_bytes / 1e9, "Memory_BW": hw.hbm_bw / 1e9,
            "ICN": hw.scaleup_bw / 1e9, "real_values": True}


def genz_curve(config: Configuration, settings: Settings) -> Outcome:
    """GenZ's curve: decode_moddeling for each batch's step, prefill_moddeling for one
    request; the instance is one group of tp GPUs (tensor_parallel x expert_parallel)."""
    from GenZ import decode_moddeling, prefill_moddeling
    p, dep, request = config.points[0], config.deployment, config.request
    if p.tp % p.ep:
        return Outcome(why=LAYOUT_GENZ)
    model = _genz_model(p.model)
    system = _genz_system(p.hardware, p.precision)
    common: dict[str, Any] = {"model": model, "system_name": system, "bits": p.precision,
                              "tensor_parallel": p.tp // p.ep, "expert_parallel": p.ep}
    if settings.efficiency is not None:
        common["system_eff"] = settings.efficiency
    # Its own memory accounting: weights and one sequence's KV cache at the full length, MB.
    _, profile = decode_moddeling(batch_size=1, input_tokens=request.input_tokens,
                                  output_tokens=request.output_tokens, Bb=1,
                                  model_profilling=True, **common)
    weights = float(profile["Total Weights (MB)"].iloc[0])
    kv = float(profile["KV Cache (MB)"].iloc[0])
    free = system["Memory_size"] * 1024 - weights
    batches = _batches(config, int(free // kv) if free > 0 else 0)
    if not batches:
        return Outcome(why=UNFIT_GENZ)
    prefill = prefill_moddeling(batch_size=1, input_tokens=request.input_tokens,
                                **common)["Latency"] / 1e3

    def step(batch: int) -> float:
        return decode_moddeling(batch_size=batch, input_tokens=request.input_tokens,
                                output_tokens=request.output_tokens // 2, Bb=1,
                                **common)["Latency"] / 1e3

    # One attention group over the instance (GenZ has no data-parallel attention): dp = 1.
    return Outcome(steady_curve(batches, step, prefill, request.output_tokens, dep.gpus))


def _quiet() -> None:
    """The peers log and warn on every call; a worker keeps only errors."""
    import logging
    warnings.filterwarnings("ignore")
    logging.getLogger("__name__").setLevel(logging.ERROR)  # llm-analysis's logger's name


def peer_curves(job: tuple[Configuration, Settings]) -> tuple[Outcome, Outcome]:
    """Both peers' curves for one configuration (a worker's unit)."""
    _quiet()
    config, settings = job
    return llm_analysis_curve(config, settings), genz_curve(config, settings)


# --- scoring -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Given(Configuration):
    """A configuration whose curve is a peer's, so that validation.configuration_errors reads
    it exactly as it reads the project's (the constants it is passed go unused)."""

    given: tuple[Point, ...] = ()

    def curve(self, k: ServingConstants, e: EngineConstants | None = None) -> list[Point]:
        return list(self.given)


def read_curve(config: Configuration, curve: tuple[Point, ...]) -> list[PointError]:
    base = {f.name: getattr(config, f.name) for f in fields(Configuration)}
    return configuration_errors(Given(**base, given=curve), calibration.constants(config.arch)[0])


@dataclass
class Scores:
    """Each tool's errors by measured point, and its points not expressible by reason."""

    errors: dict[str, dict[MeasuredPoint, PointError]]
    missing: dict[str, dict[str, list[MeasuredPoint]]]


def _peer_key(config: Configuration) -> tuple[object, ...]:
    """What a peer's curve depends on: all of a configuration but its engine."""
    p, dep = config.points[0], config.deployment
    return (p.model, p.hardware, p.precision, p.tp, p.ep, p.dp_attention, config.request,
            dep.max_batch, dep.kv_bytes)


def score(configs: Sequence[Configuration], settings: Settings, jobs: int) -> Scores:
    errors: dict[str, dict[MeasuredPoint, PointError]] = {t: {} for t in TOOLS}
    missing: dict[str, dict[str, list[MeasuredPoint]]] = {t: defaultdict(list) for t in TOOLS}
    errors["project"] = {e.point: e for e in point_errors(configs)}
    for c in memory_misses(configs):
        missing["project"][UNFIT_PROJECT].extend(c.points)
    # Configurations alike but for the engine (which neither peer models) share a curve.
    first = {_peer_key(c): c for c in reversed(configs)}
    work = [(c, settings) for c in first.values()]
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            found = list(pool.map(peer_curves, work, chunksize=2))
    else:
        found = [peer_curves(w) for w in work]
    outcomes = dict(zip(first, found, strict=True))
    for config in configs:
        for tool, outcome in zip(PEERS, outcomes[_peer_key(config)], strict=True):
            if outcome.why is not None:
                missing[tool][outcome.why].extend(config.points)
                continue
            errors[tool].update((e.point, e) for e in read_curve(config, outcome.curve))
    return Scores(errors, missing)


def _cell(errs: Sequence[PointError]) -> str:
    """mean |error| / median |error| / mean signed error, percent of measured."""
    if not errs:
        return f"{'-':>22s}"
    absolute = [abs(e.error) for e in errs]
    return (f"{np.mean(absolute):6.1f} /{np.median(absolute):6.1f} /"
            f"{np.mean([e.error for e in errs]):+7.1f}")


def print_common(scores: Scores) -> None:
    """Each family's points all three tools express (the dense ones: llm-analysis has no MoE)."""
    common = [p for p in scores.errors["project"]
              if all(p in scores.errors[t] for t in PEERS)]
    print("points all three express: mean |error| / median |error| / mean signed error, % of "
          "measured")
    print(f"  {'family':10s} {'points':>6s}  " + "  ".join(f"{t:>22s}" for t in TOOLS))
    by_family: dict[str, list[MeasuredPoint]] = defaultdict(list)
    for p in common:
        by_family[p.arch].append(p)
    for family, pts in [*sorted(by_family.items()), ("all", common)]:
        cells = "  ".join(_cell([scores.errors[t][p] for p in pts]) for t in TOOLS)
        models = ", ".join(sorted({p.model for p in pts}))
        print(f"  {family:10s} {len(pts):6d}  {cells}   {models}")


def _groups(scores: Scores) -> list[tuple[str, Callable[[MeasuredPoint], bool]]]:
    """Each family and each of its models, then every family's points, dense and MoE."""
    keys = sorted({(p.arch, p.model) for t in TOOLS for p in scores.errors[t]})
    out: list[tuple[str, Callable[[MeasuredPoint], bool]]] = []
    for family in sorted({a for a, _ in keys}):
        out.append((family, lambda p, f=family: p.arch == f))
        out.extend((f"  {m}", lambda p, f=family, m=m: (p.arch, p.model) == (f, m))
                   for a, m in keys if a == family)
    dense = {name for name, llm in PRESETS.items() if not llm.is_moe}
    return [*out, ("all", lambda p: True), ("  dense", lambda p: p.model in dense),
            ("  MoE", lambda p: p.model not in dense)]


def print_own(scores: Scores) -> None:
    """Each tool on every point it expresses, by family and model."""
    print("\neach tool on its own expressible points: points, mean |error| / median |error| / "
          "mean signed error, %")
    print(f"  {'family / model':20s} " + "  ".join(f"{t:>28s}" for t in TOOLS))
    for label, member in _groups(scores):
        cells = []
        for t in TOOLS:
            errs = [e for p, e in scores.errors[t].items() if member(p)]
            cells.append(f"{len(errs):5d} {_cell(errs)}")
        print(f"  {label:20s} " + "  ".join(cells))


def print_missing(scores: Scores) -> None:
    print("\nnot expressible (points, what):")
    for tool in TOOLS:
        reasons = scores.missing[tool]
        total = sum(len(v) for v in reasons.values())
        print(f"  {tool}: {total} points")
        for why, pts in sorted(reasons.items(), key=lambda kv: -len(kv[1])):
            named: dict[str, int] = defaultdict(int)
            for p in pts:
                named[f"{p.model} {p.precision} {p.hardware}"] += 1
            what = ", ".join(f"{k} ({n})" for k, n in sorted(named.items()))
            print(f"    {len(pts):4d}  {why}\n          {what}")


def _peers_importable() -> bool:
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")  # llm-analysis imports transformers
    try:
        import GenZ  # noqa: F401
        import llm_analysis.analysis  # noqa: F401
    except ImportError:
        return False
    return True


def main(argv: Sequence[str] = ()) -> int:
    started = time.perf_counter()
    if not _peers_importable():
        print(INSTALL, file=sys.stderr)
        return 2
    jobs = int(argv[argv.index("--jobs") + 1]) if "--jobs" in argv else min(2, os.cpu_count() or 1)
    settings = Settings(None if "--defaults" in argv else EFFICIENCY)
    table = shipped_serving_points()
    configs = configurations(table.points)
    scores = score(configs, settings, jobs)
    versions = ", ".join(f"{t} {metadata.version(DISTRIBUTIONS[t])}" for t in PEERS)
    print(f"serving peers on {len(table.points)} measured points in {len(configs)} "
          f"configurations ({versions})")
    print(f"settings: {settings.describe()}; the project's model with its stored constants "
          "(in sample)\n")
    print_common(scores)
    print_own(scores)
    print_missing(scores)
    print(f"\n{time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
