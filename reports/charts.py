"""The briefing's charts as inline SVG strings (matplotlib, Agg, no pyplot).

Trend charts live here: power density and interconnect bandwidth against date, log y, with
their log-linear fits. The result charts (C2C map, TCO) are in reports.result_charts; style
and SVG output in reports.chart_base.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from markupsafe import Markup
from matplotlib.axes import Axes
from matplotlib.dates import DateFormatter, YearLocator
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from models.trends.types import DensityTrend, InterconnectTrend, LogLinearFit, Series, Threshold
from reports.chart_base import (
    COLORS,
    MARKERS,
    WIDTH,
    PointLabel,
    label_points,
    legend_below,
    log_axis,
    log_ticks,
    style,
    svg,
)
from reports.formatting import format_date, format_number, format_range, format_years
from reports.result_charts import c2c_map_chart, tco_chart
from reports.views import numbered_points

__all__ = ["c2c_map_chart", "density_chart", "interconnect_chart", "switch_chart", "tco_chart"]

BAND_COLORS = ("#9ecae1", "#fdd0a2", "#c7e9c0", "#dadaeb")


def fit_label(fit: LogLinearFit | None) -> str:
    if fit is None:
        return "no fit (fewer than two dated points)"
    return (f"{format_number(fit.growth_per_year * 100, 3)} %/yr, doubling "
            f"{format_years(fit.doubling_years)} (fit over {fit.n})")


def density_chart(trend: DensityTrend) -> Markup:
    """Rack and system power against date (log y), threshold bands labelled with their
    source, and each series' own fit (no fit through racks and servers together)."""
    series = [s for s in trend.series if s.points]
    with style("density"):
        figure = Figure(figsize=(WIDTH, 3.6))
        axis = _trend_axis(figure.add_subplot(), series)
        for n, threshold in enumerate(trend.thresholds):
            _band(axis, threshold, BAND_COLORS[n % len(BAND_COLORS)])
        handles = [_plot_series(axis, line, n) for n, line in enumerate(series)]
        axis.set_ylabel(f"power ({', '.join(sorted({s.unit for s in series}))})")
        legend_below(figure, handles)
        log_ticks(axis)
        label_points(figure, axis, [label for _, label in _labels(series)])
        return svg(figure)


def interconnect_chart(trend: InterconnectTrend) -> Markup:
    """Per-GPU scale-up and scale-out bandwidth, one axis, one unit, with fitted lines."""
    if trend.scale_up.unit != trend.scale_out.unit:
        raise ValueError(f"scale-up ({trend.scale_up.unit}) and scale-out "
                         f"({trend.scale_out.unit}) must share one unit to share an axis")
    return _panels("interconnect", [trend.scale_up, trend.scale_out], "per-GPU bandwidth")


def switch_chart(trend: InterconnectTrend) -> Markup:
    """Switch capacity by generation, one line per family; one panel per unit, so a figure
    in TB/s never shares an axis with one in Tb/s."""
    return _panels("switch", list(trend.switch_capacity), "switch capacity")


def _panels(name: str, series: Sequence[Series], quantity: str) -> Markup:
    """One log-y panel per unit, side by side, widths by number of points; one legend."""
    by_unit: dict[str, list[tuple[int, Series]]] = {}
    for n, line in enumerate(series):
        if line.points:
            by_unit.setdefault(line.unit, []).append((n, line))
    labels = _labels(series)
    with style(name):
        figure = Figure(figsize=(WIDTH, 3.2))
        widths = [max(sum(len(s.points) for _, s in group), 3) for group in by_unit.values()]
        grid = figure.add_gridspec(1, len(by_unit), width_ratios=widths, wspace=0.25)
        handles, axes = [], []
        for k, (unit, group) in enumerate(by_unit.items()):
            axis = _trend_axis(figure.add_subplot(grid[k]), [s for _, s in group])
            handles += [_plot_series(axis, line, n) for n, line in group]
            axis.set_ylabel(f"{quantity} ({unit})")
            axes.append((axis, group))
        legend_below(figure, handles)
        for axis, group in axes:
            log_ticks(axis)
            label_points(figure, axis, [label for line, label in labels
                                        if any(line is s for _, s in group)])
        return svg(figure)


def _trend_axis(axis: Axes, series: Sequence[Series]) -> Axes:
    """Log y, one tick a year, a little air either side of the first and last points."""
    log_axis(axis)
    axis.margins(y=0.12)
    axis.xaxis.set_major_locator(YearLocator(base=_year_step(series)))
    axis.xaxis.set_major_formatter(DateFormatter("%Y"))
    days = [p.as_of for line in series for p in line.points]
    pad = timedelta(days=max((max(days) - min(days)).days, 365) * 0.04)
    axis.set_xlim(min(days) - pad, max(days) + pad)
    return axis


def _year_step(series: Sequence[Series]) -> int:
    days = [p.as_of for line in series for p in line.points]
    return 1 if max(days).year - min(days).year <= 12 else 2


def _band(axis: Axes, threshold: Threshold, color: str) -> None:
    """A threshold as a shaded band, labelled with its range, source and date."""
    axis.axhspan(threshold.low, max(threshold.high, threshold.low * 1.02), color=color,
                 alpha=0.55, linewidth=0)
    axis.text(0.005, threshold.high,
              f"{threshold.label}: {format_range(threshold.low, threshold.high)} "
              f"{threshold.unit} ({threshold.source}, "
              f"{format_date(threshold.as_of, threshold.as_of_precision)})",
              transform=axis.get_yaxis_transform(), fontsize=6, va="top", color="#444444")


def _plot_series(axis: Axes, series: Series, n: int) -> Line2D:
    """Points with their low–high range as error bars, and the fit line. Returns the
    legend handle (marker and dashed fit, not the error-bar glyph)."""
    color, marker = COLORS[n % len(COLORS)], MARKERS[n % len(MARKERS)]
    points = series.points
    axis.errorbar([p.as_of for p in points], [p.value for p in points],
                  yerr=[[max(p.value - p.low, 0) for p in points],
                        [max(p.high - p.value, 0) for p in points]],
                  fmt=marker, color=color, capsize=2, elinewidth=0.8)
    if series.fit is not None:
        span = (series.fit.first, series.fit.last)
        axis.plot(span, [series.fit.value_at(d) for d in span], linestyle="--", linewidth=0.9,
                  color=color)
    return Line2D([], [], color=color, marker=marker, linestyle="--", linewidth=0.9,
                  label=f"{series.title} ({series.unit}): {fit_label(series.fit)}")


def _labels(series: Sequence[Series]) -> list[tuple[Series, PointLabel]]:
    """(series, label) of every point, numbered as the table under the chart numbers them
    (reports.views.numbered_points)."""
    return [(line, PointLabel(p.label, n, p.as_of, p.value))
            for n, line, p in numbered_points(series)]
