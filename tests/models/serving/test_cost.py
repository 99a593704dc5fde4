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


def test_two_estimates_with_one_engine_take_the_band_of_their_families_pair():
    """GB200 NVL72 against B200, both on Blackwell's constants: what makes one estimate wrong
    makes the other wrong too, so the margin is banded by their errors' ratio alone."""
    wide = (0.5, 4.6)
    a = priced("gb200-nvl72", 4.5, Point(1, 3000, 50), wide, "blackwell", "sglang")
    b = priced("b200-hgx", 4.0, Point(1, 1600, 50), wide, "blackwell", "sglang")
    paired = {("blackwell", "blackwell"): (0.8, 1.25)}
    margin = cheaper_at_target([a, b], paired)
    ratio = a.usd_per_mtok / b.usd_per_mtok
    assert (margin.cheaper, margin.basis) == ("gb200-nvl72", "paired")
    assert (margin.p10, margin.p90) == pytest.approx((1 - ratio / 0.8, 1 - ratio / 1.25))
    assert margin.p10 < margin.saving < margin.p90 and not margin.too_close
    widest = cheaper_at_target([a, b])       # no paired band known: each error taken alone
    assert widest.basis == "widest" and widest.too_close
    assert widest.p10 < margin.p10 and widest.p90 > margin.p90


def test_the_pair_of_two_families_is_read_with_the_cheaper_first():
    """The model under-predicts one family more than another: the band of (cheaper's family,
    dearer's family) is the one that applies, not its reverse."""
    b200 = priced("b200", 4.0, Point(1, 3000, 50), (0.5, 4.6), "blackwell", "vllm")
    h100 = priced("h100", 2.0, Point(1, 800, 50), (0.7, 1.4), "hopper", "vllm")
    paired = {("blackwell", "hopper"): (0.6, 1.7), ("hopper", "blackwell"): (0.1, 9.0)}
    margin = cheaper_at_target([h100, b200], paired)
    ratio = b200.usd_per_mtok / h100.usd_per_mtok
    assert margin.cheaper == "b200" and margin.basis == "paired"
    assert (margin.p10, margin.p90) == pytest.approx((1 - ratio / 0.6, 1 - ratio / 1.7))


@pytest.mark.parametrize(("family", "engine"), [
    (None, None),             # a measured curve
    ("blackwell", "trt"),     # another engine
    ("cdna4", "sglang"),      # a pair of families without a paired band
])
def test_a_measured_curve_or_another_engine_or_an_unknown_pair_is_never_paired(family, engine):
    a = priced("a", 4.0, Point(1, 3000, 50), (0.5, 4.6), "blackwell", "sglang")
    b = priced("b", 4.0, Point(1, 1600, 50), (0.5, 4.6), family, engine)
    paired = {("blackwell", "blackwell"): (0.8, 1.25), ("blackwell", "hopper"): (0.8, 1.25)}
    assert cheaper_at_target([a, b], paired).basis == "widest"


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
