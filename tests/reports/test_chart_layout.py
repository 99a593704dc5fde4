"""What the charts draw so that nothing in them misleads or overlaps: no zero on a log axis,
the class colours explained, one date drawn as a snapshot, no curve bending back, labels
clear of the fit lines."""

from __future__ import annotations

import dataclasses
import html
import re
from datetime import date

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from reports import charts
from reports.chart_base import PointLabel, label_points
from reports.context import MarketSeries
from reports.decision_charts import frontier
from reports.market_charts import market_chart
from tests.support.contexts import density_trend, market_history, scenarios


def texts(svg: str) -> list[str]:
    return [html.unescape(t).strip() for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]


def test_a_zero_c2c_is_said_in_words_not_drawn_on_the_log_axis():
    """A C2C of zero is communication hidden behind compute (DP512's gradient all-reduce),
    and the words say how much was hidden, not that there was none."""
    hidden = dataclasses.replace(scenarios()[0], c2c=0.0, c2c_scale_up=0.0, c2c_scale_out=0.0,
                                 c2c_link=0.316)
    labels = texts(charts.c2c_map_chart([hidden, *scenarios()[1:]], (0.2, 0.6)))
    assert "C2C = 0: its communication (C2C 0.316 unhidden) overlaps compute" in labels
    assert not any("no communication" in label for label in labels)
    unknown = dataclasses.replace(hidden, c2c_link=None)
    assert "C2C = 0: no exposed communication" in texts(
        charts.c2c_map_chart([unknown], (0.2, 0.6)))


def test_the_c2c_maps_dot_colours_have_a_legend_naming_each_class_and_its_bounds():
    labels = texts(charts.c2c_map_chart(scenarios(), (0.2, 0.6)))
    assert {"compute-bound (< 0.2)", "performance-sensitive (0.2–0.6)",
            "communication-bound (> 0.6)"} <= set(labels)


def test_one_date_of_prices_is_drawn_as_that_dates_prices_side_by_side():
    one_day = [MarketSeries("h100-sxm5", term, ((date(2026, 11, 27), price),))
               for term, price in (("reserved_3y", 4.86), ("capacity_block", 4.92))]
    labels = texts(market_chart(one_day))
    assert "median of the offers valid on 2026-11-27" in labels
    assert "h100-sxm5" in labels and "2026-11-27" not in labels   # no one-tick time axis
    # Two terms at about one price sit at two x positions, so neither hides the other.
    svg = market_chart(one_day)
    uses = re.findall(r'<use xlink:href="#[^"]+" x="([\d.]+)" y="([\d.]+)"', svg)
    assert len({x for x, _ in uses[:2]}) == 2


def test_several_dates_of_prices_keep_a_panel_per_gpu_over_time():
    labels = texts(market_chart(market_history()))
    assert "2026-11-15" in labels and "median of the offers valid on" not in " ".join(labels)


def test_a_serving_curve_keeps_only_the_concurrencies_no_other_one_beats():
    # At concurrency 1 this curve is slower per user than at 2: it would bend back.
    curve = ((1.0, 3.06, 220.2), (2.0, 6.08, 221.8), (4.0, 12.0, 218.9), (8.0, 23.5, 213.9))
    assert frontier(curve) == [(2.0, 6.08, 221.8), (4.0, 12.0, 218.9), (8.0, 23.5, 213.9)]
    assert frontier(curve[1:]) == list(curve[1:])


def test_the_density_chart_fits_racks_and_servers_apart_and_never_together():
    trend = density_trend()
    assert trend.fit is not None   # the trend has an all-points fit; the chart leaves it out
    svg = charts.density_chart(trend)
    assert "all points" not in svg
    assert all(s.title in svg for s in trend.series if s.points)


def test_a_point_label_is_never_set_across_a_drawn_line():
    figure = Figure(figsize=(4, 3))
    axis = figure.add_subplot()
    days = [date(2020, 1, 1), date(2024, 1, 1)]
    axis.plot(days, [1.0, 10.0], linestyle="--")
    axis.set_yscale("log")
    axis.set_xlim(date(2019, 6, 1), date(2024, 6, 1))
    axis.set_ylim(0.5, 20)
    label_points(figure, axis, [PointLabel("a long label here", 1, days[0], 1.0),
                                PointLabel("another long label", 2, days[1], 10.0)])
    line = axis.lines[0]
    path = line.get_transform().transform_path(line.get_path())
    renderer = FigureCanvasAgg(figure).get_renderer()
    for text in axis.texts:
        assert not path.intersects_bbox(text.get_window_extent(renderer), filled=False), \
            text.get_text()
