"""A TCO comparison read as a decision: margin, band, flips and swings from stored figures."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from models.tco.decision import Band, flipping_inputs, job_cost_margin, margin_swings


def test_scale_up_cheaper_when_its_speedup_beats_the_break_even():
    # s = 1.2, s* = 1.1: cost_out / cost_up = 1.2 / 1.1, so scale-up saves 1 - 1.1/1.2.
    margin = job_cost_margin("nvl72", "hgx", Band(1.2, 1.1, 1.3), Band(1.1, 1.05, 1.15))
    assert (margin.cheaper, margin.dearer) == ("nvl72", "hgx")
    assert margin.saving == pytest.approx(1 - 1.1 / 1.2)
    assert margin.p10 == pytest.approx(1 - 1.15 / 1.1)     # s low with s* high
    assert margin.p90 == pytest.approx(1 - 1.05 / 1.3)     # s high with s* low
    assert margin.too_close   # the band holds both answers


def test_scale_out_cheaper_below_the_break_even_and_sure_when_the_band_stays_positive():
    margin = job_cost_margin("nvl72", "hgx", Band(1.0, 0.98, 1.02), Band(1.2, 1.18, 1.22))
    assert (margin.cheaper, margin.dearer) == ("hgx", "nvl72")
    assert margin.saving == pytest.approx(1 - 1.0 / 1.2)
    assert 0 < margin.p10 < margin.saving < margin.p90
    assert not margin.too_close


@given(s=st.floats(0.3, 5), s_star=st.floats(0.3, 5), spread=st.floats(0, 0.3))
def test_the_band_always_holds_the_point_margin(s, s_star, spread):
    margin = job_cost_margin("up", "out", Band(s, s * (1 - spread), s * (1 + spread)),
                             Band(s_star, s_star * (1 - spread / 2), s_star * (1 + spread / 2)))
    assert margin.p10 <= margin.saving + 1e-12 and margin.saving <= margin.p90 + 1e-12
    assert 0 <= margin.saving < 1


TORNADO = [
    {"input": "options.hgx.jct", "low": 9.0, "high": 12.0,
     "nvl72.job_cost_usd": [100.0, 100.0], "hgx.job_cost_usd": [90.0, 120.0]},
    {"input": "options.nvl72.pue", "low": 1.1, "high": 1.2,
     "nvl72.job_cost_usd": [99.0, 101.0], "hgx.job_cost_usd": [95.0, 95.0]},
    {"input": "finance.cost_of_capital", "low": 0.06, "high": 0.1,
     "nvl72.job_cost_usd": [100.0, 100.0], "hgx.job_cost_usd": [95.0, 95.0]},
]


def test_an_input_flips_the_answer_when_an_end_of_its_range_reverses_the_costs():
    flips = flipping_inputs(TORNADO, cheaper="hgx", dearer="nvl72")
    assert [(f.input, f.end, f.value) for f in flips] == [("options.hgx.jct", "high", 12.0)]


def test_swings_rank_the_inputs_by_how_far_they_move_the_margin_and_drop_the_inert():
    swings = margin_swings(TORNADO, cheaper="hgx", dearer="nvl72")
    assert [s.input for s in swings] == ["options.hgx.jct", "options.nvl72.pue"]
    assert swings[0].saving_at_low == pytest.approx(0.1)
    assert swings[0].saving_at_high == pytest.approx(-0.2)


def test_rows_without_both_options_costs_are_skipped():
    assert flipping_inputs([{"input": "x", "low": 1, "high": 2}], "a", "b") == []
    assert margin_swings([{"input": "x", "low": 1, "high": 2,
                           "a.job_cost_usd": [1.0, float("nan")],
                           "b.job_cost_usd": [1.0, 1.0]}], "a", "b") == []
