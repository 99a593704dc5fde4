"""Fit the serving model's constants per GPU architecture on the measured serving points, and
measure its error.

For each architecture with at least MIN_POINTS points of two models or engines or more
(data/measurements/serving_points.yaml; one model on one engine, calibration.UNFITTED, is not
fitted), the
ServingConstants, and for each engine its EngineConstants (SGLang, the reference, only its
expert-parallel cost), are chosen together by coordinate descent within BOUNDS and
ENGINE_BOUNDS (a coarse grid, then a fine one around its best; from the prior and neutral
engine terms every time, so the fit is reproducible) to minimise the mean
|log(measured / predicted)| of the throughput per GPU at each point's tokens/s per user over
every family's points (models/serving/validation.py: the quantity a serving scenario reads off
the curve at its target interactivity; a point faster per user than the model reaches also
counts its interactivity shortfall). A family's constants move its points alone; an engine's
terms move its points on every family, so an engine's terms rest on all the GPUs it was
measured on. Then each set of points sharing a model, a GPU and an engine is left out in turn,
everything refitted on the other sets (every family's) and the left-out set's errors kept:
those residuals are the model's error on configurations it was not fitted to, and give the band
that calibration.BAND stores, in the shape (calibration.BAND_SHAPE: percentiles of measured /
predicted, widened about their median) that choose_shape finds: the narrowest whose band, built
again without each set, holds 80 % of the family's left-out points pooled. Last, each
architecture is left out whole: its points against the constants fitted on the other
architectures' points, the error a GPU family without measured points of its own would have;
pooled, they give calibration.UNCALIBRATED_BAND, its shape chosen the same way with the
families for the sets.

`python -m bench.serving_fit` prints the fitted constants, the error per architecture and per
model and precision, in sample and left out, and the bands; paste the values into
models/serving/calibration.py (CONSTANTS, SOURCE, BAND and the rest) when they change.
tests/models/serving/test_serving_fit.py refits and compares with the stored values.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from models.serving.calibration import (
    ENGINES,
    PRIOR,
    REFERENCE_ENGINE,
    EngineConstants,
    ServingConstants,
)
from models.serving.measured_points import MeasuredPoint
from models.serving.validation import (
    Configuration,
    PointError,
    configuration_errors,
    configurations,
    paired_ratios,
)
from pipelines.inputs.measurements import shipped_serving_points

# (low, high, coarse step, fine step) of each constant: decode streams at 30-95 % of HBM
# bandwidth; prefill at 5-90 % of the precision's dense peak; decode's FLOPs at 25-90 % of it
# (what the engines' decode GEMMs reach at large batches: below that the fit would make FLOPs
# stand for per-sequence costs, and a dense model's decode would turn compute-bound at absurd
# batches); 0-200 us of fixed cost per layer and decode step, of which 0-100 % grows with the
# kernels a layer launches; 0-2 us per sequence and layer. The fine step is a quarter of the
# coarse one, which keeps the whole refit (every set and family left out) to minutes.
BOUNDS: dict[str, tuple[float, float, float, float]] = {
    "decode_hbm_efficiency": (0.30, 0.95, 0.05, 0.0125),
    "prefill_efficiency": (0.05, 0.90, 0.05, 0.0125),
    "decode_compute_efficiency": (0.25, 0.90, 0.05, 0.0125),
    "layer_overhead_s": (0.0, 200e-6, 10e-6, 2.5e-6),
    "token_overhead_s": (0.0, 2e-6, 0.1e-6, 0.025e-6),
    "kernel_share": (0.0, 1.0, 0.1, 0.025),
    "expert_gemm_scale": (0.1, 1.0, 0.1, 0.025),
}
# (low, high, coarse step, fine step) of each engine term: its fixed cost per layer at a quarter
# to four times the reference engine's, and 0-300 us per expert-parallel MoE layer.
ENGINE_BOUNDS: dict[str, tuple[float, float, float, float]] = {
    "overhead_scale": (0.25, 4.0, 0.25, 0.0625),
    "ep_layer_s": (0.0, 300e-6, 20e-6, 5e-6),
}
# The reference engine's terms are the identity but for its expert-parallel cost (the family
# constants have none of their own).
REFERENCE_FREE = ("ep_layer_s",)
NEUTRAL = EngineConstants()
# Rounds of coordinate descent at most; it stops as soon as a round moves no constant.
ROUNDS = 8
# An architecture is fitted on at least this many points; else it keeps the prior.
MIN_POINTS = 10
# A paired band (calibration.PAIRED_BAND) rests on at least this many comparisons; a family
# with fewer keeps the widest combination of its options' bands for a margin.
MIN_COMPARISONS = 30
GPU_NAMES = {"h100-sxm5": "H100", "h200-sxm": "H200", "b200": "B200", "gb200": "GB200",
             "amd-mi300x": "MI300X", "amd-mi325x": "MI325X", "amd-mi355x": "MI355X"}
MODEL_NAMES = {"deepseek-r1": "DeepSeek-R1", "gpt-oss-120b": "gpt-oss-120b",
               "llama-3.3-70b": "Llama 3.3 70B", "llama-3.1-70b": "Llama 3.1 70B",
               "llama-2-70b": "Llama-2-70B"}


def errors(configs: Sequence[Configuration], k: ServingConstants,
           engines: Mapping[str, EngineConstants] = ENGINES) -> list[PointError]:
    """The points of `configs` against the family constants `k` and the engines' terms."""
    return [e for c in configs for e in configuration_errors(c, k, engines[c.engine])]


def objective(configs: Sequence[Configuration], k: ServingConstants,
              engines: Mapping[str, EngineConstants] = ENGINES) -> float:
    logs = [abs(e.log_error) for e in errors(configs, k, engines)]
    return float(np.mean(logs)) if logs else 0.0


@dataclass(frozen=True)
class Fitted:
    """A joint fit: constants per group of configurations (a family, or one pooled group) and
    the engines' terms."""

    families: dict[str, ServingConstants]
    engines: dict[str, EngineConstants]

    def errors(self, configs: Sequence[Configuration],
               group: Callable[[Configuration], str] | None = None) -> list[PointError]:
        key = group or arch_of
        return [e for c in configs for e in configuration_errors(
            c, self.families[key(c)], self.engines[c.engine])]


def arch_of(config: Configuration) -> str:
    return config.arch


def pooled(config: Configuration) -> str:
    """Every configuration in one group: the constants of a family without its own fit."""
    return "pooled"


def _grid(low: float, high: float, step: float) -> list[float]:
    return [round(float(v), 9) for v in np.arange(low, high + step / 2, step)]


def _search(cost: Callable[[float], float], low: float, high: float, coarse: float,
            fine: float) -> float:
    best = min(_grid(low, high, coarse), key=cost)
    return min(_grid(max(low, best - coarse), min(high, best + coarse), fine), key=cost)


def total(configs: Sequence[Configuration], families: Mapping[str, ServingConstants],
          engines: Mapping[str, EngineConstants],
          group: Callable[[Configuration], str] = arch_of) -> float:
    """The sum of |log error| over `configs`: the joint objective's share they carry."""
    return sum(abs(e.log_error) for c in configs for e in configuration_errors(
        c, families[group(c)], engines[c.engine]))


def fit(configs: Sequence[Configuration], rounds: int = ROUNDS,
        group: Callable[[Configuration], str] = arch_of) -> Fitted:
    """Coordinate descent from the prior and neutral engine terms: each group's constants in
    turn (on its points), then each engine's terms (on its points across the groups), until a
    round changes nothing (a minimum on the fine grid along every constant) or `rounds`."""
    by_group: dict[str, list[Configuration]] = defaultdict(list)
    by_engine: dict[str, list[Configuration]] = defaultdict(list)
    for c in configs:
        by_group[group(c)].append(c)
        by_engine[c.engine].append(c)
    families = dict.fromkeys(sorted(by_group), PRIOR)
    engines = dict.fromkeys(ENGINES, NEUTRAL)
    for _ in range(rounds):
        start = (dict(families), dict(engines))
        _descend(families, by_group, BOUNDS,
                 lambda mine, trial: total(mine, trial, engines, group))
        _descend(engines, by_engine, ENGINE_BOUNDS,
                 lambda mine, trial: total(mine, families, trial, group),
                 fixed=lambda name, field_name: (name == REFERENCE_ENGINE
                                                 and field_name not in REFERENCE_FREE))
        if (families, engines) == start:
            break
    return Fitted(families, engines)


def _descend(params: dict[str, Any], groups: dict[str, list[Configuration]],
             bounds: dict[str, tuple[float, float, float, float]],
             cost_of: Callable[[list[Configuration], dict[str, Any]], float],
             fixed: Callable[[str, str], bool] = lambda name, field_name: False) -> None:
    """One round of coordinate descent over `params` (name -> constants), in place: each
    name's each field searched within its bounds on that name's configurations, the others
    held; `cost_of(configurations, trial params)` is the objective; `fixed` fields are left."""
    for name, mine in sorted(groups.items()):
        for field_name, (low, high, coarse, fine) in bounds.items():
            if fixed(name, field_name):
                continue

            def cost(value: float, name: str = name, field_name: str = field_name,
                     mine: list[Configuration] = mine) -> float:
                trial = {**params, name: replace(params[name], **{field_name: value})}
                return cost_of(mine, trial)
            params[name] = replace(params[name], **{
                field_name: _search(cost, low, high, coarse, fine)})


def point_fold(p: MeasuredPoint) -> str:
    """The set a point is left out with: its model, GPU and engine."""
    return f"{p.model} {GPU_NAMES.get(p.hardware, p.hardware)} {p.engine}"


def fold(config: Configuration) -> str:
    return point_fold(config.points[0])


# The shapes a band is tried in: a central interval of the left-out ratios ((lower, upper)
# percentiles, each taken outward to a measured ratio), widened about their median by a factor
# in log space. The shape kept (choose_shape) is the narrowest whose band, built again without
# a set (a group, a family), holds COVERAGE_TARGET of the left-out points of the sets it was
# built without, pooled over them: the coverage a configuration the fit has not seen can count
# on. Pooled, not every set: a set can sit wholly outside the others' band (gpt-oss-120b on
# MI355X with ATOM, predicted from DeepSeek-R1's points alone), and no band that is not absurd
# holds it. A band wider than ABSURD is said to be so where it is printed.
Shape = tuple[tuple[float, float], float]    # (lower, upper) percentiles, widening
QUANTILES = ((10.0, 90.0), (5.0, 95.0), (2.5, 97.5), (0.0, 100.0))
WIDENINGS = (1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 4.0, 5.0)
COVERAGE_TARGET = 0.8
ABSURD = (0.2, 10.0)
P10_P90: Shape = ((10.0, 90.0), 1.0)    # the plain P10-P90: at least 80 % of its own ratios


def band(ratios: Sequence[float], shape: Shape = P10_P90) -> tuple[float, float]:
    """The band of measured/predicted `ratios` in `shape`: its percentiles, each taken outward
    to a measured ratio, widened about the median (in log space) by its factor. P10-P90 (the
    default) holds at least 80 % of the ratios it is built from."""
    (low_q, high_q), widening = shape
    low = float(np.percentile(ratios, low_q, method="lower"))
    high = float(np.percentile(ratios, high_q, method="higher"))
    if widening == 1.0:
        return low, high
    middle = float(np.median(np.log(ratios)))
    return (float(np.exp(middle - widening * (middle - np.log(low)))),
            float(np.exp(middle + widening * (np.log(high) - middle))))


def outward(low: float, high: float) -> tuple[float, float]:
    """A band rounded outward to three decimals, as calibration.py stores it."""
    return (float(np.floor(round(low * 1000, 6)) / 1000),
            float(np.ceil(round(high * 1000, 6)) / 1000))


def shape_name(shape: Shape) -> str:
    """"P10-P90", "P5-P95 widened x1.5 about the median"."""
    (low_q, high_q), widening = shape
    name = f"P{low_q:g}-P{high_q:g}"
    return name if widening == 1.0 else f"{name} widened x{widening:g} about the median"


def absurd(low: float, high: float) -> bool:
    return low < ABSURD[0] or high > ABSURD[1]


def held_without(groups: Mapping[str, Sequence[float]], shape: Shape = P10_P90
                 ) -> list[tuple[str, int, int]]:
    """For each group of ratios (a set's left-out points, a group's comparisons, a family's
    points left out whole): (group, its ratios, how many of them the band in `shape` built from
    the OTHER groups' ratios alone holds), by name. A group with no other beside it holds 0."""
    out = []
    for name, mine in sorted(groups.items()):
        others = [r for other, rs in groups.items() if other != name for r in rs]
        if not others:
            out.append((name, len(mine), 0))
            continue
        low, high = band(others, shape)
        out.append((name, len(mine), sum(low <= r <= high for r in mine)))
    return out


@dataclass(frozen=True)
class Choice:
    """A band's shape and what it gives: `band` built from every group's ratios, `rows` each
    group against the band of the others (held_without), `met` whether those hold at least
    COVERAGE_TARGET of the ratios pooled (else the shape is the widest tried)."""

    shape: Shape
    band: tuple[float, float]
    rows: tuple[tuple[str, int, int], ...]
    met: bool

    @property
    def points(self) -> int:
        return sum(n for _, n, _ in self.rows)

    @property
    def held(self) -> int:
        return sum(h for _, _, h in self.rows)


def shapes() -> list[Shape]:
    return [(q, w) for q in QUANTILES for w in WIDENINGS]


def choose_shape(groups: Mapping[str, Sequence[float]]) -> Choice:
    """The narrowest shape (log-width of the band of every group's ratios; the first on the
    grid of equals) whose band, built without each group, holds at least COVERAGE_TARGET of the
    groups' ratios pooled; none does: the widest tried, `met` False."""
    every = [r for rs in groups.values() for r in rs]
    tried = []
    for shape in shapes():
        rows = held_without(groups, shape)
        held, n = sum(h for _, _, h in rows), sum(n for _, n, _ in rows)
        low, high = band(every, shape)
        tried.append(Choice(shape, (low, high), tuple(rows), held >= COVERAGE_TARGET * n))
    meeting = [c for c in tried if c.met]
    if not meeting:
        return max(tried, key=lambda c: np.log(c.band[1] / c.band[0]))
    return min(meeting, key=lambda c: np.log(c.band[1] / c.band[0]))


def common_shape(families: Mapping[str, Mapping[str, Sequence[float]]]
                 ) -> dict[str, Choice] | None:
    """The alternative to a shape per family: one shape for every family of `families` (family
    -> its groups), the narrowest (mean log-width of the families' bands) whose band built
    without each group holds COVERAGE_TARGET of every family's ratios pooled, and what it gives
    each family; None when no shape tried does."""
    best: tuple[float, dict[str, Choice]] | None = None
    for shape in shapes():
        found = {}
        for family, groups in families.items():
            rows = held_without(groups, shape)
            every = [r for rs in groups.values() for r in rs]
            found[family] = Choice(shape, band(every, shape), tuple(rows),
                                   sum(h for _, _, h in rows) >= COVERAGE_TARGET * len(every))
        if not all(c.met for c in found.values()):
            continue
        width = float(np.mean([np.log(c.band[1] / c.band[0]) for c in found.values()]))
        if best is None or width < best[0]:
            best = (width, found)
    return best[1] if best else None


@dataclass
class FitReport:
    constants: dict[str, ServingConstants]
    in_sample: dict[str, list[PointError]]        # arch -> errors, fitted on all its points
    left_out: dict[str, list[PointError]]         # arch -> errors, each set fitted without it
    bands: dict[str, tuple[float, float, int]]    # arch -> low, high (its shape's), points
    folds: dict[str, list[str]]                   # arch -> the left-out sets
    gpus: dict[str, list[str]]                    # arch -> the measured GPUs
    skipped: list[str]                            # configurations the model cannot place
    models: dict[str, list[str]] = field(default_factory=dict)   # arch -> the measured models
    # arch -> its errors with the constants fitted on the other architectures alone
    family_out: dict[str, list[PointError]] = field(default_factory=dict)
    uncalibrated: tuple[float, float, int] | None = None   # band of family_out, pooled
    # its shape, and each family's points held by the band of the OTHER families' alone
    uncalibrated_choice: Choice | None = None
    pooled: ServingConstants | None = None        # fitted on every architecture's points
    # arch -> per left-out set: (set, its points, how many the band of the OTHER sets' left-out
    # points holds): the band's coverage on points that built neither the fit nor the band
    coverage: dict[str, list[tuple[str, int, int]]] = field(default_factory=dict)
    shapes: dict[str, Choice] = field(default_factory=dict)     # arch -> its band's shape
    engines: dict[str, EngineConstants] = field(default_factory=dict)   # fitted with every family
    pooled_engines: dict[str, EngineConstants] = field(default_factory=dict)   # with `pooled`
    # (arch of the one, arch of the other) -> the band of one configuration's left-out error
    # relative to another's of the same model, precision, engine and shape
    # (validation.paired_ratios), and the comparisons (each point of one configuration against
    # the nearest of the other)
    paired: dict[tuple[str, str], tuple[float, float, int]] = field(default_factory=dict)
    # (arch, arch) -> per group of paired_ratios: (group, its comparisons, how many the band of
    # the OTHER groups' comparisons holds)
    paired_coverage: dict[tuple[str, str], list[tuple[str, int, int]]] = field(
        default_factory=dict)
    paired_shapes: dict[tuple[str, str], Choice] = field(default_factory=dict)
    # (arch, engine) -> the band of that engine's left-out points on that family, where they
    # span two sets or more, in the shape chosen as the family's is (over the engine's sets)
    engine_shapes: dict[tuple[str, str], Choice] = field(default_factory=dict)


def fit_all(jobs: int = 1, whole_families: bool = True) -> FitReport:
    """The joint fit (every family's constants, every engine's terms), its errors in and out
    of sample, and the bands. The fits are independent of one another: `jobs` > 1 runs them in
    that many processes. Without `whole_families`, each family is not also left out whole
    (nor the pooled fit run): fewer fits, and no uncalibrated band or pooled constants."""
    by_arch: dict[str, list[Configuration]] = defaultdict(list)
    skipped = []
    for config in configurations(shipped_serving_points().points):
        if config.curve(PRIOR, NEUTRAL):
            by_arch[config.arch].append(config)
        else:  # the weights do not fit the model's HBM budget (the same with any constants)
            skipped.append(config.name)
    # A family whose points are all of one model on one engine is not fitted: no other model
    # or engine of its own could check its fit (calibration.UNFITTED), and its points stay out
    # of the pooled fit too.
    fitted = sorted(a for a, configs in by_arch.items()
                    if sum(len(c.points) for c in configs) >= MIN_POINTS
                    and len({(c.points[0].model, c.engine) for c in configs}) >= 2)
    every = [c for a in fitted for c in by_arch[a]]
    sets = sorted({fold(c) for c in every})
    # Every fit to run, by what it is for: ("all", "") every family's, ("set", name) all but
    # that set, ("without", arch) every other family's pooled, ("pooled", "") all pooled.
    tasks: dict[tuple[str, str], tuple[list[Configuration], Callable[[Configuration], str]]]
    tasks = {("all", ""): (every, arch_of)}
    for name in sets:
        tasks[("set", name)] = ([c for c in every if fold(c) != name], arch_of)
    if len(fitted) > 1 and whole_families:
        for arch in fitted:
            tasks[("without", arch)] = ([c for c in every if c.arch != arch], pooled)
        tasks[("pooled", "")] = (every, pooled)
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            runs = [pool.submit(fit, configs, ROUNDS, group) for configs, group in tasks.values()]
            done = {key: run.result() for key, run in zip(tasks, runs, strict=True)}
    else:
        done = {key: fit(configs, ROUNDS, group) for key, (configs, group) in tasks.items()}
    whole = done[("all", "")]
    report = FitReport({}, {}, {}, {}, {}, {}, skipped, engines=whole.engines)
    for arch in fitted:
        configs = by_arch[arch]
        report.constants[arch] = whole.families[arch]
        report.in_sample[arch] = whole.errors(configs)
        mine = sorted({fold(c) for c in configs})
        report.folds[arch] = mine
        report.gpus[arch] = sorted({c.points[0].hardware for c in configs})
        report.models[arch] = sorted({c.points[0].model for c in configs})
        left_out = []
        for name in mine:
            left_out += done[("set", name)].errors([c for c in configs if fold(c) == name])
        report.left_out[arch] = left_out
    if len(fitted) > 1 and whole_families:
        for arch in fitted:
            report.family_out[arch] = done[("without", arch)].errors(by_arch[arch], pooled)
        report.pooled = done[("pooled", "")].families["pooled"]
        report.pooled_engines = done[("pooled", "")].engines
    add_bands(report)
    return report


def add_bands(report: FitReport) -> None:
    """The bands of `report`'s left-out errors, each in the narrowest shape whose band built
    without a group holds COVERAGE_TARGET of the groups' points pooled (choose_shape): per
    family over its sets (BAND, LEFT_OUT), per pair of families over its groups of comparisons
    with at least MIN_COMPARISONS (PAIRED_BAND), and over the families left out whole
    (UNCALIBRATED_BAND). Each family, pair and the uncalibrated band has a shape of its own,
    chosen by the same rule."""
    report.bands, report.coverage, report.shapes = {}, {}, {}
    for arch, left_out in report.left_out.items():
        choice = choose_shape(sets_of(left_out))
        report.shapes[arch] = choice
        report.bands[arch] = (*choice.band, len(left_out))
        report.coverage[arch] = list(choice.rows)
    by_families: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(dict)
    every_left_out = [e for errs in report.left_out.values() for e in errs]
    for key, ratios in paired_ratios(every_left_out).items():
        by_families[(str(key[0]), str(key[1]))][group_name(key[2:])] = ratios
    report.paired, report.paired_coverage, report.paired_shapes = {}, {}, {}
    for families, groups in sorted(by_families.items()):
        ratios = [r for group in groups.values() for r in group]
        if len(ratios) >= MIN_COMPARISONS:
            choice = choose_shape(groups)
            report.paired_shapes[families] = choice
            report.paired[families] = (*choice.band, len(ratios))
            report.paired_coverage[families] = list(choice.rows)
    report.engine_shapes = {}
    for arch, left_out in report.left_out.items():
        for engine, errors in sorted(engines_of(left_out).items()):
            sets = sets_of(errors)
            choice = choose_shape(sets) if len(sets) >= 2 else None
            if choice is not None and choice.met:   # else the family's band stands
                report.engine_shapes[(arch, engine)] = choice
    report.uncalibrated = report.uncalibrated_choice = None
    if report.family_out:
        choice = choose_shape({arch: [e.ratio for e in errs]
                               for arch, errs in report.family_out.items()})
        report.uncalibrated_choice = choice
        report.uncalibrated = (*choice.band, choice.points)


def set_coverage(left_out: Sequence[PointError], shape: Shape = P10_P90
                 ) -> list[tuple[str, int, int]]:
    """For each set of `left_out` (each set's errors with the constants fitted without it): its
    points and how many of them fall in the band (in `shape`) built from the other sets' errors
    alone: what the band holds on a set it has not seen, the case of a new configuration."""
    return held_without(sets_of(left_out), shape)


def engines_of(left_out: Sequence[PointError]) -> dict[str, list[PointError]]:
    """`left_out` by the engine each point ran on."""
    found: dict[str, list[PointError]] = defaultdict(list)
    for e in left_out:
        found[e.point.engine].append(e)
    return dict(found)


def sets_of(left_out: Sequence[PointError]) -> dict[str, list[float]]:
    """The ratios of `left_out` by the set each point was left out with."""
    found: dict[str, list[float]] = defaultdict(list)
    for e in left_out:
        found[point_fold(e.point)].append(e.ratio)
    return dict(found)


def group_name(key: tuple[object, ...]) -> str:
    return " ".join(str(part) for part in key)


def paired_coverage(groups: Mapping[tuple[object, ...], Sequence[float]],
                    shape: Shape = P10_P90) -> list[tuple[str, int, int]]:
    """For each group of comparisons (validation.paired_ratios, one pair of families): its
    comparisons and how many of them the band (in `shape`) built from the other groups' alone
    holds: the paired band's coverage on comparisons it was not built from."""
    return held_without({group_name(key): mine for key, mine in groups.items()}, shape)


def shape_note(choice: Choice, unit: str = "set") -> str:
    """The shape a band is in, as its basis string says it, and whether it is wider than ABSURD
    (`unit`: what is left out in turn, a set, a group, a family)."""
    note = shape_name(choice.shape)
    if absurd(*choice.band):
        note += (f", wider than {ABSURD[0]:g}-{ABSURD[1]:g} (measured / predicted): what holding "
                 f"{100 * COVERAGE_TARGET:.0f} % of a {unit} left out takes")
    return note


# Who published a point, by its source key's prefix (data/measurements/serving_points.yaml).
PUBLISHERS = (("inferencex-", "InferenceX"), ("inferencemax-", "InferenceX"),
              ("mlperf-", "MLPerf"), ("rocm-vllm-", "AMD"))


def publishers(errors: Sequence[PointError]) -> str:
    """"InferenceX / MLPerf": who published the points, in PUBLISHERS' order."""
    keys = {e.point.source for e in errors}
    names = [name for prefix, name in PUBLISHERS if any(k.startswith(prefix) for k in keys)]
    return " / ".join(dict.fromkeys(names))


def basis(report: FitReport, arch: str) -> str:
    """The BAND basis string calibration.py stores."""
    gpus = " / ".join(GPU_NAMES.get(g, g) for g in report.gpus[arch])
    models = ", ".join(MODEL_NAMES.get(m, m) for m in report.models[arch])
    n = len(report.left_out[arch])
    return (f"{n} {publishers(report.left_out[arch])} {gpus} {models} points (aggregated, no "
            "speculative decoding), "
            "each model x GPU x engine set left out of the fit in turn; "
            f"{shape_note(report.shapes[arch])}")


def engine_basis(report: FitReport, arch: str, engine: str) -> str:
    """The ENGINE_BAND basis string calibration.py stores."""
    errors = engines_of(report.left_out[arch])[engine]
    gpus = " / ".join(GPU_NAMES.get(g, g) for g in sorted({e.point.hardware for e in errors}))
    models = ", ".join(MODEL_NAMES.get(m, m) for m in sorted({e.point.model for e in errors}))
    return (f"{len(errors)} {publishers(errors)} {gpus} {models} points on {engine} "
            "(aggregated, no speculative decoding), each model x GPU x engine set left out of "
            f"the fit in turn; {shape_note(report.engine_shapes[(arch, engine)])}")


def paired_basis(report: FitReport, families: tuple[str, str]) -> str:
    """The PAIRED_BAND basis string calibration.py stores."""
    n = report.paired[families][2]
    rows = report.paired_coverage[families]
    held = sum(h for _, _, h in rows)
    first, second = (" / ".join(GPU_NAMES.get(g, g) for g in report.gpus[arch])
                     for arch in families)
    what = (f"two {first} configurations (GPU or layout)" if families[0] == families[1]
            else f"{_article(first)} {first} configuration against {_article(second)} {second} "
                 "one")
    return (f"{n} comparisons of left-out points of {what} in {len(rows)} groups of one "
            f"model, precision, engine and request shape, "
            f"{shape_note(report.paired_shapes[families], 'group')}; a band built without a "
            f"group holds {held} of them ({100 * held / n:.0f} %)")


def uncalibrated_basis(report: FitReport) -> str:
    """The UNCALIBRATED_BAND basis string calibration.py stores."""
    choice = report.uncalibrated_choice
    assert choice is not None
    every = [e for errs in report.family_out.values() for e in errs]
    return (f"no fit of this family's own (no or too few measured points, or all of one "
            f"model on one engine): the band of "
            f"{choice.points} {publishers(every)} points of the measured families, each family "
            "left out "
            f"of the fit whole, {shape_note(choice, 'family')}; a band built without a family "
            f"holds {choice.held} of them ({100 * choice.held / choice.points:.0f} %)")


def _article(name: str) -> str:
    """"an" before a GPU name read out letter by letter from a vowel sound (an H100, an
    MI355X), else "a" (a B200)."""
    return "an" if name[:1] in "AEFHILMNORSX" else "a"
