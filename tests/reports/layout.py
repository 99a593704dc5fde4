"""Where a PDF's text lands, read with poppler: word boxes per page (`pdftotext
-bbox-layout`) and the heading outline WeasyPrint writes from h1-h6 (`pdftohtml -xml`).

Charts are inline SVG with their text kept as text, so a chart's labels are words here too:
a label drawn over another label is an overlap like any other.
"""

from __future__ import annotations

import re
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

XHTML = "{http://www.w3.org/1999/xhtml}"
# Word boxes span the font's ascent and descent, so two lines set close together touch by
# a point or so; a real overlap covers more than this much of the smaller box's height.
TOLERANCE = 0.3


@dataclass(frozen=True)
class Word:
    page: int
    text: str
    x0: float
    y0: float
    x1: float
    y1: float

    def overlaps(self, other: Word) -> bool:
        width = min(self.x1, other.x1) - max(self.x0, other.x0)
        height = min(self.y1, other.y1) - max(self.y0, other.y0)
        smaller = min(self.y1 - self.y0, other.y1 - other.y0)
        return width > 0.5 and height > TOLERANCE * smaller


def words(pdf: Path) -> dict[int, list[Word]]:
    """Every word of every page with its box (points, origin top left), by page number."""
    xml = subprocess.run(["pdftotext", "-bbox-layout", str(pdf), "-"], capture_output=True,
                         text=True, check=True).stdout
    pages: dict[int, list[Word]] = {}
    for number, page in enumerate(ET.fromstring(xml).iter(f"{XHTML}page"), start=1):
        pages[number] = [Word(number, w.text or "", *(float(w.get(k, 0)) for k in
                                                       ("xMin", "yMin", "xMax", "yMax")))
                         for w in page.iter(f"{XHTML}word")]
    return pages


def overlapping(pdf: Path) -> list[tuple[Word, Word]]:
    """Pairs of words whose boxes overlap, page by page."""
    found = []
    for page in words(pdf).values():
        for n, word in enumerate(page):
            found += [(word, other) for other in page[n + 1:] if word.overlaps(other)]
    return found


def headings(pdf: Path) -> list[tuple[int, str]]:
    """(page, text) of every heading in the PDF's outline (WeasyPrint bookmarks h1-h6)."""
    xml = subprocess.run(["pdftohtml", "-xml", "-i", "-stdout", "-q", str(pdf)],
                         capture_output=True, text=True, check=True).stdout
    outline = ET.fromstring(xml).find("outline")
    return [] if outline is None else [(int(item.get("page", 0)), flat(item.text or ""))
                                       for item in outline.iter("item")]


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def headings_ending_a_page(pdf: Path, margin: float = 45.0) -> list[tuple[int, str]]:
    """Headings with no text of the page's body below them: their section starts on the
    next page. The running header and footer (within `margin` points of the page's top and
    foot) are not body text."""
    pages, foot = words(pdf), _height(pdf) - margin
    stranded = []
    for page, heading in headings(pdf):
        body = [w for w in pages[page] if w.y0 > margin and w.y1 < foot]
        bottom = _bottom_of(heading.split(), body)
        if bottom is not None and not any(w.y0 > bottom for w in body):
            stranded.append((page, heading))
    return stranded


def _bottom_of(heading: list[str], body: list[Word]) -> float | None:
    """The lowest edge of the heading's words, found as a run of words in reading order."""
    texts = [w.text for w in body]
    for start in range(len(texts) - len(heading) + 1):
        if texts[start:start + len(heading)] == heading:
            return max(w.y1 for w in body[start:start + len(heading)])
    return None


POINTS_PER_MM = 72 / 25.4


def past_the_margins(pdf: Path, side_mm: float = 14.0) -> list[Word]:
    """Words that reach into the page's left or right margin (`side_mm`, the stylesheet's
    side margin, less half a millimetre for a glyph's overhang): text cut or run off."""
    width = _size(pdf)[0]
    edge = (side_mm - 0.5) * POINTS_PER_MM
    return [w for page in words(pdf).values() for w in page
            if w.x0 < edge or w.x1 > width - edge]


def near_blank_pages(pdf: Path, filled: float = 0.25, margin: float = 45.0) -> list[int]:
    """Pages (the last excepted) whose body text ends in the top `filled` share of the page:
    a page left nearly blank by a break."""
    pages, height = words(pdf), _size(pdf)[1]
    foot = height - margin
    blank = []
    for number, page in list(pages.items())[:-1]:
        body = [w.y1 for w in page if w.y0 > margin and w.y1 < foot]
        if not body or max(body) < margin + filled * (foot - margin):
            blank.append(number)
    return blank


def page_count(pdf: Path) -> int:
    return int(re.search(r"Pages:\s+(\d+)", _info(pdf)).group(1))  # type: ignore[union-attr]


def _info(pdf: Path) -> str:
    return subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True,
                          check=True).stdout


def _size(pdf: Path) -> tuple[float, float]:
    info = _info(pdf)
    match = re.search(r"Page size:\s+([\d.]+) x ([\d.]+) pts", info)
    assert match, info
    return float(match.group(1)), float(match.group(2))


def _height(pdf: Path) -> float:
    return _size(pdf)[1]
