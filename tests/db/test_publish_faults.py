"""Publishing into a full disk or an unwritable place keeps the previous outputs intact.

We run as root, so chmod cannot make a folder unwritable: the faults are a file size limit
(RLIMIT_FSIZE in a subprocess: writes past it fail with EFBIG, as on a full disk), a regular
file where the output folder should be, and a full tmpfs when this machine lets us mount one.
"""

from __future__ import annotations

import hashlib
import os
import resource
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path

import duckdb
import pytest
from sqlalchemy import func, select

from db.engine import Session, make_engine
from db.schema import Briefing
from db.warehouse import WarehouseMeta, WarehouseWriteError, publish_warehouse
from models.resolve import SOURCE_KIND_RANK
from pipelines.jobs import steps as jobs
from pipelines.settings import PROJECT_ROOT, Settings

pytestmark = pytest.mark.slow

DAY = date(2026, 11, 22)
LIMIT_BYTES = 64 * 1024  # well below a warehouse (MBs) and a briefing (~200 KB)
SPECLEDGER = Path(sys.executable).parent / "specledger"

PUBLISH = """
import sys
from datetime import UTC, date, datetime
from pathlib import Path
from pipelines.jobs import steps as jobs
from pipelines.settings import Settings
jobs.publish(Settings(home=Path(sys.argv[1])), int(sys.argv[2]), as_of=date(2026, 11, 22),
             built_at=datetime.now(UTC))
"""


def snapshot(home: Path) -> dict[str, str]:
    """sha256 of every file under home but Prefect's and the ledger's own."""
    return {str(p.relative_to(home)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(home.rglob("*"))
            if p.is_file() and ".prefect" not in p.parts and "specledger.sqlite" not in p.name}


def assert_outputs_intact(home: Path, before: dict[str, str]) -> None:
    assert snapshot(home) == before  # same bytes, and no temporary file left
    con = duckdb.connect(str(home / "warehouse.duckdb"), read_only=True)
    assert con.execute("select count(*) from observation").fetchone()[0] > 0
    con.close()
    for pdf in (home / "briefings").glob("*.pdf"):
        subprocess.run(["pdfinfo", str(pdf)], check=True, capture_output=True)


def limited_to(size: int):
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    return limit


def child_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("SPECLEDGER_")}


@pytest.fixture(scope="module")
def published(tmp_path_factory) -> tuple[Path, int]:
    """A home with a ledger, a warehouse and a briefing, made by the real jobs."""
    home = tmp_path_factory.mktemp("published") / "home"
    settings = Settings(home=home)
    version = jobs.update(settings, [settings.sources_dir], as_of=DAY).dataset_version
    jobs.render_briefing(settings, version, as_of=DAY)
    jobs.publish(settings, version, as_of=DAY, built_at=datetime.now(UTC))
    return home, version


def briefing_records(home: Path) -> int:
    engine = make_engine(f"sqlite:///{home / 'specledger.sqlite'}")
    with Session(engine) as session:
        count = session.scalar(select(func.count()).select_from(Briefing))
    engine.dispose()
    return count


def test_a_file_size_limit_while_publishing_keeps_the_previous_warehouse(published):
    home, version = published
    before = snapshot(home)
    result = subprocess.run([sys.executable, "-c", PUBLISH, str(home), str(version)],
                            cwd=PROJECT_ROOT, env=child_env(), capture_output=True, text=True,
                            preexec_fn=limited_to(LIMIT_BYTES), timeout=300)
    assert result.returncode != 0
    error = result.stderr.strip().splitlines()[-1]
    assert error.startswith("db.warehouse.WarehouseWriteError: [Errno 5] could not be written"
                            " ("), error
    assert f"File too large); the previous warehouse is unchanged: '{home}/warehouse.duckdb'" \
        in error
    assert_outputs_intact(home, before)


def test_a_file_size_limit_while_rendering_keeps_the_previous_briefing(published):
    home, _ = published
    before, records = snapshot(home), briefing_records(home)
    result = subprocess.run([str(SPECLEDGER), "report", "--home", str(home), "--as-of",
                             DAY.isoformat()], cwd=PROJECT_ROOT, env=child_env(),
                            capture_output=True, text=True, preexec_fn=limited_to(LIMIT_BYTES),
                            timeout=300)
    assert result.returncode == 5, result.stderr
    assert result.stderr.strip() == (
        f"error: specledger report failed: {home}/briefings/briefing-{DAY}.pdf: could not be "
        "written (File too large); the previous file is unchanged")
    assert_outputs_intact(home, before)
    assert briefing_records(home) == records  # a briefing not written is not recorded


def test_a_file_where_the_output_folder_should_be_is_named_in_the_error(published, tmp_path):
    home, _ = published
    before = snapshot(home)
    blocked = tmp_path / "blocked"
    blocked.write_text("a file, not a folder")
    result = subprocess.run([str(SPECLEDGER), "report", "--home", str(home), "--as-of",
                             DAY.isoformat(), "--output", str(blocked / "briefing.pdf")],
                            cwd=PROJECT_ROOT, env=child_env(), capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 5, result.stderr
    assert result.stderr.strip() == (f"error: specledger report failed: {blocked}: could not "
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
    """A 16 MiB tmpfs, unmounted afterwards; skipped where mounting is not allowed."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def fill(folder: Path) -> None:
    """Write until the disk is full."""
    with (folder / "filler").open("wb") as filler:
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
    jobs.render_briefing(settings, version, as_of=DAY)
    jobs.publish(settings, version, as_of=DAY, built_at=datetime.now(UTC))
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
