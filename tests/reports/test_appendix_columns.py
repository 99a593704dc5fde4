"""A 288-character item key (and the same text as a scenario, source and rack name) wraps in
the appendix's cells: every box of every page stays on the page."""

from __future__ import annotations

from typing import Any

import weasyprint

from reports.briefing import TEMPLATES, render_html
from reports.fetcher import TemplateFetcher
from tests.support.contexts import hostile_context

LONG_KEY = ("gb200_nvl72_" + "liquid_cooled_rack_scale_system_" * 9)[:288]  # no break


def boxes(box: Any) -> Any:
    yield box
    for child in getattr(box, "children", None) or []:
        yield from boxes(child)


def test_a_288_character_key_keeps_every_appendix_column_on_the_page():
    assert len(LONG_KEY) == 288
    root = TEMPLATES / "briefing"
    html = render_html(hostile_context(LONG_KEY), document="appendix")
    assert LONG_KEY in html
    laid_out = weasyprint.HTML(string=html, base_url=str(root),
                               url_fetcher=TemplateFetcher(root)).render()
    off = {(number, box.element_tag)
           for number, page in enumerate(laid_out.pages, 1)
           for box in boxes(page._page_box)
           if getattr(box, "width", None) is not None and hasattr(box, "margin_width")
           and box.position_x + box.margin_width() > page.width + 0.5}
    assert off == set()
