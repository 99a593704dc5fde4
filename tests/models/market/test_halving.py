"""Halving time of the median on-demand GPU-hour price, per GPU generation."""

from datetime import date, timedelta

import pandas as pd
import pytest

from models.market import halving_times
from models.trends import log_linear_fit
from models.trends.types import TrendPoint

START = date(2025, 1, 6)


def index_rows(gpu, prices, *, weeks=None, term="on_demand"):
    """Index rows in the columns halving_times reads: one median per weekly version."""
    weeks = weeks or range(len(prices))
    return [{"version_date": pd.Timestamp(START + timedelta(weeks=w)), "gpu": gpu,
             "term": term, "median": p} for w, p in zip(weeks, prices, strict=True)]


def halving(days, start_price, weeks):
    """An exact exponential: the price halves every `days` days."""
    return [start_price * 2 ** (-7 * w / days) for w in weeks]


def test_an_exact_exponential_halving_every_year_is_recovered():
    weeks = range(104)
    [fit] = halving_times(pd.DataFrame(index_rows("h100-sxm5", halving(365, 3.0, weeks))),
                          {"h100-sxm5": "hopper"})
    assert fit.halving_days == pytest.approx(365, rel=0.01)
    assert fit.doubling_days is None and fit.reason is None
    assert fit.change_per_year == pytest.approx(2 ** (-365.25 / 365) - 1, rel=1e-6)
    assert (fit.n_points, fit.first, fit.last, fit.gpus) == (
        104, START, START + timedelta(weeks=103), ("h100-sxm5",))
    assert fit.r2 == pytest.approx(1.0)


def test_one_gpu_gives_the_slope_of_the_trends_log_linear_fit():
    prices = [3.0, 2.9, 2.95, 2.7, 2.6, 2.65, 2.4]
    weeks = [0, 8, 16, 24, 32, 40, 56]    # over a year: the trends fit asks for one
    rows = index_rows("b200", prices, weeks=weeks)
    [fit] = halving_times(pd.DataFrame(rows), {"b200": "blackwell"})
    trends = log_linear_fit([TrendPoint("b200", "B200", "gpu_hour_price", p, p, p, "USD/hour",
                                        r["version_date"].date(), "s", "C", (1,))
                             for p, r in zip(prices, rows, strict=True)])
    assert fit.slope_log2_per_year == pytest.approx(trends.slope_log2_per_year, rel=1e-9)
    assert fit.r2 == pytest.approx(trends.r2, rel=1e-9)


def test_a_dearer_gpu_joining_the_generation_is_not_read_as_a_price_rise():
    # H100 halves every 365 days from week 0; H200, 40 % dearer, is listed from week 52 on
    # and falls at the same rate. Pooled in one fit its arrival would look like a rise.
    h100 = index_rows("h100-sxm5", halving(365, 3.0, range(104)))
    h200 = index_rows("h200-sxm5", halving(365, 4.2 * 2 ** (-7 * 52 / 365), range(52)),
                      weeks=range(52, 104))
    generations = {"h100-sxm5": "hopper", "h200-sxm5": "hopper", "b200": "blackwell"}
    fits = halving_times(pd.DataFrame(h100 + h200), generations)
    assert [f.generation for f in fits] == ["blackwell", "hopper"]
    blackwell, hopper = fits
    assert hopper.halving_days == pytest.approx(365, rel=0.01)
    assert (hopper.n_points, hopper.gpus) == (156, ("h100-sxm5", "h200-sxm5"))
    assert blackwell.halving_days is None and "0 on_demand price point(s)" in blackwell.reason


def test_a_rising_price_has_a_doubling_time_and_no_halving_time():
    prices = [2.0 * 2 ** (7 * w / 730) for w in range(30)]
    [fit] = halving_times(pd.DataFrame(index_rows("mi300x", prices)), {"mi300x": "cdna3"})
    assert fit.halving_days is None
    assert fit.doubling_days == pytest.approx(730, rel=0.01)
    assert fit.reason == "price rising, not falling"


@pytest.mark.parametrize(("weeks", "reason"), [
    ([0, 20], "2 on_demand price point(s)"),            # two points: no fit
    ([0, 4, 8, 12], "prices span 84 days"),             # under 90 days
])
def test_too_few_points_or_too_short_a_span_gives_no_fit(weeks, reason):
    rows = index_rows("b200", [5.0 - 0.1 * n for n in range(len(weeks))], weeks=weeks)
    [fit] = halving_times(pd.DataFrame(rows), {"b200": "blackwell"})
    assert fit.halving_days is None and fit.doubling_days is None
    assert reason in fit.reason


def test_only_the_asked_term_is_fitted():
    rows = (index_rows("b200", halving(365, 5.0, range(20)))
            + index_rows("b200", [1.0 * 1.01 ** w for w in range(20)], term="spot"))
    [fit] = halving_times(pd.DataFrame(rows), {"b200": "blackwell"})
    [spot] = halving_times(pd.DataFrame(rows), {"b200": "blackwell"}, term="spot")
    assert fit.halving_days == pytest.approx(365, rel=0.01)
    assert spot.halving_days is None and spot.doubling_days is not None
