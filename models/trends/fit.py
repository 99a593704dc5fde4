"""Log-linear trend fits: log2(value) against years, so the slope reads as doublings a year."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from models.trends.types import LogLinearFit, TrendPoint, years_since_2000

# Two points a few weeks apart (a switch ASIC and the tray built from it) say nothing about
# a rate per year; a fit needs its dates to span at least this long.
MIN_SPAN_DAYS = 365


def log_linear_fit(points: Sequence[TrendPoint], *,
                   min_span_days: int = MIN_SPAN_DAYS) -> LogLinearFit | None:
    """Least-squares fit of log2(value) on years since 2000 over the positive values; None
    with fewer than two of them or when their dates span less than `min_span_days`."""
    usable = [p for p in points if np.isfinite(p.value) and p.value > 0]
    if len(usable) < 2:
        return None
    first, last = min(p.as_of for p in usable), max(p.as_of for p in usable)
    if (last - first).days < min_span_days:
        return None
    x = np.array([years_since_2000(p.as_of) for p in usable])
    y = np.log2([p.value for p in usable])
    slope, intercept = np.polyfit(x, y, 1)
    residual = float(np.sum((y - (intercept + slope * x)) ** 2))
    total = float(np.sum((y - y.mean()) ** 2))
    r2 = 1.0 - residual / total if total > 0 else 1.0
    return LogLinearFit(n=len(usable), first=first, last=last,
                        slope_log2_per_year=float(slope), intercept_log2=float(intercept),
                        r2=r2)
