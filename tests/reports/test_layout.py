"""The briefing's pages as a reader sees them: no text set over other text, no heading left
alone at a page's foot. Checked here on the full test context; the same checks on the shipped
data as `specledger run` renders it, and that the run prints nothing on stderr, are in
tests/pipelines/test_shipped_run.py (one run shared by every test of that module)."""

from __future__ import annotations

from tests.reports.layout import headings, headings_ending_a_page, overlapping


def test_no_two_words_of_the_full_briefing_overlap(full_pdf, full_appendix):
    assert overlapping(full_pdf) == []
    assert overlapping(full_appendix) == []


def test_no_heading_of_the_full_briefing_ends_a_page(full_pdf, full_appendix):
    assert headings(full_pdf), "the outline lists the headings"
    assert headings_ending_a_page(full_pdf) == []
    assert headings_ending_a_page(full_appendix) == []
