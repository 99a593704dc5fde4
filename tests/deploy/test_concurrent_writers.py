"""Writers of one home at once, as real `specledger` processes: two ingests, an ingest during a
run, two runs. Each exits 0 (1 would mean rejected rows), every file's rows reach the ledger,
and the warehouse ends holding the ledger's newest dataset version: publishers queue on the
warehouse's lock, each building its own temporary file, instead of failing on a shared one.

The default run makes the publishes meet (the test holds the warehouse's lock until every
writer has committed) and runs the two runs at once on PostgreSQL; `./dev trials`
(SPECLEDGER_FULL_TRIALS=1) adds the two runs on SQLite and rounds where ingests meet by chance.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pytest
from sqlalchemy import text

from db.engine import make_engine
from db.warehouse_lock import publish_lock
from pipelines.settings import PROJECT_ROOT
from tests.conftest import SqliteTemplate, empty_pg_ledger, pg_url_or_skip

pytestmark = pytest.mark.slow(seconds=10)  # two runs at once ~30 s (PostgreSQL), the others ~5 s

SPECLEDGER = Path(sys.executable).with_name("specledger")
DAY = "2026-11-22"
PUBLISH_WAITED = re.compile(r"waited (\d+\.\d) s for .+ to finish publishing the warehouse")


@dataclass
class Home:
    """A home folder and its ledger (the SQLite file in it, or the PostgreSQL test database),
    and the `specledger` processes started on it."""

    path: Path
    ledger_url: str
    processes: list[tuple[str, subprocess.Popen[str], Path]] = field(default_factory=list)

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("PREFECT_", "SPECLEDGER_"))}
        env.update(SPECLEDGER_HOME=str(self.path), SPECLEDGER_LOCK_TIMEOUT_SECONDS="120",
                   # No remote sources: a run ingests only its sources folder.
                   SPECLEDGER_REMOTE_SOURCES_PATH=str(self.path / "no-remote-sources.yaml"),
                   SPECLEDGER_SOURCES_DIR=str(self.path.parent / "run-sources"))
        if not self.ledger_url.startswith("sqlite"):
            env["SPECLEDGER_DATABASE_URL"] = self.ledger_url
        return {**env, **extra}

    def start(self, name: str, *args: str, **env: str) -> None:
        """`specledger ARGS` in the background (`env`: settings of its own); its output goes
        to a log file."""
        log = self.path.parent / f"{name}.log"
        with log.open("w") as sink:
            process = subprocess.Popen([str(SPECLEDGER), *args], cwd=PROJECT_ROOT,
                                       env=self.env(**env), stdout=sink, stderr=subprocess.STDOUT,
                                       text=True)
        self.processes.append((name, process, log))

    def finish(self, timeout: float = 300) -> dict[str, tuple[int, str]]:
        """Wait for every process started: name -> (exit code, what it printed)."""
        ended = {}
        for name, process, log in self.processes:
            try:
                code = process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                code = process.wait()
            ended[name] = (code, log.read_text())
        self.processes.clear()
        return ended

    def ledger(self, query: str, **params: object) -> list[tuple[object, ...]]:
        engine = make_engine(self.ledger_url)
        try:
            with engine.connect() as conn:
                return [tuple(row) for row in conn.execute(text(query), params)]
        finally:
            engine.dispose()

    def rows_of(self, source: str) -> int:
        (count,), = self.ledger("select count(*) from observation o join source s "
                                "on s.id = o.source_id where s.key = :key", key=source)
        return int(count)

    def newest_version(self) -> int:
        (newest,), = self.ledger("select max(id) from dataset_version")
        return int(newest)

    def warehouse(self) -> tuple[int, set[str]]:
        """The published file's dataset version and the sources of its observations."""
        with duckdb.connect(str(self.path / "warehouse.duckdb"), read_only=True) as con:
            (version,), = con.execute("select dataset_version from meta").fetchall()
            sources = {s for s, in con.execute("select distinct source from observation")
                       .fetchall()}
        return version, sources

    def leftovers(self) -> list[str]:
        """Temporary and lock files left under the home (none once every writer is done)."""
        return sorted(str(p.relative_to(self.path)) for p in self.path.rglob("*")
                      if ".prefect" not in p.parts
                      and re.search(r"\.tmp(\.wal)?$|\.lock$", p.name))


def write_pack(folder: Path, name: str, value: float = 1.8) -> Path:
    """A one-row source pack whose source is `trial-<name>`."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.yaml"
    path.write_text(textwrap.dedent(f"""\
        source:
          key: trial-{name}
          title: Trial {name}
          publisher: Test
          url: https://example.com/{name}
          kind: vendor_datasheet
          published_on: 2024-03-18
        items:
          - {{key: nvlink-5, name: "NVLink 5.0", kind: scaleup_fabric, vendor: NVIDIA,
             family: NVLink}}
        observations:
          - {{item: nvlink-5, metric: scaleup_bw_per_gpu_bidir, value: {value}, unit: TB/s,
             as_of: 2024-03-18, status: C}}
        """), encoding="utf-8")
    return path


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def home(request: pytest.FixtureRequest, tmp_path: Path,
         sqlite_template: SqliteTemplate) -> Iterator[Home]:
    """An empty home whose ledger is migrated already (a migration queues like any write;
    tests/pipelines/cli/test_cli_lock.py covers that), with a run's sources folder."""
    path = tmp_path / "home"
    path.mkdir()
    if request.param == "sqlite":
        url = sqlite_template.copy_to(path / "specledger.sqlite")
    else:
        url = empty_pg_ledger(pg_url_or_skip())
    write_pack(tmp_path / "run-sources", "run")
    made = Home(path, url)
    yield made
    made.finish(timeout=5)  # a failed test leaves no process behind


def wait_until_queued(home: Home, timeout: float = 120) -> None:
    """Block until every process started has the warehouse's lock file open: it committed
    and now waits to publish (Linux: /proc lists each process's open files)."""
    lock = str(home.path / "warehouse.duckdb.lock")
    deadline = time.monotonic() + timeout
    for name, process, log in home.processes:
        while lock not in open_files(process.pid):
            assert process.poll() is None, f"{name} ended before publishing:\n{log.read_text()}"
            assert time.monotonic() < deadline, f"{name} never queued to publish"
            time.sleep(0.05)


def open_files(pid: int) -> set[str]:
    found = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            found.add(os.readlink(fd))
        except OSError:  # closed meanwhile
            pass
    return found


def assert_all_done(home: Home, ended: dict[str, tuple[int, str]], sources: list[str]) -> None:
    """Each writer succeeded, kept its rows, and the warehouse holds the newest version
    (with every source's rows), with nothing left behind."""
    for name, (code, output) in ended.items():
        assert code in (0, 1), f"{name} exited {code}:\n{output}"
    for source in sources:
        assert home.rows_of(f"trial-{source}") == 1, source
    version, published = home.warehouse()
    assert version == home.newest_version()
    assert {f"trial-{s}" for s in sources} <= published
    assert home.leftovers() == []


def test_two_ingests_whose_publishes_meet_both_succeed(home, tmp_path):
    packs = tmp_path / "packs"
    with publish_lock(home.path / "warehouse.duckdb", timeout_seconds=10):
        for name in ("a", "b"):
            home.start(f"ingest-{name}", "ingest", str(write_pack(packs, name)))
        wait_until_queued(home)
    ended = home.finish()

    assert_all_done(home, ended, ["a", "b"])
    for name, (_, output) in ended.items():
        assert PUBLISH_WAITED.search(output), f"{name} did not wait:\n{output}"
    # The first writer's version is older: it was built over, or left under the newer one.
    said = " ".join(output for _, output in ended.values())
    assert re.search(rf"rebuilt for dataset version {home.newest_version()}\b", said)


# Two whole runs at once (~27 s): on PostgreSQL in the default run; on SQLite in `./dev trials`.
# SQLite's writers still meet in the default run: the two ingests above, the ingest below,
# and tests/pipelines/jobs/test_ledger_update.py's second run waiting for the first.
@pytest.mark.parametrize("home", [pytest.param("sqlite", marks=pytest.mark.trials),
                                  pytest.param("postgresql", marks=pytest.mark.postgres)],
                         indirect=True)
def test_an_ingest_and_two_runs_at_once_all_succeed(home, tmp_path):
    home.start("run-1", "run", "--as-of", DAY)
    home.start("run-2", "run", "--as-of", DAY)
    time.sleep(1.0)
    home.start("ingest", "ingest", str(write_pack(tmp_path / "packs", "a")))
    ended = home.finish()

    assert_all_done(home, ended, ["a", "run"])
    briefings = home.path / "briefings"
    assert (briefings / f"briefing-{DAY}.pdf").read_bytes().startswith(b"%PDF")


def test_an_ingest_whose_publish_gives_up_says_its_rows_are_committed(home, tmp_path):
    with publish_lock(home.path / "warehouse.duckdb", timeout_seconds=10):
        home.start("ingest", "ingest", str(write_pack(tmp_path / "packs", "a")),
                   SPECLEDGER_LOCK_TIMEOUT_SECONDS="0.5")
        (code, output), = home.finish().values()

    assert code == 5  # the command failed at its publish step ...
    said = " ".join(output.split())
    assert ("note: the ingest is committed (dataset version 1); the warehouse was not "
            "republished") in said  # ... after its commit
    assert "was being published by specledger pid" in said
    assert home.rows_of("trial-a") == 1
    assert not (home.path / "warehouse.duckdb").exists()
    assert home.leftovers() == []


@pytest.mark.trials
@pytest.mark.parametrize("round_", range(8))
def test_two_ingests_at_once_by_chance(home, tmp_path, round_):
    """Ingests started a random few hundred milliseconds apart: their publishes meet in
    some rounds, not in others; every round must end the same way."""
    packs = tmp_path / "packs"
    for name in ("a", "b"):
        home.start(f"ingest-{name}", "ingest", str(write_pack(packs, name, 1.0 + round_)))
        time.sleep(random.uniform(0, 0.8))
    assert_all_done(home, home.finish(), ["a", "b"])
