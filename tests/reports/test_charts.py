"""Charts as inline SVG: the same input gives the same bytes, ledger text stays text."""

from __future__ import annotations

import dataclasses
import re
import xml.etree.ElementTree as ET

import pytest

from reports import charts
from tests.support.contexts import density_trend, interconnect_trend, scenarios, tco_lines

HOSTILE = '<b>&"x"</b> <img src="file:///etc/passwd">'


def all_charts() -> list[str]:
    trend = interconnect_trend()
    return [charts.density_chart(density_trend()), charts.interconnect_chart(trend),
            charts.switch_chart(trend), charts.c2c_map_chart(scenarios(), (0.2, 0.6)),
            charts.tco_chart(tco_lines())]


def test_the_same_input_gives_the_same_svg_bytes():
    assert all_charts() == all_charts()


def test_each_chart_is_one_well_formed_svg_element_without_date_or_metadata():
    for svg in all_charts():
        root = ET.fromstring(svg)
        assert root.tag == "{http://www.w3.org/2000/svg}svg"
        assert "<?xml" not in svg and "<metadata" not in svg and "<style" not in svg
        assert not re.search(r"20\d\d-\d\d-\d\dT", svg)   # no timestamp


def test_charts_keep_distinct_element_ids_in_one_document():
    ids = [re.findall(r'\bid="([^"]+)"', svg) for svg in all_charts()]
    flat = [i for chart in ids for i in chart]
    assert flat and len(flat) == len(set(flat))
    for svg in all_charts():   # every reference points inside its own chart
        assert set(re.findall(r'(?:href="|url\()#([^")]+)', svg)) <= set(
            re.findall(r'\bid="([^"]+)"', svg))


def test_ledger_text_in_a_chart_is_escaped_by_the_svg_writer():
    svg = charts.density_chart(density_trend(label=HOSTILE))
    assert "<img" not in svg and "<b>" not in svg
    assert "&lt;img src=&quot;file:///etc/passwd&quot;&gt;" in svg or \
        '&lt;img src="file:///etc/passwd"&gt;' in svg
    texts = ["".join(t.itertext()) for t in ET.fromstring(svg).iter(
        "{http://www.w3.org/2000/svg}text")]
    assert any(HOSTILE in text for text in texts)   # the threshold band's label


def test_svg_styles_become_attributes_but_ledger_text_is_left_alone():
    """WeasyPrint's HTML cascade would warn on every SVG style attribute; text that looks
    like one is still just text."""
    lines = [dataclasses.replace(tco_lines()[0], name='style="fill: red"')]
    svg = charts.tco_chart(lines)
    assert not re.search(r"<[^>]*\bstyle=", svg)
    assert 'style="fill: red"' in svg or "style=&quot;fill: red&quot;" in svg


def test_a_dollar_sign_stays_a_dollar_sign():
    """Ledger text is never read as matplotlib math ($...$)."""
    lines = [dataclasses.replace(tco_lines()[0], name="$3.42/GPU-hour vs $2.90")]
    svg = charts.tco_chart(lines)
    assert "$3.42/GPU-hour vs $2.90" in svg


def test_the_thresholds_are_labelled_with_their_source_and_date():
    svg = charts.density_chart(density_trend())
    for threshold in density_trend().thresholds:
        assert f"({threshold.source}, {threshold.as_of:%Y})" in svg


def test_scale_up_and_scale_out_must_share_a_unit_to_share_an_axis():
    trend = interconnect_trend()
    in_gbytes = dataclasses.replace(trend.scale_out, unit="GB/s")
    with pytest.raises(ValueError, match="share one unit"):
        charts.interconnect_chart(dataclasses.replace(trend, scale_out=in_gbytes))


def test_a_scenario_without_communication_still_has_a_place_on_the_map():
    idle = dataclasses.replace(scenarios()[0], c2c=0.0, c2c_scale_up=0.0, c2c_scale_out=0.0)
    svg = charts.c2c_map_chart([idle], (0.2, 0.6))
    assert idle.name in svg
