"""Poisson arrivals under a p99 limit on the time per output token (MLPerf Server): the load
an instance carries, and what the arrivals cost against a fixed concurrency."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from models.serving.arrivals import load_at_limit, peak_in_flight
from models.serving.cost import Point, at_target


def batched_curve(fixed_s: float, per_sequence_s: float, limit: int = 512) -> list[Point]:
    """A decode step of `fixed_s` plus `per_sequence_s` a sequence, at concurrency 1, 2, 4..."""
    points, concurrency = [], 1
    while concurrency <= limit:
        step = fixed_s + per_sequence_s * concurrency
        points.append(Point(concurrency, concurrency / step, 1 / step))
        concurrency *= 2
    return points


STEPS = st.tuples(st.floats(0.005, 0.05), st.floats(1e-5, 1e-3))


@given(STEPS, st.floats(0.01, 0.5))
def test_the_load_keeps_its_p99_batch_within_the_limit_and_a_heavier_one_would_not(steps, limit):
    curve = batched_curve(*steps)
    found = load_at_limit(curve, limit)
    if found is None:   # even a light load misses: a batch of one is already too slow
        assert 1 / curve[0].tok_s_per_user > limit * 0.999
        return
    peak = peak_in_flight(found.concurrency)
    assert peak <= curve[-1].concurrency * 1.000001
    fixed, per_sequence = steps
    if peak < curve[-1].concurrency * 0.999:   # the limit binds, not the batch
        # 1.5 % of slack: the curve interpolates the step log-log between its points.
        assert fixed + per_sequence * peak <= limit * 1.015
        assert fixed + per_sequence * peak_in_flight(found.concurrency * 1.05) > limit * 0.985


@given(STEPS, st.floats(0.02, 0.5))
def test_arrivals_carry_less_than_a_fixed_concurrency_at_the_same_time_per_token(steps, limit):
    """The queueing cost: under Poisson arrivals the mean batch must leave room for the p99
    one, so the throughput is below the fixed-concurrency curve's at that time per token."""
    curve = batched_curve(*steps)
    found = load_at_limit(curve, limit)
    fixed = at_target(curve, 1 / limit)
    if found is None or fixed is None:
        return
    assert found.tok_s_per_gpu < fixed.tok_s_per_gpu


@given(STEPS, st.floats(0.01, 0.25), st.floats(1.01, 4.0))
def test_a_looser_limit_never_carries_less(steps, limit, looser):
    curve = batched_curve(*steps)
    tight, loose = load_at_limit(curve, limit), load_at_limit(curve, limit * looser)
    if tight is not None:
        assert loose is not None and loose.tok_s_per_gpu >= tight.tok_s_per_gpu * 0.999999


def test_mlperfs_llama_limit_on_a_slow_step_is_a_lighter_load_than_the_batch_it_allows():
    # A 20 ms step plus 0.5 ms a sequence: 200 ms is reached at a batch of 360; Poisson
    # arrivals must keep their p99 batch there, a mean near 318 (318 + 2.33 x 17.8 = 360).
    curve = batched_curve(0.020, 0.0005, limit=1024)
    found = load_at_limit(curve, 0.200)
    assert found is not None and 300 < found.concurrency < 330
    assert 350 < peak_in_flight(found.concurrency) <= 361
    assert load_at_limit(curve, 0.015) is None     # faster than a batch of one
