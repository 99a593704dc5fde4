"""The briefing's two PDFs, read back with pdftotext/pdfinfo: page 1's decisions, the evidence
sections, the appendix's lists; every printed number with its source and date or formula,
numbered A4 pages, the same bytes each time."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from reports.briefing import render, render_html, render_pdf
from reports.formatting import format_date, format_number, format_range
from reports.view_model import procurement_tco
from reports.views import summarise_flags, summarise_validation
from tests.reports.conftest import pdfinfo, pdftotext
from tests.support.contexts import empty_context, full_context

ROOT = Path(__file__).resolve().parents[2]
CONTEXT = full_context()
HEADINGS = ("What to buy", "Flags that need attention", "C2C per workload", "TCO comparison",
            "Serving: throughput against interactivity", "Market: renting GPU-hours",
            "Rack and system power density", "Interconnect trends",
            "Model error against published measurements")
APPENDIX_HEADINGS = ("Changes since the previous briefing", "Scale-up vs scale-out comparison",
                     "C2C inputs", "TCO comparisons with given job times", "TCO inputs",
                     "Serving bands and rented prices", "Market history and rent vs buy",
                     "Density: crossings and points",
                     "Interconnect: points, switches and latency", "Model error: every point",
                     "Methodology", "Appendix A: every current value",
                     "Appendix B: every flag", "Appendix C: sources")


def flat(text: str) -> str:
    """Whitespace collapsed, so a phrase wrapped inside a table cell still matches."""
    return " ".join(text.split())


def between(text: str, start: str, end: str) -> str:
    body = text[text.index(start):]
    return body[:body.index(end)]


def body(path, layout: bool = True) -> str:
    """The text after the first page (the appendix's cover lists every heading)."""
    text = pdftotext(path, layout)
    return text[text.index("\f") + 1:]


def line_with(text: str, *parts: str) -> str:
    return next(line for line in text.splitlines() if all(p in line for p in parts))


def pages(path) -> list[str]:
    return pdftotext(path).split("\f")[:-1]


# The first test to read the session's full briefing and appendix renders them: the file's
# ~15 s, its weight in ./dev test's order (tests/conftest.py), so it does not start last.
@pytest.mark.slow(seconds=15)
def test_every_section_heading_prints_in_order(full_pdf, full_appendix):
    text = pdftotext(full_pdf, layout=False)
    positions = [text.find(heading) for heading in HEADINGS]
    assert -1 not in positions and positions == sorted(positions)
    appendix = body(full_appendix, layout=False)
    positions = [appendix.find(heading) for heading in APPENDIX_HEADINGS]
    assert -1 not in positions and positions == sorted(positions)


def test_page_one_sets_each_workloads_options_side_by_side(full_pdf):
    page = pages(full_pdf)[0]
    assert "What to buy, as of 2026-11-22" in page
    workload = CONTEXT.decisions[0].workload
    assert page.count(workload) == 1          # two comparisons of one workload: one table
    header = line_with(page, "nvl72", "hgx-ndr", "hgx-800gbe")
    assert header.index("nvl72") < header.index("hgx-ndr") < header.index("hgx-800gbe")
    costs = line_with(page, "Cost per job")
    assert costs.index("$1.91 M") < costs.index("$1.95 M") < costs.index("$1.85 M")
    market = line_with(page, "Market $/GPU-hour")
    assert "none in 120 days" in market and "$6.25 ($5.1 M)" in market
    # Every price shows its date: the market's under it, the offers' oldest and newest.
    under = page.splitlines()[page.splitlines().index(market) + 1:][:3]
    assert any("priced 2026-08-19" in line for line in under)
    assert any("to 2026-11-09" in line for line in under)
    assert "10.1 days" in line_with(page, "Time to train")


def test_page_one_gives_each_verdict_its_margin_band_and_what_flips_it(full_pdf):
    page = flat(pages(full_pdf)[0])
    assert ("Either: too close to call (nvl72 2.15 % cheaper per job than hgx-ndr, P10–P90 "
            "-12.6 % to +15 %); what decides it: a measured nccl-tests all-reduce on the "
            "scale-out fabric, or firm quotes for both.") in page
    assert ("It flips if nvl72 runs less than 1.07× as fast as hgx-ndr (the model says "
            "1.09×, P10–P90 0.954–1.26×), or with hgx-ndr job time (days) at the low end of "
            "its range (9.38).") in page
    assert ("Buy hgx-800gbe: 2.99 % cheaper per job than nvl72, P10–P90 +1.2 % to "
            "+16.4 %.") in page
    # The bottom line comes first, above the options' figures.
    assert page.index("Buy hgx-800gbe") < page.index("Time to train")
    assert "It flips if nvl72 runs at least 1.11× as fast as hgx-800gbe" in page
    assert "tco-worked-illustration" not in page   # given job times are not a decision


def test_page_two_opens_with_the_changes_since_the_last_briefing_and_the_market(full_pdf):
    """Page 1 holds the answer alone; what changed and the market open page 2."""
    page = pages(full_pdf)[1]
    assert "Since the last briefing" not in pages(full_pdf)[0]
    # two columns: read in reading order; a hyphen that ends a line is dropped by pdftotext
    reading_order = re.sub(r"[\s-]", "", pdftotext(full_pdf, layout=False).split("\f")[1])
    for headline in CONTEXT.headlines:
        assert re.sub(r"[\s-]", "", f"{headline.subject}: {headline.text}") in reading_order
    h100 = line_with(page, "h100-sxm5", "lambda")
    assert "$10.00 (3)" in h100 and "-12.5 %" in h100 and "$3.29 lambda, on" in h100
    a100 = line_with(page, "$1.45 aws")   # the GPU name wraps in its narrow column
    assert "—" in a100 and "$1.45 aws, reserved" in a100


def test_the_main_briefing_stays_within_twelve_pages(full_pdf):
    count = int(re.search(r"Pages:\s+(\d+)", pdfinfo(full_pdf)).group(1))
    assert count <= 12


def test_the_appendix_cover_names_the_date_dataset_version_hash_cutoff_code_and_previous(
        full_appendix):
    cover = pages(full_appendix)[0]
    assert "as of 2026-11-22" in cover
    assert f"{CONTEXT.dataset_version} · {CONTEXT.dataset_hash[:12]}" in cover
    assert CONTEXT.dataset_hash in cover
    assert "2026-11-22 06:00 UTC" in cover and CONTEXT.code_version in cover
    assert line_with(cover, "Previous version").split("Previous version")[1].split()[0] == str(
        CONTEXT.previous_version)


def test_pages_are_a4_and_carry_page_x_of_y_the_date_and_the_dataset_version(
        full_pdf, full_appendix):
    for path, first in ((full_pdf, 0), (full_appendix, 1)):
        info = pdfinfo(path)
        assert "595.276 x 841.89 pts (A4)" in info
        count = int(re.search(r"Pages:\s+(\d+)", info).group(1))
        texts = pages(path)
        assert len(texts) == count
        for number, page in enumerate(texts, start=1):
            assert f"page {number} of {count}" in page
        for page in texts[first:]:
            assert "as of 2026-11-22" in page
            assert (f"dataset version {CONTEXT.dataset_version} · {CONTEXT.dataset_hash[:12]}"
                    in page)
            assert f"code {CONTEXT.code_version}" in page


def test_render_reports_the_page_count_pdfinfo_reads(full_rendered, full_pdf):
    # The fixture's own render, not another: test_the_same_context_gives_the_same_bytes
    # renders again to check the bytes repeat.
    assert full_rendered.pdf == full_pdf.read_bytes()
    assert int(re.search(r"Pages:\s+(\d+)", pdfinfo(full_pdf)).group(1)) == full_rendered.pages


def test_every_density_point_prints_with_its_value_source_and_date(full_appendix):
    text = between(body(full_appendix), "Points plotted", "Interconnect: points")
    for series in CONTEXT.density.series:
        for point in series.points:
            row = line_with(text, point.source, format_date(point.as_of, point.as_of_precision))
            assert format_number(point.value) in row and point.unit in row
            assert point.label.split()[0] in row


def test_thresholds_carry_their_sources_and_crossings_are_one_finding_per_threshold(
        full_pdf, full_appendix):
    text = between(body(full_pdf), "Rack and system power density", "Interconnect trends")
    for threshold in CONTEXT.density.thresholds:
        row = line_with(text, threshold.source, format_range(threshold.low, threshold.high))
        assert format_date(threshold.as_of, threshold.as_of_precision) in row
    findings = flat(between(text, "Findings", "Above: the low end"))
    racks = {c.point.label for c in CONTEXT.density.crossings}
    assert f"{len(racks)} racks or systems are above" in findings
    assert all(rack in findings for rack in racks)
    crossings = between(body(full_appendix), "Crossings", "Above: the low end")
    assert len([ln for ln in crossings.splitlines() if " above" in ln]) == len(
        CONTEXT.density.crossings)


def test_the_interconnect_chapter_prints_ratios_with_their_formula_and_doubling_times(
        full_pdf, full_appendix):
    text = flat(between(body(full_pdf, layout=False), "Interconnect trends",
                        "Model error against"))
    for ratio in CONTEXT.interconnect.ratios:
        assert flat(ratio.formula) in text
        assert re.search(rf"\b{re.escape(format_number(ratio.ratio, 3))} ?×", text)
    for series in (CONTEXT.interconnect.scale_up, CONTEXT.interconnect.scale_out):
        doubling = format_number(series.fit.doubling_years, 3)
        assert f"{series.title}: " in text and f"doubling every {doubling} years" in text
    latency = CONTEXT.interconnect.latency[0]
    detail = flat(body(full_appendix, layout=False))
    assert latency.source in detail and format_number(latency.value) in detail


def test_comparison_cells_carry_a_source_and_date_or_a_formula(full_appendix):
    text = flat(between(body(full_appendix, layout=False), "Scale-up vs scale-out comparison",
                        "C2C inputs"))
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


def test_the_c2c_section_places_each_scenario_with_its_class_and_fabric(
        full_pdf, full_appendix):
    text = between(body(full_pdf), "C2C per workload", "TCO comparison")
    for scenario in CONTEXT.scenarios:
        row = line_with(text, scenario.name[:10], format_number(scenario.c2c, 3))
        # the class wraps at its hyphen in the narrow column
        assert scenario.c2c_class.split("-")[0] in row
    for label in ("compute-bound", "communication-bound", "share of C2C"):
        assert label in text   # chart text is real text in the PDF
    assert "boundaries 0.2 and 0.6" in flat(text)
    inputs = between(body(full_appendix), "C2C inputs", "TCO inputs")
    for figure in {c for s in CONTEXT.scenarios for c in s.inputs}:
        assert figure.label in inputs and figure.source in inputs


def test_tco_prints_break_even_ranges_the_models_speedup_and_a_tornado(full_pdf, full_appendix):
    """The comparisons of modelled workloads in the TCO section; those whose job times the
    scenario gives (worked illustrations) only in the appendix."""
    text = between(body(full_pdf), "TCO comparison", "Serving: throughput")
    procurement, illustrations = procurement_tco(CONTEXT)
    assert procurement and illustrations
    given = between(body(full_appendix), "TCO comparisons with given job times", "TCO inputs")
    for lines, printed, absent in ((procurement, text, given), (illustrations, given, text)):
        for line in lines:
            row = line_with(printed, line.name[:20], format_number(line.break_even_speedup, 3))
            assert (format_number(line.speedup, 3) if line.speedup else "n/a") in row
            if line.break_even_p10 is not None:
                assert (f"({format_range(line.break_even_p10, line.break_even_p90, 3)})"
                        in printed)
            assert not any(line.name[:20] in row and format_number(line.break_even_speedup, 3)
                           in row for row in absent.splitlines())
    assert "s* = (R_U + K) ÷ (R_O + K)" in flat(text)
    assert "What moves the margin" in text and "hgx-800gbe capex fabric cost" in text


def test_the_flags_section_groups_the_most_severe_flags_and_counts_the_rest(full_pdf):
    text = flat(between(body(full_pdf, layout=False), "Flags that need attention",
                        "C2C per workload"))
    summary = summarise_flags(CONTEXT.flags)
    assert summary.shown and summary.rest
    for flag in summary.shown:
        assert flat(flag.subject) in text
    shown = {flag.subject for flag in summary.shown}
    for flag in CONTEXT.flags:
        if flag.subject not in shown:
            assert flat(flag.subject) not in text
    assert f"{summary.rest} more flags" in text


def test_changes_and_moves_since_the_previous_version_are_listed(full_appendix):
    text = flat(between(body(full_appendix, layout=False),
                        "Changes since the previous briefing", "Scale-up vs scale-out"))
    for change in CONTEXT.changes.observations:
        assert f"{change.source}, {format_date(change.as_of)}" in text
    for move in CONTEXT.moves:
        assert move.scenario in text and move.before in text and move.after in text
    assert "1 added, 1 changed, 1 superseded" in text


def test_the_model_error_is_summarised_per_dataset(full_pdf, full_appendix):
    text = flat(body(full_pdf, layout=False)[
        body(full_pdf, layout=False).index("Model error against"):])
    for summary in summarise_validation(CONTEXT.validation):
        assert f"{format_number(summary.mean_abs_error, 3)} {summary.error_unit}" in text
        assert f"{format_number(summary.max_abs_error, 3)} {summary.error_unit}" in text
    points = flat(between(body(full_appendix, layout=False), "Model error: every point",
                          "Methodology"))
    assert "korthikanti-2022, 2022-05-10" in points
    # Every point on one line of its own: name, measured, predicted and error side by side
    # (its set, quantity and source are printed once, above its group).
    laid_out = between(body(full_appendix), "Model error: every point", "Methodology")
    for line in CONTEXT.validation:
        row = line_with(laid_out, line.point, format_number(line.measured))
        assert format_number(line.predicted) in row
        assert f"{format_number(line.error, 3)} {line.error_unit}" in row
    assert points.count("korthikanti-2022, 2022-05-10") == 1


def test_methodology_prints_every_parameter(full_appendix):
    text = flat(between(body(full_appendix, layout=False), "Methodology", "Appendix A"))
    for name, value in CONTEXT.parameters.items():
        assert name in text and flat(value) in text


def test_the_appendix_lists_every_source_with_its_url_and_date(full_appendix):
    appendix = body(full_appendix)[body(full_appendix).index("Appendix C: sources"):]
    # In the order the cells were drawn (-raw), so a wrapped URL is not interleaved with the
    # row beside it; pdftotext drops a hyphen that ends a line: compare without them.
    raw = subprocess.run(["pdftotext", "-raw", str(full_appendix), "-"], capture_output=True,
                         text=True, check=True).stdout
    squeezed = re.sub(r"[\s-]", "", raw[raw.index("Appendix C: sources"):])
    for source in CONTEXT.sources:
        row = line_with(appendix, source.key)
        assert format_date(source.published_on) in row
        if source.url:
            assert re.sub(r"[\s-]", "", source.url) in squeezed
    # A source the ledger has no URL for says so, rather than leaving the reader to wonder.
    without = sum(1 for source in CONTEXT.sources if not source.url)
    assert without and squeezed.count("noURLintheledger") == without


def test_no_missing_value_prints_as_nan_none_or_nat(full_pdf, full_appendix, empty_pdf,
                                                    empty_appendix):
    for path in (full_pdf, full_appendix, empty_pdf, empty_appendix):
        words = set(re.findall(r"\b\w+\b", pdftotext(path, layout=False)))
        assert not words & {"nan", "NaN", "None", "NaT", "inf"}, path.name


def test_the_same_context_gives_the_same_bytes(full_pdf, full_appendix):
    assert render_pdf(full_context()) == full_pdf.read_bytes()
    assert render(full_context(), document="appendix").pdf == full_appendix.read_bytes()


def test_another_process_renders_the_same_bytes(full_pdf):
    """No per-process state (hash seeds, SVG ids, fonts) leaks into the PDF."""
    script = ("import hashlib; from reports.briefing import render_pdf; "
              "from tests.support.contexts import full_context; "
              "print(hashlib.sha256(render_pdf(full_context())).hexdigest())")
    env = {**os.environ, "PYTHONHASHSEED": "123", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True, env=env, cwd=ROOT)
    assert out.stdout.strip() == hashlib.sha256(full_pdf.read_bytes()).hexdigest()


def test_the_html_links_only_its_stylesheet_and_inlines_every_chart():
    html = render_html(CONTEXT)
    assert re.findall(r'\b(?:src|href)="([^"#][^"]*)"', html) == ["briefing.css"]
    # density, interconnect, C2C map, TCO, market, one tornado and one serving curve
    assert html.count("<svg ") == 7 and "<?xml" not in html and "<metadata" not in html
    appendix = render_html(CONTEXT, document="appendix")
    assert appendix.count("<svg ") == 1   # the switch chart


def test_an_empty_ledger_still_renders_with_explicit_none_text(empty_pdf, empty_appendix):
    text = flat(pdftotext(empty_pdf, layout=False) + pdftotext(empty_appendix, layout=False))
    for heading in (*HEADINGS, *APPENDIX_HEADINGS):
        assert heading in text
    for none in ("No flags in this dataset version.", "none (first briefing)",
                 "No TCO comparison of a modelled workload", "First briefing: nothing to "
                 "compare with.", "No GPU-hour offers in the ledger",
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


def test_only_the_fonts_shipped_with_the_template_are_embedded(full_pdf, full_appendix):
    """Charts included: the same glyphs on every machine, whatever fonts it has."""
    for path in (full_pdf, full_appendix):
        table = subprocess.run(["pdffonts", str(path)], capture_output=True, text=True,
                               check=True).stdout.splitlines()[2:]
        families = {line.split()[0].split("+", 1)[1] for line in table}
        assert families and all(f.startswith("Briefing-") for f in families), families


def test_the_palette_lives_in_css_variables():
    css = (ROOT / "reports" / "templates" / "briefing" / "briefing.css").read_text()
    root, rules = css.split(":root {", 1)[1].split("}", 1)
    assert "--critical:" in root
    assert not re.findall(r"#[0-9a-fA-F]{3,6}\b", rules)   # every colour through a variable


def test_page_one_gives_each_serving_scenario_its_verdict(full_pdf):
    page = flat(pdftotext(full_pdf, layout=False).split("\f")[0])
    assert ("deepseek-r1 FP8, 1,024 in / 1,024 out: gb200-nvl72-ep72 costs $0.148 per million "
            "output tokens at 35 tokens/s per user, 86.7 % less than b200-ep16-ndr ($1.11), "
            "80 % band +52 % to +92 %.") in page
    # Said once for every verdict, in the note below them (pdftotext drops a hyphen that
    # ends a line: compare without them).
    assert "at its owner's cost per GPUhour unless said" in page.replace("-", "")


def test_the_serving_section_draws_each_curve_and_prices_each_option_at_the_target(
        full_pdf, full_appendix):
    text = flat(between(body(full_pdf, layout=False), "Serving: throughput",
                        "Market: renting"))
    assert "target 35 tokens/s per user" in text
    assert "tokens/s per user (interactivity)" in text        # the chart's axis, as text
    for option in CONTEXT.serving[0].options:
        assert f"{option.name} ({option.source})" in text      # the chart's legend
    row = line_with(body(full_pdf), "b200-ep16-ndr", "$2.39")   # the table's row
    assert "measured" in row and "$1.11" in row
    # The appendix prices the same work under each price tier, input and output tokens
    # apart, with what the bands rest on; a tier the ledger lacks is absent.
    tiers = between(body(full_appendix), "Serving bands and rented prices", "Serving inputs")
    neocloud = line_with(tiers, "neocloud", "$3.49")
    assert "$0.324" in neocloud and "$1.29" in neocloud and "$1.62" in neocloud
    assert "b200-ep16-ndr 20 % prefill" in flat(tiers)
    assert f"Band: {flat(CONTEXT.serving[0].options[0].band_basis)}" in flat(tiers)
    assert "neocloud" not in text


def test_an_option_whose_curve_is_faster_than_the_target_says_what_each_user_gets():
    """A curve is never extrapolated: where its slowest point per user beats the target,
    that point answers, and the row says at what speed per user."""
    [line] = CONTEXT.serving
    fast = dataclasses.replace(line.options[1], tok_s_per_user=106.5)
    at_target = dataclasses.replace(line.options[0], tok_s_per_user=line.target_tok_s_per_user)
    context = dataclasses.replace(CONTEXT, serving=[dataclasses.replace(
        line, options=(at_target, fast))])
    html = render_html(context)
    assert html.count("its curve has no slower point") == 1
    assert "at 106 per user: its curve has no slower point" in html


def test_a_market_of_old_offers_only_is_listed_with_its_dates_not_called_empty(
        tmp_path_factory):
    from reports.context import StaleMarketLine
    from tests.reports.conftest import _rendered

    stale = [StaleMarketLine("h100-sxm5", "on_demand", 12, 6, 10.0, date(2025, 3, 1), 636)]
    context = dataclasses.replace(full_context(), market=[], market_history=[],
                                  market_stale=stale, market_stale_newest=date(2025, 3, 1))
    text = flat(pdftotext(_rendered(tmp_path_factory, "stale.pdf", context, "briefing"),
                          layout=False))
    assert "No GPU-hour offers in the ledger" not in text
    # Page 1 says how old the newest offer is; the Market section lists them.
    assert ("No GPU-hour offer priced within the last 120 days: the ledger's newest is of "
            "2025-03-01") in text
    assert "Offers older than the age limit" in text
    assert "2025-03-01" in text and "636 days" in text


def test_the_market_section_dates_each_median_by_its_offers_and_keeps_composition_apart(
        full_pdf, full_appendix):
    section = body(full_pdf)
    section = section[section.index("Market: renting GPU-hours"):]
    row = line_with(section, "h100-sxm5", "on demand", "$10.00")
    assert "9 (7)" in row and "2026-08-26 to 11-09" in row and "-5 %" in row
    # The 90-day column has no matched offer: a dash, not the ratio of two medians.
    assert "-12.5 %" not in row
    # Offers that came or went: counted in the briefing, listed by provider in the appendix.
    assert "Offers came or went in 1 of these 2 series" in flat(section)
    assert "gcp added 11 offers" not in flat(section)
    assert "h100-sxm5 on demand, 90 days: gcp added 11 offers" in flat(body(full_appendix))
