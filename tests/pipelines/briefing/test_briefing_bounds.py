"""A big change keeps the briefing small: each list holds its most important rows (a bound
per list, BriefingBounds) and counts the rest, which the database counts without handing
every row to Python. Same context on SQLite and PostgreSQL."""

from __future__ import annotations

import csv
import re
import subprocess
from collections.abc import Callable
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from db import queries
from db.engine import Session, make_engine
from models.trends import TrendParams
from pipelines.briefing.comparison import load_comparison
from pipelines.briefing.context import BriefingBounds, BriefingInputs, briefing_context
from pipelines.jobs import steps as jobs
from pipelines.settings import Settings
from reports.briefing import render
from reports.context import BriefingContext, ChangeCount
from tests.conftest import NVLINK_PACK
from tests.support.shipped_week import Clock

DAY = date(2026, 11, 22)
# metric -> (unit, a value inside the catalogue's bounds)
METRICS = {"tdp": ("W", 700), "hbm_capacity": ("GB", 141), "hbm_bandwidth": ("TB/s", 4.8),
           "peak_dense_bf16": ("TFLOP/s", 989), "gpu_price": ("USD", 30000)}
BOUNDS = BriefingBounds(changes=60, values_per_section=60, flag_messages_per_kind=10,
                        flag_subjects_per_kind=60, stale_sources=5)


def write_change(path: Path, rows: int) -> None:
    """`rows` observations of one survey: METRICS of generated GPUs, one per (item, metric)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["source", "source_title", "source_kind", "source_published_on",
                         "item", "item_name", "item_kind", "metric", "value", "unit", "as_of",
                         "status"])
        names = sorted(METRICS)
        for n in range(rows):
            item, metric = divmod(n, len(names))
            unit, value = METRICS[names[metric]]
            writer.writerow(["gpu-survey", "A GPU survey", "dataset", "2026-11-01",
                             f"tgpu-{item:04d}", f"Test GPU {item}", "gpu", names[metric],
                             value * (1 + item % 7 / 100), unit, "2026-10-01", "S"])


def briefing_after(ledger_url: str, tmp_path: Path, rows: int,
                   bounds: BriefingBounds = BOUNDS) -> BriefingContext:
    """Two versions (an NVLink pack; + a survey of `rows` observations), then the second's
    briefing context."""
    settings = Settings(home=tmp_path / "home", database_url=ledger_url)
    first, change = tmp_path / "v1" / "nvlink.yaml", tmp_path / "v2" / "survey.csv"
    first.parent.mkdir(parents=True)
    first.write_text(NVLINK_PACK, encoding="utf-8")
    write_change(change, rows)
    clock = Clock(datetime(2026, 11, 15, 6, 0, tzinfo=UTC))
    for paths in ([first], [first, change]):
        version = jobs.ingest(settings, paths, today=DAY, now=clock).dataset_version
        jobs.flags(settings, version, now=clock)
    engine = make_engine(ledger_url)
    try:
        with Session(engine) as session:
            return briefing_context(
                session, as_of=DAY, version=queries.dataset_version(session, version),
                code_version="test",
                inputs=BriefingInputs(TrendParams(), load_comparison(settings.comparison_path),
                                      bounds))
    finally:
        engine.dispose()


def test_a_big_change_keeps_its_most_important_rows_and_counts_the_rest(ledger_url, tmp_path):
    context = briefing_after(ledger_url, tmp_path, 5_000)

    assert len(context.changes.observations) == 60
    assert context.change_counts == {"added": ChangeCount(5_000, 1_000, 5),
                                     "changed": ChangeCount(0, 0, 0),
                                     "superseded": ChangeCount(0, 0, 0)}
    # Every value is counted; the appendix keeps 60 of a section.
    assert context.section_counts["GPUs"] == 5_000 and len(context.specs) <= 2 + 60
    # One survey with 5,000 single-source values: 5,000 flags, 60 of them kept.
    assert context.flag_counts["single_source"] >= 5_000
    assert sum(f.kind == "single_source" for f in context.flags) == 60
    assert all(c.source == "gpu-survey" and c.as_of == date(2026, 10, 1)
               for c in context.changes.observations)


Rendered = Callable[[int], tuple[str, int, int]]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Rendered:
    """The appendix's text (pdftotext -layout) and page count after a change of n rows, with
    the main briefing's page count (SQLite; each render costs seconds, so each size renders
    once)."""
    done: dict[int, tuple[str, int, int]] = {}

    def of(rows: int) -> tuple[str, int, int]:
        if rows not in done:
            folder = tmp_path_factory.mktemp(f"change-{rows}")
            context = briefing_after(f"sqlite:///{folder / 'ledger.sqlite'}", folder, rows)
            result = render(context, document="appendix")
            (folder / "appendix.pdf").write_bytes(result.pdf)
            text = subprocess.run(["pdftotext", "-layout", str(folder / "appendix.pdf"), "-"],
                                  capture_output=True, text=True, check=True).stdout
            done[rows] = (text, result.pages, render(context).pages)
        return done[rows]

    return of


def changes_section(text: str) -> str:
    body = text[text.index("\f") + 1:]     # after the cover's contents list
    start = body.index("Changes since the previous briefing")
    return body[start:body.index("Results that moved", start)]


def change_rows(section: str) -> list[str]:
    return [line for line in section.splitlines() if re.match(r"\s*added\s+tgpu-", line)]


@pytest.mark.slow(seconds=15)
def test_the_changes_table_lists_n_rows_each_with_its_source_and_date(rendered):
    text, _, _ = rendered(5_000)
    section = changes_section(text)
    rows = change_rows(section)

    assert len(rows) == 60
    assert all("gpu-survey" in row and "2026-10-01" in row for row in rows)
    flat = " ".join(section.split())
    assert "Not listed: 4,940 more added observations (5,000 in all, across 1,000 items and " \
           "5 metrics)" in flat
    assert "from observation where recorded_at >" in flat   # the warehouse query to run


@pytest.mark.slow(seconds=15)
def test_the_page_count_does_not_grow_with_the_change(rendered):
    small_text, small_pages, small_main = rendered(50)
    big_text, big_pages, big_main = rendered(5_000)

    assert len(change_rows(changes_section(small_text))) == 50
    assert "Not listed" not in changes_section(small_text)
    # (the absolute bound grew from 30 with page 1's per-option rows, then to 42 with a page
    # per serving scenario, its price tiers and the market's stale offers: the change list
    # itself adds at most three pages, as before)
    assert big_pages <= small_pages + 3 and big_pages <= 42
    assert big_main == small_main <= 16   # the main briefing does not list the change
    assert "and 4,940 more values in this section (5,000 in all)" in " ".join(big_text.split())
