"""Kill -9 trials of `specledger run`: the ledger's promises hold wherever a run dies.

A reference run (undisturbed) publishes a warehouse and a briefing and measures T, the length
of an undisturbed run. Then each trial changes the sources folder (a new small pack with one
bad row, and a new value in a pack every trial rewrites), starts `specledger run` in its own
process group, SIGKILLs the whole group after a delay drawn from [0, T] (random.Random(seed);
"targeted" trials instead kill within TARGET_WINDOW_S of the run taking the ledger's write
lock) and checks the ledger (`check_ledger`) and the published files (`check_published`).
Last, a run without a kill must complete, and its dataset version's content hash must equal
that of an undisturbed history of the same final sources: one ingest into a fresh ledger.

Where a kill landed is read from Prefect's log (INFO): the task after the last one that
finished, "startup" before the flow began, "exit" after it finished.

bench/fault_trials.py runs the trials by hand and prints their figures
(`python -m bench.fault_trials`); tests/pipelines/test_kill_trials.py and
tests/db/test_pg_restart.py drive the harness directly.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

import duckdb
import psycopg
import yaml
from psycopg import sql
from sqlalchemy import func, select, text
from sqlalchemy.engine import make_url

from db.engine import LEDGER_LOCK_KEY, Session, make_engine, normalize_url
from db.schema import (
    Briefing,
    C2CResult,
    DatasetVersion,
    Flag,
    IngestFile,
    IngestRun,
    RawFile,
    RejectedRow,
    Scenario,
    TcoResult,
)
from pipelines.inputs.adapters.registry import FOLDER_SUFFIXES
from pipelines.inputs.scenarios import scenario_paths

ROOT = Path(__file__).resolve().parents[2]
SHIPPED_SOURCES = ROOT / "data" / "sources"
SCENARIOS = ROOT / "data" / "scenarios"
SPECLEDGER = Path(sys.executable).parent / "specledger"
FIRST_DAY = date(2026, 11, 22)
# A killed run can leave the PostgreSQL backend holding the write lock until the server
# notices the client is gone; past this, the lock counts as stuck.
LOCK_RELEASE_LIMIT_S = 30.0
# Targeted kills land this long (at most) after the run took the ledger's write lock.
TARGET_WINDOW_S = 0.5

_TASK_FINISHED = re.compile(r"Task run '(?P<task>.+)-[0-9a-f]{3}' - Finished in state")
_FLOW_BEGAN = "Beginning flow run"
_FLOW_FINISHED = re.compile(r"Flow run '.*' - Finished in state")


# --- the sources folder, one change per trial -------------------------------------------

TRIAL_PACK = """\
source: {{key: fault-trial-{n:02d}, title: Fault trial {n}, kind: analyst,
          published_on: 2026-01-01}}
items:
  - {{key: trial-gpu-{n:02d}, name: Trial GPU {n}, kind: gpu, vendor: Test, family: Trial}}
observations:
  - {{item: trial-gpu-{n:02d}, metric: tdp, value: {tdp}, unit: W, as_of: 2025-06-01,
     status: S}}
  # A TDP cannot be negative: rejected, and the rejection must be kept.
  - {{item: trial-gpu-{n:02d}, metric: tdp, value: -{tdp}, unit: W, as_of: 2025-07-01,
     status: S}}
"""

ROLLING_PACK = """\
source: {{key: fault-rolling, title: A figure restated every trial, kind: analyst,
          published_on: 2026-01-01}}
items:
  - {{key: trial-rolling-gpu, name: Rolling GPU, kind: gpu, vendor: Test, family: Trial}}
observations:
  - {{item: trial-rolling-gpu, metric: tdp, value: {tdp}, unit: W, as_of: 2025-06-01,
     status: S}}
"""


def copy_shipped_sources(folder: Path) -> Path:
    """A sources folder holding the shipped packs, for trials to change."""
    shutil.copytree(SHIPPED_SOURCES, folder)
    return folder


def change_sources(folder: Path, trial: int, rng: random.Random) -> None:
    """Add a pack (one good row, one bad) and restate the rolling pack's figure."""
    (folder / f"fault-trial-{trial:02d}.yaml").write_text(
        TRIAL_PACK.format(n=trial, tdp=rng.randrange(300, 1500)), encoding="utf-8")
    (folder / "fault-rolling.yaml").write_text(
        ROLLING_PACK.format(tdp=rng.randrange(300, 1500)), encoding="utf-8")


# --- running specledger ---------------------------------------------------------------

def child_env(sources: Path, database_url: str | None,
              extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a `specledger run`: this one without SPECLEDGER_* and PREFECT_*
    settings (Prefect's state then lives under --home), INFO logs to read phases from."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SPECLEDGER_", "PREFECT_"))}
    env.update(SPECLEDGER_SOURCES_DIR=str(sources), PREFECT_LOGGING_LEVEL="INFO",
               PREFECT_SERVER_ANALYTICS_ENABLED="false", DO_NOT_TRACK="1",
               SPECLEDGER_OFFLINE="true")  # never the public internet from a test
    if database_url:
        env["SPECLEDGER_DATABASE_URL"] = database_url
    return {**env, **(extra or {})}


class Run:
    """`specledger run` in its own process group, its stderr lines read as they come."""

    def __init__(self, home: Path, sources: Path, as_of: date, database_url: str | None,
                 env: dict[str, str] | None = None):
        self.started, self.started_wall = time.monotonic(), time.time()
        self.process = subprocess.Popen(
            [str(SPECLEDGER), "run", "--home", str(home), "--as-of", as_of.isoformat()],
            env=child_env(sources, database_url, env), cwd=ROOT, start_new_session=True,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.stderr: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        with self.process.stderr:
            for line in self.process.stderr:
                self.stderr.append(line.rstrip("\n"))

    def wait(self, timeout: float = 600) -> tuple[int, str]:
        """Exit code and stdout of a run left to finish."""
        # Not communicate(): it would read stderr too, taking lines from the reader thread.
        assert self.process.stdout is not None
        with self.process.stdout:
            stdout = self.process.stdout.read()
        code = self.process.wait(timeout=timeout)
        self._reader.join(timeout=10)
        return code, stdout

    def kill(self) -> None:
        """SIGKILL the whole group (the CLI and Prefect's temporary server), then reap."""
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass  # the run had already finished and its group is gone
        self.process.wait(timeout=60)
        _wait_for_group_exit(self.process.pid)
        self._reader.join(timeout=10)
        if self.process.stdout is not None:
            self.process.stdout.close()

    @property
    def seconds(self) -> float:
        return time.monotonic() - self.started


def _wait_for_group_exit(pgid: int, timeout: float = 10.0) -> None:
    """Until no process of the group is left (orphans are reaped by init)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _group_members(pgid):
            return
        time.sleep(0.05)
    raise RuntimeError(f"processes of group {pgid} survived SIGKILL: {_group_members(pgid)}")


def _group_members(pgid: int) -> list[int]:
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":  # fields: state, ppid, pgrp, ...
            members.append(int(stat.parent.name))
    return members


def finished_tasks(stderr: list[str]) -> list[str]:
    """Names of the Prefect tasks that finished, in order."""
    return [m["task"] for line in stderr if (m := _TASK_FINISHED.search(line))]


def phase_of(stderr: list[str], task_order: list[str]) -> str:
    """Where a killed run was: the task after the last finished one (in the undisturbed
    run's order), "startup" before the flow began, "exit" after the flow finished."""
    if any(_FLOW_FINISHED.search(line) for line in stderr):
        return "exit"
    if not any(_FLOW_BEGAN in line for line in stderr):
        return "startup"
    done = finished_tasks(stderr)
    position = task_order.index(done[-1]) + 1 if done and done[-1] in task_order else len(done)
    return task_order[position] if position < len(task_order) else "flow end"


@dataclass(frozen=True)
class Completed:
    seconds: float
    tasks: list[str]
    stdout: str


def undisturbed_run(home: Path, sources: Path, as_of: date,
                    database_url: str | None) -> Completed:
    run = Run(home, sources, as_of, database_url)
    code, stdout = run.wait()
    if code != 0:
        tail = "\n".join(run.stderr[-20:])
        raise RuntimeError(f"an undisturbed run exited {code}:\n{tail}")
    return Completed(run.seconds, finished_tasks(run.stderr), stdout)


# --- the ledger's promises --------------------------------------------------------------

def ledger_url_of(home: Path, database_url: str | None) -> str:
    return database_url or f"sqlite:///{(home / 'specledger.sqlite').resolve()}"


def shipped_scenarios() -> dict[str, set[str]]:
    """Names of the shipped scenarios of each kind (c2c, tco)."""
    return {kind: {yaml.safe_load(p.read_text(encoding="utf-8"))["name"]
                   for p in scenario_paths(SCENARIOS, kind)} for kind in ("c2c", "tco")}


def check_ledger(url: str, scenarios: dict[str, set[str]]) -> list[str]:
    """Violations of the ledger's invariants (empty when all hold)."""
    engine = make_engine(url)
    try:
        with Session(engine) as session:
            return (_runs_complete(session) + _rows_add_up(session) + _rejections_kept(session)
                    + _raw_files_intact(session) + _versions_complete(session, scenarios)
                    + _briefings_on_disk(session))
    finally:
        engine.dispose()


def _runs_complete(session: Session) -> list[str]:
    files = dict(session.execute(select(IngestFile.ingest_run_id, func.count())
                                 .group_by(IngestFile.ingest_run_id)).all())
    found = []
    for run_id, finished in session.execute(select(IngestRun.id, IngestRun.finished_at)):
        if finished is None:
            found.append(f"ingest run {run_id} is not finished")
        if not files.get(run_id):
            found.append(f"ingest run {run_id} has no ingest_file rows")
    return found


_COUNTS = ("rows_read", "rows_accepted", "rows_unchanged", "rows_rejected")


def _rows_add_up(session: Session) -> list[str]:
    found = []
    sums = {run_id: rest for run_id, *rest in session.execute(
        select(IngestFile.ingest_run_id,
               *(func.sum(getattr(IngestFile, c)) for c in _COUNTS))
        .group_by(IngestFile.ingest_run_id))}
    for row in session.execute(select(IngestFile.id, *(getattr(IngestFile, c) for c in _COUNTS))):
        if row.rows_read != row.rows_accepted + row.rows_unchanged + row.rows_rejected:
            found.append(f"ingest file {row.id}: read != accepted + unchanged + rejected")
    for run_id, *counts in session.execute(
            select(IngestRun.id, *(getattr(IngestRun, c) for c in _COUNTS))):
        if run_id in sums and list(counts) != list(sums[run_id]):
            found.append(f"ingest run {run_id}: counts {counts} != its files' {sums[run_id]}")
    return found


def _rejections_kept(session: Session) -> list[str]:
    """Every rejection counted by a file that was read is stored (an unchanged file repeats
    the counts of the earlier read, whose rows are stored once)."""
    stored = dict(session.execute(select(RejectedRow.ingest_file_id, func.count())
                                  .group_by(RejectedRow.ingest_file_id)).all())
    read = session.execute(select(IngestFile.id, IngestFile.rows_rejected)
                           .where(IngestFile.outcome != "unchanged_file")).all()
    counted, kept = sum(r.rows_rejected for r in read), sum(stored.values())
    found = [f"ingest file {r.id}: {r.rows_rejected} rejected, {stored.get(r.id, 0)} stored"
             for r in read if stored.get(r.id, 0) != r.rows_rejected]
    if counted != kept:
        found.append(f"{counted} rejected rows counted, {kept} stored")
    return found


def _raw_files_intact(session: Session) -> list[str]:
    found = []
    for raw in session.execute(select(RawFile.id, RawFile.sha256, RawFile.size_bytes,
                                      RawFile.content)):
        content = bytes(raw.content)
        if hashlib.sha256(content).hexdigest() != raw.sha256 or len(content) != raw.size_bytes:
            found.append(f"raw file {raw.id}: bytes do not match sha256 {raw.sha256[:12]}")
    missing = session.scalar(select(func.count()).select_from(IngestFile)
                             .where(IngestFile.raw_file_id.not_in(select(RawFile.id))))
    if missing:
        found.append(f"{missing} ingest_file rows point at a missing raw file")
    return found


def _versions_complete(session: Session, scenarios: dict[str, set[str]]) -> list[str]:
    found = []
    results = {"c2c": C2CResult, "tco": TcoResult}
    for version in session.scalars(select(DatasetVersion.id)):
        for kind, model in results.items():
            names = set(session.scalars(
                select(Scenario.name).join(model, model.scenario_id == Scenario.id)
                .where(model.dataset_version_id == version)))
            if missing := scenarios[kind] - names:
                found.append(f"dataset version {version}: no {kind} result for "
                             f"{len(missing)} of {len(scenarios[kind])} shipped scenarios")
        if not session.scalar(select(func.count()).select_from(Flag)
                              .where(Flag.dataset_version_id == version)):
            found.append(f"dataset version {version} has no flags")
    return found


def _briefings_on_disk(session: Session) -> list[str]:
    """The newest record of each briefing path names a file with those bytes."""
    newest: dict[str, str] = {}
    for path, sha in session.execute(select(Briefing.path, Briefing.sha256)
                                     .order_by(Briefing.id)):
        newest[path] = sha
    found = []
    for path, sha in newest.items():
        target = Path(path)
        if not target.exists():
            found.append(f"briefing {path} is recorded but missing")
        elif hashlib.sha256(target.read_bytes()).hexdigest() != sha:
            found.append(f"briefing {path} differs from its recorded sha256")
    return found


def check_published(home: Path, earlier_pdfs: dict[Path, str]) -> list[str]:
    """The warehouse opens and has observations; earlier briefings are untouched and open."""
    found = []
    warehouse = home / "warehouse.duckdb"
    try:
        con = duckdb.connect(str(warehouse), read_only=True)
        try:
            if not con.execute("select count(*) from observation").fetchone()[0]:
                found.append("the warehouse has no observations")
        finally:
            con.close()
    except duckdb.Error as exc:
        found.append(f"the warehouse does not open: {exc}")
    for pdf, sha in earlier_pdfs.items():
        if not pdf.exists() or hashlib.sha256(pdf.read_bytes()).hexdigest() != sha:
            found.append(f"{pdf.name} changed or vanished")
        elif subprocess.run(["pdfinfo", str(pdf)], capture_output=True).returncode != 0:
            found.append(f"{pdf.name} does not open in pdfinfo")
    return found


def pdfs_under(home: Path) -> dict[Path, str]:
    return {p: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted((home / "briefings").glob("*.pdf"))}


def latest_dataset_hash(url: str) -> str:
    engine = make_engine(url)
    try:
        with Session(engine) as session:
            return session.scalar(select(DatasetVersion.content_hash)
                                  .order_by(DatasetVersion.id.desc()).limit(1))
    finally:
        engine.dispose()


def wait_for_write_lock(url: str, run: Run, timeout: float = 180) -> float:
    """Block until `run`, its flow begun, holds the ledger's write lock (its ledger
    transaction has begun); returns the run's age then. SQLite: the rollback journal
    exists; PostgreSQL: the advisory lock is granted."""
    deadline = time.monotonic() + timeout
    if url.startswith("sqlite"):
        journal = Path(make_url(url).database + "-journal")
        conn = None

        def holds() -> bool:
            # A journal older than the run is a killed run's, not yet rolled back.
            try:
                return journal.stat().st_mtime >= run.started_wall
            except FileNotFoundError:
                return False
    else:
        plain = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
        conn = psycopg.connect(plain, autocommit=True)

        def holds() -> bool:
            return bool(conn.execute(
                "select count(*) from pg_locks where locktype = 'advisory' and granted "
                "and objid::bigint = %s", [LEDGER_LOCK_KEY]).fetchone()[0])
    try:
        while time.monotonic() < deadline:
            if run.process.poll() is not None:
                raise RuntimeError("the run ended before it took the ledger's write lock:\n"
                                   + "\n".join(run.stderr[-20:]))
            # The ledger transaction of the flow's update-ledger step: a lock taken before
            # the flow began (a schema upgrade at start-up) is not the one aimed at.
            if holds() and any(_FLOW_BEGAN in line for line in list(run.stderr)):
                return run.seconds
            time.sleep(0.005)
    finally:
        if conn is not None:
            conn.close()
    raise RuntimeError("the run never took the ledger's write lock")


def seconds_until_writable(url: str, limit: float = LOCK_RELEASE_LIMIT_S) -> float:
    """How long until a writer can take the ledger's write lock at once (the recovery a
    killed run needs from the database; SQLite rolls a hot journal back on first use)."""
    engine = make_engine(url, lock_timeout_seconds=0.05)
    started = time.monotonic()
    try:
        while True:
            try:
                with engine.connect() as conn:
                    conn.execution_options(sqlite_begin="IMMEDIATE")
                    with conn.begin():
                        if conn.dialect.name != "postgresql" or conn.execute(
                                text("select pg_try_advisory_xact_lock(:key)"),
                                {"key": LEDGER_LOCK_KEY}).scalar():
                            return time.monotonic() - started
            except Exception:  # noqa: BLE001 - locked: try again until the limit
                pass
            if time.monotonic() - started > limit:
                return float("inf")
            time.sleep(0.05)
    finally:
        engine.dispose()


# --- trials ---------------------------------------------------------------------------

@dataclass
class Trial:
    number: int
    delay: float
    phase: str
    violations: list[str]
    writable_after: float
    leftover_tmp: list[str]
    targeted: bool = False  # killed inside the ledger transaction on purpose


@dataclass
class TrialsReport:
    undisturbed_s: float
    tasks: list[str]
    trials: list[Trial] = field(default_factory=list)
    final_run_s: float = 0.0
    final_violations: list[str] = field(default_factory=list)
    final_hash: str = ""
    fresh_hash: str = ""

    @property
    def violations(self) -> int:
        return sum(len(t.violations) for t in self.trials) + len(self.final_violations)

    @property
    def phases(self) -> Counter[str]:
        return Counter(t.phase for t in self.trials)


def run_trials(workdir: Path, *, trials: int, seed: int, targeted: int = 0,
               database_url: str | None = None, fresh_database_url: str | None = None,
               on_trial: Callable[[Trial], None] | None = None,
               first_week: Path | None = None) -> TrialsReport:
    """Run the trials in `workdir` (the ledger at `database_url`, else SQLite under the home):
    `trials` kills at a delay drawn from [0, T], then `targeted` kills inside the ledger
    transaction (up to TARGET_WINDOW_S after it took the write lock: a uniform delay lands
    there rarely, the transaction being short). `fresh_database_url`: an empty database for
    the undisturbed comparison run. `first_week`: a SQLite home after the shipped packs'
    first week, copied as the trials' home instead of running that week undisturbed (no run
    to time, so targeted kills only; a kill's phase then follows the final run's tasks)."""
    rng = random.Random(seed)
    home, sources = workdir / "home", copy_shipped_sources(workdir / "sources")
    url = ledger_url_of(home, database_url)
    scenarios = shipped_scenarios()
    if first_week is None:
        reference = undisturbed_run(home, sources, FIRST_DAY, database_url)
    elif trials or database_url:
        raise ValueError("a copied first week serves targeted kills on SQLite only")
    else:
        shutil.copytree(first_week, home)
        reference = Completed(float("nan"), [], "")
    report = TrialsReport(reference.seconds, reference.tasks)
    stderrs: list[list[str]] = []
    for n in range(1, trials + targeted + 1):
        change_sources(sources, n, rng)
        earlier = pdfs_under(home)
        run = Run(home, sources, FIRST_DAY + timedelta(days=n), database_url)
        if n <= trials:
            delay = rng.uniform(0, reference.seconds)
        else:
            delay = wait_for_write_lock(url, run) + rng.uniform(0, TARGET_WINDOW_S)
        time.sleep(max(0.0, delay - run.seconds))
        run.kill()
        writable = seconds_until_writable(url)
        violations = check_ledger(url, scenarios) + check_published(home, earlier)
        leftover = sorted(p.name for p in home.rglob("*.tmp"))
        # A copied first week gives no task order: the phase waits for the final run's.
        phase = phase_of(run.stderr, reference.tasks) if first_week is None else "pending"
        trial = Trial(n, delay, phase, violations, writable, leftover, targeted=n > trials)
        report.trials.append(trial)
        stderrs.append(run.stderr)
        if on_trial:
            on_trial(trial)
    final_day = FIRST_DAY + timedelta(days=trials + 1)
    earlier = pdfs_under(home)
    final = undisturbed_run(home, sources, final_day, database_url)
    if first_week is not None:
        report.tasks = final.tasks
        report.trials = [dataclasses.replace(t, phase=phase_of(lines, final.tasks))
                         for t, lines in zip(report.trials, stderrs, strict=True)]
    report.final_run_s = final.seconds
    report.final_violations = (check_ledger(url, scenarios) + check_published(home, earlier)
                               + _final_sources_kept(url, sources))
    report.final_hash = latest_dataset_hash(url)
    report.fresh_hash = fresh_dataset_hash(workdir / "fresh-home", sources, fresh_database_url)
    return report


def fresh_dataset_hash(home: Path, sources: Path, database_url: str | None) -> str:
    """The dataset version an undisturbed history makes of `sources`: `specledger ingest` into
    an empty ledger. The version's content hash depends only on the observations ingested
    (pipelines/jobs/ingest.py), so the ingest alone gives the hash a whole `run` would, in a
    fraction of its time (no Prefect server, no recompute, warehouse or briefing)."""
    done = subprocess.run(
        [str(SPECLEDGER), "ingest", str(sources), "--home", str(home), "--allow-rejects",
         "--no-publish"],
        env=child_env(sources, database_url), cwd=ROOT, capture_output=True, text=True,
        timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"an ingest into an empty ledger exited {done.returncode}:\n"
                           f"{done.stderr[-2000:]}")
    return latest_dataset_hash(ledger_url_of(home, database_url))


def _final_sources_kept(url: str, sources: Path) -> list[str]:
    """Every file of the final sources folder is in the ledger, byte for byte."""
    engine = make_engine(url)
    try:
        with Session(engine) as session:
            kept = set(session.scalars(select(RawFile.sha256)))
    finally:
        engine.dispose()
    # Every file an ingest of the folder reads (sub-folders too: data/sources/inference).
    read = sorted(p for p in sources.rglob("*") if p.is_file()
                  and p.suffix.lower() in FOLDER_SUFFIXES)
    return [f"{p.name} is not kept as a raw file" for p in read
            if hashlib.sha256(p.read_bytes()).hexdigest() not in kept]


# --- PostgreSQL databases for the trials ----------------------------------------------

@contextmanager
def scratch_databases(admin_url: str, *names: str) -> Iterator[list[str]]:
    """Empty PostgreSQL databases beside `admin_url`'s, dropped afterwards; yields URLs."""
    admin = make_url(normalize_url(admin_url))
    plain = admin.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(plain, autocommit=True) as conn:
        for name in names:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)")
                         .format(sql.Identifier(name)))
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield [admin.set(database=name).render_as_string(hide_password=False)
               for name in names]
    finally:
        with psycopg.connect(plain, autocommit=True) as conn:
            for name in names:
                conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)")
                             .format(sql.Identifier(name)))
