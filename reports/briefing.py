"""Render the weekly briefing: Jinja2 template + CSS -> HTML -> PDF (WeasyPrint).

The context carries every number already resolved, with its source and date; the template
only lays it out. Same context, same bytes: no clock and no network here.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import jinja2
import weasyprint

from reports.context import BriefingContext, SourceLine, SpecLine

__all__ = ["BriefingContext", "SourceLine", "SpecLine", "render_html", "render_pdf"]

TEMPLATES = Path(__file__).resolve().parent / "templates"


def format_number(value: float) -> str:
    """Four significant digits, thousands separated, no float noise (1800.0000001 -> 1,800)."""
    if value == 0:
        return "0"
    text = f"{value:,.4g}" if abs(value) < 1e15 else f"{value:.3e}"
    if "e" in text:
        return f"{value:,.0f}" if abs(value) >= 1 else text
    return text


def format_value(line: SpecLine) -> str:
    if line.low == line.high:
        return format_number(line.low)
    return f"{format_number(line.low)}–{format_number(line.high)}"


def format_date(day: date | None, precision: str = "day") -> str:
    if day is None:
        return "undated"
    return {"year": f"{day:%Y}", "month": f"{day:%Y-%m}"}.get(precision, day.isoformat())


def render_html(context: BriefingContext, template: str = "briefing") -> str:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES / template),
                             autoescape=jinja2.select_autoescape(["html", "j2"]),
                             undefined=jinja2.StrictUndefined)
    env.filters.update(number=format_number, value=format_value, day=format_date)
    sections: dict[str, list[SpecLine]] = {}
    for line in context.specs:
        sections.setdefault(line.section, []).append(line)
    return env.get_template("briefing.html.j2").render(ctx=context, sections=sections)


def render_pdf(context: BriefingContext, template: str = "briefing") -> bytes:
    """The briefing as PDF bytes; fonts and CSS come from the template folder only."""
    html = weasyprint.HTML(string=render_html(context, template),
                           base_url=str(TEMPLATES / template))
    pdf = html.write_pdf(uncompressed_pdf=False)
    assert pdf is not None
    return pdf
