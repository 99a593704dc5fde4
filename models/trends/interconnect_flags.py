"""Flags over an InterconnectTrend: doubling times, the newest bandwidth ratio, switch
capacity growth."""

from __future__ import annotations

from models.trends import text
from models.trends.types import BandwidthRatio, Flag, InterconnectTrend, Series


def interconnect_flags(trend: InterconnectTrend) -> list[Flag]:
    """interconnect_trend per bandwidth series with a fit, bandwidth_ratio for the newest
    generation (warning when the ratio grew since the generation before), switch_capacity
    per switch series with a fit."""
    flags = [_series_flag("interconnect_trend", s) for s in (trend.scale_up, trend.scale_out)]
    flags += [_series_flag("switch_capacity", s) for s in trend.switch_capacity]
    ratio = _ratio_flag(trend.ratios)
    return [f for f in [*flags, ratio] if f is not None]


def _series_flag(kind: str, series: Series) -> Flag | None:
    if series.fit is None:
        return None
    first, last = series.points[0], series.points[-1]
    how = f"; {series.formula}" if series.formula else ""
    message = (f"{series.title}: {text.growth(series.fit)} ({text.fit_basis(series.fit)}), "
               f"from {first.label} {text.cited(first)} to {last.label} {text.cited(last)}"
               f"{how}.")
    ids = tuple(dict.fromkeys(i for p in series.points for i in p.observation_ids))
    return Flag(kind, "info", series.title, message, ids)


def _ratio_flag(ratios: tuple[BandwidthRatio, ...]) -> Flag | None:
    if not ratios:
        return None
    newest = ratios[-1]
    previous = ratios[-2] if len(ratios) > 1 else None
    grew = previous is not None and newest.ratio > previous.ratio
    up, out = newest.scale_up, newest.scale_out
    message = (f"Scale-up vs scale-out bandwidth per GPU, newest generation: {newest.formula} "
               f"({up.source}, {text.day(up.as_of, up.as_of_precision)}; {out.source}, "
               f"{text.day(out.as_of, out.as_of_precision)})")
    if previous is not None:
        trend = "grew" if grew else "did not grow"
        message += (f"; the ratio {trend} from {previous.ratio:.1f}x "
                    f"({previous.scale_up.label} vs {previous.scale_out.label})")
    ids = (*up.observation_ids, *out.observation_ids,
           *((previous.scale_up.observation_ids + previous.scale_out.observation_ids)
             if previous else ()))
    return Flag("bandwidth_ratio", "warning" if grew else "info",
                f"{up.item} vs {out.item}", message + ".", tuple(dict.fromkeys(ids)))
