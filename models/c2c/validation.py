"""Published measurements the C2C model is calibrated and validated against
(docs/c2c-method.md#calibration-and-error). Measured values only; the layouts
are the runs' own (Calculon's execution files for Korthikanti; Megatron-LM's table).

The clusters here describe the published runs' own hardware (Selene, EOS), not a scenario's:
they are part of the measurement being reproduced, so they live beside it rather than in the
ledger. `validation_results` gives the model's error on every point, for the tests and for
the briefing. The NeMo / Megatron-Bridge runs are data (data/measurements/training_runs.yaml):
the functions on them take the runs as an argument (a TrainingRuns, read by
pipelines/inputs/measurements.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date
from functools import cache

from models.c2c.estimate import evaluate
from models.c2c.measured_runs import Architecture, MeasuredRun, Source, TrainingRuns
from models.c2c.spec import (
    ClusterSpec,
    Framework,
    Layout,
    Layouts,
    Precision,
    Recompute,
    TransformerSpec,
)

# Selene: A100 SXM4 80GB, NVLink 3 (600 GB/s bidirectional), 8 x HDR 200 Gb/s per node.
A100_SELENE = ClusterSpec(peak_flops=312e12, hbm_bytes=80e9, hbm_bw=2039e9, domain_gpus=8,
                          arch="ampere",
                          scaleup_bw=300e9, scaleout_bw=25e9, scaleup_efficiency=0.82,
                          scaleout_efficiency=0.94, scaleup_latency=3.4e-6,
                          scaleout_latency=14e-6)
# EOS-class H100 SXM5: 989.5 TFLOP/s dense BF16, NVLink 4 (900 GB/s), 8 x NDR 400 Gb/s.
H100_EOS = ClusterSpec(peak_flops=989.5e12, hbm_bytes=80e9, hbm_bw=3350e9, domain_gpus=8,
                       arch="hopper",
                       scaleup_bw=450e9, scaleout_bw=50e9, scaleup_efficiency=0.82,
                       scaleout_efficiency=0.94, scaleup_latency=3.4e-6,
                       scaleout_latency=14e-6)

# Korthikanti et al. 2022: Megatron-LM 2022, unfused attention, no TP overlap.
KORTHIKANTI_FRAMEWORK = Framework(flash_attention=False, tp_overlap=False, dp_overlap=True,
                                  dropout=True, grad_reduce_in_fp32=True)
# Megatron-Core 2024: fused attention, TP and DP overlap.
MCORE_FRAMEWORK = Framework(flash_attention=True, tp_overlap=True, dp_overlap=True,
                            grad_reduce_in_fp32=True)


@dataclass(frozen=True)
class Point:
    name: str
    model: TransformerSpec
    layout: Layout
    measured: float  # seconds per iteration (Korthikanti) or MFU (Megatron-Core)


def _gpt(layers: int, hidden: int, heads: int, seq_len: int = 2048, vocab: int = 51200,
         tied: bool = True) -> TransformerSpec:
    return TransformerSpec(layers=layers, hidden=hidden, heads=heads, seq_len=seq_len,
                           vocab=vocab, tied_embeddings=tied)


_KORTHIKANTI_MODELS = {  # name: (model, tp, pp, global batch, micro-batch, interleave)
    "22B": (_gpt(48, 6144, 64), 8, 1, 4, 4, 1),
    "175B": (_gpt(96, 12288, 96), 8, 8, 64, 1, 3),
    "530B": (_gpt(105, 20480, 128), 8, 35, 280, 1, 3),
    "1T": (_gpt(128, 25600, 160), 8, 64, 512, 1, 1),
}
_KORTHIKANTI_TABLE5 = {"22B": (1.42, 1.10), "175B": (18.13, 13.75), "530B": (49.05, 37.83),
                       "1T": (94.42, 71.49)}


def korthikanti_table5() -> list[Point]:
    """Table 5: iteration seconds, full recompute vs sequence parallel + selective."""
    points = []
    for name, (model, tp, pp, batch, micro, v) in _KORTHIKANTI_MODELS.items():
        full, selective = _KORTHIKANTI_TABLE5[name]
        common = {"tp": tp, "pp": pp, "dp": 1, "micro_batch": micro, "global_batch": batch,
                      "interleave": v, "zero": 0}
        points.append(Point(f"{name} full", model, Layout(
            **common, sequence_parallel=False, recompute=Recompute.FULL), full))
        points.append(Point(f"{name} SP+selective", model, Layout(
            **common, sequence_parallel=True, recompute=Recompute.SELECTIVE), selective))
    return points


_MCORE_TABLE = [  # params, heads, hidden, layers, tp, pp, dp, batch, MFU
    ("1.7B", 16, 2048, 24, 1, 1, 48, 192, 0.41),
    ("7.1B", 32, 4096, 30, 2, 1, 48, 192, 0.47),
    ("16B", 48, 6144, 32, 4, 1, 48, 192, 0.49),
    ("32B", 56, 7168, 48, 8, 1, 48, 192, 0.46),
    ("70B", 64, 8192, 84, 8, 2, 48, 384, 0.42),
    ("119B", 80, 10240, 92, 8, 4, 48, 768, 0.43),
    ("177B", 96, 12288, 96, 8, 6, 48, 1152, 0.44),
    ("314B", 128, 16384, 96, 8, 8, 48, 1536, 0.48),
    ("462B", 144, 18432, 112, 8, 16, 48, 3072, 0.47),
]


def megatron_core_h100() -> list[Point]:
    """Megatron-Core's 2024 H100 weak-scaling table (MFU). Micro-batch 1, distributed
    optimizer, sequence parallelism wherever TP > 1, no recompute; interleaving is not
    published, so pipelines use one chunk per stage."""
    points = []
    for name, heads, hidden, layers, tp, pp, dp, batch, mfu in _MCORE_TABLE:
        model = _gpt(layers, hidden, heads, seq_len=4096, vocab=131072, tied=False)
        layout = Layout(tp=tp, pp=pp, dp=dp, micro_batch=1, global_batch=batch,
                        sequence_parallel=tp > 1, recompute=Recompute.NONE, zero=1)
        points.append(Point(name, model, layout, mfu))
    return points


@dataclass(frozen=True)
class PublishedSet:
    """Where a set of measurements was published."""

    title: str
    url: str
    published_on: date
    quantity: str        # what `Point.measured` is
    error_unit: str      # "%" (relative error) or "points" (MFU difference)
    key: str = ""        # a short name to cite it by
    checks: str = "c2c"  # the model its points check: "c2c" (training) or "serving"


KORTHIKANTI_SET = PublishedSet(
    "Korthikanti et al. 2022, Reducing Activation Recomputation in Large Transformer Models, "
    "Table 5 (A100, Selene)", "https://arxiv.org/abs/2205.05198", date(2022, 5, 10),
    "iteration time (s)", "%", "korthikanti-2022-table5")
MCORE_SET = PublishedSet(
    "Megatron-Core H100 weak-scaling table (NVIDIA/Megatron-LM README, commit 06d70a1b)",
    "https://github.com/NVIDIA/Megatron-LM", date(2024, 7, 15), "MFU (%)", "points",
    "megatron-core-2024-h100")


@dataclass(frozen=True)
class Facets:
    """What a measured point is of, as columns an analyst groups by (model_error): the model,
    the GPU (or system), the engine or training stack, and the layout."""

    model: str | None = None
    gpu: str | None = None
    engine: str | None = None
    layout: str | None = None


def layout_name(layout: Layout) -> str:
    """A training layout as `tp8 pp4 dp2 cp1 ep1 vp1`: the parallel sizes, in a fixed order."""
    return (f"tp{layout.tp} pp{layout.pp} dp{layout.dp} cp{layout.cp} ep{layout.ep} "
            f"vp{layout.interleave}")


@dataclass(frozen=True)
class ValidationResult:
    published: PublishedSet
    point: str
    measured: float      # in the set's quantity (seconds, or MFU as a percentage)
    predicted: float
    error: float         # signed: percent of measured, or MFU points
    facets: Facets = Facets()

    @property
    def abs_error(self) -> float:
        return abs(self.error)


def validation_results() -> list[ValidationResult]:
    """The model against every published point, with the constants of calibration.py."""
    results = []
    for point in korthikanti_table5():
        estimate = evaluate(point.model, A100_SELENE, KORTHIKANTI_FRAMEWORK,
                            Layouts.of([point.layout]))
        predicted = float(estimate.t_iter[0])
        results.append(ValidationResult(
            KORTHIKANTI_SET, point.name, point.measured, predicted,
            100 * (predicted - point.measured) / point.measured,
            Facets(point.name.split()[0], "a100", "megatron", layout_name(point.layout))))
    for point in megatron_core_h100():
        estimate = evaluate(point.model, H100_EOS, MCORE_FRAMEWORK, Layouts.of([point.layout]))
        predicted = 100 * float(estimate.mfu[0])
        measured = 100 * point.measured
        results.append(ValidationResult(
            MCORE_SET, point.name, measured, predicted, predicted - measured,
            Facets(point.name, "h100", "megatron", layout_name(point.layout))))
    return results


# --- NeMo / Megatron-Bridge performance summaries (data/measurements/training_runs.yaml) ---

def _system(peak: float, fp8: float | None, fp4: float | None, hbm: float, hbm_bw: float,
            domain: int, nvlink: float, nic: float, arch: str,
            host: float = 64) -> dict[Precision, ClusterSpec]:
    """One DGX system's GPU in each precision it runs (TFLOP/s, GB, GB/s, GPUs, GB/s one way,
    Gb/s per NIC, GB/s to host memory one way): the BF16 peak for attention, the precision's
    peak for the GEMMs."""
    peaks = {Precision.BF16: peak}
    if fp8 is not None:
        peaks |= {Precision.FP8: fp8, Precision.MXFP8: fp8}
    if fp4 is not None:
        peaks[Precision.FP4] = fp4
    return {p: ClusterSpec(peak_flops=peak * 1e12, gemm_peak_flops=v * 1e12, hbm_bytes=hbm * 1e9,
                           hbm_bw=hbm_bw * 1e9, domain_gpus=domain,
                           scaleup_bw=nvlink * 1e9, scaleout_bw=nic / 8 * 1e9,
                           scaleup_efficiency=0.82, scaleout_efficiency=0.94,
                           scaleup_latency=3.4e-6, scaleout_latency=14e-6, arch=arch,
                           host_bw=host * 1e9)
            for p, v in peaks.items()}


# The published runs' own systems, from the vendors' datasheets (dense peaks: half the
# "with sparsity" figures): DGX H100 (8 x H100 SXM, NVLink 4, 8 x 400 Gb/s), DGX B200 (8 x
# B200, NVLink 5, 8 x 400 Gb/s), GB200 NVL72 and GB300 NVL72 (72-GPU NVLink 5 domains; 400 and
# 800 Gb/s NICs; host memory over NVLink-C2C, 900 GB/s both ways per Grace, two GPUs each).
# B300 has two runs and no datasheet figures in the ledger: not used.
SYSTEMS: dict[str, dict[Precision, ClusterSpec]] = {
    "DGX-H100": _system(989.5, 1979, None, 80, 3350, 8, 450, 400, "hopper"),
    "DGX-B200": _system(2250, 4500, 9000, 180, 8000, 8, 900, 400, "blackwell"),
    "DGX-GB200": _system(2500, 5000, 10000, 186, 8000, 72, 900, 400, "blackwell", host=225),
    "DGX-GB300": _system(2500, 5000, 15000, 279, 8000, 72, 900, 800,
                         "blackwell_ultra", host=225),
    # torchtitan's 64 x A100 80GB runs: 8-GPU NVLink 3 nodes (600 GB/s); the source does not
    # give the network, taken as DGX A100's 200 Gb/s HDR NIC per GPU (the runs' FSDP traffic
    # hides behind compute at either rate).
    "A100-SXM4-80GB": _system(312, None, None, 80, 2039, 8, 300, 200, "ampere"),
}


def _architecture(a: Architecture, seq_len: int) -> TransformerSpec:
    return TransformerSpec(layers=a.layers, hidden=a.hidden, heads=a.heads, seq_len=seq_len,
                           vocab=a.vocab, ffn=a.ffn, kv_heads=a.kv_heads, swiglu=a.swiglu,
                           experts=a.experts, top_k=a.top_k, moe_ffn=a.moe_ffn,
                           tied_embeddings=a.tied_embeddings, head_dim=a.head_dim,
                           first_dense_layers=a.first_dense_layers,
                           shared_experts=a.shared_experts, shared_ffn=a.shared_ffn)


@dataclass(frozen=True)
class RunCase:
    """A published run as the model evaluates it."""

    run: MeasuredRun
    model: TransformerSpec
    layout: Layout
    hw: ClusterSpec
    framework: Framework
    published: PublishedSet  # the table the run was published in

    @property
    def name(self) -> str:
        return f"{self.run.model} {self.run.gpus}x{self.run.system} {self.run.precision}"

    def tokens_per_s_per_gpu(self, t_iter: float) -> float:
        return self.run.global_batch * self.run.seq_len / (t_iter * self.run.gpus)


def published_runs(table: TrainingRuns) -> list[RunCase]:
    """Every run of `table` on a system above: Megatron-Core with fused attention, TP and
    DP overlap; sequence parallelism wherever TP > 1; the distributed optimizer, or FSDP where
    the run used it; no recompute (the recipes' selective recompute is the fused kernel's)."""
    cases = []
    for run in table.runs:
        if run.system not in SYSTEMS:
            continue
        precision = Precision.parse(run.precision)
        model = _architecture(table.architecture(run.model), run.seq_len)
        dp = run.gpus // (run.tp * run.pp * run.cp)
        recipe = table.recipe_settings(run)
        layout = Layout(tp=run.tp, pp=run.pp, dp=dp, cp=run.cp, ep=run.ep,
                        micro_batch=run.micro_batch, global_batch=run.global_batch,
                        interleave=run.vp, sequence_parallel=run.tp > 1,
                        zero=3 if run.fsdp else 1, recompute=Recompute.parse(run.recompute),
                        offload_layers=recipe.offload_layers if recipe else 0)
        # NVIDIA's performance recipes reduce gradients in bf16 (grad_reduce_in_fp32 off) and
        # run FSDP as Megatron-FSDP's flat buffers; torchtitan is PyTorch's modules and FSDP2.
        pytorch = run.framework == "pytorch"
        cases.append(RunCase(run, model, layout, SYSTEMS[run.system][precision],
                             replace(MCORE_FRAMEWORK, precision=precision,
                                     grad_reduce_in_fp32=run.grad_reduce_in_fp32,
                                     tp_overlap=not pytorch, pytorch_native=pytorch,
                                     pytorch_fsdp=pytorch,
                                     ep_overlap=recipe.ep_overlap if recipe else False),
                             published_set(table.source(run.source))))
    return cases


def published_set(source: Source) -> PublishedSet:
    return PublishedSet(source.title, source.url, source.published_on,
                        "training throughput (tokens/s/GPU)", "%", source.key)


def run_results(cases: list[RunCase]) -> list[ValidationResult]:
    """The model's error on each published run: predicted vs measured tokens/s/GPU."""
    results = []
    for case in cases:
        estimate = evaluate(case.model, case.hw, case.framework, Layouts.of([case.layout]))
        predicted = case.tokens_per_s_per_gpu(float(estimate.t_iter[0]))
        measured = case.run.tokens_per_s_per_gpu
        run = case.run
        results.append(ValidationResult(
            case.published, case.name, measured, predicted,
            100 * (predicted - measured) / measured,
            Facets(run.model, run.system, run.framework, layout_name(case.layout))))
    return results


# Published runs left out of calibration, with why: a table's figure that its own later
# releases contradict several-fold on the same system, model and layout family.
OUTLIERS: dict[tuple[str, str, str, str], str] = {
    ("megatron-bridge-25.11", "DGX-B200", "Qwen3_30B_a3B", "mxfp8"):
        "9,299 tokens/s/GPU, a third of the 18,066 (25.09) and 27,136 (26.04.01) the same "
        "system and model reach in the releases around it",
}


# Published runs the model says would not fit in HBM, with why: each is a known gap of the
# memory model or of the transcription, kept in view (tests check this list is exact).
MEMORY_MISSES: dict[tuple[str, str, str, str], str] = {
    ("nemo-24.07", "DGX-H100", "NEMOTRON4_340B", "fp8"):
        "TP8 PP8 on 128 GPUs leaves the distributed optimizer 2 data-parallel shards: 5.8 B "
        "parameters on the first stage at 12 bytes each are 64 GiB before activations; the "
        "24.07 recipe's memory settings (FP8 parameters, optimizer placement) are not published "
        "beside the table",
}


def is_outlier(run: MeasuredRun) -> bool:
    return (run.source, run.system, run.model, run.precision) in OUTLIERS


def calibration_runs(table: TrainingRuns) -> list[RunCase]:
    """The published runs the efficiencies are fitted on: all but the OUTLIERS."""
    return [case for case in published_runs(table) if not is_outlier(case.run)]


@dataclass(frozen=True)
class SetReport:
    """One calibration set: where it was published, each point, and the error summary."""

    published: PublishedSet
    results: tuple[ValidationResult, ...]

    @property
    def mean_abs_error(self) -> float:
        return sum(r.abs_error for r in self.results) / len(self.results)

    @property
    def max_abs_error(self) -> float:
        return max(r.abs_error for r in self.results)


@cache
def fidelity_report(table: TrainingRuns) -> tuple[SetReport, ...]:
    """Every calibration set with the model's error on each of its points, in the order
    the sets were published: what `specledger validate` prints and the warehouse keeps.
    It depends on the code and the runs alone, so it is computed once a process for a table
    (a run publishes it to the warehouse and prints it in the briefing)."""
    results = [*validation_results(), *run_results(calibration_runs(table))]
    sets: dict[str, list[ValidationResult]] = {}
    published: dict[str, PublishedSet] = {}
    for result in results:
        sets.setdefault(result.published.title, []).append(result)
        published[result.published.title] = result.published
    return tuple(sorted((SetReport(published[t], tuple(r)) for t, r in sets.items()),
                        key=lambda s: s.published.published_on))
