"""What every briefing chart shares: house style, SVG output, log axes, labels, legends.

Deterministic: a fixed hash salt per chart (so element ids are stable and distinct between
charts in one document), no date or creator metadata, fixed figure sizes, text kept as SVG
text (searchable in the PDF) and escaped by matplotlib's SVG writer. Ledger text is never
parsed as math ("$" stays "$"). No pyplot: no global figure state.
"""

from __future__ import annotations

import io
import re
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date

import matplotlib
from markupsafe import Markup
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg
from matplotlib.dates import date2num
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.path import Path
from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator
from matplotlib.transforms import Bbox

from reports.formatting import format_number

WIDTH = 7.0   # inches: the A4 text block (182 mm) less a little air
COLORS = ("#1f5f8b", "#c0582b", "#4a8c3f", "#7b4f9d", "#8c6d1f", "#3b8686")
MARKERS = ("o", "s", "^", "D", "v", "P")
CHART_FONT = "DejaVu Sans"   # the family the template ships as "Briefing Sans"
STYLE = {
    "svg.fonttype": "none", "text.parse_math": False, "font.family": CHART_FONT,
    "font.size": 7.5, "axes.titlesize": 8.5, "axes.labelsize": 7.5, "legend.fontsize": 7,
    "xtick.labelsize": 7, "ytick.labelsize": 7, "axes.spines.top": False,
    "axes.spines.right": False, "axes.grid": True, "grid.color": "#e4e4e4",
    "grid.linewidth": 0.5, "lines.linewidth": 1.2, "lines.markersize": 4.5,
    "legend.frameon": False,
}
# Where a point's label may go, tried in this order: (dx, dy) in points, alignment.
LABEL_OFFSETS = ((5, 3, "left"), (5, -9, "left"), (-5, 3, "right"), (-5, -9, "right"),
                 (0, 7, "center"), (0, -13, "center"), (5, 10, "left"), (-5, 10, "right"),
                 (5, -16, "left"), (-5, -16, "right"), (0, 14, "center"), (0, -20, "center"))


@contextmanager
def style(name: str) -> Iterator[None]:
    """House style and a per-chart hash salt, for this chart only (no global rcParams)."""
    with matplotlib.rc_context({**STYLE, "svg.hashsalt": f"specledger-{name}"}):
        yield


def svg(figure: Figure) -> Markup:
    """The figure as an inline <svg> element: no XML prolog, no metadata, no <style>.

    Markup (safe) because matplotlib wrote it and escaped every text in it."""
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg",
                   metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    text = buffer.getvalue()
    text = text[text.index("<svg"):]
    # The default <style> would be read as a document stylesheet once inline; its two
    # (inherited) properties move to the root element instead.
    text = re.sub(r"\s*<defs>\s*<style[^>]*>[^<]*</style>\s*</defs>", "", text, count=1)
    text = text.replace("<svg ", '<svg stroke-linejoin="round" stroke-linecap="butt" ', 1)
    # style="fill: #fff; stroke: ..." as presentation attributes: the SVG renderer reads
    # both, but the HTML cascade would parse every style attribute and warn about each SVG
    # property it does not know (thousands of log lines, and time).
    # Only inside tags: text content has no "<" or ">" (escaped), so "<...>" is a tag.
    text = re.sub(r"<[^>]*>", lambda tag: re.sub(r'style="([^"]*)"', _attributes, tag[0]),
                  text)
    # Group ids (figure_1, line2d_3, ...) repeat from chart to chart and nothing refers to
    # them; inline they would clash in the document. Clip-path and marker ids are hashed
    # with the chart's salt, so they stay, distinct.
    text = re.sub(r'<g id="[^"]*"', "<g", text)
    # matplotlib measures its text with its own copy of DejaVu Sans; the PDF sets it with
    # the template's copy of the same font (the briefing's @font-face), not a system one.
    text = text.replace(f'font-family="\'{CHART_FONT}\'"', 'font-family="Briefing Sans"')
    return Markup(text.strip())


def _attributes(match: re.Match[str]) -> str:
    declarations = (d.split(":", 1) for d in match.group(1).split(";") if ":" in d)
    return " ".join(f'{name.strip()}="{value.strip()}"' for name, value in declarations)


def log_axis(axis: Axes, which: str = "y") -> None:
    """Log scale with plain tick labels (1, 10, 100) instead of 10^n, and no minor ticks
    (each is an SVG element WeasyPrint styles and lays out; they cost render time)."""
    scaled = axis.yaxis if which == "y" else axis.xaxis
    (axis.set_yscale if which == "y" else axis.set_xscale)("log")
    scaled.set_major_formatter(FuncFormatter(lambda value, _: format_number(value, 3)))
    scaled.set_minor_locator(NullLocator())


def log_ticks(axis: Axes) -> None:
    """Ticks at 1, 2, 5 x 10^n when the y range spans under two decades, so a narrow
    range still shows a few labelled values. Call once the limits are final."""
    with warnings.catch_warnings():
        # One value on the axis (a single dataset version): matplotlib widens the equal
        # limits itself and says so; the widened range is what we read.
        warnings.filterwarnings("ignore", "Attempting to set identical low and high ylims")
        low, high = axis.get_ylim()
    if high / low < 100:
        axis.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))


def legend_below(figure: Figure, handles: list[Line2D], left: float = 0.09) -> None:
    """One legend line per entry at the foot of the figure; the figure keeps its fixed
    size, so the plot area gives up the room the legend needs."""
    height = figure.get_figheight()
    figure.subplots_adjust(left=left, right=0.98, top=1 - 0.12 / height,
                           bottom=(0.38 + 0.14 * len(handles)) / height)
    figure.legend(handles=handles, loc="lower left", bbox_to_anchor=(left - 0.01, 0.0),
                  ncol=1, handlelength=3)


@dataclass(frozen=True)
class PointLabel:
    text: str      # the item's name
    number: int    # its row in the table under the chart
    day: date
    value: float


def label_points(figure: Figure, axis: Axes, labels: Sequence[PointLabel]) -> None:
    """Label each point with its name, at the first offset where the text stays inside the
    axes and overlaps no marker, drawn line (a fit) or earlier label; failing that with its
    table number; and failing that not at all (the table lists every point). Call once
    limits and layout are final: placement measures the text."""
    renderer = FigureCanvasAgg(figure).get_renderer()
    area = axis.get_window_extent(renderer)
    taken = [_marker_box(axis, label) for label in labels]
    lines = _drawn_lines(axis)
    for label in labels:
        for text in (label.text, str(label.number)):
            box = _place(axis, label, text, renderer, area, taken, lines)
            if box is not None:
                taken.append(box)
                break


def _place(axis: Axes, label: PointLabel, text: str, renderer: RendererAgg, area: Bbox,
           taken: list[Bbox], lines: list[Path]) -> Bbox | None:
    for dx, dy, align in LABEL_OFFSETS:
        annotation = axis.annotate(text, (label.day, label.value), xytext=(dx, dy),
                                   textcoords="offset points", fontsize=6, color="#333333",
                                   ha=align)
        box = annotation.get_window_extent(renderer)
        if (_inside(box, area) and not any(box.overlaps(other) for other in taken)
                and not any(line.intersects_bbox(box, filled=False) for line in lines)):
            return box
        annotation.remove()
    return None


def _drawn_lines(axis: Axes) -> list[Path]:
    """The axis' drawn lines (fits, series lines) in display coordinates; a markers-only
    line is no obstacle between its markers (those are in `taken`)."""
    return [line.get_transform().transform_path(line.get_path()) for line in axis.lines
            if line.get_linestyle() not in ("None", "none", "", " ")]


def _marker_box(axis: Axes, label: PointLabel) -> Bbox:
    x, y = axis.transData.transform((date2num(label.day), label.value))
    return Bbox.from_extents(x - 3, y - 3, x + 3, y + 3)


def _inside(box: Bbox, area: Bbox) -> bool:
    return (box.x0 >= area.x0 and box.x1 <= area.x1 and box.y0 >= area.y0
            and box.y1 <= area.y1)
