"""Cost per million tokens along a curve, at a target interactivity, and the cheaper option."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from models.serving.cost import Point, at_target, cheaper_at_target, priced, usd_per_mtok

CURVE = [Point(1, 50, 100), Point(8, 300, 80), Point(64, 1200, 40), Point(256, 2000, 15)]


def test_a_million_tokens_costs_the_gpu_hours_they_take():
    # 1,000 tokens/s per GPU = 3.6 M tokens an hour: $3.60 an hour is $1 per million
    assert usd_per_mtok(3.6, 1000) == pytest.approx(1.0)


def test_the_target_interpolates_between_the_points_that_bracket_it():
    point = at_target(CURVE, 60)
    assert point.tok_s_per_user == 60
    assert 300 < point.tok_s_per_gpu < 1200 and 8 < point.concurrency < 64


def test_a_target_no_point_reaches_has_no_answer_and_an_easy_one_takes_the_best_point():
    assert at_target(CURVE, 150) is None
    assert at_target(CURVE, 10) == CURVE[-1]
    assert at_target([], 10) is None


def test_the_cheaper_option_carries_its_margin_and_the_widest_band():
    a = priced("nvl72", 4.0, Point(1, 4000, 50), (0.8, 1.2))
    b = priced("hgx", 3.0, Point(1, 1500, 50), (0.8, 1.2))
    margin = cheaper_at_target([b, a])
    assert (margin.cheaper, margin.dearer) == ("nvl72", "hgx")
    assert margin.saving == pytest.approx(1 - a.usd_per_mtok / b.usd_per_mtok)
    assert margin.p10 == pytest.approx(1 - (a.usd_per_mtok / 0.8) / (b.usd_per_mtok / 1.2))
    assert not margin.too_close
    assert cheaper_at_target([a]) is None


@given(st.lists(st.tuples(st.floats(1, 1e4), st.floats(1, 1e3)), min_size=1, max_size=12),
       st.floats(1, 1e3))
def test_the_target_point_never_beats_the_curve(pairs, target):
    curve = [Point(n + 1, g, u) for n, (g, u) in enumerate(pairs)]
    point = at_target(curve, target)
    if point is None:
        assert all(p.tok_s_per_user < target for p in curve)
    else:
        assert point.tok_s_per_user >= target * (1 - 1e-9)
        assert point.tok_s_per_gpu <= max(p.tok_s_per_gpu for p in curve) * (1 + 1e-9)
