"""The serving constants, engine terms and bands in models/serving/calibration.py are what the
fit gives on the measured points (tests/support/serving_fit.py; `python -m bench.serving_fit`
prints it). The full refit (about 19 min on two busy cores: every family and engine fitted
together, then each model x GPU x engine set and each family left out) runs in `./dev trials`;
the default run checks that the stored constants and terms are within 1 % of a minimum of the
fit's objective on its grid, that each band's shape is the narrowest on the grid whose band,
built without a set, holds 80 % of the left-out points pooled (on synthetic sets; the stored
counts say it of the measured ones), and runs a small sample of the refit (one family, two
rounds, one set left out)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from models.serving import calibration
from models.serving.calibration import PRIOR, REFERENCE_ENGINE
from models.serving.spec import ENGINES
from models.serving.validation import configurations, point_errors
from pipelines.inputs.measurements import shipped_serving_points
from tests.support.serving_fit import (
    ABSURD,
    BOUNDS,
    COVERAGE_TARGET,
    ENGINE_BOUNDS,
    MIN_COMPARISONS,
    MIN_POINTS,
    NEUTRAL,
    band,
    basis,
    choose_shape,
    engine_basis,
    fit,
    fit_all,
    fold,
    held_without,
    objective,
    paired_basis,
    point_fold,
    set_coverage,
    shape_name,
    shapes,
    total,
    uncalibrated_basis,
)

NEUTRALS = dict.fromkeys(ENGINES, NEUTRAL)


def test_the_stored_constants_are_a_minimum_of_the_fit_on_its_grid():
    fitted = [c for c in configurations(shipped_serving_points().points)
              if c.curve(PRIOR, NEUTRAL)]
    assert set(calibration.CONSTANTS) == set(calibration.BAND) == set(calibration.SOURCE)
    mine = [c for c in fitted if c.arch in calibration.CONSTANTS]
    best = total(mine, calibration.CONSTANTS, calibration.ENGINES)
    # The objective is rugged (curves interpolated at each point): coordinate descent stops
    # after ROUNDS rounds within 1 % of a grid minimum.
    for arch, k in calibration.CONSTANTS.items():
        configs = [c for c in mine if c.arch == arch]
        assert sum(len(c.points) for c in configs) >= MIN_POINTS
        assert objective(configs, k) < objective(configs, PRIOR, NEUTRALS)
        for name, (low, high, _, step) in BOUNDS.items():
            value = getattr(k, name)
            assert low <= value <= high, (arch, name)
            for moved in (value - step, value + step):
                if low <= moved <= high:
                    trial = {**calibration.CONSTANTS, arch: replace(k, **{name: moved})}
                    assert total(mine, trial, calibration.ENGINES) >= 0.99 * best, (arch, name)
    assert set(calibration.ENGINES) == set(ENGINES)
    assert calibration.ENGINES[REFERENCE_ENGINE].overhead_scale == 1.0
    for engine, e in calibration.ENGINES.items():
        for name, (low, high, _, step) in ENGINE_BOUNDS.items():
            value = getattr(e, name)
            assert low <= value <= high, (engine, name)
            for moved in (value - step, value + step):
                if low <= moved <= high:
                    trial = {**calibration.ENGINES, engine: replace(e, **{name: moved})}
                    assert total(mine, calibration.CONSTANTS, trial) >= 0.99 * best, \
                        (engine, name)


def test_a_sets_coverage_is_judged_by_the_band_of_the_other_sets():
    """set_coverage on the stored constants' errors: each set's points counted once, and
    held by a band (in the family's shape) it did not help build (a set far off the others
    falls outside theirs)."""
    errors = point_errors(configurations(shipped_serving_points().points))
    hopper = [e for e in errors if e.point.arch == "hopper"]
    shape = calibration.BAND_SHAPE["hopper"]
    rows = set_coverage(hopper, shape)
    assert sum(n for _, n, _ in rows) == len(hopper)
    assert {name for name, _, _ in rows} == {point_fold(e.point) for e in hopper}
    for name, n, held in rows:
        others = [e.ratio for e in hopper if point_fold(e.point) != name]
        low, high = band(others, shape)
        assert held == sum(low <= e.ratio <= high for e in hopper if point_fold(e.point) == name)
        assert 0 <= held <= n


def test_every_band_built_without_a_set_holds_80_percent_of_the_left_out_points():
    """The stored counts (what bench/serving_fit.py printed; the refit in `./dev trials`
    checks them): each family's band, rebuilt without each set in its shape, holds at least
    80 % of the family's left-out points pooled, and so do the paired bands (without each
    group) and the uncalibrated one (without each family). Each basis names its shape, and
    says so, with the bounds, where the band is wider than 0.2-10."""
    assert set(calibration.BAND_SHAPE) == set(calibration.BAND) == set(calibration.LEFT_OUT)
    for arch, found in calibration.LEFT_OUT.items():
        shape = calibration.BAND_SHAPE[arch]
        low, high, text = calibration.BAND[arch]
        assert shape in shapes(), arch
        assert found.held >= COVERAGE_TARGET * found.points, arch
        assert f"in turn; {shape_name(shape)}" in text, arch
        wide = low < ABSURD[0] or high > ABSURD[1]
        assert (f"wider than {ABSURD[0]:g}-{ABSURD[1]:g}" in text) == wide, arch
        assert low < 1 < high, arch
    assert set(calibration.PAIRED_SHAPE) == set(calibration.PAIRED_BAND)
    for pair, (_, _, text) in calibration.PAIRED_BAND.items():
        shape = calibration.PAIRED_SHAPE[pair]
        comparisons = int(text.split()[0])
        held = int(text.split(" holds ")[1].split()[0])
        assert shape in shapes() and held >= COVERAGE_TARGET * comparisons, pair
        assert f", {shape_name(shape)}" in text, pair
    low, high, text = calibration.UNCALIBRATED_BAND
    shape = calibration.UNCALIBRATED_SHAPE
    assert shape in shapes() and f", {shape_name(shape)}" in text
    points, held = int(text.split(" the band of ")[1].split()[0]), \
        int(text.split(" holds ")[1].split()[0])
    assert held >= COVERAGE_TARGET * points


@given(st.lists(st.lists(st.floats(min_value=0.05, max_value=20), min_size=1, max_size=30),
                min_size=2, max_size=5))
def test_the_shape_chosen_is_the_narrowest_whose_band_built_without_a_set_holds_80_percent(
        sets):
    groups = {f"set {i}": ratios for i, ratios in enumerate(sets)}
    every = [r for ratios in sets for r in ratios]
    choice = choose_shape(groups)
    assert choice.rows == tuple(held_without(groups, choice.shape))
    assert choice.band == band(every, choice.shape)
    width = np.log(choice.band[1] / choice.band[0])
    pooled = {shape: held_without(groups, shape) for shape in shapes()}
    meets = {shape: sum(h for _, _, h in rows) >= COVERAGE_TARGET * len(every)
             for shape, rows in pooled.items()}
    assert choice.met == any(meets.values())
    for shape, met in meets.items():
        low, high = band(every, shape)
        if choice.met and met:
            assert np.log(high / low) >= width
        if not choice.met:
            assert np.log(high / low) <= width


def test_a_paired_band_rests_on_enough_comparisons_and_says_what_it_holds_left_out():
    for (first, second), (low, high, basis_text) in calibration.PAIRED_BAND.items():
        assert {first, second} <= set(calibration.CONSTANTS)
        comparisons = int(basis_text.split()[0])
        held = int(basis_text.split(" holds ")[1].split()[0])
        assert comparisons >= MIN_COMPARISONS and 0 <= held <= comparisons, (first, second)
        assert low < 1 < high, (first, second)
    assert ("cdna4", "cdna4") not in calibration.PAIRED_BAND     # 14 comparisons, too few


def test_an_engines_band_rests_on_its_sets_of_a_family_left_out():
    """Each engine band (what bench/serving_fit.py printed; the refit in `./dev trials` checks
    them): two sets or more of one engine on one fitted family, their points among the
    family's left-out ones, held at 80 % by the band built without each set, its shape named."""
    assert set(calibration.ENGINE_BAND_SHAPE) == set(calibration.ENGINE_BAND) == set(
        calibration.ENGINE_LEFT_OUT)
    for (arch, engine), found in calibration.ENGINE_LEFT_OUT.items():
        family = calibration.LEFT_OUT[arch]
        assert len(found.sets) >= 2 and found.points < family.points, (arch, engine)
        assert {name for name, _, _ in found.sets} <= {name for name, _, _ in family.sets}
        assert all(name.endswith(f" {engine}") for name, _, _ in found.sets)
        assert found.held >= COVERAGE_TARGET * found.points, (arch, engine)
        low, high, text = calibration.ENGINE_BAND[(arch, engine)]
        assert text.startswith(f"{found.points} ") and f" on {engine} " in text
        shape = calibration.ENGINE_BAND_SHAPE[(arch, engine)]
        assert shape in shapes() and f"in turn; {shape_name(shape)}" in text
        assert 0 < low < 1 < high, (arch, engine)


def test_every_fitted_family_says_what_its_band_holds_left_out():
    assert set(calibration.LEFT_OUT) == set(calibration.CONSTANTS)
    for arch, found in calibration.LEFT_OUT.items():
        low, high, basis = calibration.BAND[arch]
        assert basis.startswith(f"{found.points} "), arch
        assert 0 <= found.held <= found.points and 0 < found.mean_abs_error <= found.max_abs_error


def test_a_small_joint_fit_lowers_the_error_and_a_left_out_set_keeps_its_engines_terms():
    """The default run's sample of the refit: CDNA 4's points (one GPU; SGLang, ATOM, vLLM), two
    rounds of coordinate descent over the family's constants and the engines' terms; then one
    set left out and predicted with what the others give, its engine's terms included."""
    cdna4 = [c for c in configurations(shipped_serving_points().points)
             if c.arch == "cdna4" and c.curve(PRIOR, NEUTRAL)]
    fitted = fit(cdna4, rounds=2)
    k, engines = fitted.families["cdna4"], fitted.engines
    assert objective(cdna4, k, engines) < 0.7 * objective(cdna4, PRIOR, NEUTRALS)
    for name, (low, high, _, _) in BOUNDS.items():
        assert low <= getattr(k, name) <= high, name
    assert engines["atom"] != NEUTRAL            # fitted: ATOM is not SGLang
    assert engines["trt"] == NEUTRAL              # no points on CDNA 4: left neutral
    left = "deepseek-r1 MI355X atom"
    assert left in {fold(c) for c in cdna4}
    without = fit([c for c in cdna4 if fold(c) != left], rounds=2)
    # ATOM's terms now rest on its gpt-oss-120b points alone: the set left out is predicted
    # with them, better than the prior does.
    out = [c for c in cdna4 if fold(c) == left]
    assert objective(out, without.families["cdna4"], without.engines) \
        < objective(out, PRIOR, NEUTRALS)


@given(st.lists(st.floats(min_value=0.01, max_value=100), min_size=1, max_size=200))
def test_the_band_holds_at_least_80_percent_of_the_ratios_by_construction(ratios):
    low, high = band(ratios)
    inside = sum(low <= r <= high for r in ratios)
    assert inside >= 0.8 * len(ratios)
    assert low in ratios and high in ratios


@pytest.mark.trials
@pytest.mark.slow(seconds=1200)
def test_refitting_the_measured_points_gives_the_stored_constants_and_bands():
    report = fit_all()
    assert set(report.constants) == set(calibration.CONSTANTS)
    for arch, k in report.constants.items():
        stored = calibration.CONSTANTS[arch]
        assert stored.decode_hbm_efficiency == pytest.approx(k.decode_hbm_efficiency, abs=0.005)
        assert stored.prefill_efficiency == pytest.approx(k.prefill_efficiency, abs=0.005)
        assert stored.layer_overhead_s == pytest.approx(k.layer_overhead_s, abs=0.5e-6)
        assert stored.kernel_share == pytest.approx(k.kernel_share, abs=0.005)
        assert stored.decode_compute_efficiency == pytest.approx(k.decode_compute_efficiency,
                                                                 abs=0.005)
        assert stored.token_overhead_s == pytest.approx(k.token_overhead_s, abs=0.005e-6)
        assert stored.expert_gemm_scale == pytest.approx(k.expert_gemm_scale, abs=0.005)
    for name, e in report.engines.items():
        stored = calibration.ENGINES[name]
        for field, (_, _, _, step) in ENGINE_BOUNDS.items():
            assert getattr(stored, field) == pytest.approx(getattr(e, field), abs=step / 2), \
                (name, field)
    pooled = report.pooled
    assert pooled is not None and calibration.POOLED == pooled
    assert calibration.POOLED_ENGINES == report.pooled_engines
    for arch, (low, high, n) in report.bands.items():
        assert calibration.BAND_SHAPE[arch] == report.shapes[arch].shape, arch
        assert report.shapes[arch].met, arch
        stored_low, stored_high, stored_basis = calibration.BAND[arch]
        assert (stored_low, stored_high) == pytest.approx((low, high), abs=0.002), arch
        assert stored_low <= low and stored_high >= high   # rounded outward
        assert stored_basis == basis(report, arch)
        ratios = [e.ratio for e in report.left_out[arch]]
        assert len(ratios) == n
        assert sum(stored_low <= r <= stored_high for r in ratios) >= 0.8 * n
    for arch, rows in report.coverage.items():
        stored = calibration.LEFT_OUT[arch]
        assert stored.sets == tuple(rows), arch
        assert stored.points == len(report.left_out[arch]) == sum(n for _, n, _ in rows)
        errors = [abs(e.error) for e in report.left_out[arch]]
        assert stored.mean_abs_error == pytest.approx(sum(errors) / len(errors), abs=0.05)
        assert stored.max_abs_error == pytest.approx(max(errors), abs=0.05)
        family = report.family_out.get(arch)
        if family:
            assert stored.family_mean_abs_error == pytest.approx(
                sum(abs(e.error) for e in family) / len(family), abs=0.05)
    assert set(report.paired) == set(calibration.PAIRED_BAND)
    for arch, (low, high, _) in report.paired.items():
        assert calibration.PAIRED_SHAPE[arch] == report.paired_shapes[arch].shape, arch
        assert report.paired_shapes[arch].met, arch
        stored_low, stored_high, stored_basis = calibration.PAIRED_BAND[arch]
        assert (stored_low, stored_high) == pytest.approx((low, high), abs=0.002), arch
        assert stored_low <= low and stored_high >= high   # rounded outward
        assert stored_basis == paired_basis(report, arch)
    assert set(report.engine_shapes) == set(calibration.ENGINE_BAND)
    for key, choice in report.engine_shapes.items():
        assert calibration.ENGINE_BAND_SHAPE[key] == choice.shape, key
        assert calibration.ENGINE_LEFT_OUT[key].sets == choice.rows, key
        stored_low, stored_high, stored_basis = calibration.ENGINE_BAND[key]
        assert (stored_low, stored_high) == pytest.approx(choice.band, abs=0.002), key
        assert stored_basis == engine_basis(report, *key)
    low, high, n = report.uncalibrated
    assert report.uncalibrated_choice is not None
    assert calibration.UNCALIBRATED_SHAPE == report.uncalibrated_choice.shape
    stored_low, stored_high, stored_basis = calibration.UNCALIBRATED_BAND
    assert stored_basis == uncalibrated_basis(report)
    assert (stored_low, stored_high) == pytest.approx((low, high), abs=0.002)
    assert stored_low <= low and stored_high >= high


def test_the_measured_models_are_those_the_shipped_points_are_of():
    """A scenario's answer says when its model is not among them (calibration.model_measured):
    the list must follow the points."""
    models = {p.model for p in shipped_serving_points().points}
    assert set(calibration.MEASURED_MODELS) == models
    assert calibration.model_measured("deepseek-r1")
    # Llama 3.3 70B has Llama 3.1 70B's shape: measured; a model of no measured shape is not.
    assert calibration.model_measured("llama-3.3-70b")
    assert not calibration.model_measured("mixtral-8x22b")
