"""The briefing's pages as a reader sees them: no text set over other text, no heading left
alone at a page's foot, and a run that prints nothing on stderr. Checked on the full test
context and on the shipped data as `specledger run` renders it (one run for this module)."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from pipelines.settings import PROJECT_ROOT
from tests.reports.layout import headings, headings_ending_a_page, overlapping

SPECLEDGER = Path(sys.executable).parent / "specledger"


@dataclass(frozen=True)
class ShippedRun:
    briefing: Path
    appendix: Path
    stderr: str


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory) -> ShippedRun:
    """`specledger run` on the shipped sources and scenarios, in a fresh home, with none of
    this environment's SPECLEDGER_ or PREFECT_ settings (SQLite, Prefect's state in the home)."""
    home = tmp_path_factory.mktemp("shipped")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPECLEDGER_", "PREFECT_"))}
    env.update(PREFECT_SERVER_ANALYTICS_ENABLED="false", DO_NOT_TRACK="1")
    done = subprocess.run([str(SPECLEDGER), "run", "--home", str(home)], env=env,
                          cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    (briefing,) = (home / "briefings").glob("briefing-*[0-9].pdf")
    return ShippedRun(briefing, briefing.with_name(f"{briefing.stem}-appendix.pdf"),
                      done.stderr)


def test_no_two_words_of_the_full_briefing_overlap(full_pdf, full_appendix):
    assert overlapping(full_pdf) == []
    assert overlapping(full_appendix) == []


def test_no_heading_of_the_full_briefing_ends_a_page(full_pdf, full_appendix):
    assert headings(full_pdf), "the outline lists the headings"
    assert headings_ending_a_page(full_pdf) == []
    assert headings_ending_a_page(full_appendix) == []


@pytest.mark.slow(seconds=120)
def test_no_two_words_of_the_shipped_briefing_overlap(shipped):
    """Chart labels included: matplotlib's text stays text in the PDF."""
    assert overlapping(shipped.briefing) == []
    assert overlapping(shipped.appendix) == []


@pytest.mark.slow(seconds=120)
def test_no_heading_of_the_shipped_briefing_ends_a_page(shipped):
    found = headings(shipped.briefing)
    assert {"Serving: throughput against interactivity", "TCO comparison"} <= {
        text for _, text in found}
    assert headings_ending_a_page(shipped.briefing) == []
    assert headings_ending_a_page(shipped.appendix) == []


@pytest.mark.slow(seconds=120)
def test_a_run_is_quiet_on_stderr(shipped):
    """No pint redefinition, no WeasyPrint anchor or CSS warning, no log line at all: what a
    run has to say is on stdout."""
    for noise in ("Redefining", "Anchor defined twice", "WARNING", "Warning"):
        assert noise not in shipped.stderr
    assert shipped.stderr == ""
