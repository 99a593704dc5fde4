"""`specledger run` as a user runs it, on the shipped sources and scenarios: once for this
module (about 40 s), in a home that does not exist yet, with none of this environment's
SPECLEDGER_ or PREFECT_ settings (SQLite, Prefect's state in the home). Every test reads what
that one run left: its output, the warehouse, the briefing's pages as a reader sees them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest

from pipelines.inputs.remote_sources import load_remote_sources
from pipelines.inputs.scenarios import scenario_paths
from pipelines.settings import PROJECT_ROOT
from tests.reports.layout import (
    headings,
    headings_ending_a_page,
    near_blank_pages,
    overlapping,
    page_count,
    past_the_margins,
)

pytestmark = pytest.mark.slow(seconds=12)  # one run (~45 s) shared by the four tests

SPECLEDGER = Path(sys.executable).parent / "specledger"
DAY = "2026-11-22"


@dataclass(frozen=True)
class ShippedRun:
    home: Path
    stdout: str
    stderr: str

    @property
    def briefing(self) -> Path:
        return self.home / "briefings" / f"briefing-{DAY}.pdf"

    @property
    def appendix(self) -> Path:
        return self.briefing.with_name(f"briefing-{DAY}-appendix.pdf")


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory) -> ShippedRun:
    """The README's main job in a fresh home (its parent folders do not exist either),
    `--offline`: a test never reads the public internet (the feed is tested against a
    loopback server, tests/pipelines/fetch/test_gpuhunt_feed.py)."""
    home = tmp_path_factory.mktemp("shipped") / "fresh" / "var"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPECLEDGER_", "PREFECT_"))}
    env.update(PREFECT_SERVER_ANALYTICS_ENABLED="false", DO_NOT_TRACK="1")
    done = subprocess.run([str(SPECLEDGER), "run", "--home", str(home), "--as-of", DAY,
                           "--offline"], env=env, cwd=PROJECT_ROOT, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    return ShippedRun(home, done.stdout, done.stderr)


def test_specledger_run_works_with_a_home_that_does_not_exist_yet(shipped):
    home = shipped.home
    assert (home / ".prefect").is_dir()
    assert (home / "warehouse.duckdb").is_file()
    info = subprocess.run(["pdfinfo", str(shipped.briefing)],
                          capture_output=True, text=True, check=True).stdout
    assert f"specledger briefing {DAY}" in info
    scenarios = PROJECT_ROOT / "data" / "scenarios"
    c2c, tco = scenario_paths(scenarios, "c2c"), scenario_paths(scenarios, "tco")
    # every shipped scenario, stored and published
    assert f"c2c        {len(c2c)} computed" in shipped.stdout
    assert f"tco        {len(tco)} computed" in shipped.stdout
    declared = len(load_remote_sources(PROJECT_ROOT / "data" / "remote_sources.yaml"))
    assert (f"remote     offline (--offline): {declared} remote sources not fetched"
            in shipped.stdout)
    con = duckdb.connect(str(home / "warehouse.duckdb"), read_only=True)
    fabrics = con.execute("select scenario, recommended_fabric from c2c_latest").fetchall()
    costs = con.execute("select scenario, break_even_speedup, total_cost_usd "
                        "from tco_latest").fetchall()
    con.close()
    assert len(fabrics) == len(c2c) and len(costs) == len(tco)


def test_no_two_words_of_the_shipped_briefing_overlap(shipped):
    """Chart labels included: matplotlib's text stays text in the PDF."""
    assert overlapping(shipped.briefing) == []
    assert overlapping(shipped.appendix) == []


def test_no_heading_of_the_shipped_briefing_ends_a_page(shipped):
    found = headings(shipped.briefing)
    assert {"Serving: throughput against interactivity", "TCO comparison"} <= {
        text for _, text in found}
    assert headings_ending_a_page(shipped.briefing) == []
    assert headings_ending_a_page(shipped.appendix) == []


def test_the_shipped_briefing_fits_twelve_pages_with_none_nearly_blank_and_none_overrun(shipped):
    """The main PDF within 12 pages; no page a break left nearly empty; no word in the side
    margins (a table wider than the text block, a cell that does not wrap), in the appendix
    either."""
    assert page_count(shipped.briefing) <= 12
    assert near_blank_pages(shipped.briefing) == []
    for pdf in (shipped.briefing, shipped.appendix):
        assert [(w.page, w.text) for w in past_the_margins(pdf)] == []


def test_page_one_names_each_training_options_fabric_at_its_per_gpu_rate(shipped):
    """"hgx-800gbe" is 400G RoCE per GPU, not 800G, and its efficiency is InfiniBand's: page 1
    says both, so the fabric comparison is read for what it is."""
    page = subprocess.run(["pdftotext", "-l", "1", str(shipped.briefing), "-"],
                          capture_output=True, text=True, check=True).stdout
    flat = " ".join(page.split())
    assert "b200 + 400G RoCE" in flat and "gb200 + 400G IB" in flat
    assert "The fabrics compare at one line rate (400G per GPU)" in flat
    # Every option's cost inputs are dated on page 1, oldest to newest.
    assert re.search(r"Inputs dated (\d{4}(-\d\d)?–\d{4}(-\d\d)? ?){4}", flat)
    # So is each serving verdict: the span of the two compared options' hardware and prices.
    assert len(re.findall(r"\. Inputs dated \d{4}(-\d\d)?(–\d{4}(-\d\d)?)?[ .]", flat)) >= 4
    assert "hgx-800gbe's scale-out efficiency (0.94) is measured on InfiniBand" in flat
    # Goodput is the one published large run's, with its source, for every option.
    assert ("goodput 95 % (set per option in the scenario; goodput from "
            "meta-llama3-405b-16k-h100 (dcd-llama3-interruptions-2024") in flat
    # The HGX options buy no cooling: said, not counted as zero.
    assert "not in the ledger: cooling of hgx-800gbe, hgx-ndr" in flat


def test_the_shipped_run_raises_at_most_100_flags_each_on_a_figure_or_an_offer_group(shipped):
    """Issue 39: flags a buyer reads. No flag per catalog row (an offer group is one), no
    single_source or stale on a figure no scenario reads, and the ones on read figures say
    which scenarios read them."""
    con = duckdb.connect(str(shipped.home / "warehouse.duckdb"), read_only=True)
    rows = con.execute("select kind, subject, message from flag").fetchall()
    con.close()
    assert 0 < len(rows) <= 100
    assert not any(subject.endswith("/ gpu_hour_price") for _, subject, _ in rows)
    noisy = [(kind, subject) for kind, subject, message in rows
             if kind in ("single_source", "stale") and not subject.startswith("market: ")
             and " Read by " not in message]
    assert noisy == []
    assert any(subject.startswith("market: ") for kind, subject, _ in rows if kind == "stale")


def test_a_run_is_quiet_on_stderr(shipped):
    """No pint redefinition, no WeasyPrint anchor or CSS warning, no log line at all: what a
    run has to say is on stdout."""
    for noise in ("Redefining", "Anchor defined twice", "WARNING", "Warning"):
        assert noise not in shipped.stderr
    assert shipped.stderr == ""
