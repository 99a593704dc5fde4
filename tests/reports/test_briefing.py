"""The briefing PDF, read back with pdftotext/pdfinfo: every section, every printed number with
its source and date or formula, numbered A4 pages, the same bytes each time."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

from reports.briefing import render, render_html, render_pdf
from reports.formatting import format_date, format_number, format_range
from reports.views import summarise_flags, summarise_validation
from tests.reports.conftest import pdfinfo, pdftotext
from tests.reports.contexts import empty_context, full_context

ROOT = Path(__file__).resolve().parents[2]
CONTEXT = full_context()
HEADINGS = ("Executive summary", "Rack and system power density", "Interconnect trends",
            "Scale-up vs scale-out comparison", "C2C decision map", "TCO comparison",
            "Changes since the previous briefing",
            "Model error against published measurements", "Methodology",
            "Appendix A: every current value", "Appendix B: every flag", "Appendix C: sources")


def flat(text: str) -> str:
    """Whitespace collapsed, so a phrase wrapped inside a table cell still matches."""
    return " ".join(text.split())


def between(text: str, start: str, end: str) -> str:
    body = text[text.index(start):]
    return body[:body.index(end)]


def body(path, layout: bool = True) -> str:
    """The text after the cover (whose contents list names every heading)."""
    text = pdftotext(path, layout)
    return text[text.index("\f") + 1:]


def line_with(text: str, *parts: str) -> str:
    return next(line for line in text.splitlines() if all(p in line for p in parts))


def pages(path) -> list[str]:
    return pdftotext(path).split("\f")[:-1]


def test_every_section_heading_prints_in_order(full_pdf):
    text = pdftotext(full_pdf, layout=False)
    # The contents list on the cover names them too; read the body after it.
    body = text[text.index("Top flags"):]
    positions = [body.find(heading) for heading in HEADINGS[1:]]
    assert -1 not in positions and positions == sorted(positions)
    assert "Executive summary" in text[:text.index("Top flags")]


def test_the_cover_names_the_date_dataset_version_hash_cutoff_code_and_previous(full_pdf):
    cover = pages(full_pdf)[0]
    assert "as of 2026-11-22" in cover
    assert f"{CONTEXT.dataset_version} · {CONTEXT.dataset_hash[:12]}" in cover
    assert CONTEXT.dataset_hash in cover
    assert "2026-11-22 06:00 UTC" in cover and CONTEXT.code_version in cover
    assert line_with(cover, "Previous version").split("Previous version")[1].split()[0] == str(
        CONTEXT.previous_version)


def test_pages_are_a4_and_carry_page_x_of_y_the_date_and_the_dataset_version(full_pdf):
    info = pdfinfo(full_pdf)
    assert "595.276 x 841.89 pts (A4)" in info
    count = int(re.search(r"Pages:\s+(\d+)", info).group(1))
    texts = pages(full_pdf)
    assert len(texts) == count
    for number, page in enumerate(texts, start=1):
        assert f"page {number} of {count}" in page
    for page in texts[1:]:
        assert "as of 2026-11-22" in page
        assert f"dataset version {CONTEXT.dataset_version} · {CONTEXT.dataset_hash[:12]}" in page


def test_render_reports_the_page_count_pdfinfo_reads(full_pdf):
    rendered = render(full_context())
    assert rendered.pdf == full_pdf.read_bytes()
    assert int(re.search(r"Pages:\s+(\d+)", pdfinfo(full_pdf)).group(1)) == rendered.pages


def test_the_full_briefing_fits_a_sensible_number_of_pages(full_pdf):
    count = int(re.search(r"Pages:\s+(\d+)", pdfinfo(full_pdf)).group(1))
    # Cover, six chapters that open a page, three appendix parts; a fixture this size
    # should not spill far beyond that.
    assert 10 <= count <= 24


def test_every_density_point_prints_with_its_value_source_and_date(full_pdf):
    text = between(body(full_pdf), "Points plotted", "Interconnect trends")
    for series in CONTEXT.density.series:
        for point in series.points:
            row = line_with(text, point.source, format_date(point.as_of, point.as_of_precision))
            assert format_number(point.value) in row and point.unit in row
            assert point.label.split()[0] in row


def test_thresholds_and_crossings_carry_their_sources(full_pdf):
    text = between(body(full_pdf), "Rack and system power density", "Points plotted")
    for threshold in CONTEXT.density.thresholds:
        row = line_with(text, threshold.source, format_range(threshold.low, threshold.high))
        assert format_date(threshold.as_of, threshold.as_of_precision) in row
    crossings = between(text, "Crossings", "Above: the low end")
    assert len([ln for ln in crossings.splitlines() if " above" in ln]) == len(
        CONTEXT.density.crossings)


def test_the_interconnect_chapter_prints_ratios_with_their_formula_and_doubling_times(full_pdf):
    text = flat(between(body(full_pdf, layout=False), "Interconnect trends",
                        "Scale-up vs scale-out comparison"))
    for ratio in CONTEXT.interconnect.ratios:
        assert flat(ratio.formula) in text
        assert re.search(rf"\b{re.escape(format_number(ratio.ratio, 3))} ?×", text)
    for series in (CONTEXT.interconnect.scale_up, CONTEXT.interconnect.scale_out):
        doubling = format_number(series.fit.doubling_years, 3)
        assert f"{series.title}: " in text and f"doubling every {doubling} years" in text
    latency = CONTEXT.interconnect.latency[0]
    assert latency.source in text and format_number(latency.value) in text


def test_comparison_cells_carry_a_source_and_date_or_a_formula(full_pdf):
    text = flat(between(body(full_pdf, layout=False), "Scale-up vs scale-out comparison",
                        "C2C decision map"))
    for option in CONTEXT.comparison_options:
        assert option in text
    for row in CONTEXT.comparison:
        assert row.attribute in text
        for cell in row.cells:
            if cell is None:
                assert "not in the ledger" in text
            elif cell.formula:
                assert f"= {cell.formula}" in text
            else:
                assert f"{cell.source}, {format_date(cell.as_of)}" in text


def test_the_c2c_map_places_each_scenario_with_its_class_and_fabric(full_pdf):
    text = between(body(full_pdf), "C2C decision map", "TCO comparison")
    for scenario in CONTEXT.scenarios:
        row = line_with(text, scenario.name[:10], format_number(scenario.c2c, 3))
        # the class wraps at its hyphen in the narrow column
        assert scenario.c2c_class.split("-")[0] in row
    for label in ("compute-bound", "communication-bound", "share of C2C"):
        assert label in text   # chart text is real text in the PDF
    assert "boundaries 0.2 and 0.6" in flat(text)
    for figure in {c for s in CONTEXT.scenarios for c in s.inputs}:
        assert figure.label in text and figure.source in text


def test_tco_prints_break_even_ranges_and_the_models_speedup(full_pdf):
    text = between(body(full_pdf), "TCO comparison", "Changes since the previous")
    for line in CONTEXT.tco:
        row = line_with(text, line.name[:20], format_number(line.break_even_speedup, 3))
        assert (format_number(line.speedup, 3) if line.speedup else "n/a") in row
        if line.break_even_p10 is not None:
            assert f"({format_range(line.break_even_p10, line.break_even_p90, 3)})" in text
    assert "s* = (R_U + K) ÷ (R_O + K)" in flat(text)


def test_the_summary_shows_the_most_severe_flags_and_counts_the_rest(full_pdf):
    text = flat(between(body(full_pdf, layout=False), "Top flags",
                        "Recommended fabric per scenario"))
    summary = summarise_flags(CONTEXT.flags)
    assert summary.shown and summary.rest
    for flag in summary.shown:
        assert flat(flag.subject) in text
    shown = {flag.subject for flag in summary.shown}
    for flag in CONTEXT.flags:
        if flag.subject not in shown:
            assert flat(flag.subject) not in text
    assert f"{summary.rest} more flags" in text


def test_changes_and_moves_since_the_previous_version_are_listed(full_pdf):
    text = flat(between(body(full_pdf, layout=False),
                        "Changes since the previous briefing", "Model error against"))
    for change in CONTEXT.changes.observations:
        assert f"{change.source}, {format_date(change.as_of)}" in text
    for move in CONTEXT.moves:
        assert move.scenario in text and move.before in text and move.after in text
    assert "1 added, 1 changed, 1 superseded" in text


def test_the_model_error_is_summarised_per_dataset(full_pdf):
    text = flat(between(body(full_pdf, layout=False), "Model error against",
                        "Methodology"))
    for summary in summarise_validation(CONTEXT.validation):
        assert f"{format_number(summary.mean_abs_error, 3)} {summary.error_unit}" in text
        assert f"{format_number(summary.max_abs_error, 3)} {summary.error_unit}" in text
    assert "korthikanti-2022, 2022-05-10" in text


def test_methodology_prints_every_parameter(full_pdf):
    text = flat(between(body(full_pdf, layout=False), "Methodology", "Appendix A"))
    for name, value in CONTEXT.parameters.items():
        assert name in text and flat(value) in text


def test_the_appendix_lists_every_source_with_its_url_and_date(full_pdf):
    appendix = body(full_pdf)[body(full_pdf).index("Appendix C: sources"):]
    raw = body(full_pdf, layout=False)
    # pdftotext drops a hyphen that ends a line (a URL wrapped at one): compare without them.
    squeezed = re.sub(r"[\s-]", "", raw[raw.index("Appendix C: sources"):])
    for source in CONTEXT.sources:
        row = line_with(appendix, source.key)
        assert format_date(source.published_on) in row
        if source.url:
            assert re.sub(r"[\s-]", "", source.url) in squeezed


def test_the_same_context_gives_the_same_bytes(full_pdf):
    assert render_pdf(full_context()) == full_pdf.read_bytes()


def test_another_process_renders_the_same_bytes(full_pdf):
    """No per-process state (hash seeds, SVG ids, fonts) leaks into the PDF."""
    script = ("import hashlib; from reports.briefing import render_pdf; "
              "from tests.reports.contexts import full_context; "
              "print(hashlib.sha256(render_pdf(full_context())).hexdigest())")
    env = {**os.environ, "PYTHONHASHSEED": "123", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True, env=env, cwd=ROOT)
    assert out.stdout.strip() == hashlib.sha256(full_pdf.read_bytes()).hexdigest()


def test_the_html_links_only_its_stylesheet_and_inlines_every_chart():
    html = render_html(CONTEXT)
    assert re.findall(r'\b(?:src|href)="([^"#][^"]*)"', html) == ["briefing.css"]
    assert html.count("<svg ") == 5 and "<?xml" not in html and "<metadata" not in html


def test_an_empty_ledger_still_renders_with_explicit_none_text(empty_pdf):
    text = flat(pdftotext(empty_pdf, layout=False))
    for heading in HEADINGS:
        assert heading in text
    for none in ("No flags in this dataset version.", "none (first briefing)",
                 "No density trend in this dataset version",
                 "No interconnect trend in this dataset version.",
                 "No comparison rows in this dataset version.",
                 "No scenario results in this dataset version.",
                 "No TCO comparison in this dataset version.",
                 "No previous dataset version: this is the first briefing.",
                 "No validation results in this dataset version.",
                 "No resolved values in this dataset version.", "No sources cited."):
        assert none in text, none
    assert empty_context().dataset_hash[:12] in text
