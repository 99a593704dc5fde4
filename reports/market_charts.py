"""The market chapter's chart: the GPU-hour price index over time as small multiples, one
panel per GPU with a line per term, so each panel holds a few lines instead of every GPU and
term on one axis."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, timedelta

from markupsafe import Markup
from matplotlib.axes import Axes
from matplotlib.dates import AutoDateLocator, DateFormatter
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from reports.chart_base import COLORS, MARKERS, WIDTH, log_axis, log_ticks, style, svg
from reports.context import MarketSeries

COLUMNS = 3
PANEL_HEIGHT = 1.7  # inches
# One colour and marker per term, the same in every panel (the legend is shared).
TERMS = ("on_demand", "spot", "reserved_1y", "reserved_3y", "capacity_block", "contract")


def market_chart(history: Sequence[MarketSeries]) -> Markup:
    """Median USD per GPU-hour at each dataset version: a panel per GPU (log scale, shared),
    a line per term, one legend of the terms under the panels. With one date only, a time
    axis would say nothing: the prices of that date side by side instead (snapshot_chart)."""
    if len({day for series in history for day, _ in series.points}) <= 1:
        return snapshot_chart(history)
    gpus = sorted({series.gpu for series in history})
    rows = -(-len(gpus) // COLUMNS)
    columns = min(COLUMNS, len(gpus))
    terms = sorted({series.term for series in history}, key=_term_order)
    with style("market"):
        figure = Figure(figsize=(WIDTH, PANEL_HEIGHT * rows + 0.5))
        axes = figure.subplots(rows, columns, sharey=True, squeeze=False)
        days = sorted({day for series in history for day, _ in series.points})
        for n, gpu in enumerate(gpus):
            axis = axes[n // columns][n % columns]
            for series in (s for s in history if s.gpu == gpu):
                on, prices = zip(*series.points, strict=True)
                k = terms.index(series.term)
                axis.plot(on, prices, marker=MARKERS[k % len(MARKERS)],
                          color=COLORS[k % len(COLORS)], linewidth=1.2, markersize=3.5)
            axis.set_title(gpu, fontsize=7.5)
            log_axis(axis)
            log_ticks(axis)
            _date_ticks(axis, days)
            axis.tick_params(axis="x", labelsize=6)
        for n in range(len(gpus), rows * columns):
            axes[n // columns][n % columns].set_visible(False)
        for row in axes:
            row[0].set_ylabel("USD/GPU-hour", fontsize=7)
        handles = [Line2D([], [], color=COLORS[k % len(COLORS)],
                          marker=MARKERS[k % len(MARKERS)], linewidth=1.2, markersize=3.5,
                          label=term.replace("_", " ")) for k, term in enumerate(terms)]
        height = figure.get_figheight()
        figure.subplots_adjust(left=0.09, right=0.98, top=1 - 0.25 / height,
                               bottom=0.75 / height, hspace=0.75, wspace=0.12)
        figure.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=6.5,
                      handlelength=2.5)
        return svg(figure)


def snapshot_chart(history: Sequence[MarketSeries]) -> Markup:
    """One date's median USD per GPU-hour: a column per GPU, the terms side by side in it
    (each its own x position, so two terms at one price do not hide each other), log y."""
    gpus = sorted({series.gpu for series in history})
    terms = sorted({series.term for series in history}, key=_term_order)
    step = 0.7 / max(len(terms), 1)   # the terms share 70 % of a column's width
    with style("market"):
        figure = Figure(figsize=(WIDTH, 2.1))
        axis = figure.add_subplot()
        for series in history:
            k = terms.index(series.term)
            x = gpus.index(series.gpu) + (k - (len(terms) - 1) / 2) * step
            axis.plot([x] * len(series.points), [price for _, price in series.points],
                      marker=MARKERS[k % len(MARKERS)], color=COLORS[k % len(COLORS)],
                      linestyle="none", markersize=4)
        log_axis(axis)
        log_ticks(axis)
        axis.set_xticks(range(len(gpus)), [wrapped_key(gpu) for gpu in gpus], fontsize=6.5)
        axis.set_xlim(-0.6, len(gpus) - 0.4)
        axis.grid(axis="x", visible=False)
        axis.set_ylabel("USD/GPU-hour", fontsize=7)
        day = next(day for series in history for day, _ in series.points)
        axis.set_title(f"median of the offers valid on {day.isoformat()}", fontsize=7.5)
        handles = [Line2D([], [], color=COLORS[k % len(COLORS)], linestyle="none",
                          marker=MARKERS[k % len(MARKERS)], markersize=4,
                          label=term.replace("_", " ")) for k, term in enumerate(terms)]
        height = figure.get_figheight()
        figure.subplots_adjust(left=0.09, right=0.98, top=1 - 0.25 / height,
                               bottom=0.7 / height)
        figure.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=6.5)
        return svg(figure)


def wrapped_key(key: str, width: int = 10) -> str:
    """An item key broken after a hyphen into lines of at most `width` characters where it
    can be ("a100-sxm4-40gb" -> "a100-sxm4-" / "40gb"), so nine GPUs' labels fit a column
    each without running into the next; a part longer than `width` stays whole."""
    lines: list[str] = []
    for part in key.replace("-", "-\n").split("\n"):
        if lines and len(lines[-1]) + len(part) <= width:
            lines[-1] += part
        else:
            lines.append(part)
    return "\n".join(lines)


def _term_order(term: str) -> int:
    return TERMS.index(term) if term in TERMS else len(TERMS)


def _date_ticks(axis: Axes, days: list[date]) -> None:
    """A tick at each version date while they are few (matplotlib's date locator cannot
    place ticks on a single day), a locator's choice beyond. Labels stay horizontal; with
    few dates only the first and the last are labelled, the first set rightwards of its
    tick and the last leftwards, so dates a few days apart never print over each other
    (the table under the chart lists every date)."""
    if len(days) == 1:
        axis.set_xlim(days[0] - timedelta(days=30), days[0] + timedelta(days=30))
        axis.set_xticks(days, [days[0].isoformat()])
        return
    # Every panel spans every version's date, whichever dates its own GPU has.
    pad = max((days[-1] - days[0]) * 0.08, timedelta(days=1))
    axis.set_xlim(days[0] - pad, days[-1] + pad)
    if len(days) > 4:
        axis.xaxis.set_major_locator(AutoDateLocator(maxticks=3))
        axis.xaxis.set_major_formatter(DateFormatter("%Y-%m"))
        return
    ends = (days[0], days[-1])
    axis.set_xticks(days, [d.isoformat() if d in ends else "" for d in days])
    labels = axis.get_xticklabels()
    labels[0].set_horizontalalignment("left")
    labels[-1].set_horizontalalignment("right")
