"""Fit the C2C model's compute efficiencies on the published runs and print them, each set's
error and the bands: the fit is tests/support/c2c_fit.py (which tests/models/test_c2c_fit.py
also runs); paste the values into models/c2c/calibration.py (GEMM_EFFICIENCY,
ATTENTION_EFFICIENCY, PYTORCH_KERNEL_EFFICIENCY, BAND, BAND_QUANTILE,
LEAVE_OUT_COVERAGE) when they change. From the repository root:

    python -m bench.c2c_fit
"""

from __future__ import annotations

import time

import numpy as np

from tests.support.c2c_fit import fit_all


def main() -> int:
    started = time.perf_counter()
    report = fit_all()
    print("fitted on all sets:")
    for key, value in report.gemm.items():
        print(f"  GEMM {key[0]:15s} {key[1].name:5s} {value:.2f}")
    for key, value in report.attention.items():
        print(f"  attention {key:15s}   {value:.2f}")
    print(f"  PyTorch kernels at {report.pytorch:.2f} of Megatron-Core's rate")
    print("\nerror per set, mean / max abs %: in sample | each set left out of the fit")
    for name, e in report.in_sample.items():
        out = report.left_out[name]
        print(f"  {name:28s} {len(e):3d} runs  {np.mean(np.abs(e)):5.1f} / "
              f"{np.max(np.abs(e)):5.1f} | {np.mean(np.abs(out)):5.1f} / "
              f"{np.max(np.abs(out)):5.1f}")
    (low_q, high_q), widening = report.shape
    print(f"\nband of predicted/measured tokens/s (P{low_q:g}-P{high_q:g} widened x{widening:g} "
          "about the median), leave-one-set-out:")
    for key, (low, high, n) in report.bands.items():
        print(f"  {key:21s} {n:3d} runs  {low:.3f} {high:.3f}")
    print("\neach set left out: its points inside the band built from the other sets")
    for name, (held, n) in report.coverage.items():
        print(f"  {name:28s} {held:3d} of {n:3d}  {100 * held / n:5.1f} %")
    print(f"\n{time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
