"""The serving model against measured serving points (data/measurements/serving_points.yaml,
taken as an argument: a ServingPoints read by pipelines/inputs/measurements.py): at each
point's tokens/s per user, the throughput per GPU the model's curve gives there, and the
error; per GPU family the summary a briefing and `specledger validate` print.

The error is the one the model is used with: a serving scenario asks for the throughput per GPU
at a target interactivity (models.serving.cost.at_target), so each measured point is compared
with the model's curve for its configuration interpolated at the point's tokens/s per user.
A point is read as it was measured: an MLPerf Offline run (throughput alone) against the
curve's most throughput, an MLPerf Server run (Poisson arrivals under a p99 limit on the time
per output token) against the load such arrivals reach under that limit
(models.serving.arrivals), a fixed concurrency at its tokens/s per user. A point faster per
user than the model's fastest point (concurrency 1) is "unreached": it is compared with that
fastest point and its interactivity shortfall counts as error too
(ratio = measured/model throughput x measured/model tokens/s per user, the larger way), so the
error grows continuously past the end of the curve. A configuration whose weights do not fit in
the model's HBM budget has no curve: its points are memory misses, listed and left out.

The hardware is the measurements' own (an 8-GPU HGX/DGX node), with the figures the ledger's
source packs hold for it: the same numbers a serving scenario on that GPU resolves from the
ledger, with the model's default efficiencies and latencies (models.c2c.calibration
CLUSTER_DEFAULTS), so the model is calibrated on the inputs it is later run with.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache, cached_property
from typing import Final

import numpy as np

from models.c2c import calibration as c2c_calibration
from models.c2c.spec import ClusterSpec
from models.c2c.validation import Facets, PublishedSet, SetReport, ValidationResult
from models.serving import calibration
from models.serving.arrivals import load_at_limit
from models.serving.calibration import EngineConstants, ServingConstants
from models.serving.cost import Point, at_target
from models.serving.curve import CurveWork, curve_points, curve_work
from models.serving.measured_points import ARCH_OF_ITEM, LeftOut, MeasuredPoint, ServingPoints
from models.serving.presets import PRESETS
from models.serving.spec import Deployment, RequestShape, ServingLLM, WeightFormat

_NDR_NIC_BYTES_S: Final = 400e9 / 8  # infiniband.yaml ib-ndr port_rate 400 Gb/s


def _node(peak_bf16: float, hbm: float, hbm_bw: float, nvlink_bidir: float,
          arch: str, domain: int = 8) -> ClusterSpec:
    """An NVLink domain of `domain` GPUs (an 8-GPU node; a 72-GPU rack) with one NDR NIC per
    GPU and the model's default efficiencies."""
    return ClusterSpec(
        peak_flops=peak_bf16, hbm_bytes=hbm, hbm_bw=hbm_bw, domain_gpus=domain,
        scaleup_bw=nvlink_bidir / 2, scaleout_bw=_NDR_NIC_BYTES_S,
        scaleup_efficiency=c2c_calibration.SCALEUP_EFFICIENCY,
        scaleout_efficiency=c2c_calibration.SCALEOUT_EFFICIENCY,
        scaleup_latency=c2c_calibration.SCALEUP_LATENCY_S,
        scaleout_latency=c2c_calibration.SCALEOUT_LATENCY_S, arch=arch)


# The ledger's figures for the measured GPUs (data/sources/):
# - H100 SXM5: gpu_compute.yaml h100-sxm5 (nvidia-h100-page): peak_dense_bf16 989.5 TFLOP/s,
#   peak_dense_fp8 1,979 TFLOP/s, hbm_capacity 80 GB, hbm_bandwidth 3.35 TB/s; gpus.yaml family
#   Hopper; 8 GPUs a node (hgx-h100-8gpu); NVLink 4 (nvlink.yaml nvlink-4 900 GB/s).
# - H200 SXM: gpu_compute.yaml h200-sxm (nvidia-h200-page): peak_dense_bf16 989.5 TFLOP/s,
#   peak_dense_fp8 1,979 TFLOP/s, hbm_capacity 141 GB, hbm_bandwidth 4.8 TB/s; gpus.yaml
#   family Hopper; 8 GPUs a node (gpu_compute.yaml hgx-h100-8gpu gpus_per_system, the HGX
#   board H200 ships on); NVLink 4, nvlink.yaml nvlink-4 scaleup_bw_per_gpu_bidir 900 GB/s.
# - B200: gpu_compute.yaml b200 (nvidia-dgx-b200-page): peak_dense_bf16 2,250, peak_dense_fp8
#   4,500, peak_dense_fp4 9,000 TFLOP/s, hbm_capacity 180 GB, hbm_bandwidth 8 TB/s; gpus.yaml
#   family Blackwell; gpu_compute.yaml dgx-b200 gpus_per_system 8; NVLink 5, nvlink.yaml
#   nvlink-5 scaleup_bw_per_gpu_bidir 1.8 TB/s.
# - GB200: gpu_compute.yaml gb200 (nvidia-gb200-nvl72-page): peak_dense_bf16 2,500, peak_dense_fp8
#   5,000, peak_dense_fp4 10,000 TFLOP/s, hbm_capacity 186 GB, hbm_bandwidth 8 TB/s; gpus.yaml
#   family Blackwell; nvlink.yaml gb200-nvl72 gpus_per_system 72 on NVLink 5 (1.8 TB/s a GPU).
# - B300: gpu_compute.yaml b300 (glennklockwood-b300, HGX B300 per GPU): peak_dense_bf16 2,250,
#   peak_dense_fp8 4,500, peak_dense_fp4 13,125 TFLOP/s, hbm_capacity 288 GB, hbm_bandwidth
#   8 TB/s; gpus.yaml family Blackwell Ultra; 8 GPUs a node on NVLink 5 (1.8 TB/s a GPU).
# - GB300: gpu_compute.yaml gb300 (nvidia-gb300-nvl72-page): peak_dense_bf16 2,500,
#   peak_dense_fp8 5,000, peak_dense_fp4 15,000 TFLOP/s, hbm_capacity 279 GB, hbm_bandwidth
#   8 TB/s; gpus.yaml family Blackwell Ultra; 72 GPUs an NVLink 5 domain, as GB200's.
# The ledger's packs hold no HBM or peak figures for the AMD Instinct GPUs (gpus.yaml lists the
# items, gpu_compute.yaml only their TDP), so these are AMD's product-page figures, dense (no
# structured sparsity), on an 8-GPU OAM platform whose GPUs each reach the other seven over
# Infinity Fabric (seven links; the aggregate is the figure AMD gives):
# - MI300X (amd.com Instinct MI300X accelerator page): peak BF16 1,307.4 TFLOP/s, FP8
#   2,614.9 TFLOP/s, 192 GB HBM3 at 5.3 TB/s, Infinity Fabric 896 GB/s (7 x 128 GB/s).
# - MI325X (amd.com Instinct MI325X accelerator page): the same peaks, 256 GB HBM3E at
#   6 TB/s, Infinity Fabric 896 GB/s.
# - MI355X (amd.com Instinct MI355X accelerator page): peak BF16 2.5 PFLOP/s, FP8 5.0 PFLOP/s,
#   MXFP4 10.1 PFLOP/s, 288 GB HBM3E at 8 TB/s, Infinity Fabric 1,075 GB/s (7 x 153.6 GB/s).
HARDWARE: Final[dict[str, ClusterSpec]] = {
    "h100-sxm5": _node(989.5e12, 80e9, 3.35e12, 900e9, "hopper"),
    "h200-sxm": _node(989.5e12, 141e9, 4.8e12, 900e9, "hopper"),
    "b200": _node(2250e12, 180e9, 8e12, 1.8e12, "blackwell"),
    "amd-mi300x": _node(1307.4e12, 192e9, 5.3e12, 896e9, "cdna3"),
    "amd-mi325x": _node(1307.4e12, 256e9, 6.0e12, 896e9, "cdna3"),
    "amd-mi355x": _node(2.5e15, 288e9, 8e12, 1075.2e9, "cdna4"),
    "gb200": _node(2500e12, 186e9, 8e12, 1.8e12, "blackwell", domain=72),
    "b300": _node(2250e12, 288e9, 8e12, 1.8e12, "blackwell_ultra"),
    "gb300": _node(2500e12, 279e9, 8e12, 1.8e12, "blackwell_ultra", domain=72),
}
# Dense peak of the weights' precision (the GEMMs run in it): the metric the ledger resolves.
# FP4 weights on Hopper (no FP4 peak) run at its FP8 peak, as a serving scenario resolves them
# (pipelines/jobs/serving.py option_hardware).
PEAKS: Final[dict[tuple[str, str], float]] = {
    ("h100-sxm5", "fp8"): 1979e12,
    ("h100-sxm5", "fp4"): 1979e12,
    ("h200-sxm", "fp8"): 1979e12,
    ("h200-sxm", "fp4"): 1979e12,
    ("b200", "fp8"): 4500e12,
    ("b200", "fp4"): 9000e12,
    ("gb200", "fp8"): 5000e12,
    ("gb200", "fp4"): 10000e12,
    ("b300", "fp8"): 4500e12,
    ("b300", "fp4"): 13125e12,
    ("gb300", "fp8"): 5000e12,
    ("gb300", "fp4"): 15000e12,
    ("amd-mi300x", "fp8"): 2614.9e12,
    ("amd-mi325x", "fp8"): 2614.9e12,
    ("amd-mi355x", "fp8"): 5.0e15,
    ("amd-mi355x", "fp4"): 10.1e15,
}
# Every architecture a GPU family maps to, and the AMD ones with measured serving points: the
# families serving_fidelity reports on.
FAMILIES: Final = tuple(dict.fromkeys((*c2c_calibration.ARCH_OF_FAMILY.values(),
                                       *ARCH_OF_ITEM.values())))
QUANTITY: Final = "output tokens/s per GPU at the measured tokens/s per user"


def deployment(point: MeasuredPoint) -> Deployment:
    """The model's instance for a point's layout. With DP attention, each of the tp GPUs is its
    own attention replica; without it, attention is split tp ways. The experts are spread over
    ep GPUs when ep > 1, else (ep 1) split across the instance's GPUs by tensor parallelism
    (Deployment.ep None). The engines' batch limit is the model's default; the engine the
    point's."""
    weights = WeightFormat(point.precision)
    ep = point.ep if point.ep > 1 else None
    if point.dp_attention:
        return Deployment(tp=1, dp=point.tp, ep=ep, weights=weights, engine=point.engine)
    return Deployment(tp=point.tp, dp=1, ep=ep, weights=weights, engine=point.engine)


@dataclass(frozen=True)
class Configuration:
    """One measured configuration (one curve) as the model evaluates it."""

    llm: ServingLLM
    deployment: Deployment
    hw: ClusterSpec
    request: RequestShape
    points: tuple[MeasuredPoint, ...]   # by concurrency

    @property
    def arch(self) -> str:
        return self.points[0].arch

    @property
    def name(self) -> str:
        p = self.points[0]
        layout = f"tp{p.tp} ep{p.ep}{' dpa' if p.dp_attention else ''}"
        return (f"{p.model} {p.precision} {p.hardware} {p.engine} "
                f"{p.input_tokens}/{p.output_tokens} {layout}")

    @cached_property
    def work(self) -> CurveWork:
        """The curve's work, which the constants only scale: computed once (the fit tries
        many constants on it)."""
        return curve_work(self.llm, self.deployment, self.hw, self.request)

    @property
    def engine(self) -> str:
        return self.deployment.engine

    def curve(self, k: ServingConstants, e: EngineConstants | None = None) -> list[Point]:
        """The model's curve with the family's constants `k` and the engine's `e` (else the
        stored terms of the point's engine)."""
        return [Point(c.concurrency, c.tok_s_per_gpu, c.tok_s_per_user, c.ttft_s)
                for c in curve_points(self.work, k, self.hw.gemm_peak, e)]


def _config_key(p: MeasuredPoint) -> tuple[object, ...]:
    return (p.hardware, p.model, p.precision, p.engine, p.input_tokens, p.output_tokens, p.tp,
            p.ep, p.dp_attention)


def _load_order(p: MeasuredPoint) -> tuple[int, float]:
    """A configuration's points from the lightest load to the heaviest: by concurrency, then
    (arrivals, all at once) by falling tokens/s per user, Offline last."""
    if p.concurrency is not None:
        return (0, p.concurrency)
    return (2, 0.0) if p.tok_s_per_user is None else (1, -p.tok_s_per_user)


def configurations(points: Iterable[MeasuredPoint]) -> list[Configuration]:
    """The points grouped by configuration, in a stable order."""
    groups: dict[tuple[object, ...], list[MeasuredPoint]] = defaultdict(list)
    for p in points:
        groups[_config_key(p)].append(p)
    out = []
    for key in sorted(groups, key=repr):
        members = tuple(sorted(groups[key], key=_load_order))
        first = members[0]
        hw = replace(HARDWARE[first.hardware],
                     gemm_peak_flops=PEAKS[(first.hardware, first.precision)])
        out.append(Configuration(PRESETS[first.model], deployment(first), hw,
                                 RequestShape(first.input_tokens, first.output_tokens),
                                 members))
    return out


@dataclass(frozen=True)
class PointError:
    """A measured point against the model. `ratio` is measured / predicted throughput per GPU
    at the point's tokens/s per user (for an unreached point, with its interactivity shortfall:
    see the module's doc); `predicted` = measured / ratio."""

    point: MeasuredPoint
    configuration: str
    ratio: float
    reached: bool

    @property
    def predicted(self) -> float:
        return self.point.tok_s_per_gpu / self.ratio

    @property
    def log_error(self) -> float:
        return math.log(self.ratio)

    @property
    def error(self) -> float:
        """Signed, percent of measured: (predicted - measured) / measured."""
        return 100 * (1 / self.ratio - 1)


def configuration_errors(config: Configuration, k: ServingConstants,
                         e: EngineConstants | None = None) -> list[PointError]:
    """Each point of `config` against the model with the family's constants `k` and the
    engine's `e` (else its stored terms); [] for a memory miss."""
    curve = config.curve(k, e)
    if not curve:
        return []
    fastest = max(curve, key=lambda c: c.tok_s_per_user)
    out = []
    for p in config.points:
        found = _model_point(curve, p)
        if found is not None:
            out.append(PointError(p, config.name, p.tok_s_per_gpu / found.tok_s_per_gpu, True))
            continue
        assert p.tok_s_per_user is not None  # at_target answers an Offline point always
        shortfall = math.log(p.tok_s_per_user / fastest.tok_s_per_user)
        miss = abs(math.log(p.tok_s_per_gpu / fastest.tok_s_per_gpu))
        out.append(PointError(p, config.name, math.exp(miss + shortfall), False))
    return out


def _model_point(curve: Sequence[Point], p: MeasuredPoint) -> Point | None:
    """The point of the model's curve a measured point is compared with, read as it was
    measured: an Offline run (throughput alone) at the curve's most throughput; Poisson
    arrivals under a p99 limit on the time per output token (MLPerf Server) at the load they
    reach under it (models.serving.arrivals); a fixed concurrency at its measured tokens/s per
    user. None when the model cannot reach the point's interactivity or limit."""
    if p.tok_s_per_user is None:   # at_target's answer for a target no point is slower than
        return at_target(curve, 0.0)
    if p.scenario == "server" and p.tpot_p99_limit_s is not None:
        return load_at_limit(curve, p.tpot_p99_limit_s)
    return at_target(curve, p.tok_s_per_user)


def constants_for(arch: str, fitted: Mapping[str, ServingConstants] | None = None
                  ) -> ServingConstants:
    """`fitted`'s constants for `arch` when given, else the stored ones (or the prior)."""
    if fitted is not None and arch in fitted:
        return fitted[arch]
    return calibration.constants(arch)[0]


def point_errors(configs: Sequence[Configuration],
                 fitted: Mapping[str, ServingConstants] | None = None) -> list[PointError]:
    """Every measured point of `configs` against the model (memory misses left out)."""
    return [e for c in configs for e in configuration_errors(c, constants_for(c.arch, fitted))]


@cache
def _point_errors(points: tuple[MeasuredPoint, ...]) -> tuple[PointError, ...]:
    """point_errors of every configuration of `points`, with the stored constants: what the
    summaries below share, computed once a process for a set of points."""
    return tuple(point_errors(configurations(points)))


def memory_misses(configs: Sequence[Configuration]) -> list[Configuration]:
    """Configurations that ran but whose weights the model says do not fit in HBM at their
    tensor parallelism (the engines ran them with a larger memory fraction than the model's)."""
    return [c for c in configs if not c.curve(constants_for(c.arch))]


@dataclass(frozen=True)
class FamilyFidelity:
    """The serving model's error on one GPU family: in sample with the stored constants, the
    band (measured / predicted with each set left out of the fit, in calibration.BAND_SHAPE:
    calibration.BAND)
    and what it rests on. A family without measured points has points 0, no errors, the prior
    and the uncalibrated band."""

    family: str
    models: tuple[str, ...]
    points: int
    unreached: int                  # points faster per user than the model's fastest point
    mean_abs_error: float | None    # percent
    max_abs_error: float | None
    band_low: float
    band_high: float
    basis: str
    sources: tuple[str, ...]
    constants: str                  # where the family's constants come from
    # On points the fit did not see (calibration.LEFT_OUT: each set left out in turn): the
    # mean |error| and how many of them the band built without their set holds; None for a
    # family without a fit of its own.
    left_out_mean_abs_error: float | None = None
    left_out_held: int | None = None
    left_out_points: int | None = None


@cache
def serving_fidelity(points: tuple[MeasuredPoint, ...]) -> tuple[FamilyFidelity, ...]:
    """One row per GPU family (FAMILIES): what a briefing and `specledger validate` print. It
    depends on the code and the points alone, so it is computed once a process for them."""
    by_family: dict[str, list[PointError]] = defaultdict(list)
    for e in _point_errors(points):
        by_family[e.point.arch].append(e)
    rows = []
    for family in FAMILIES:
        errors = by_family.get(family, [])
        low, high, basis = calibration.band(family)
        left_out = calibration.left_out_of(family)
        absolute = [abs(e.error) for e in errors]
        rows.append(FamilyFidelity(
            family=family, models=tuple(sorted({e.point.model for e in errors})),
            points=len(errors), unreached=sum(not e.reached for e in errors),
            mean_abs_error=sum(absolute) / len(absolute) if absolute else None,
            max_abs_error=max(absolute) if absolute else None,
            band_low=low, band_high=high, basis=basis,
            sources=tuple(sorted({e.point.source for e in errors})),
            constants=calibration.constants(family)[1],
            left_out_mean_abs_error=left_out.mean_abs_error if left_out else None,
            left_out_held=left_out.held if left_out else None,
            left_out_points=left_out.points if left_out else None))
    return tuple(rows)


def left_out_summary(family: str) -> str:
    """What a fitted family's band holds on points the fit did not see (calibration.LEFT_OUT),
    as a clause of its set's title; "" for a family without a fit of its own."""
    found = calibration.UNFITTED.get(family)
    if found is not None:
        return (f"; not fitted (one model on one engine): its points check the constants "
                f"fitted on the other families: mean |error| {found.mean_abs_error:.1f} %, max "
                f"{found.max_abs_error:.1f} %; the band holds {found.held} of its "
                f"{found.points} points")
    found = calibration.LEFT_OUT.get(family)
    if found is None:
        return ""
    sets = ", ".join(f"{name} {held} of {points}" for name, points, held in found.sets)
    whole = ("" if found.family_mean_abs_error is None else
             f"; the family left out of the fit whole: {found.family_mean_abs_error:.1f} % mean")
    return (f"; left out, mean |error| {found.mean_abs_error:.1f} %, max "
            f"{found.max_abs_error:.1f} %; the band built without a set holds "
            f"{found.held} of its {found.points} points ({100 * found.coverage:.0f} %: "
            f"{sets}){whole}")


@cache
def fidelity_report(table: ServingPoints) -> tuple[SetReport, ...]:
    """The measured points as the C2C model's validation sets are kept (one set per family
    with points: models.c2c.validation.SetReport), for the warehouse and the briefing."""
    by_family: dict[str, list[PointError]] = defaultdict(list)
    for e in _point_errors(table.points):
        by_family[e.point.arch].append(e)
    reports = []
    for family, errors in by_family.items():
        gpus = " / ".join(sorted({e.point.hardware for e in errors}))
        models = ", ".join(sorted({e.point.model for e in errors}))
        # In the table's order, so that of two sources of one date the first listed is cited
        # (a set's iteration order would change with the process's hash seed).
        used = {e.point.source for e in errors}
        latest = max((s for s in table.sources if s.key in used), key=lambda s: s.published_on)
        low, high, basis = calibration.band(family)
        published = PublishedSet(
            f"Published serving points, {models} on {gpus} ({family}): aggregated, no "
            f"speculative decoding; {len(errors)} points; the family's band "
            f"{low:.2f}-{high:.2f} (measured / predicted) rests on {basis}"
            f"{left_out_summary(family)}",
            latest.url, latest.published_on, QUANTITY, "%", f"inferencex-serving-{family}",
            checks="serving")
        reports.append(SetReport(published, tuple(
            ValidationResult(published, f"{e.configuration} {load_name(e.point)}",
                             e.point.tok_s_per_gpu, e.predicted, e.error, _facets(e.point))
            for e in errors)))
    return tuple(sorted(reports, key=lambda r: r.published.key))


def _facets(p: MeasuredPoint) -> Facets:
    """A serving point's model, GPU, engine and layout, as model_error's columns."""
    return Facets(p.model, p.hardware, p.engine, layout_name(p.tp, p.ep, p.dp_attention))


def layout_name(tp: int, ep: int, dp_attention: bool) -> str:
    """A serving layout as model_error names it: tensor x expert parallel, with DP attention
    where used ("tp1 ep72 dp-attention")."""
    return f"tp{tp} ep{ep}" + (" dp-attention" if dp_attention else "")


def load_name(p: MeasuredPoint) -> str:
    """How a point's load was offered, as a result's subject says it: "conc 8", "offline",
    "server 12.5 tok/s/user"."""
    if p.concurrency is not None:
        return f"conc {p.concurrency}"
    if p.tok_s_per_user is None:
        return p.scenario
    return f"{p.scenario} {p.tok_s_per_user:g} tok/s/user"


@cache
def dp_attention_band(points: tuple[MeasuredPoint, ...], min_points: int = 5
                      ) -> tuple[float, float, str] | None:
    """The band of data-parallel-attention deployments, pooled over every family (their
    points are few): measured / predicted throughput, P10-P90, in sample. The model is least
    sure of this layout (it has no load imbalance across the replicas), so a serving option
    that uses it carries this band as well as its family's. None with fewer than `min_points`
    points."""
    ratios = [e.point.tok_s_per_gpu / e.predicted for e in _point_errors(points)
              if e.point.dp_attention and e.predicted]
    if len(ratios) < min_points:
        return None
    low, high = (float(np.percentile(ratios, q)) for q in (10, 90))
    return (round(low, 3), round(high, 3),
            f"{len(ratios)} InferenceX data-parallel-attention points over every family, in "
            "sample (the model's least certain layout)")


# Two points are compared at one interactivity when their tokens/s per user are within this
# factor of each other (the measured curves step concurrency by 2x, so most points find one).
PAIR_WITHIN: Final = 1.25


def _pair_group(p: MeasuredPoint) -> tuple[object, ...]:
    """What two configurations must share to be compared as a serving scenario compares two
    options: the model and its precision, the engine and the request shape."""
    return (p.model, p.precision, p.engine, p.input_tokens, p.output_tokens)


def interactivity_gap(a: MeasuredPoint, b: MeasuredPoint) -> float:
    """|log| of the two points' tokens/s per user: 0 between two Offline runs (both at the
    most throughput), infinite between an Offline run and any other."""
    if a.tok_s_per_user is None or b.tok_s_per_user is None:
        return 0.0 if a.tok_s_per_user is b.tok_s_per_user else math.inf
    return abs(math.log(a.tok_s_per_user / b.tok_s_per_user))


def paired_ratios(errors: Iterable[PointError], within: float = PAIR_WITHIN
                  ) -> dict[tuple[object, ...], list[float]]:
    """The model's error on one configuration relative to another's, keyed by the first's
    family, the second's and their group (_pair_group): for every ordered pair of a group's
    configurations and each point of the first, the point of the second nearest in tokens/s
    per user (within `within` x), the ratio of their measured / predicted ratios.

    A scenario's two options are compared at one interactivity with one engine, and their
    errors are not unrelated: two configurations of one family share its constants (and
    most of its error with them), two of different families have each family's leaning (the
    model under-predicts one more than the other). The spread of this ratio is what bands the
    margin between them. Both orders of each pair are kept."""
    groups: dict[tuple[object, ...], dict[str, list[PointError]]] = defaultdict(
        lambda: defaultdict(list))
    for e in errors:
        groups[_pair_group(e.point)][e.configuration].append(e)
    out: dict[tuple[object, ...], list[float]] = defaultdict(list)
    reach = math.log(within)
    for group, by_config in sorted(groups.items(), key=lambda kv: repr(kv[0])):
        names = sorted(by_config)
        for first in names:
            for second in names:
                if first == second:
                    continue
                for a in by_config[first]:
                    def gap(b: PointError, a: PointError = a) -> float:
                        return interactivity_gap(a.point, b.point)
                    b = min(by_config[second], key=gap)
                    if gap(b) <= reach:
                        out[(a.point.arch, b.point.arch, *group)].append(a.ratio / b.ratio)
    return dict(out)


def unexpressed(table: ServingPoints) -> tuple[LeftOut, ...]:
    """What of `table`'s published sets the model cannot express, largest first: the rows the
    table leaves out, and the points of configurations whose weights do not fit in HBM."""
    found = list(table.left_out)
    misses = memory_misses(configurations(table.points))
    if misses:
        found.append(LeftOut(
            "the weights do not fit the model's HBM budget at the measured tensor parallelism",
            sum(len(c.points) for c in misses), tuple(c.name for c in misses)))
    return tuple(sorted(found, key=lambda u: (-u.rows, u.why)))
