"""How figures print: no float noise, ranges, dates at the source's precision."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from reports.formatting import (
    format_date,
    format_number,
    format_number_list,
    format_percent,
    format_range,
    format_time,
    format_years,
)


@pytest.mark.parametrize(("value", "shown"), [
    (1800.0000000000002, "1,800"), (0.0806, "0.0806"), (51.2, "51.2"), (218_400_000, "218,400,000"),
    (0, "0"), (-3.25, "-3.25"),
])
def test_numbers_print_without_float_noise(value, shown):
    assert format_number(value) == shown


@pytest.mark.parametrize(("value", "shown"), [
    (2.25e15, "2.25 × 10¹⁵"), (1.8e11, "1.8 × 10¹¹"), (1.5e-5, "1.5 × 10⁻⁵"),
    (-2e10, "-2 × 10¹⁰"), (999_999_999, "999,999,999"),
])
def test_very_large_and_small_numbers_print_as_powers_of_ten(value, shown):
    assert format_number(value) == shown


def test_number_lists_collapse_runs():
    assert format_number_list([5, 1, 2, 3, 7, 8]) == "1–3, 5, 7, 8"
    assert format_number_list([4]) == "4" and format_number_list([]) == "none"


def test_fewer_significant_digits_on_request():
    assert format_number(0.31415, 3) == "0.314" and format_number(12.0, 3) == "12"


@pytest.mark.parametrize(("low", "high", "shown"), [
    (120, 132, "120–132"), (120, 120, "120"), (7.2, None, "7.2"),
])
def test_a_range_prints_only_when_the_ends_differ(low, high, shown):
    assert format_range(low, high) == shown


@pytest.mark.parametrize(("precision", "shown"), [
    ("day", "2024-03-18"), ("month", "2024-03"), ("year", "2024"),
])
def test_dates_print_at_the_precision_the_source_gives(precision, shown):
    assert format_date(date(2024, 3, 18), precision) == shown


def test_a_missing_date_says_so():
    assert format_date(None) == "undated"


def test_percent_and_doubling_time():
    assert format_percent(0.412) == "41.2 %"
    assert format_percent(0.412, signed=True) == "+41.2 %"
    assert format_percent(None) == "n/a"
    assert format_years(2.071) == "2.07 years"
    assert format_years(None) == "does not double"


def test_a_moment_prints_to_the_minute_in_utc_or_by_the_pattern_given():
    moment = datetime(2026, 11, 22, 6, 5, 59, tzinfo=UTC)
    assert format_time(moment) == "2026-11-22 06:05 UTC"
    assert (format_time(moment, "%Y-%m-%d"), format_time(moment, "%H:%M")) == ("2026-11-22",
                                                                             "06:05")
