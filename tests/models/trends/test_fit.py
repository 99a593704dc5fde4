"""Log-linear fits: doubling time from log2(value) against years."""

from datetime import date

import pytest

from models.trends import log_linear_fit
from models.trends.types import TrendPoint


def point(day: date, value: float) -> TrendPoint:
    return TrendPoint("x", "X", "m", value, value, value, "GB/s", day, "s", "C", (1,))


def doubling_every_two_years(start: float, years: int) -> list[TrendPoint]:
    return [point(date(2014 + 2 * n, 7, 1), start * 2 ** n) for n in range(years // 2 + 1)]


def test_data_doubling_every_two_years_fits_a_two_year_doubling_time():
    fit = log_linear_fit(doubling_every_two_years(100, 10))
    assert fit.doubling_years == pytest.approx(2.0, rel=1e-3)
    assert fit.growth_per_year == pytest.approx(2 ** 0.5 - 1, rel=1e-3)
    assert fit.r2 == pytest.approx(1.0)
    assert (fit.n, fit.first, fit.last) == (6, date(2014, 7, 1), date(2024, 7, 1))
    assert fit.value_at(date(2026, 7, 1)) == pytest.approx(100 * 2 ** 6, rel=1e-2)


def test_a_flat_or_falling_series_has_no_doubling_time():
    fit = log_linear_fit([point(date(2020, 1, 1), 8), point(date(2024, 1, 1), 4)])
    assert fit.doubling_years is None
    assert fit.growth_per_year < 0


@pytest.mark.parametrize("points", [
    [],
    [point(date(2020, 1, 1), 10)],
    [point(date(2024, 1, 1), 7.2), point(date(2024, 3, 18), 14.4)],  # weeks apart
    [point(date(2020, 1, 1), 0), point(date(2024, 1, 1), 10)],       # no log of zero
])
def test_no_fit_without_two_positive_points_a_year_apart(points):
    assert log_linear_fit(points) is None
