"""Render the weekly briefing: Jinja2 template + CSS -> HTML -> PDF (WeasyPrint).

The context carries every number already resolved, with its source and date; the template
only lays it out. Same context, same bytes: no clock and no network here, and the only
files read are the template folder's (reports.fetcher).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import jinja2
import weasyprint
from weasyprint.urls import URLFetcher

from reports.context import BriefingContext, SourceLine, SpecLine
from reports.fetcher import TemplateFetcher
from reports.formatting import FILTERS, format_date, format_number, format_value
from reports.view_model import BriefingView, build_view, chart_svgs

__all__ = ["BriefingContext", "BriefingView", "RenderedPdf", "SourceLine", "SpecLine",
           "build_view", "chart_svgs", "format_date", "format_number", "format_value",
           "layout_digest", "render", "render_html", "render_pdf"]

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


# The two documents of a briefing: the main PDF (page 1 and the evidence) and its appendix.
DOCUMENTS = ("briefing", "appendix")


def render_html(context: BriefingContext, template: str = "briefing",
                document: str = "briefing") -> str:
    """One document of the briefing as HTML (charts inline). The templates get one value,
    the view (reports.view_model), and format figures with reports.formatting's filters."""
    return environment(template).get_template(f"{document}.html.j2").render(
        view=build_view(context, document))


@dataclass(frozen=True)
class RenderedPdf:
    pdf: bytes
    pages: int


def render(context: BriefingContext, template: str = "briefing",
           url_fetcher: URLFetcher | None = None, document: str = "briefing",
           html: str | None = None) -> RenderedPdf:
    """One document of the briefing (DOCUMENTS) as PDF bytes and its page count. Resources
    come through `url_fetcher` (by default one that serves the template folder only).
    `html`: the document's render_html, when the caller has made it already."""
    root = TEMPLATES / template
    html = render_html(context, template, document) if html is None else html
    laid_out = weasyprint.HTML(string=html, base_url=str(root),
                               url_fetcher=url_fetcher or TemplateFetcher(root)).render()
    pdf = laid_out.write_pdf(uncompressed_pdf=False)
    assert pdf is not None
    return RenderedPdf(pdf, len(laid_out.pages))


@functools.cache
def layout_digest(template: str = "briefing") -> str:
    """What a document's PDF depends on besides its HTML, as a digest: every file of the
    template folder (the CSS, the fonts, the images it serves) and the versions of the
    libraries that lay it out and write it. Same HTML and same digest, same bytes."""
    import hashlib
    from importlib.metadata import version

    digest = hashlib.sha256()
    root = TEMPLATES / template
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    for library in ("weasyprint", "pydyf", "fonttools", "tinycss2", "cssselect2", "Pyphen"):
        digest.update(f"{library}={version(library)}\0".encode())
    return digest.hexdigest()


def render_pdf(context: BriefingContext, template: str = "briefing",
               url_fetcher: URLFetcher | None = None) -> bytes:
    """The briefing as PDF bytes (see render)."""
    return render(context, template, url_fetcher).pdf
