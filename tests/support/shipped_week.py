"""The shipped week on SQLite, built once per pytest run and shared by the files that read it.

A week is the weekly flow's steps without Prefect (ingest the shipped packs, recompute, flags,
the briefing rendered) on a knowledge clock the test moves. Building one takes the CPU of a
whole briefing render; test_briefing_job.py, test_one_answer.py and test_publish_faults.py
each built the same one. `./dev test` runs files on two xdist workers: the first file to ask
builds the week under a file lock in the folder both workers share, and every later one (on
either worker) reads that build and copies its home before changing anything in it.
"""

from __future__ import annotations

import dataclasses
import fcntl
import os
import pickle
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TypeVar

import pytest

from pipelines.jobs import steps as jobs
from pipelines.settings import Settings

DAY = date(2026, 11, 22)
T = TypeVar("T")


class Clock:
    """A knowledge clock one second further on at each reading, from `start` (the shipped
    week's morning unless given)."""

    def __init__(self, start: datetime = datetime(2026, 11, 22, 6, 0, tzinfo=UTC)) -> None:
        self.now = start

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


def weekly(settings: Settings, clock: Clock, sources: list[Path], day: date = DAY
           ) -> tuple[int, jobs.RenderedBriefing]:
    """The weekly flow's steps, without Prefect."""
    version = jobs.ingest(settings, sources, today=day, now=clock).dataset_version
    for kind in ("c2c", "tco"):
        jobs.recompute(settings, kind, version, on=day, now=clock)
    jobs.flags(settings, version, now=clock)
    jobs.prepare_briefing(settings, version, as_of=day, now=clock)
    return version, jobs.render_briefing(settings, version, as_of=day, now=clock)


@dataclass(frozen=True)
class ShippedWeek:
    """A home (its SQLite ledger inside) after the shipped week: read it, or copy it first."""

    home: Path
    version: int
    rendered: jobs.RenderedBriefing
    clock_now: datetime  # the clock's reading after the week, to go on from

    def copied_to(self, home: Path) -> Settings:
        """A copy of the home at `home` (its parents made), to change apart from the shared one."""
        home.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(self.home, home)
        return Settings(home=home)

    def rendered_in(self, settings: Settings) -> jobs.RenderedBriefing:
        """The week's briefing and appendix as the copy at `settings.home` holds them."""
        rendered = self.rendered
        assert rendered.appendix is not None
        return dataclasses.replace(rendered, path=settings.briefings_dir / rendered.path.name,
                                   appendix=settings.briefings_dir / rendered.appendix.name)


def shipped_week(factory: pytest.TempPathFactory) -> ShippedWeek:
    """The shipped week on SQLite, built by the first test of this run that asks."""

    def build(folder: Path) -> ShippedWeek:
        settings, clock = Settings(home=folder / "home"), Clock()
        version, rendered = weekly(settings, clock, [settings.sources_dir])
        return ShippedWeek(settings.home, version, rendered, clock.now)

    return built_once(factory, "shipped-week", build)


def built_once(factory: pytest.TempPathFactory, name: str, build: Callable[[Path], T]) -> T:
    """`build(folder)` run once per pytest run, whichever worker asks first; the others wait
    for it (a wait is never longer than building again) and get its pickled result. A build
    that failed left no result: the next caller builds again (and fails the same way)."""
    base = factory.getbasetemp()
    # Under xdist each worker's base temp is a folder of the run's: the parent is shared.
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder, result = shared / f"built-{name}", shared / f"built-{name}.pickle"
    with open(shared / f"built-{name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not result.exists():
            shutil.rmtree(folder, ignore_errors=True)  # a failed build's leftovers
            folder.mkdir()
            made = pickle.dumps(build(folder))
            result.with_suffix(".tmp").write_bytes(made)
            result.with_suffix(".tmp").replace(result)
        return pickle.loads(result.read_bytes())
