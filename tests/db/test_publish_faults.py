"""Publishing into a full disk or an unwritable place keeps the previous outputs intact.

We run as root, so chmod cannot make a folder unwritable: the faults are a file size limit
(RLIMIT_FSIZE: writes past it fail with EFBIG, as on a full disk), a regular file where the
output folder should be, and a full tmpfs when this machine lets us mount one. All in this
process: the limit is lowered around the one call that must hit it (Python ignores SIGXFSZ,
so a write past it fails instead of killing the process), and the CLI runs through its own
`main()`, which turns a failure into its one-paragraph message and exit code.
"""

from __future__ import annotations

import hashlib
import os
import resource
import shutil
import signal
import subprocess
import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from datetime import UTC, date, datetime
from pathlib import Path

import duckdb
import pytest
from sqlalchemy import func, select

from db.engine import Session, make_engine
from db.schema import Briefing
from db.warehouse import WarehouseMeta, WarehouseWriteError, publish_warehouse
from models.resolve import SOURCE_KIND_RANK
from pipelines.cli.app import main
from pipelines.jobs import steps as jobs
from pipelines.settings import Settings
from tests.support.shipped_week import DAY, shipped_week

pytestmark = pytest.mark.slow(seconds=12)  # a shared home (~20 s, or a copy); tests render

LIMIT_BYTES = 64 * 1024  # well below a warehouse (MBs) and a briefing (~200 KB)


def snapshot(home: Path) -> dict[str, str]:
    """sha256 of every file under home but Prefect's, the ledger's own and the render cache's
    (documents kept to be reused, not outputs: a fault may leave its entry or not)."""
    return {str(p.relative_to(home)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(home.rglob("*"))
            if p.is_file() and ".prefect" not in p.parts and "specledger.sqlite" not in p.name
            and "render-cache" not in p.parts}


def assert_outputs_intact(home: Path, before: dict[str, str]) -> None:
    assert snapshot(home) == before  # same bytes, and no temporary file left
    con = duckdb.connect(str(home / "warehouse.duckdb"), read_only=True)
    assert con.execute("select count(*) from observation").fetchone()[0] > 0
    con.close()
    for pdf in (home / "briefings").glob("*.pdf"):
        subprocess.run(["pdfinfo", str(pdf)], check=True, capture_output=True)


@contextmanager
def file_size_limit(size: int) -> Iterator[None]:
    """Writes past `size` bytes fail with EFBIG (as on a full disk) while inside."""
    assert signal.getsignal(signal.SIGXFSZ) == signal.SIG_IGN  # else the kernel kills us
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))


def specledger(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
               *args: str, limit: int | None = None) -> tuple[int, str]:
    """`specledger ARGS` as its entry point runs it (without the environment's SPECLEDGER_*
    settings): the exit code and what it printed on stderr."""
    for name in [n for n in os.environ if n.startswith("SPECLEDGER_")]:
        monkeypatch.delenv(name)
    monkeypatch.setattr(sys, "argv", ["specledger", *args])
    capsys.readouterr()
    with pytest.raises(SystemExit) as exited, \
            file_size_limit(limit) if limit else nullcontext():
        main()
    return exited.value.code, capsys.readouterr().err


@pytest.fixture(scope="module")
def published(tmp_path_factory) -> tuple[Path, int]:
    """A home with a ledger, a warehouse and a briefing, made by the real jobs: a copy of the
    run's shared shipped week (tests/support/shipped_week.py), its warehouse published."""
    shared = shipped_week(tmp_path_factory)
    settings = shared.copied_to(tmp_path_factory.mktemp("published") / "home")
    jobs.publish(settings, shared.version, as_of=DAY, built_at=datetime.now(UTC))
    return settings.home, shared.version


def briefing_records(home: Path) -> int:
    engine = make_engine(f"sqlite:///{home / 'specledger.sqlite'}")
    with Session(engine) as session:
        count = session.scalar(select(func.count()).select_from(Briefing))
    engine.dispose()
    return count


def test_a_file_size_limit_while_publishing_keeps_the_previous_warehouse(published):
    home, version = published
    before = snapshot(home)
    with pytest.raises(WarehouseWriteError) as raised, file_size_limit(LIMIT_BYTES):
        jobs.publish(Settings(home=home), version, as_of=date(2026, 11, 22),
                     built_at=datetime.now(UTC))
    # The line a traceback ends with.
    error = "".join(traceback.format_exception_only(raised.value)).strip().splitlines()[-1]
    assert error.startswith("db.warehouse.WarehouseWriteError: [Errno 5] could not be written"
                            " ("), error
    assert f"File too large); the previous warehouse is unchanged: '{home}/warehouse.duckdb'" \
        in error
    assert_outputs_intact(home, before)


def test_a_file_size_limit_while_rendering_keeps_the_previous_briefing(published, monkeypatch,
                                                                      capsys):
    home, _ = published
    before, records = snapshot(home), briefing_records(home)
    code, stderr = specledger(monkeypatch, capsys, "report", "--home", str(home), "--as-of",
                              DAY.isoformat(), limit=LIMIT_BYTES)
    assert code == 5, stderr
    assert stderr.strip() == (
        f"error: specledger report failed: {home}/briefings/briefing-{DAY}.pdf: could not be "
        "rendered (File too large while copying the template's fonts to a temporary file); "
        "the previous file is unchanged")
    assert_outputs_intact(home, before)
    assert briefing_records(home) == records  # a briefing not written is not recorded


def test_a_file_where_the_output_folder_should_be_is_named_in_the_error(published, tmp_path,
                                                                       monkeypatch, capsys):
    home, _ = published
    before = snapshot(home)
    blocked = tmp_path / "blocked"
    blocked.write_text("a file, not a folder")
    code, stderr = specledger(monkeypatch, capsys, "report", "--home", str(home), "--as-of",
                              DAY.isoformat(), "--output", str(blocked / "briefing.pdf"))
    assert code == 5, stderr
    assert stderr.strip() == (f"error: specledger report failed: {blocked}: could not "
                              "be made for briefing.pdf (File exists)")
    assert blocked.read_text() == "a file, not a folder"
    assert_outputs_intact(home, before)

    engine = make_engine(f"sqlite:///{home / 'specledger.sqlite'}")
    meta = WarehouseMeta(1, "0" * 64, datetime.now(UTC), DAY, datetime.now(UTC), "test")
    with pytest.raises(WarehouseWriteError, match="could not be written") as raised:
        publish_warehouse(engine, blocked / "warehouse.duckdb", meta, SOURCE_KIND_RANK)
    engine.dispose()
    assert raised.value.filename == str(blocked / "warehouse.duckdb")


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A 48 MiB tmpfs, unmounted afterwards; skipped where mounting is not allowed."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def fill(folder: Path) -> None:
    """Write until the disk is full."""
    # Unbuffered: closing the file has nothing left to flush onto the full disk.
    with (folder / "filler").open("wb", buffering=0) as filler:
        try:
            while True:
                filler.write(b"\0" * 65536)
                filler.flush()
        except OSError:
            pass


def test_a_full_disk_keeps_the_previous_warehouse_and_briefing(published, full_disk):
    ledger_home, version = published
    settings = Settings(home=full_disk / "home",
                        database_url=f"sqlite:///{ledger_home / 'specledger.sqlite'}")
    # The previous outputs: the real jobs' (the module's home), copied onto the small disk.
    settings.briefings_dir.mkdir(parents=True)
    shutil.copyfile(ledger_home / "warehouse.duckdb", settings.warehouse_path)
    for pdf in (ledger_home / "briefings").glob("*.pdf"):
        shutil.copyfile(pdf, settings.briefings_dir / pdf.name)
    assert snapshot(settings.home) == snapshot(ledger_home)
    fill(full_disk)
    before = snapshot(settings.home)

    with pytest.raises(WarehouseWriteError, match="No space left on device") as raised:
        jobs.publish(settings, version, as_of=DAY, built_at=datetime.now(UTC))
    assert raised.value.filename == str(settings.warehouse_path)
    with pytest.raises(OSError, match=r"could not be written \(No space left on device\); the "
                                      "previous file is unchanged") as raised:
        jobs.render_briefing(settings, version, as_of=DAY)
    assert raised.value.filename == str(settings.briefings_dir / f"briefing-{DAY}.pdf")
    assert_outputs_intact(settings.home, before)
