"""The briefing's result charts as inline SVG: the C2C decision map and the TCO break-even."""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from reports.chart_base import COLORS, WIDTH, log_axis, style, svg
from reports.context import ScenarioLine, TcoLine
from reports.formatting import format_number
from reports.views import scale_up_share

# Colour by class: green compute-bound, blue performance-sensitive, orange communication-bound.
CLASS_COLORS = (COLORS[2], COLORS[0], COLORS[1])


def c2c_map_chart(scenarios: Sequence[ScenarioLine], thresholds: tuple[float, float]) -> Markup:
    """Each scenario on the C2C axis (log) with the class boundaries, and beside it the
    scale-up vs scale-out share of its C2C. The dot colours' classes are in a legend under
    the chart, so no class name has to fit between two boundaries."""
    with style("c2c"):
        figure = Figure(figsize=(WIDTH, 1.55 + 0.22 * len(scenarios)))
        grid = figure.add_gridspec(1, 2, width_ratios=(3, 1), wspace=0.06)
        place, share = figure.add_subplot(grid[0]), figure.add_subplot(grid[1])
        rows = list(range(len(scenarios)))[::-1]   # first scenario on top
        _c2c_axis(place, scenarios, rows, thresholds)
        _share_axis(share, scenarios, rows)
        height = figure.get_figheight()
        figure.subplots_adjust(left=0.27, right=0.98, top=1 - 0.3 / height,
                               bottom=0.85 / height)
        low, high = thresholds
        figure.legend(handles=[
            Line2D([], [], marker="o", linestyle="none", color=color, label=label)
            for color, label in zip(CLASS_COLORS, (
                f"compute-bound (< {format_number(low)})",
                f"performance-sensitive ({format_number(low)}–{format_number(high)})",
                f"communication-bound (> {format_number(high)})"), strict=True)],
            loc="lower center", bbox_to_anchor=(0.5, 0.0), ncol=3, handletextpad=0.2,
            columnspacing=1.5)
        return svg(figure)


def _c2c_axis(axis: Axes, scenarios: Sequence[ScenarioLine], rows: list[int],
              thresholds: tuple[float, float]) -> None:
    low, high = thresholds
    positive = [s.c2c for s in scenarios if s.c2c > 0]
    left, right = min([*positive, low]) / 2, max([*positive, high]) * 2
    log_axis(axis, "x")
    axis.set_xlim(left, right)
    for x in thresholds:
        axis.axvline(x, color="#555555", linewidth=0.8, linestyle="--")
    for scenario, row in zip(scenarios, rows, strict=True):
        if scenario.c2c > 0:
            axis.plot([scenario.c2c], [row], marker="o", linestyle="none",
                      color=CLASS_COLORS[_class_index(scenario.c2c, thresholds)])
        else:
            # Zero has no place on a log axis: say it in words at the axis's left edge. A
            # zero C2C is communication hidden behind compute, not its absence.
            axis.annotate(_zero_c2c(scenario), (left, row), xytext=(4, 0),
                          textcoords="offset points", va="center", ha="left", fontsize=6.5,
                          color="#444444", style="italic")
    axis.set_yticks(rows, [s.name for s in scenarios])
    axis.set_ylim(-0.7, len(scenarios) - 0.3)
    axis.set_xlabel("C2C = communication / computation time (log scale)")
    axis.grid(axis="y", visible=False)


def _zero_c2c(scenario: ScenarioLine) -> str:
    """Words for a C2C of zero: what was hidden, when the result says how much there was."""
    if scenario.c2c_link:
        return (f"C2C = 0: its communication (C2C {format_number(scenario.c2c_link)} unhidden) "
                "overlaps compute")
    return "C2C = 0: no exposed communication"


def _class_index(c2c: float, thresholds: tuple[float, float]) -> int:
    return 0 if c2c < thresholds[0] else (1 if c2c <= thresholds[1] else 2)


def _share_axis(axis: Axes, scenarios: Sequence[ScenarioLine], rows: list[int]) -> None:
    shares = [scale_up_share(s) for s in scenarios]
    up = [100 * s if s is not None else 0 for s in shares]
    out = [100 - u if s is not None else 0 for u, s in zip(up, shares, strict=True)]
    axis.set_axisbelow(True)
    axis.barh(rows, up, color=COLORS[0], height=0.6, label="scale-up")
    axis.barh(rows, out, left=up, color=COLORS[1], height=0.6, label="scale-out")
    axis.set_xlim(0, 100)
    axis.set_ylim(-0.7, len(scenarios) - 0.3)
    axis.set_yticks(rows, [""] * len(rows))
    axis.set_xlabel("share of C2C (%)")
    axis.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, fontsize=6.5,
                handlelength=1)
    axis.grid(axis="y", visible=False)


def tco_chart(lines: Sequence[TcoLine]) -> Markup:
    """Break-even speed-up s* with its P10–P90 range, against the C2C model's speed-up."""
    with style("tco"):
        figure = Figure(figsize=(WIDTH, 1.1 + 0.3 * len(lines)))
        axis = figure.add_subplot()
        rows = list(range(len(lines)))[::-1]
        for line, row in zip(lines, rows, strict=True):
            _tco_row(axis, line, row)
        axis.axvline(1.0, color="#555555", linewidth=0.8, linestyle="--")
        axis.plot([], [], "o", color=COLORS[0], label="break-even speed-up s* (bar: P10–P90)")
        axis.plot([], [], "D", color=COLORS[1], label="C2C model speed-up s = JCT out / JCT up")
        axis.set_yticks(rows, [line.name for line in lines])
        axis.set_ylim(-0.7, len(lines) - 0.3)
        axis.set_xlabel("speed-up of the scale-up option (x)")
        axis.legend(loc="lower left", bbox_to_anchor=(0, 1.0), ncol=2)
        axis.grid(axis="y", visible=False)
        height = figure.get_figheight()
        figure.subplots_adjust(left=0.3, right=0.97, top=1 - 0.4 / height, bottom=0.5 / height)
        return svg(figure)


def _tco_row(axis: Axes, line: TcoLine, row: int) -> None:
    """s* as a dot on its P10–P90 bar (no bar without both ends), s as a diamond."""
    if line.break_even_p10 is not None and line.break_even_p90 is not None:
        axis.plot([line.break_even_p10, line.break_even_p90], [row, row], color=COLORS[0],
                  linewidth=2.5, alpha=0.45)
    axis.plot([line.break_even_speedup], [row], "o", color=COLORS[0])
    if line.speedup is not None:
        axis.plot([line.speedup], [row], "D", color=COLORS[1])
