"""The fitted compute efficiencies and the error bands in models/c2c/calibration.py are what
the fit gives on the published runs (tests/support/c2c_fit.py; `python -m bench.c2c_fit` prints
it): refitted here (about 40 s, so in `./dev trials`), they must come out the same."""

from __future__ import annotations

import pytest

from models.c2c import calibration as cal
from tests.support.c2c_fit import fit_all


@pytest.mark.trials
@pytest.mark.slow(seconds=45)
def test_refitting_the_published_runs_gives_the_stored_efficiencies_and_bands():
    report = fit_all()
    for key, value in report.gemm.items():
        assert cal.GEMM_EFFICIENCY[key] == pytest.approx(value, abs=0.005), key
    for key, value in report.attention.items():
        assert cal.ATTENTION_EFFICIENCY[key] == pytest.approx(value, abs=0.005), key
    assert set(report.bands) == set(cal.BAND) - {"ampere"}
    for key, (low, high, _) in report.bands.items():
        stored_low, stored_high, _ = cal.BAND[key]
        assert (stored_low, stored_high) == pytest.approx((low, high), abs=0.002), key
