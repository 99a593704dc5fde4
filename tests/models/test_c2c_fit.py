"""The fitted compute efficiencies and the error bands in models/c2c/calibration.py are what
the fit gives on the published runs (tests/support/c2c_fit.py; `python -m bench.c2c_fit` prints
it): refitted here (about 6 minutes, so in `./dev trials`), they must come out the same, and
every band must hold at least 80 % of each calibration set left out."""

from __future__ import annotations

import pytest

from models.c2c import calibration as cal
from tests.support.c2c_fit import fit_all


@pytest.mark.trials
@pytest.mark.slow(seconds=340)
def test_refitting_the_published_runs_gives_the_stored_efficiencies_and_bands():
    report = fit_all()
    for key, value in report.gemm.items():
        assert cal.GEMM_EFFICIENCY[key] == pytest.approx(value, abs=0.005), key
    for key, value in report.attention.items():
        assert cal.ATTENTION_EFFICIENCY[key] == pytest.approx(value, abs=0.005), key
    assert cal.PYTORCH_KERNEL_EFFICIENCY == pytest.approx(report.pytorch, abs=0.005)
    assert report.shape == cal.BAND_SHAPE
    assert set(report.bands) == set(cal.BAND)
    for key, (low, high, _) in report.bands.items():
        stored_low, stored_high, _ = cal.BAND[key]
        assert (stored_low, stored_high) == pytest.approx((low, high), abs=0.002), key
    # Each set's coverage with it left out, as validate prints it; every one at least 80 %.
    assert {k: v[:2] for k, v in cal.LEAVE_OUT_COVERAGE.items()} == report.coverage
    assert all(held >= 0.8 * n for held, n in report.coverage.values())
