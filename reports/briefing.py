"""Render the weekly briefing: Jinja2 template + CSS -> HTML -> PDF (WeasyPrint).

The context carries every number already resolved, with its source and date; the template
only lays it out. Same context, same bytes: no clock and no network here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path

import jinja2
import weasyprint

TEMPLATES = Path(__file__).resolve().parent / "templates"


@dataclass(frozen=True)
class SpecLine:
    """One resolved value as the briefing prints it."""

    section: str
    item: str
    metric: str
    metric_description: str
    low: float
    high: float
    unit: str
    as_of: date
    as_of_precision: str
    status: str
    source_key: str
    source_title: str
    source_published_on: date | None
    alternatives: int = 0
    reason: str = ""


@dataclass(frozen=True)
class SourceLine:
    key: str
    title: str
    publisher: str | None
    kind: str
    published_on: date | None
    url: str | None


@dataclass(frozen=True)
class BriefingContext:
    as_of: date
    dataset_version: int
    dataset_hash: str
    cutoff_at: datetime
    code_version: str
    specs: list[SpecLine] = field(default_factory=list)
    sources: list[SourceLine] = field(default_factory=list)
    rejected_rows: int = 0
    conflicts: int = 0


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
