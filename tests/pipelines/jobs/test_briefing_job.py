"""The briefing job on the shipped reference packs: flags stored per version, the full PDF
rendered from the ledger, recorded with its sha256, and re-rendered byte for byte."""

from __future__ import annotations

import dataclasses
import hashlib
import re
import shutil
import subprocess
import textwrap
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from datetime import date, timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from db.engine import Session, make_engine
from db.schema import Briefing, C2CResult, Flag
from pipelines.jobs import steps as jobs
from pipelines.settings import PROJECT_ROOT, Settings
from tests import pg_database
from tests.conftest import pg_url_or_skip
from tests.support.shipped_week import DAY, Clock, shipped_week, weekly

pytestmark = pytest.mark.slow(seconds=10)  # a week, then a copy and a later week, per backend


@pytest.fixture
def settings(ledger_url: str, tmp_path: Path) -> Settings:
    return Settings(home=tmp_path / "home", database_url=ledger_url)


@pytest.fixture(scope="module",
                params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def dialect(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(scope="module")
def module_ledgers(dialect: str, tmp_path_factory: pytest.TempPathFactory
                   ) -> Iterator[Callable[..., Settings]]:
    """Homes with their own ledgers (a SQLite file; a PostgreSQL database beside the test
    one, dropped at the end), built once per module and dialect for the tests that read them.
    `make(name, like=settings)`: a copy of that home and its ledger, to change apart from it."""
    with ExitStack() as stack:

        def make(name: str, like: Settings | None = None) -> Settings:
            home = tmp_path_factory.mktemp(name) / "home"
            if like is not None:
                shutil.copytree(like.home, home)
            if dialect == "sqlite":
                return Settings(home=home)
            if like is None:
                url = stack.enter_context(pg_database.extra_database(pg_url_or_skip(), name))
            else:
                url = stack.enter_context(pg_database.copied_database(
                    like.resolved_database_url, name))
            return Settings(home=home, database_url=url)

        yield make


def pdftotext(path: Path) -> str:
    return subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True,
                          text=True, check=True).stdout


def cited_under(text: str, row: str, value: str, citation: str) -> bool:
    """True when a table row of `text` (pdftotext -layout) starting with `row` has `value` as a
    whole cell and the next line has `citation` starting in the same column."""
    lines = text.splitlines()
    cell = re.compile(rf"(?<=\s){re.escape(value)}(?=\s|$)")
    for line, below in zip(lines, lines[1:], strict=False):
        found = cell.search(line) if line.startswith(row) else None
        if found and below[found.start():].startswith(citation):
            return True
    return False


def stored(settings: Settings, table: type) -> list:
    engine = make_engine(settings.resolved_database_url)
    try:
        with Session(engine) as session:
            return list(session.scalars(select(table).order_by(table.id)))
    finally:
        engine.dispose()


Week = tuple[Settings, Clock, int, jobs.RenderedBriefing]


@pytest.fixture(scope="module")
def first_week(dialect: str, module_ledgers: Callable[..., Settings],
               tmp_path_factory: pytest.TempPathFactory) -> Week:
    """The shipped week, built once per dialect; its tests only read it (flags again finds
    them stored and changes nothing). On SQLite: a copy of the run's shared week
    (tests/support/shipped_week.py), which other files read too."""
    if dialect == "sqlite":
        shared = shipped_week(tmp_path_factory)
        settings = module_ledgers("first_week", like=Settings(home=shared.home))
        clock = Clock()
        clock.now = shared.clock_now
        return settings, clock, shared.version, shared.rendered_in(settings)
    settings, clock = module_ledgers("first_week"), Clock()
    version, rendered = weekly(settings, clock, [settings.sources_dir])
    return settings, clock, version, rendered


@pytest.fixture(scope="module")
def two_weeks(module_ledgers: Callable[..., Settings], first_week: Week) -> tuple[Week, Week]:
    """The shipped week (a copy of `first_week`'s home and ledger, not built again), then a
    later week with a new figure, in that copy: the ledger has moved on since the first
    briefing."""
    first_settings, first_clock, version, first_rendered = first_week
    settings = module_ledgers("two_weeks", like=first_settings)
    clock = Clock()
    clock.now = first_clock.now
    # The first week's briefing and appendix as the copy holds them.
    rendered = dataclasses.replace(
        first_rendered, path=settings.briefings_dir / first_rendered.path.name,
        appendix=settings.briefings_dir / first_rendered.appendix.name)
    pack = settings.home.parent / "packs" / "later.yaml"
    pack.parent.mkdir()
    pack.write_text(textwrap.dedent(LATER_PACK).lstrip(), encoding="utf-8")
    later_version, later = weekly(settings, clock, [settings.sources_dir, pack],
                                  day=DAY + timedelta(days=7))
    return (settings, clock, version, rendered), (settings, clock, later_version, later)


def test_the_briefing_prints_every_section_from_the_ledger(first_week):
    settings, _, version, rendered = first_week
    text = pdftotext(rendered.path)
    for heading in ("What to buy", "Cost per job", "Density", "Interconnect",
                    "C2C per workload", "TCO", "Market", "published measurements"):
        assert heading.lower() in text.lower(), heading
    assert rendered.appendix == rendered.path.with_name(f"briefing-{DAY}-appendix.pdf")
    appendix = pdftotext(rendered.appendix)
    for heading in ("Changes since", "C2C inputs", "TCO inputs", "Methodology", "Sources"):
        assert heading.lower() in appendix.lower(), heading
    # numbers with their sources, in the appendix's scale-up vs scale-out table: NVLink 5's
    # bandwidth and GB200 NVL72's rack power, each cited (source, date) right under its value
    assert cited_under(appendix, "Bandwidth per GPU", "1,800 GB/s",
                       "nvidia-nvlink-page, 2024-03-18")
    assert cited_under(appendix, "Power (NVL72:", "120 kW", "introl-nvl72-power, 2024-03-18")
    assert "Korthikanti" in text
    # every page's header names the version and its hash (not version 12, nor a bare "1")
    headers = re.findall(r"^specledger briefing · dataset version (\d+) · [0-9a-f]{12}\s", text,
                         re.M)
    assert headers and set(headers) == {str(version)}


def test_the_briefing_never_prints_a_missing_value_as_nan_none_or_nat(first_week):
    rendered = first_week[3]
    text = pdftotext(rendered.path) + pdftotext(rendered.appendix)
    leaked = sorted(set(re.findall(r"\b(?:nan|NaN|None|NaT)\b", text)))
    assert leaked == [], [line for line in text.splitlines()
                          if re.search(r"\b(?:nan|NaN|None|NaT)\b", line)][:5]


def test_flags_are_stored_once_per_dataset_version(first_week):
    settings, clock, version, _ = first_week
    flags = stored(settings, Flag)
    assert flags and {f.dataset_version_id for f in flags} == {version}
    assert {"density_threshold", "single_source"} <= {f.kind for f in flags}
    again = jobs.flags(settings, version, now=clock)
    assert again.already_stored and len(stored(settings, Flag)) == len(flags)


def test_each_rendering_is_recorded_with_its_sha256(first_week):
    settings, _, version, rendered = first_week
    [row] = stored(settings, Briefing)
    assert (row.dataset_version_id, row.as_of, row.sha256) == (version, DAY, rendered.sha256)
    assert row.size_bytes == rendered.path.stat().st_size
    assert row.pages is not None and row.pages >= 8


def test_report_re_renders_a_past_briefing_byte_for_byte(two_weeks):
    (settings, clock, version, first), (_, _, later_version, _) = two_weeks
    original = first.path.read_bytes()
    # The ledger moved on: a new figure, a new version, a later briefing.
    assert later_version != version

    again = jobs.report(settings, as_of=DAY, target=first.path.with_name("again.pdf"), now=clock)
    assert again.dataset_version == version
    assert again.reproduces_first is True
    assert again.path.read_bytes() == original
    assert again.appendix.read_bytes() == first.appendix.read_bytes()
    assert [b.sha256 for b in stored(settings, Briefing)].count(first.sha256) == 2


def test_a_briefed_version_takes_no_new_scenario_and_re_renders_the_same_bytes(
        module_ledgers: Callable[..., Settings], first_week: Week, tmp_path: Path):
    """Issue 43, case 6: report, then a new scenario file, then report again used to store a
    result into the version the briefing had read and render other bytes ("the code version
    or the template changed", which was false). The briefed version is left as it was."""
    first_settings, clock, version, first = first_week
    settings = module_ledgers("briefed", like=first_settings)
    scenarios = tmp_path / "scenarios"
    shutil.copytree(first_settings.scenarios_dir, scenarios)
    new = scenarios / "13b-dp-only-nvl72-copy.yaml"
    new.write_text((scenarios / "13b-dp-only-nvl72.yaml").read_text(encoding="utf-8")
                   .replace("name: 13b-dp-only-nvl72", "name: 13b-dp-only-nvl72-copy"),
                   encoding="utf-8")
    with_new = settings.model_copy(update={"scenarios_dir": scenarios})
    results_before = len(stored(with_new, C2CResult))
    again = jobs.report(with_new, as_of=DAY, target=tmp_path / "again.pdf", now=clock)
    assert (again.dataset_version, again.reproduces_first) == (version, True)
    assert again.path.read_bytes() == first.path.read_bytes()
    assert len(stored(with_new, C2CResult)) == results_before
    # Nor does a recompute of the briefed version (`run` with unchanged data): the new
    # scenario waits for the next version, and says so; the stored ones stay as they were.
    report = jobs.recompute(with_new, "c2c", version, on=DAY, now=clock)
    assert report.deferred == ["13b-dp-only-nvl72-copy"]
    assert not report.computed and not report.reused and report.unchanged
    assert len(stored(with_new, C2CResult)) == results_before


def test_the_next_weeks_briefing_lists_what_changed(two_weeks):
    _, (settings, _, later_version, rendered) = two_weeks
    text = pdftotext(rendered.appendix)
    assert "later-rack-press" in text   # the appendix's changes table
    kinds = {f.kind for f in stored(settings, Flag) if f.dataset_version_id == later_version}
    assert "added" in kinds


def test_report_before_any_dataset_version_is_an_error(settings):
    with pytest.raises(jobs.NoDatasetVersion, match="2020-01-01"):
        jobs.report(settings, as_of=date(2020, 1, 1))


LATER_PACK = """
source:
  key: later-rack-press
  title: A later rack power figure
  publisher: Example press
  kind: secondary_press
  published_on: 2026-11-25
observations:
  - {item: gb300-nvl72, metric: rack_it_power, value: 155, unit: kW, as_of: 2026-11-25,
     status: U, quote: "GB300 NVL72 racks draw about 155 kW [test fixture]"}
"""


def test_every_comparison_cell_names_a_shipped_item_and_metric():
    import yaml

    from pipelines.briefing.comparison import load_comparison

    spec = load_comparison(PROJECT_ROOT / "data" / "comparison.yaml")
    items = {item["key"] for pack in (PROJECT_ROOT / "data" / "sources").glob("*.yaml")
             for item in yaml.safe_load(pack.read_text()).get("items", [])}
    catalog = yaml.safe_load((PROJECT_ROOT / "data" / "catalog.yaml").read_text())
    metrics = {m["key"] for m in catalog["metrics"]}
    cells = [c for row in spec["rows"] for c in row["cells"] if c]
    assert {c["item"] for c in cells if "item" in c} <= items
    assert {c["metric"] for c in cells if "metric" in c} <= metrics
    assert {i for c in cells for i in c.get("vendors_of", [])} <= items
    assert {c["reference"] for c in cells if "text" in c} <= {
        r["key"] for r in spec["references"]}


def test_a_version_laid_out_before_is_taken_from_the_render_cache_but_report_lays_it_out(
        module_ledgers: Callable[..., Settings], first_week: Week, tmp_path: Path):
    """A run that would lay out the same pages again reuses their bytes (issue 42: a repeat
    run spent most of its time in the appendix's layout); `report`, which checks that a past
    briefing reproduces, never reads the cache."""
    import json

    from pipelines.jobs import render_cache

    first_settings, clock, version, first = first_week
    settings = module_ledgers("render_cache", like=first_settings)
    cache = settings.home / render_cache.FOLDER
    [record] = cache.glob("*.json")  # the week's render left its entry

    again = jobs.render_briefing(settings, version, as_of=DAY, now=clock)
    assert again.reused and again.sha256 == first.sha256
    assert again.appendix.read_bytes() == first.appendix.read_bytes()

    # An entry that is consistent but not what the HTML lays out: what reuse would return.
    key = record.stem
    other = b"%PDF-1.7 not the briefing"
    (cache / f"{key}.pdf").write_bytes(other)
    entry = json.loads(record.read_text())
    record.write_text(json.dumps({**entry, "main": hashlib.sha256(other).hexdigest()}))
    assert render_cache.read_entry(cache, key).main.pdf == other

    checked = jobs.report(settings, as_of=DAY, target=tmp_path / "checked.pdf", now=clock)
    assert not checked.reused
    assert checked.path.read_bytes() == first.path.read_bytes()
    assert checked.reproduces_first is True
