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
from typing import Any

import jinja2
import weasyprint
from weasyprint.urls import URLFetcher

from models.trends.types import Series
from reports import charts, decision_charts, views
from reports.context import BriefingContext, SourceLine, SpecLine
from reports.decisions import flip, input_label, serving_verdict, verdict, workloads
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


def chart_svgs(context: BriefingContext, document: str = "briefing") -> dict[str, Any]:
    """The inline SVG of each chart of `document` the context has data for (None: nothing
    to draw); the appendix draws only the switch chart."""
    svgs: dict[str, Any] = dict.fromkeys(
        ("density", "interconnect", "switch", "c2c", "tco", "market"))
    links = context.interconnect
    if document != "briefing":
        if links and _plotted(links.switch_capacity):
            svgs["switch"] = charts.switch_chart(links)
        return svgs
    if (density := context.density) and _plotted(density.series):
        svgs["density"] = charts.density_chart(density)
    if links and _plotted((links.scale_up, links.scale_out)):
        svgs["interconnect"] = charts.interconnect_chart(links)
    if context.scenarios:
        svgs["c2c"] = charts.c2c_map_chart(context.scenarios, context.c2c_thresholds)
    if context.tco:
        svgs["tco"] = charts.tco_chart(context.tco)
    if any(len(s.points) for s in context.market_history):
        svgs["market"] = decision_charts.market_chart(context.market_history)
    svgs["tornado"] = {d.name: decision_charts.tornado_chart(d, input_label)
                       for d in context.decisions if d.swings and not d.illustrative}
    svgs["serving"] = {s.name: decision_charts.serving_chart(s) for s in context.serving
                       if any(o.curve for o in s.options)}
    return svgs


def _plotted(series: Iterable[Series]) -> bool:
    return any(line.points for line in series)


# The two documents of a briefing: the main PDF (page 1 and the evidence) and its appendix.
DOCUMENTS = ("briefing", "appendix")


def render_html(context: BriefingContext, template: str = "briefing",
                document: str = "briefing") -> str:
    """One document of the briefing as HTML (charts inline)."""
    sections = views.spec_sections(context.specs)
    flag_totals = views.flag_totals(context)
    change_totals = views.change_totals(context)
    return environment(template).get_template(f"{document}.html.j2").render(
        ctx=context,
        charts=chart_svgs(context, document),
        workloads=workloads(context.decisions),
        verdict=verdict, flip=flip, serving_verdict=serving_verdict,
        crossing_groups=views.crossing_groups,
        rented=views.rented_options(context.decisions),
        subjects_by_metric=views.subjects_by_metric,
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
        serving_inputs=views.number_inputs((f"{s.name}/{o.name}", o.inputs)
                                           for s in context.serving for o in s.options),
        share=views.scale_up_share,
        numbered=views.numbered_points,
    )


@dataclass(frozen=True)
class RenderedPdf:
    pdf: bytes
    pages: int


def render(context: BriefingContext, template: str = "briefing",
           url_fetcher: URLFetcher | None = None, document: str = "briefing") -> RenderedPdf:
    """One document of the briefing (DOCUMENTS) as PDF bytes and its page count. Resources
    come through `url_fetcher` (by default one that serves the template folder only)."""
    root = TEMPLATES / template
    laid_out = weasyprint.HTML(string=render_html(context, template, document),
                               base_url=str(root),
                               url_fetcher=url_fetcher or TemplateFetcher(root)).render()
    pdf = laid_out.write_pdf(uncompressed_pdf=False)
    assert pdf is not None
    return RenderedPdf(pdf, len(laid_out.pages))


def render_pdf(context: BriefingContext, template: str = "briefing",
               url_fetcher: URLFetcher | None = None) -> bytes:
    """The briefing as PDF bytes (see render)."""
    return render(context, template, url_fetcher).pdf
