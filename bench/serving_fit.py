"""Fit the serving model's constants per GPU architecture on the measured serving points and
print them with each engine's terms (fitted jointly across the families), the error per
architecture and per model and precision, in sample and left out, and the bands: the fit is
tests/support/serving_fit.py (which tests/models/serving/test_serving_fit.py also runs); paste
the values into models/serving/calibration.py (CONSTANTS, ENGINES, SOURCE, BAND, LEFT_OUT,
PAIRED_BAND, UNCALIBRATED_BAND and the shapes BAND_SHAPE, PAIRED_SHAPE, UNCALIBRATED_SHAPE) when
they change: the bands printed are rounded outward to three decimals, as stored. Each band's
shape is the narrowest of tests/support/serving_fit.py's grid whose band, built again without a
set (a group of comparisons, a family), holds 80 % of the left-out points of the sets it was
built without, pooled. From the repository root:

    python -m bench.serving_fit [--jobs N] [--sets-only]

`--jobs N` runs the fits (each family's, each set left out, each family left out) in N
processes; `--sets-only` leaves out the fits of each family left out whole and of every
family pooled (the uncalibrated band and POOLED are then not printed).
"""

from __future__ import annotations

import sys
import time
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from models.serving.calibration import EngineConstants
from models.serving.validation import PointError
from tests.support.serving_fit import (
    ABSURD,
    COVERAGE_TARGET,
    Choice,
    basis,
    common_shape,
    engine_basis,
    engines_of,
    fit_all,
    outward,
    paired_basis,
    point_fold,
    sets_of,
    shape_name,
    uncalibrated_basis,
)


def _summary(errs: Sequence[PointError]) -> str:
    pct = [abs(e.error) for e in errs]
    return f"{np.mean(pct):6.1f} / {np.max(pct):6.1f}"


def _engine(k: EngineConstants) -> str:
    return (f"EngineConstants(overhead_scale={k.overhead_scale:.4g}, "
            f"ep_layer_s={k.ep_layer_s * 1e6:.4g}e-6)")


def _choice(choice: Choice, unit: str = "set") -> str:
    """A band's shape, its width and what it holds built without each set, pooled."""
    low, high = outward(*choice.band)
    wide = (f"   ABSURD: wider than {ABSURD[0]:g}-{ABSURD[1]:g}"
            if low < ABSURD[0] or high > ABSURD[1] else "")
    met = "" if choice.met else f"   TARGET NOT MET: no shape tried holds {COVERAGE_TARGET:.0%}"
    return (f"{low:.3f} {high:.3f}  {shape_name(choice.shape)}; built without each {unit} holds "
            f"{choice.held} of {choice.points} ({100 * choice.held / choice.points:.0f} %)"
            f"{wide}{met}")


def main(argv: Sequence[str] = ()) -> int:
    started = time.perf_counter()
    jobs = int(argv[argv.index("--jobs") + 1]) if "--jobs" in argv else 1
    report = fit_all(jobs, whole_families="--sets-only" not in argv)
    print("fitted per architecture:")
    for arch, k in report.constants.items():
        print(f"  {arch:10s} decode_hbm_efficiency {k.decode_hbm_efficiency:.4g}  "
              f"prefill_efficiency {k.prefill_efficiency:.4g}  "
              f"decode_compute_efficiency {k.decode_compute_efficiency:.4g}  "
              f"layer_overhead_s {k.layer_overhead_s * 1e6:.1f}e-6  "
              f"kernel_share {k.kernel_share:.3f}  "
              f"token_overhead_s {k.token_overhead_s * 1e6:.4g}e-6  "
              f"expert_gemm_scale {k.expert_gemm_scale:.4g}")
    print("engines (fitted with every family's constants):")
    for name, k in report.engines.items():
        print(f"  {name!r}: {_engine(k)},")
    print("\nerror, mean / max |predicted - measured| % of measured: in sample | each "
          "model x GPU x engine set left out")
    for arch in report.constants:
        inside, outside = report.in_sample[arch], report.left_out[arch]
        unreached = sum(not e.reached for e in inside)
        print(f"  {arch:34s} {len(inside):3d} points {_summary(inside)} | {_summary(outside)}"
              f"   ({unreached} unreached in sample)")
        groups: dict[str, tuple[list[PointError], list[PointError]]] = defaultdict(
            lambda: ([], []))
        for e in inside:
            groups[f"{e.point.model} {e.point.precision}"][0].append(e)
        for e in outside:
            groups[f"{e.point.model} {e.point.precision}"][1].append(e)
        for name, (a, b) in sorted(groups.items()):
            print(f"    {name:32s} {len(a):3d} points {_summary(a)} | {_summary(b)}")
        sets: dict[str, list[PointError]] = defaultdict(list)
        for e in outside:
            sets[point_fold(e.point)].append(e)
        for name, b in sorted(sets.items()):
            print(f"    left out: {name:22s} {len(b):3d} points {'':15s} | {_summary(b)}")
    print("\nband of measured / predicted tokens/s per GPU, left out: the narrowest shape whose "
          f"band, built without a set, holds {COVERAGE_TARGET:.0%} of the sets' points pooled")
    for arch, (_, _, n) in report.bands.items():
        print(f"  {arch:10s} {n:3d} points  {_choice(report.shapes[arch])}")
    common = common_shape({arch: sets_of(errs) for arch, errs in report.left_out.items()})
    if common:
        name = shape_name(next(iter(common.values())).shape)
        print(f"  instead, one shape for every family: the narrowest that meets the target on "
              f"each is {name}:")
        for arch, choice in common.items():
            low, high = outward(*choice.band)
            print(f"    {arch:10s} {low:.3f} {high:.3f}, built without each set holds "
                  f"{choice.held} of {choice.points}")
    print("\nBAND_SHAPE and BAND (models/serving/calibration.py):")
    for arch, choice in report.shapes.items():
        print(f"    {arch!r}: {choice.shape},")
    for arch in report.bands:
        low, high = outward(*report.shapes[arch].band)
        print(f"    {arch!r}: ({low:.3f}, {high:.3f}, {basis(report, arch)!r}),")
    if report.family_out:
        print("\neach architecture left out whole (constants fitted on the others' points):")
        for arch, errs in report.family_out.items():
            ratios = [e.ratio for e in errs]
            low, high, _ = report.bands[arch]
            held = sum(low <= r <= high for r in ratios)
            print(f"  {arch:10s} {len(errs):3d} points {_summary(errs)}   "
                  f"(its own band holds {held} of them)")
    if report.uncalibrated_choice is not None:
        choice = report.uncalibrated_choice
        low, high = outward(*choice.band)
        print(f"  pooled band (the uncalibrated families'): {_choice(choice, 'family')}")
        for name, n, h in choice.rows:
            print(f"    {name:10s} {n:3d} points, {h:3d} held by the other families' band")
        print(f"  UNCALIBRATED_SHAPE = {choice.shape}")
        print(f"  UNCALIBRATED_BAND = ({low:.3f}, {high:.3f}, {uncalibrated_basis(report)!r})")
    if report.pooled is not None:
        k = report.pooled
        print(f"  pooled constants (every architecture's points): decode_hbm_efficiency "
              f"{k.decode_hbm_efficiency:.4g}  prefill_efficiency {k.prefill_efficiency:.4g}  "
              f"decode_compute_efficiency {k.decode_compute_efficiency:.4g}  "
              f"layer_overhead_s {k.layer_overhead_s * 1e6:.1f}e-6  "
              f"kernel_share {k.kernel_share:.3f}  "
              f"token_overhead_s {k.token_overhead_s * 1e6:.4g}e-6  "
              f"expert_gemm_scale {k.expert_gemm_scale:.4g}")
        for name, e in report.pooled_engines.items():
            print(f"    pooled fit's engine {name!r}: {_engine(e)}")
    print("\nLEFT_OUT (models/serving/calibration.py): each set's points held by the band of "
          "the other sets' left-out points")
    for arch, rows in report.coverage.items():
        errs = report.left_out[arch]
        pct = [abs(e.error) for e in errs]
        family = report.family_out.get(arch)
        family_mean = (f"{np.mean([abs(e.error) for e in family]):.1f}" if family
                       else "None")
        held = sum(h for _, _, h in rows)
        print(f"    {arch!r}: LeftOut({len(errs)}, {np.mean(pct):.1f}, {np.max(pct):.1f}, (")
        for name, n, h in rows:
            print(f"        ({name!r}, {n}, {h}),")
        print(f"    ), {family_mean}),   # held {held} of {len(errs)} "
              f"({100 * held / len(errs):.0f} %)")
    print("\nENGINE_BAND_SHAPE, ENGINE_BAND and ENGINE_LEFT_OUT (models/serving/calibration.py): "
          "an engine's band on a family, over its sets (two or more) left out")
    for key, choice in report.engine_shapes.items():
        print(f"    {key!r}: {choice.shape},")
    for (arch, engine), choice in report.engine_shapes.items():
        low, high = outward(*choice.band)
        print(f"    {(arch, engine)!r}: ({low:.3f}, {high:.3f}, "
              f"{engine_basis(report, arch, engine)!r}),")
    for (arch, engine), choice in report.engine_shapes.items():
        errs = engines_of(report.left_out[arch])[engine]
        pct = [abs(e.error) for e in errs]
        print(f"    {(arch, engine)!r}: LeftOut({len(errs)}, {np.mean(pct):.1f}, "
              f"{np.max(pct):.1f}, {tuple(choice.rows)!r}),")
    print("\nPAIRED_BAND (models/serving/calibration.py): one configuration's left-out error "
          "against another's of the same model, precision, engine and shape")
    for arch in report.paired:
        choice = report.paired_shapes[arch]
        low, high = outward(*choice.band)
        print(f"    {arch!r}: ({low:.3f}, {high:.3f}, {paired_basis(report, arch)!r}),")
        for name, m, h in choice.rows:
            print(f"        {name:44s} {m:4d} comparisons, {h:4d} held by the other groups' band")
        print(f"        {_choice(choice, 'group')}")
    print("  PAIRED_SHAPE:")
    for arch, choice in report.paired_shapes.items():
        print(f"    {arch!r}: {choice.shape},")
    if report.skipped:
        print("\nmemory misses (the model's HBM budget does not hold the weights), left out:")
        for name in report.skipped:
            print(f"  {name}")
    print(f"\n{time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
