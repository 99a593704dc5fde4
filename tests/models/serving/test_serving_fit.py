"""The serving constants and bands in models/serving/calibration.py are what the fit gives on the
measured points (tests/support/serving_fit.py; `python -m bench.serving_fit` prints it). The
full refit (about 10 min on 2 cores: each model x GPU x engine set, then each family, left
out) runs in `./dev trials`; the default run checks that the stored constants are within 1 % of
a minimum of the fit's objective on its grid, and that the band is built to hold 80 % of the
points."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from models.serving import calibration
from models.serving.calibration import PRIOR
from models.serving.validation import configurations
from pipelines.inputs.measurements import shipped_serving_points
from tests.support.serving_fit import BOUNDS, MIN_POINTS, band, basis, fit_all, objective


def test_the_stored_constants_are_a_minimum_of_the_fit_on_its_grid():
    fitted = [c for c in configurations(shipped_serving_points().points) if c.curve(PRIOR)]
    assert set(calibration.CONSTANTS) == set(calibration.BAND) == set(calibration.SOURCE)
    for arch, k in calibration.CONSTANTS.items():
        configs = [c for c in fitted if c.arch == arch]
        assert sum(len(c.points) for c in configs) >= MIN_POINTS
        best = objective(configs, k)
        assert best < objective(configs, PRIOR)
        for name, (low, high, _, step) in BOUNDS.items():
            value = getattr(k, name)
            assert low <= value <= high, (arch, name)
            for moved in (value - step, value + step):
                if low <= moved <= high:
                    # The objective is rugged (curves interpolated at each point): coordinate
                    # descent stops after ROUNDS rounds within 1 % of a grid minimum.
                    assert objective(configs, replace(k, **{name: moved})) >= 0.99 * best, \
                        (arch, name)


@given(st.lists(st.floats(min_value=0.01, max_value=100), min_size=1, max_size=200))
def test_the_band_holds_at_least_80_percent_of_the_ratios_by_construction(ratios):
    low, high = band(ratios)
    inside = sum(low <= r <= high for r in ratios)
    assert inside >= 0.8 * len(ratios)
    assert low in ratios and high in ratios


@pytest.mark.trials
@pytest.mark.slow(seconds=660)
def test_refitting_the_measured_points_gives_the_stored_constants_and_bands():
    report = fit_all()
    assert set(report.constants) == set(calibration.CONSTANTS)
    for arch, k in report.constants.items():
        stored = calibration.CONSTANTS[arch]
        assert stored.decode_hbm_efficiency == pytest.approx(k.decode_hbm_efficiency, abs=0.005)
        assert stored.prefill_efficiency == pytest.approx(k.prefill_efficiency, abs=0.005)
        assert stored.layer_overhead_s == pytest.approx(k.layer_overhead_s, abs=0.5e-6)
        assert stored.decode_compute_efficiency == pytest.approx(k.decode_compute_efficiency,
                                                                 abs=0.005)
        assert stored.token_overhead_s == pytest.approx(k.token_overhead_s, abs=0.005e-6)
    pooled = report.pooled
    assert pooled is not None and calibration.POOLED == pooled
    for arch, (low, high, n) in report.bands.items():
        stored_low, stored_high, stored_basis = calibration.BAND[arch]
        assert (stored_low, stored_high) == pytest.approx((low, high), abs=0.002), arch
        assert stored_low <= low and stored_high >= high   # rounded outward
        assert stored_basis == basis(report, arch)
        ratios = [e.ratio for e in report.left_out[arch]]
        assert len(ratios) == n
        assert sum(stored_low <= r <= stored_high for r in ratios) >= 0.8 * n
    low, high, n = report.uncalibrated
    stored_low, stored_high, _ = calibration.UNCALIBRATED_BAND
    assert (stored_low, stored_high) == pytest.approx((low, high), abs=0.002)
    assert stored_low <= low and stored_high >= high
