"""Fit the C2C model's compute efficiencies on the published runs, and measure its error.

For each (architecture, precision) the GEMM efficiency, for each architecture the fused
attention efficiency, and the share of that rate PyTorch's own modules reach
(calibration.PYTORCH_KERNEL_EFFICIENCY), are chosen by coordinate descent (a grid of 0.01) to
minimise the mean absolute error in tokens/s/GPU over the calibration runs
(data/measurements/training_runs.yaml, as models/c2c/validation.py evaluates them) and, for
Hopper BF16, in MFU over Megatron-Core's 2024 H100 table. Then each published table is left
out in turn, the efficiencies refitted on the others, and the left-out table's errors kept:
those leave-one-set-out residuals are the model's honest error on a table it was not fitted
to. The band (calibration.BAND) is a central interval of them per architecture and scheme; its
width (which quantiles) is the narrowest whose band, built without a set, still holds at least
80 % of that set's left-out points, for every set (calibration.LEAVE_OUT_COVERAGE).

`python -m bench.c2c_fit` prints the fitted values, each set's mean and max error, and the
bands; paste the values into models/c2c/calibration.py (GEMM_EFFICIENCY, ATTENTION_EFFICIENCY,
PYTORCH_KERNEL_EFFICIENCY, BAND, BAND_QUANTILE, LEAVE_OUT_COVERAGE) when they change.
tests/models/test_c2c_fit.py refits and compares with the stored values.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from models.c2c import calibration as cal
from models.c2c.estimate import evaluate
from models.c2c.spec import Layouts, Precision
from models.c2c.validation import (
    H100_EOS,
    KORTHIKANTI_SET,
    MCORE_FRAMEWORK,
    MCORE_SET,
    Point,
    RunCase,
    calibration_runs,
    megatron_core_h100,
    run_results,
    validation_results,
)
from pipelines.inputs.measurements import shipped_training_runs

GEMM_KEYS = [key for key in cal.GEMM_EFFICIENCY if key[0] != "ampere"]  # Ampere: Korthikanti
ATTENTION_KEYS = ["blackwell", "blackwell_ultra"]
PYTORCH = "pytorch"  # the key of calibration.PYTORCH_KERNEL_EFFICIENCY
GRID = np.round(np.arange(0.20, 0.921, 0.01), 2)  # no GEMM sustains more than ~92 % of peak
PYTORCH_GRID = np.round(np.arange(0.50, 1.001, 0.01), 2)  # a share of Megatron-Core's rate
# A value fitted on fewer runs than this is not kept: the architecture's FP8 value stands in
# (Blackwell's BF16 and FP8 tensor cores reach like fractions of their peaks on large GEMMs).
MIN_RUNS = 3


@dataclass(frozen=True)
class _Arch:
    arch: str


@dataclass(frozen=True)
class _Precision:
    precision: Precision
    pytorch_native: bool = False


@dataclass(frozen=True)
class _Source:
    source: str


@dataclass(frozen=True)
class _Dense:
    is_moe: bool = False


@dataclass(frozen=True)
class McoreCase:
    """A point of Megatron-Core's H100 table, shaped like a RunCase for the fit: its error is
    the relative error of the predicted MFU (= that of tokens/s at the table's layout)."""

    point: Point
    hw: _Arch = _Arch("hopper")
    framework: _Precision = _Precision(Precision.BF16)
    run: _Source = _Source(MCORE_SET.key)
    model: _Dense = _Dense()

    def error(self) -> float:
        estimate = evaluate(self.point.model, H100_EOS, MCORE_FRAMEWORK,
                            Layouts.of([self.point.layout]))
        return 100 * (float(estimate.mfu[0]) - self.point.measured) / self.point.measured


Case = RunCase | McoreCase


@contextmanager
def efficiencies(gemm: dict, attention: dict, pytorch: float | None = None) -> Iterator[None]:
    """The calibration tables with these values, for the duration of the block."""
    saved_gemm, saved_attention = dict(cal.GEMM_EFFICIENCY), dict(cal.ATTENTION_EFFICIENCY)
    saved_pytorch = cal.PYTORCH_KERNEL_EFFICIENCY
    cal.GEMM_EFFICIENCY.update(gemm)
    cal.ATTENTION_EFFICIENCY.update(attention)
    if pytorch is not None:
        cal.PYTORCH_KERNEL_EFFICIENCY = pytorch
    try:
        yield
    finally:
        cal.GEMM_EFFICIENCY.clear()
        cal.GEMM_EFFICIENCY.update(saved_gemm)
        cal.ATTENTION_EFFICIENCY.clear()
        cal.ATTENTION_EFFICIENCY.update(saved_attention)
        cal.PYTORCH_KERNEL_EFFICIENCY = saved_pytorch


def errors(cases: Sequence[Case], gemm: dict, attention: dict,
           pytorch: float | None = None) -> np.ndarray:
    """Each case's error (%), in `cases` order, with these efficiencies."""
    runs = [c for c in cases if isinstance(c, RunCase)]
    with efficiencies(gemm, attention, pytorch):
        found = iter([r.error for r in run_results(runs)])
        return np.array([next(found) if isinstance(c, RunCase) else c.error() for c in cases])


def uses(case: Case, key: object) -> bool:
    if key == PYTORCH:
        return case.framework.pytorch_native
    if isinstance(key, tuple):
        return (case.hw.arch, case.framework.precision) == key
    return case.hw.arch == key


def fit(cases: Sequence[Case], rounds: int = 3) -> tuple[dict, dict, float]:
    """Coordinate descent: each value in turn, on the cases that use it."""
    # From the same start every time (the BF16 fit of the older sets; Megatron-Core's own
    # kernel rate), not from the stored values: coordinate descent is path-dependent, and the
    # fit must be reproducible.
    gemm = dict.fromkeys(GEMM_KEYS, cal.GEMM_COMPUTE_EFFICIENCY)
    attention = dict.fromkeys(ATTENTION_KEYS, cal.FUSED_ATTENTION_EFFICIENCY)
    pytorch = 1.0
    for _ in range(rounds):
        for key in [*GEMM_KEYS, *ATTENTION_KEYS, PYTORCH]:
            relevant = [c for c in cases if uses(c, key)]
            if len(relevant) < MIN_RUNS:
                continue
            if key == PYTORCH:
                pytorch = float(min(PYTORCH_GRID, key=lambda v: np.mean(np.abs(
                    errors(relevant, gemm, attention, v)))))
                continue
            table = gemm if isinstance(key, tuple) else attention
            best = min(GRID, key=lambda v: np.mean(np.abs(errors(
                relevant, {**gemm, **({key: v} if table is gemm else {})},
                {**attention, **({key: v} if table is attention else {})}, pytorch))))
            table[key] = float(best)
    for arch, precision in gemm:
        if precision != Precision.FP8 and (arch, Precision.FP8) in gemm and sum(
                uses(c, (arch, precision)) for c in cases) < MIN_RUNS:
            gemm[(arch, precision)] = gemm[(arch, Precision.FP8)]
    return gemm, attention, pytorch


def by_set(cases: Sequence[Case]) -> dict[str, list[Case]]:
    groups: dict[str, list[Case]] = defaultdict(list)
    for case in cases:
        groups[case.run.source].append(case)
    return dict(groups)


# A band per architecture and parallel scheme needs at least this many runs; else the
# architecture's band stands.
MIN_BAND_RUNS = 5
# The bands tried: a central interval of the left-out ratios ((lower, upper) percentiles),
# widened about their median by a factor (in log space). The band kept is the narrowest (mean
# log-width over the keys) that, built without a set, holds COVERAGE_TARGET of that set's
# left-out points, for every set.
QUANTILES = ((10.0, 90.0), (5.0, 95.0), (2.5, 97.5), (0.0, 100.0))
WIDENINGS = (1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0)
COVERAGE_TARGET = 0.8


def scheme(case: Case) -> str:
    """The parallel scheme a band is kept for: dense, or MoE (expert parallelism)."""
    return "moe" if case.model.is_moe else "dense"


Ratio = tuple[tuple[str, str], float]  # (scheme key, architecture key), predicted / measured
Shape = tuple[tuple[float, float], float]  # percentiles, widening


def bands_of(ratios: Sequence[Ratio], shape: Shape) -> dict[str, tuple[float, float, int]]:
    """Per key with at least MIN_BAND_RUNS ratios: (low, high, runs), the percentiles of
    `shape` widened about the median by its factor."""
    (low_q, high_q), widening = shape
    by_key: dict[str, list[float]] = defaultdict(list)
    for keys, ratio in ratios:
        for key in keys:
            by_key[key].append(ratio)
    bands = {}
    for key, found in sorted(by_key.items()):
        if len(found) < MIN_BAND_RUNS:
            continue
        low, middle, high = np.percentile(np.log(found), [low_q, 50.0, high_q])
        bands[key] = (float(np.exp(middle - widening * (middle - low))),
                      float(np.exp(middle + widening * (high - middle))), len(found))
    return bands


def inside(bands: dict[str, tuple[float, float, int]], keys: tuple[str, str],
           ratio: float) -> bool:
    """Whether `ratio` lies in the band calibration.band would give: the scheme's, else the
    architecture's, else the widest."""
    found = bands.get(keys[0]) or bands.get(keys[1])
    low, high = (found[0], found[1]) if found else (
        min(b[0] for b in bands.values()), max(b[1] for b in bands.values()))
    return low <= ratio <= high


def width(bands: dict[str, tuple[float, float, int]]) -> float:
    return float(np.mean([np.log(high / low) for low, high, _ in bands.values()]))


@dataclass
class FitReport:
    gemm: dict
    attention: dict
    pytorch: float
    in_sample: dict[str, np.ndarray]  # set -> errors (%) with the fit on all sets
    left_out: dict[str, np.ndarray]  # set -> errors (%) with the fit on the other sets
    bands: dict[str, tuple[float, float, int]]  # arch[/scheme] -> low, high, runs
    shape: Shape  # the percentiles the bands are, and their widening
    coverage: dict[str, tuple[int, int]]  # set -> left-out points inside its band, points


def _keys(case: Case) -> tuple[str, str]:
    """The band keys of a case: PyTorch's own stack apart from Megatron-Core's."""
    if case.framework.pytorch_native:
        return f"{case.hw.arch}/pytorch", "pytorch"
    return f"{case.hw.arch}/{scheme(case)}", case.hw.arch


def fit_all() -> FitReport:
    """The fit on all sets, each set's errors in and out of sample, and the bands."""
    cases: list[Case] = [*calibration_runs(shipped_training_runs()),
                         *(McoreCase(p) for p in megatron_core_h100())]
    gemm, attention, pytorch = fit(cases)
    sets = by_set(cases)
    in_sample = {name: errors(members, gemm, attention, pytorch)
                 for name, members in sets.items()}
    left_out: dict[str, np.ndarray] = {}
    ratios: dict[str, list[Ratio]] = {}
    for name, members in sets.items():
        g, a, p = fit([c for c in cases if c.run.source != name], rounds=2)
        left_out[name] = errors(members, g, a, p)
        ratios[name] = [(_keys(c), 1 + e / 100)
                        for c, e in zip(members, left_out[name], strict=True)]
    # Korthikanti's Table 5 fixed the Ampere constants (in sample): its ratios join the pool
    # as they are (an iteration time's error e is a throughput ratio of 1 / (1 + e)).
    ratios[KORTHIKANTI_SET.key] = [(("ampere/dense", "ampere"), 1 / (1 + r.error / 100))
                                   for r in validation_results()
                                   if r.published.key == KORTHIKANTI_SET.key]

    def coverage(shape: Shape) -> dict[str, tuple[int, int]]:
        found = {}
        for name, own in ratios.items():
            others = [r for other, rs in ratios.items() if other != name for r in rs]
            bands = bands_of(others, shape)
            found[name] = (sum(inside(bands, keys, ratio) for keys, ratio in own), len(own))
        return found

    pooled = [r for rs in ratios.values() for r in rs]
    shapes = [(q, w) for q in QUANTILES for w in WIDENINGS]
    held = {shape: coverage(shape) for shape in shapes}
    meeting = [shape for shape in shapes
               if all(n_in >= COVERAGE_TARGET * n for n_in, n in held[shape].values())]
    # None meets the target: the widest tried, and the coverage says so.
    shape = min(meeting, key=lambda s: width(bands_of(pooled, s))) if meeting else shapes[-1]
    return FitReport(gemm, attention, pytorch, in_sample, left_out,
                     bands_of(pooled, shape), shape, held[shape])
