"""Rack and system power over time against the cooling thresholds people plan with."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime

import pandas as pd

from models.trends import text
from models.trends.fit import log_linear_fit
from models.trends.live import dated, normalise, resolved_points
from models.trends.types import (
    Crossing,
    DensityTrend,
    Flag,
    Series,
    Threshold,
    TrendPoint,
)

RACK_METRIC = "rack_it_power"
SYSTEM_METRIC = "system_power"
THRESHOLD_METRIC = "cooling_limit_per_rack"
_LABELS = {RACK_METRIC: "rack IT power", SYSTEM_METRIC: "system power"}
# Every metric density_trend reads: a caller may hand it only these observations.
DENSITY_METRICS = (RACK_METRIC, SYSTEM_METRIC, THRESHOLD_METRIC)


def density_trend(obs: pd.DataFrame, *, on: date, cutoff: datetime) -> DensityTrend:
    """Rack IT power (NVL72-class racks) and system power (8-GPU servers) by as_of date, the
    cooling thresholds, the racks that cross them, and one fit over every point."""
    obs = normalise(obs)
    racks = _points(obs, RACK_METRIC, "rack", on, cutoff)
    systems = _points(obs, SYSTEM_METRIC, "system", on, cutoff)
    series = (Series(RACK_METRIC, "Rack IT power", "kW", tuple(racks), log_linear_fit(racks)),
              Series(SYSTEM_METRIC, "System power (8-GPU servers)", "kW", tuple(systems),
                     log_linear_fit(systems)))
    thresholds = tuple(_threshold(p) for p in sorted(
        resolved_points(obs, THRESHOLD_METRIC, on=on, cutoff=cutoff),
        key=lambda p: (p.high, p.low, p.item)))
    # Thresholds are per rack: a server's power is a share of a rack, so only racks cross.
    crossings = tuple(c for point in racks for c in crossings_of(point, thresholds))
    return DensityTrend(series=series, thresholds=thresholds, crossings=crossings,
                        fit=log_linear_fit([*racks, *systems]))


def _points(obs: pd.DataFrame, metric: str, kind: str, on: date,
            cutoff: datetime) -> list[TrendPoint]:
    points = dated(resolved_points(obs, metric, on=on, cutoff=cutoff, kinds={kind}))
    return [_with_group(p, kind) for p in points]


def _with_group(point: TrendPoint, group: str) -> TrendPoint:
    return replace(point, group=group)


def _threshold(point: TrendPoint) -> Threshold:
    return Threshold(key=point.item, label=point.label, low=point.low, high=point.high,
                     unit=point.unit, source=point.source, as_of=point.as_of,
                     observation_ids=point.observation_ids,
                     as_of_precision=point.as_of_precision)


def crossings_of(point: TrendPoint, thresholds: tuple[Threshold, ...]) -> list[Crossing]:
    """The thresholds a point is above (its low beyond their high) or within (overlapping)."""
    found = []
    for threshold in thresholds:
        if threshold.unit != point.unit:
            continue
        if point.low > threshold.high:
            found.append(Crossing(point, threshold.key, "above"))
        elif point.high >= threshold.low:
            found.append(Crossing(point, threshold.key, "within"))
    return found


def density_flags(trend: DensityTrend, *, on: date) -> list[Flag]:
    """A density_threshold flag per rack above the lowest (air-cooling) threshold, critical
    when above every threshold; one density_growth flag from the fit over every point."""
    thresholds = {t.key: t for t in trend.thresholds}
    above: dict[str, list[Crossing]] = {}
    for crossing in trend.crossings:
        if crossing.position == "above":
            above.setdefault(crossing.point.item, []).append(crossing)
    lowest = trend.thresholds[0].key if trend.thresholds else None
    flags = [_threshold_flag(cs, [thresholds[c.threshold] for c in cs], trend.thresholds, on)
             for cs in above.values() if lowest in {c.threshold for c in cs}]
    growth = _growth_flag(trend, on)
    return [*flags, *([growth] if growth else [])]


def _threshold_flag(crossings: list[Crossing], passed: list[Threshold],
                    thresholds: tuple[Threshold, ...], on: date) -> Flag:
    point = crossings[0].point
    cited = "; ".join(_cited_threshold(t) for t in passed)
    passed_keys = {t.key for t in passed}
    rest = [t for t in thresholds if t.key not in passed_keys]
    if rest:
        severity = "warning"
        tail = "not above " + "; ".join(_cited_threshold(t) for t in rest)
    else:
        severity = "critical"
        tail = "above every cooling threshold in the ledger, so only liquid cooling serves it"
    message = (f"{point.label} {_LABELS.get(point.metric, point.metric)} {text.cited(point)} "
               f"is above {cited}; {tail} (as of {on.isoformat()}).")
    ids = tuple(dict.fromkeys([*point.observation_ids,
                               *(i for t in passed for i in t.observation_ids)]))
    return Flag("density_threshold", severity, f"{point.item} / {point.metric}", message,
                ids, item=point.item, metric=point.metric)


def _cited_threshold(threshold: Threshold) -> str:
    return (f"{threshold.label} {text.quantity(threshold.low, threshold.high, threshold.unit)}"
            f" ({threshold.source}, {text.day(threshold.as_of, threshold.as_of_precision)})")


def _growth_flag(trend: DensityTrend, on: date) -> Flag | None:
    if trend.fit is None:
        return None
    points = [p for s in trend.series for p in s.points]
    first, last = min(points, key=lambda p: p.as_of), max(points, key=lambda p: p.as_of)
    per_series = [f"{s.title} {text.growth(s.fit)} ({s.fit.n} points)"
                  for s in trend.series if s.fit is not None]
    message = (f"Power per rack or system grew {text.growth(trend.fit)} "
               f"({text.fit_basis(trend.fit)}): from {first.label} {text.cited(first)} "
               f"to {last.label} {text.cited(last)}"
               + (f"; by series: {'; '.join(per_series)}" if per_series else "")
               + f" (as of {on.isoformat()}).")
    ids = tuple(dict.fromkeys(i for p in points for i in p.observation_ids))
    return Flag("density_growth", "info", "rack and system power", message, ids)
