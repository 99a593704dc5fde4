"""`specledger ingest` beside another writer: it waits (migration included), says how long,
and names the ledger it waited for."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from db.engine import upgrade
from pipelines.cli.app import app
from tests.conftest import NVLINK_PACK, pg_url_or_skip, reset_pg
from tests.db.lock_holder import HOLDER_NAME, lock_held

HOLD = 1.5  # seconds the other writer keeps the lock; the timeout is far longer
WAITED = re.compile(r"waited \d+\.\d s for .+ to finish writing the ledger")


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def ledger_url(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch) -> str:
    """The URL of the ledger `--home tmp_path/home` uses (SPECLEDGER_DATABASE_URL on
    PostgreSQL), not migrated yet; writers wait up to 30 s."""
    monkeypatch.setenv("SPECLEDGER_LOCK_TIMEOUT_SECONDS", "30")
    if request.param == "sqlite":
        monkeypatch.delenv("SPECLEDGER_DATABASE_URL", raising=False)
        (tmp_path / "home").mkdir()
        return f"sqlite:///{(tmp_path / 'home' / 'specledger.sqlite').resolve()}"
    url = pg_url_or_skip()
    reset_pg(url)
    monkeypatch.setenv("SPECLEDGER_DATABASE_URL", url)
    return url


def ingest(tmp_path: Path, write_pack, *options: str):
    pack = write_pack("nvlink.yaml", NVLINK_PACK)
    return CliRunner().invoke(app, ["ingest", str(pack), "--home", str(tmp_path / "home"),
                                    *options])


def test_an_ingest_waits_for_another_writer_and_says_how_long(ledger_url, tmp_path,
                                                              write_pack):
    upgrade(ledger_url)
    with lock_held(ledger_url, HOLD):
        result = ingest(tmp_path, write_pack)
    assert result.exit_code == 0, result.output
    (said,) = WAITED.findall(result.stdout)
    # That it waited and says how long is the point, not how much of the hold was left when it
    # reached the lock (a loaded CI run reached it with 0.6 s of the 1.5 s to go).
    assert 0 <= float(said.split()[1]) < 30
    if not ledger_url.startswith("sqlite"):
        assert HOLDER_NAME in said
    assert "dataset version 1 (new)" in result.stdout


def test_an_ingest_whose_migration_meets_the_lock_waits_there(ledger_url, tmp_path,
                                                              write_pack):
    with lock_held(ledger_url, HOLD):  # a ledger not created yet: the migration must write
        result = ingest(tmp_path, write_pack)
    assert result.exit_code == 0, result.output
    assert WAITED.search(result.stdout)


def test_an_ingest_waits_at_the_migration_step_while_sqlite_is_held_exclusively(
        ledger_url, tmp_path, write_pack):
    if not ledger_url.startswith("sqlite"):
        pytest.skip("only SQLite has locks that stop readers")
    upgrade(ledger_url)
    with lock_held(ledger_url, HOLD, exclusive=True):  # a large write spilling, or committing
        result = ingest(tmp_path, write_pack)
    assert result.exit_code == 0, result.output
    assert WAITED.search(result.stdout)


def test_an_ingest_with_json_keeps_standard_output_for_the_json(ledger_url, tmp_path,
                                                                 write_pack):
    upgrade(ledger_url)
    with lock_held(ledger_url, HOLD):
        result = ingest(tmp_path, write_pack, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["files"][0]["accepted"] == 2
    assert WAITED.search(result.stderr)


def test_an_ingest_that_gives_up_names_the_home_ledger(ledger_url, tmp_path, write_pack,
                                                       monkeypatch):
    monkeypatch.chdir(tmp_path)  # the working folder's default ledger would be ./var/...
    monkeypatch.setenv("SPECLEDGER_LOCK_TIMEOUT_SECONDS", "0.3")
    upgrade(ledger_url)
    with lock_held(ledger_url, HOLD):
        result = ingest(tmp_path, write_pack)
    assert result.exit_code == 4
    said = " ".join(result.stderr.split())
    assert "stayed locked for more than 0.3 s" in said
    shown = (str(tmp_path / "home" / "specledger.sqlite") if ledger_url.startswith("sqlite")
             else ledger_url.split("@")[-1])
    assert shown in said.split("(ledger ", 1)[1]
    assert str(tmp_path / "var") not in said
