"""Render the weekly briefing: Jinja2 template + CSS -> HTML -> PDF (WeasyPrint).

The context carries every number already resolved, with its source and date; the template
only lays it out. Same context, same bytes: no clock and no network here, and the only
files read are the template folder's (reports.fetcher).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import jinja2
import weasyprint
from markupsafe import Markup
from weasyprint.urls import URLFetcher

from models.trends.types import Series
from reports import charts, views
from reports.context import BriefingContext, SourceLine, SpecLine
from reports.fetcher import TemplateFetcher
from reports.formatting import FILTERS, format_date, format_number, format_value

__all__ = ["BriefingContext", "RenderedPdf", "SourceLine", "SpecLine", "format_date",
           "format_number", "format_value", "render", "render_html", "render_pdf"]

TEMPLATES = Path(__file__).resolve().parent / "templates"


@functools.cache
def environment(template: str = "briefing") -> jinja2.Environment:
    """Autoescape everything (ledger text is data, never markup); a missing name fails.
    One per template folder, so templates compile once per process."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES / template),
                             autoescape=True, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True)
    env.filters.update(FILTERS)
    return env


def chart_svgs(context: BriefingContext) -> dict[str, Markup | None]:
    """The inline SVG of each chart the context has data for (None: nothing to draw)."""
    svgs: dict[str, Markup | None] = dict.fromkeys(
        ("density", "interconnect", "switch", "c2c", "tco"))
    if (density := context.density) and _plotted(density.series):
        svgs["density"] = charts.density_chart(density)
    if (links := context.interconnect) and _plotted((links.scale_up, links.scale_out)):
        svgs["interconnect"] = charts.interconnect_chart(links)
    if links and _plotted(links.switch_capacity):
        svgs["switch"] = charts.switch_chart(links)
    if context.scenarios:
        svgs["c2c"] = charts.c2c_map_chart(context.scenarios, context.c2c_thresholds)
    if context.tco:
        svgs["tco"] = charts.tco_chart(context.tco)
    return svgs


def _plotted(series: Iterable[Series]) -> bool:
    return any(line.points for line in series)


def render_html(context: BriefingContext, template: str = "briefing") -> str:
    """The briefing as one HTML document (charts inline)."""
    sections = views.spec_sections(context.specs)
    flag_totals = views.flag_totals(context)
    change_totals = views.change_totals(context)
    return environment(template).get_template("briefing.html.j2").render(
        ctx=context,
        charts=chart_svgs(context),
        sections=sections,
        section_totals=views.value_totals(context, sections),
        flag_summary=views.summarise_flags(context.flags, totals=flag_totals),
        flag_groups=views.flags_by_kind(context.flags, flag_totals),
        flag_totals=flag_totals,
        stale_total=(len(context.stale_sources) if context.stale_source_count is None
                     else context.stale_source_count),
        change_flag_total=sum(flag_totals.get(kind, 0) for kind in views.CHANGE_KINDS),
        change_counts={kind: total.observations for kind, total in change_totals.items()},
        changes_left_out=views.changes_left_out(context),
        changes_query=views.changes_query(context),
        flags_query=functools.partial(views.flags_query, context),
        values_query=views.values_query(context),
        validation=views.summarise_validation(context.validation),
        scenario_inputs=views.number_inputs((s.name, s.inputs) for s in context.scenarios),
        tco_inputs=views.number_inputs((t.name, t.inputs) for t in context.tco),
        share=views.scale_up_share,
        numbered=views.numbered_points,
    )


@dataclass(frozen=True)
class RenderedPdf:
    pdf: bytes
    pages: int


def render(context: BriefingContext, template: str = "briefing",
           url_fetcher: URLFetcher | None = None) -> RenderedPdf:
    """The briefing as PDF bytes and its page count. Resources come through `url_fetcher`
    (by default one that serves the template folder only)."""
    root = TEMPLATES / template
    document = weasyprint.HTML(string=render_html(context, template), base_url=str(root),
                               url_fetcher=url_fetcher or TemplateFetcher(root)).render()
    pdf = document.write_pdf(uncompressed_pdf=False)
    assert pdf is not None
    return RenderedPdf(pdf, len(document.pages))


def render_pdf(context: BriefingContext, template: str = "briefing",
               url_fetcher: URLFetcher | None = None) -> bytes:
    """The briefing as PDF bytes (see render)."""
    return render(context, template, url_fetcher).pdf
