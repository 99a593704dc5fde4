"""An ingest is one transaction: kill -9 halfway leaves no trace; two writers queue."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import date, timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select, text

from db.engine import LedgerBusyError, Session, make_engine, write_session
from db.schema import IngestRun, Observation, RawFile, RejectedRow
from pipelines.jobs.ingest import ingest_paths
from tests.conftest import TODAY

pytestmark = pytest.mark.slow

INGEST_SCRIPT = """
import sys
from datetime import UTC, date, datetime
from pathlib import Path
from db.engine import make_engine
from pipelines.inputs.catalog import load_metrics
from pipelines.settings import PROJECT_ROOT
from pipelines.jobs.ingest import ingest_paths
report = ingest_paths(make_engine(sys.argv[1]), [Path(p) for p in sys.argv[2:]],
                      metrics=load_metrics(PROJECT_ROOT / "data" / "catalog.yaml"),
                      today=date(2026, 11, 22), now=lambda: datetime.now(UTC),
                      code_version="test")
print(report.total("accepted"))
"""


def big_pack(folder: Path, files: int = 4, rows: int = 15000) -> list[Path]:
    """CSV packs large enough that an ingest takes a while; the last row of each is bad."""
    paths = []
    for n in range(files):
        lines = ["source,source_title,source_kind,item,item_kind,metric,value,unit,as_of,status"]
        for r in range(rows):
            as_of = date(2010, 1, 1) + timedelta(days=r // 500)  # unique per (item, as_of)
            lines.append(f"bench-{n},Bench {n},dataset,gpu-{r % 500},gpu,tdp,{100 + r % 900},W,"
                         f"{as_of},S")
        lines.append(f"bench-{n},,,gpu-1,,tdp,-1,W,2024-06-01,S")
        path = folder / f"big-{n}.csv"
        path.write_text("\n".join(lines) + "\n")
        paths.append(path)
    return paths


def counts(url: str) -> tuple[int, ...]:
    engine = make_engine(url)
    with Session(engine) as session:
        found = tuple(session.scalar(select(func.count()).select_from(m))
                      for m in (IngestRun, Observation, RawFile, RejectedRow))
    engine.dispose()
    return found


def start_ingest(url: str, paths: list[Path]) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", INGEST_SCRIPT, url, *map(str, paths)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=Path(__file__).resolve().parents[3])


def wait_until_writing(url: str, process: subprocess.Popen[bytes]) -> None:
    """Block until the child holds the write lock (and has begun writing), then return."""
    deadline = time.monotonic() + 60
    engine = make_engine(url)
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stderr.read().decode()
        if _holds_write_lock(engine, url):
            engine.dispose()
            time.sleep(0.5)  # let it write some rows inside the transaction
            return
        time.sleep(0.05)
    raise AssertionError("the ingest never took the write lock")


def _holds_write_lock(engine, url: str) -> bool:
    if url.startswith("sqlite"):
        return Path(url.removeprefix("sqlite:///") + "-journal").exists()
    with engine.connect() as conn:
        return bool(conn.execute(text(
            "select count(*) from pg_locks where locktype = 'advisory' and granted and database "
            "= (select oid from pg_database where datname = current_database())")).scalar())


def test_a_killed_ingest_leaves_nothing_and_the_next_run_completes(ledger_url, tmp_path):
    paths = big_pack(tmp_path)
    before = counts(ledger_url)
    process = start_ingest(ledger_url, paths)
    wait_until_writing(ledger_url, process)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert counts(ledger_url) == before

    rerun = start_ingest(ledger_url, paths)
    out, err = rerun.communicate(timeout=300)
    assert rerun.returncode == 0, err.decode()
    runs, observations, raw_files, rejected = counts(ledger_url)
    assert (runs, raw_files, rejected) == (before[0] + 1, len(paths), len(paths))
    assert observations == int(out) > 0


def test_a_second_writer_waits_for_the_first(ledger, ledger_url, nvlink_pack, metrics, clock):
    holder = make_engine(ledger_url, lock_timeout_seconds=5)
    with write_session(holder) as session:
        session.execute(select(1))
        process = start_ingest(ledger_url, [nvlink_pack])
        time.sleep(2)
        assert process.poll() is None  # still waiting for the lock, not failed
    out, err = process.communicate(timeout=60)
    holder.dispose()
    assert process.returncode == 0, err.decode()
    assert out.strip() == b"2"


def test_a_writer_that_waits_too_long_gets_a_clear_error(ledger, ledger_url, nvlink_pack,
                                                         metrics, clock):
    holder = make_engine(ledger_url)
    impatient = make_engine(ledger_url, lock_timeout_seconds=0.5)
    with write_session(holder) as session:
        session.execute(select(1))
        with pytest.raises(LedgerBusyError, match="being written by another run"):
            ingest_paths(impatient, [nvlink_pack], metrics=metrics, today=TODAY, now=clock,
                         code_version="test", lock_timeout_seconds=0.5)
    holder.dispose()
    impatient.dispose()
