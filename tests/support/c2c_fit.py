"""Fit the C2C model's compute efficiencies on the published runs, and measure its error.

For each (architecture, precision) the GEMM efficiency, and for each architecture the fused
attention efficiency, are chosen by coordinate descent (a grid of 0.01) to minimise the mean
absolute error in tokens/s/GPU over the calibration runs (data/measurements/training_runs.yaml,
as models/c2c/validation.py evaluates them). Then
each published table is left out in turn, the efficiencies refitted on the others, and the
left-out table's errors kept: those leave-one-set-out residuals are the model's honest error
on a table it was not fitted to, and give the band (P10-P90 of predicted/measured) that
calibration.BAND stores.

`python -m bench.c2c_fit` prints the fitted values, each set's mean and max error, and the
bands; paste the values into models/c2c/calibration.py (GEMM_EFFICIENCY, ATTENTION_EFFICIENCY,
BAND) when they change. tests/models/test_c2c_fit.py refits and compares with the stored values.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from models.c2c import calibration as cal
from models.c2c.spec import Precision
from models.c2c.validation import RunCase, calibration_runs, run_results
from pipelines.inputs.measurements import shipped_training_runs

GEMM_KEYS = [key for key in cal.GEMM_EFFICIENCY if key[0] != "ampere"
             and key != ("hopper", Precision.BF16)]  # those two: Korthikanti, Megatron-Core
ATTENTION_KEYS = ["blackwell", "blackwell_ultra"]
GRID = np.round(np.arange(0.20, 0.921, 0.01), 2)  # no GEMM sustains more than ~92 % of peak
# A value fitted on fewer runs than this is not kept: the architecture's FP8 value stands in
# (Blackwell's BF16 and FP8 tensor cores reach like fractions of their peaks on large GEMMs).
MIN_RUNS = 3


@contextmanager
def efficiencies(gemm: dict, attention: dict) -> Iterator[None]:
    """The calibration tables with these values, for the duration of the block."""
    saved_gemm, saved_attention = dict(cal.GEMM_EFFICIENCY), dict(cal.ATTENTION_EFFICIENCY)
    cal.GEMM_EFFICIENCY.update(gemm)
    cal.ATTENTION_EFFICIENCY.update(attention)
    try:
        yield
    finally:
        cal.GEMM_EFFICIENCY.clear()
        cal.GEMM_EFFICIENCY.update(saved_gemm)
        cal.ATTENTION_EFFICIENCY.clear()
        cal.ATTENTION_EFFICIENCY.update(saved_attention)


def errors(cases: Sequence[RunCase], gemm: dict, attention: dict) -> np.ndarray:
    with efficiencies(gemm, attention):
        return np.array([r.error for r in run_results(list(cases))])


def uses(case: RunCase, key: object) -> bool:
    if isinstance(key, tuple):
        return (case.hw.arch, case.framework.precision) == key
    return case.hw.arch == key


def fit(cases: Sequence[RunCase], rounds: int = 3) -> tuple[dict, dict]:
    """Coordinate descent: each value in turn, on the runs that use it."""
    # From the same start every time (the BF16 fit of the older sets), not from the stored
    # values: coordinate descent is path-dependent, and the fit must be reproducible.
    gemm = dict.fromkeys(GEMM_KEYS, cal.GEMM_COMPUTE_EFFICIENCY)
    attention = dict.fromkeys(ATTENTION_KEYS, cal.FUSED_ATTENTION_EFFICIENCY)
    for _ in range(rounds):
        for key in [*GEMM_KEYS, *ATTENTION_KEYS]:
            relevant = [c for c in cases if uses(c, key)]
            if len(relevant) < MIN_RUNS:
                continue
            table = gemm if isinstance(key, tuple) else attention
            best = min(GRID, key=lambda v: np.mean(np.abs(errors(
                relevant, {**gemm, **({key: v} if table is gemm else {})},
                {**attention, **({key: v} if table is attention else {})}))))
            table[key] = float(best)
    for arch, precision in gemm:
        if precision != Precision.FP8 and (arch, Precision.FP8) in gemm and sum(
                uses(c, (arch, precision)) for c in cases) < MIN_RUNS:
            gemm[(arch, precision)] = gemm[(arch, Precision.FP8)]
    return gemm, attention


def by_set(cases: Sequence[RunCase]) -> dict[str, list[RunCase]]:
    groups: dict[str, list[RunCase]] = defaultdict(list)
    for case in cases:
        groups[case.run.source].append(case)
    return dict(groups)


# A band per architecture and parallel scheme needs at least this many runs; else the
# architecture's band stands.
MIN_BAND_RUNS = 5


def scheme(case: RunCase) -> str:
    """The parallel scheme a band is kept for: dense, or MoE (expert parallelism)."""
    return "moe" if case.model.is_moe else "dense"


@dataclass
class FitReport:
    gemm: dict
    attention: dict
    in_sample: dict[str, np.ndarray]  # set -> errors (%) with the fit on all sets
    left_out: dict[str, np.ndarray]  # set -> errors (%) with the fit on the other sets
    bands: dict[str, tuple[float, float, int]]  # arch[/scheme] -> P10, P90, runs


def fit_all() -> FitReport:
    """The fit on all sets, each set's errors in and out of sample, and the bands."""
    cases = calibration_runs(shipped_training_runs())
    gemm, attention = fit(cases)
    sets = by_set(cases)
    in_sample = {name: errors(members, gemm, attention) for name, members in sets.items()}
    left_out: dict[str, np.ndarray] = {}
    ratios: dict[str, list[float]] = defaultdict(list)
    for name, members in sets.items():
        g, a = fit([c for c in cases if c.run.source != name], rounds=2)
        left_out[name] = errors(members, g, a)
        for case, err in zip(members, left_out[name], strict=True):
            ratios[case.hw.arch].append(1 + err / 100)
            ratios[f"{case.hw.arch}/{scheme(case)}"].append(1 + err / 100)
    bands = {key: (*(float(x) for x in np.percentile(r, [10, 90])), len(r))
             for key, r in sorted(ratios.items()) if len(r) >= MIN_BAND_RUNS}
    return FitReport(gemm, attention, in_sample, left_out, bands)
