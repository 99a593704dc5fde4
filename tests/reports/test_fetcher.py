"""The briefing reads only its template folder: a refusing URL fetcher, and ledger text that
cannot become markup."""

from __future__ import annotations

import base64
import subprocess
from pathlib import Path

import pytest
import weasyprint
from weasyprint.urls import FatalURLFetchingError

from reports.briefing import TEMPLATES, render, render_html, render_pdf
from reports.fetcher import FetchRefused, TemplateFetcher
from tests.support.contexts import hostile_context

ROOT = TEMPLATES / "briefing"
INJECTIONS = ('<img src="file:///etc/passwd">', "<script>alert(1)</script>")


class RecordingFetcher(TemplateFetcher):
    """The template fetcher, noting every URL it is asked for."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.calls: list[str] = []

    def fetch(self, url, headers=None):
        self.calls.append(url)
        return super().fetch(url, headers)


@pytest.mark.parametrize(("url", "reason"), [
    ("file:///etc/passwd", "outside the template folder"),
    (f"{ROOT.as_uri()}/../../../pyproject.toml", "outside the template folder"),
    (f"{ROOT.as_uri()}/%2E%2E/context.py", "outside the template folder"),
    (f"{ROOT.as_uri()}/missing.css", "no such file"),
    ("file://example.com/etc/passwd", "another host"),
    ("http://example.com/font.woff", "only files under"),
    ("https://example.com/logo.png", "only files under"),
    ("ftp://example.com/x", "only files under"),
])
def test_the_fetcher_refuses_anything_outside_the_template_folder(url, reason):
    with pytest.raises(FetchRefused, match=reason):
        TemplateFetcher(ROOT).fetch(url)


def test_a_symbolic_link_out_of_the_folder_is_refused(tmp_path):
    (tmp_path / "secret.txt").write_text("secret")
    folder = tmp_path / "template"
    folder.mkdir()
    (folder / "link.css").symlink_to(tmp_path / "secret.txt")
    with pytest.raises(FetchRefused, match="outside"):
        TemplateFetcher(folder).fetch((folder / "link.css").as_uri())


def test_the_fetcher_serves_the_template_folder_and_data_urls():
    css = TemplateFetcher(ROOT).fetch((ROOT / "briefing.css").as_uri())
    assert css.content_type == "text/css" and b"@page" in css.read()
    payload = base64.b64encode(b"<svg/>").decode()
    data = TemplateFetcher(ROOT).fetch(f"data:image/svg+xml;base64,{payload}")
    assert data.read() == b"<svg/>"


def test_markup_that_asks_for_a_file_stops_the_render():
    """The second wall: even unescaped markup cannot read a file through WeasyPrint."""
    html = weasyprint.HTML(string='<p>x</p><img src="file:///etc/passwd">',
                           base_url=str(ROOT), url_fetcher=TemplateFetcher(ROOT))
    with pytest.raises(FatalURLFetchingError):
        html.write_pdf()


@pytest.mark.parametrize("text", INJECTIONS)
def test_ledger_text_prints_as_literal_text_and_fetches_nothing(text, tmp_path):
    fetcher = RecordingFetcher(ROOT)
    path = tmp_path / "hostile.pdf"
    path.write_bytes(render_pdf(hostile_context(text), url_fetcher=fetcher))
    appendix = tmp_path / "hostile-appendix.pdf"
    appendix.write_bytes(render(hostile_context(text), url_fetcher=fetcher,
                                document="appendix").pdf)
    # the stylesheet and the fonts it ships, nothing else, for each document
    shipped = {(ROOT / "briefing.css").as_uri(),
               *(font.as_uri() for font in (ROOT / "fonts").glob("*.ttf"))}
    assert set(fetcher.calls) == shipped and len(fetcher.calls) == 2 * len(shipped)
    printed = "".join(subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True,
                                     text=True, check=True).stdout for pdf in (path, appendix))
    squeezed = "".join(printed.split())
    # in a spec row, a source title, a chart label, a threshold band and a scenario name
    assert squeezed.count("".join(text.split())) >= 5


@pytest.mark.parametrize("text", INJECTIONS)
def test_ledger_text_is_escaped_in_the_html(text):
    html = render_html(hostile_context(text))
    assert text not in html
    assert text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace(
        '"', "&#34;") in html
