"""How flag messages print numbers, ranges and dates (one place, so every flag reads alike)."""

from __future__ import annotations

import math
from datetime import date

from models.trends.types import LogLinearFit, TrendPoint

_NO_UNIT = ("dimensionless", "")


def number(value: float) -> str:
    """About four significant figures, thousands separated: 1,800 / 115.2 / 7.2 / 0.0771."""
    if not math.isfinite(value):
        return str(value)
    if float(value).is_integer():
        return f"{value:,.0f}"
    digits = max(0, 3 - math.floor(math.log10(abs(value))))
    return f"{value:,.{digits}f}".rstrip("0").rstrip(".")


def quantity(low: float, high: float, unit: str) -> str:
    """`30 kW` for a point, `20–40 kW` for a range (a dimensionless figure has no unit)."""
    suffix = "" if unit in _NO_UNIT else f" {unit}"
    if low == high:
        return f"{number(low)}{suffix}"
    return f"{number(low)}–{number(high)}{suffix}"


def day(value: date, precision: str = "day") -> str:
    """A date as precise as its source: 2025, 2025-03 or 2025-03-18; "undated" where the
    source gives none (the date is then only where the figure's valid time starts)."""
    if precision == "none":
        return "undated"
    if precision == "year":
        return f"{value.year}"
    if precision == "month":
        return f"{value.year}-{value.month:02d}"
    return value.isoformat()


def percent(fraction: float) -> str:
    """0.41 -> `+41 %`."""
    return f"{fraction * 100:+.0f} %"


def cited(point: TrendPoint) -> str:
    """`132 kW (supermicro-gb200-nvl72, 2024)`: a point's value with its source and date."""
    return (f"{quantity(point.low, point.high, point.unit)} "
            f"({point.source}, {day(point.as_of, point.as_of_precision)})")


def growth(fit: LogLinearFit) -> str:
    """`+41 %/yr, doubling every 2.0 years` (or `not growing`)."""
    doubling = fit.doubling_years
    if doubling is None:
        return f"{percent(fit.growth_per_year)}/yr, not doubling"
    return f"{percent(fit.growth_per_year)}/yr, doubling every {doubling:.1f} years"


def fit_basis(fit: LogLinearFit) -> str:
    """`log-linear fit over 6 points from 2016 to 2026, r² 0.98` (years: the points' own
    dates may be only year-precise)."""
    return (f"log-linear fit over {fit.n} points from {fit.first.year} to {fit.last.year}, "
            f"r² {fit.r2:.2f}")


def listing(parts: list[str], limit: int = 5) -> str:
    """`a; b; c` with at most `limit` parts and `; and 3 more` after them."""
    shown = "; ".join(parts[:limit])
    return shown if len(parts) <= limit else f"{shown}; and {len(parts) - limit} more"
