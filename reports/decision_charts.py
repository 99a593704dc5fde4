"""The decision charts: the tornado of a comparison's cost-per-job margin, and the GPU-hour
price index by GPU and term."""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from reports.chart_base import COLORS, MARKERS, WIDTH, log_axis, style, svg
from reports.context import DecisionLine, ServingLine


def tornado_chart(line: DecisionLine, label: object = str) -> Markup:
    """The cheaper option's saving per job (%) with each input at its low and its high end,
    largest swing on top; the point value as a vertical line, zero as the flip line."""
    swings = list(line.swings)
    with style(f"tornado-{line.name}"):  # a salt per chart: marker ids never clash
        figure = Figure(figsize=(WIDTH, 0.95 + 0.28 * len(swings)))
        axis = figure.add_subplot()
        rows = list(range(len(swings)))[::-1]
        base = 100 * (line.saving or 0.0)
        for swing, row in zip(swings, rows, strict=True):
            for value, color, end in ((swing.saving_at_low, COLORS[0], "low"),
                                      (swing.saving_at_high, COLORS[1], "high")):
                label_once = f"input at its {end} end" if row == rows[0] else None
                if abs(100 * value - base) < 1e-6:
                    # This end is the point value (a price whose range starts at it): a bar
                    # of no width would vanish, so a tick says "no move" where it would be.
                    axis.plot([base], [row + (0.15 if end == "low" else -0.15)], marker="|",
                              markersize=7, markeredgewidth=2, color=color, linestyle="none",
                              label=label_once)
                    continue
                axis.barh([row], [100 * value - base], left=base, color=color, height=0.6,
                          label=label_once)
        axis.axvline(base, color="#333333", linewidth=0.8)
        axis.axvline(0, color="#b2182b", linewidth=0.8, linestyle="--")
        axis.set_yticks(rows, [label(s.input) for s in swings])  # type: ignore[operator]
        axis.set_ylim(-0.7, len(swings) - 0.3)
        axis.margins(x=0.04)  # a bar that ends at the point value stays clear of the frame
        axis.set_xlabel(f"{line.cheaper} cheaper per job than {line.dearer} (%)")
        axis.grid(axis="y", visible=False)
        axis.legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), fontsize=6.5, ncol=2)
        height = figure.get_figheight()
        figure.subplots_adjust(left=0.34, right=0.97, top=1 - 0.3 / height,
                               bottom=0.42 / height)
        return svg(figure)


def legend_rows(figure: Figure, handles: list[Line2D], left: float,
                axis_labels: float) -> None:
    """The legend under the plot, three entries a line, so many lines keep the plot tall;
    `axis_labels`: inches the x tick labels and axis label take below the plot."""
    lines = -(-len(handles) // 3)
    height = figure.get_figheight()
    figure.subplots_adjust(left=left, right=0.98, top=1 - 0.12 / height,
                           bottom=(axis_labels + 0.15 * lines) / height)
    figure.legend(handles=handles, loc="lower left", bbox_to_anchor=(left - 0.01, 0.0),
                  ncol=3, handlelength=2.5, fontsize=6.5)


def frontier(curve: Sequence[tuple[float, float, float]]) -> list[tuple[float, float, float]]:
    """The (concurrency, tokens/s per GPU, tokens/s per user) points no other point beats
    on both throughputs: a deployment would never run at a dominated concurrency (at
    concurrency 1 a curve can be slower per user than at 2, and would bend back)."""
    return [point for point in curve if not any(_beats(other, point) for other in curve)]


def _beats(a: tuple[float, float, float], b: tuple[float, float, float]) -> bool:
    return a[1] >= b[1] and a[2] >= b[2] and (a[1] > b[1] or a[2] > b[2])


def serving_chart(line: ServingLine) -> Markup:
    """Tokens/s per GPU against tokens/s per user, one curve per option (log-log): the
    throughput-interactivity frontier (no dominated point), the target interactivity as a
    dashed line and each option's point there as a ring."""
    with style(f"serving-{line.name}"):
        figure = Figure(figsize=(WIDTH, 1.8))
        axis = figure.add_subplot()
        handles = []
        for n, option in enumerate(o for o in line.options if o.curve):
            _, per_gpu, per_user = zip(*frontier(option.curve), strict=True)
            color = COLORS[n % len(COLORS)]
            handles += axis.plot(per_user, per_gpu, marker=MARKERS[n % len(MARKERS)],
                                 color=color, linewidth=1.2, markersize=3.5,
                                 label=f"{option.name} ({option.source})")
            if option.tok_s_per_gpu is not None:
                # Where the option answers: at the target, or at its slowest point per user
                # when even that is faster than the target.
                at_user = option.tok_s_per_user or line.target_tok_s_per_user
                axis.plot([at_user], [option.tok_s_per_gpu], "o",
                          markersize=7, markerfacecolor="none", markeredgecolor=color)
        axis.axvline(line.target_tok_s_per_user, color="#b2182b", linewidth=0.8,
                     linestyle="--")
        log_axis(axis)
        log_axis(axis, "x")
        axis.set_xlabel("tokens/s per user (interactivity); dashed: the target. Each curve: "
                       "the concurrencies no other one beats on both axes")
        axis.set_ylabel("output tokens/s per GPU")
        legend_rows(figure, handles, left=0.1, axis_labels=0.5)
        return svg(figure)
