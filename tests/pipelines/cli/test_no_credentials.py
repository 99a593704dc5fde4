"""The ledger's URL and password never show: not in output, files, the ledger or errors.

The local PostgreSQL trusts every connection, so a URL with a password still connects: the
password is there to be looked for.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from sqlalchemy import String, Text, select
from sqlalchemy.engine import make_url

from db.engine import Session, make_engine
from db.redact import redact, redact_url, secrets_of
from db.schema import Base
from pipelines.settings import PROJECT_ROOT, Settings
from tests.conftest import NVLINK_PACK, pg_url_or_skip, reset_pg

PASSWORD = "S3cr3t-P4ss"
SPECLEDGER = Path(sys.executable).parent / "specledger"


def with_password(url: str, database: str | None = None, port: int | None = None) -> str:
    parsed = make_url(url).set(drivername="postgresql", password=PASSWORD)
    if database:
        parsed = parsed.set(database=database)
    if port:
        parsed = parsed.set(port=port)
    return parsed.render_as_string(hide_password=False)


def specledger_run(home: Path, url: str, sources: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPECLEDGER_", "PREFECT_"))}
    # A lost connection is retried (the lead's policy): at once here, not after the default
    # 15 s (the failing runs below wait out every retry).
    env.update(SPECLEDGER_DATABASE_URL=url, SPECLEDGER_SOURCES_DIR=str(sources),
               SPECLEDGER_LEDGER_RETRY_DELAY_SECONDS="0.1", SPECLEDGER_OFFLINE="true")
    return subprocess.run([str(SPECLEDGER), "run", "--home", str(home), "--as-of", "2026-11-22"],
                          env=env, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=600)


def leaks(text: str, url: str) -> list[str]:
    return [secret for secret in (PASSWORD, url) if secret in text]


def texts_under(home: Path) -> dict[str, str]:
    """Every file under home as text: raw bytes, plus what the PDF and DuckDB files hold
    (their streams and strings are compressed, so the bytes alone could hide a leak)."""
    found = {}
    for path in sorted(p for p in home.rglob("*") if p.is_file()):
        found[str(path)] = path.read_bytes().decode("latin-1")
        if path.suffix == ".pdf":
            found[f"{path} (text)"] = subprocess.run(
                ["pdftotext", str(path), "-"], capture_output=True, text=True, check=True).stdout
    warehouse = home / "warehouse.duckdb"
    if warehouse.exists():
        con = duckdb.connect(str(warehouse), read_only=True)
        try:
            for (table,) in con.execute("select table_name from duckdb_tables()").fetchall():
                found[f"warehouse {table}"] = repr(con.execute(f"select * from {table}")
                                                   .fetchall())
        finally:
            con.close()
    return found


def ledger_text(url: str) -> str:
    """Every text column of every ledger table."""
    engine = make_engine(url)
    parts = []
    with Session(engine) as session:
        for table in Base.metadata.sorted_tables:
            columns = [c for c in table.columns if isinstance(c.type, String | Text)]
            if columns:
                parts.extend(map(repr, session.execute(select(*columns)).all()))
    engine.dispose()
    return "\n".join(parts)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def sources(tmp_path: Path) -> Path:
    folder = tmp_path / "sources"
    folder.mkdir()
    (folder / "nvlink.yaml").write_text(NVLINK_PACK, encoding="utf-8")
    return folder


def assert_clear_failure(result: subprocess.CompletedProcess[str], url: str, *said: str) -> None:
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert not leaks(output, url)
    assert "Traceback" not in output and "╭" not in output  # no Python nor rich traceback
    (message,) = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert message.startswith("error: specledger run failed at step update-ledger: "), message
    for words in said:
        assert words in message, message


@pytest.mark.slow(seconds=22)
@pytest.mark.postgres
def test_a_run_with_a_password_in_the_url_shows_it_nowhere(tmp_path, sources):
    url = with_password(pg_url_or_skip())
    reset_pg(url)
    home = tmp_path / "home"

    result = specledger_run(home, url, sources)
    assert result.returncode == 0, result.stderr
    assert not leaks(result.stdout + result.stderr, url)
    found = {where: leaked for where, text in texts_under(home).items()
             if (leaked := leaks(text, url))}
    assert found == {}
    assert any(".prefect" in where for where in texts_under(home))  # its logs were looked at
    assert not leaks(ledger_text(url), url)


@pytest.mark.slow(seconds=22)
def test_a_closed_port_fails_clearly_without_the_password(tmp_path, sources):
    port = free_port()
    url = f"postgresql://postgres:{PASSWORD}@127.0.0.1:{port}/specledger"
    result = specledger_run(tmp_path / "home", url, sources)
    assert_clear_failure(result, url, f"postgresql://postgres:***@127.0.0.1:{port}/specledger",
                         "Connection refused")
    assert not {w: t for w, t in texts_under(tmp_path / "home").items() if leaks(t, url)}


@pytest.mark.slow(seconds=22)
@pytest.mark.postgres
def test_an_unknown_database_fails_clearly_without_the_password(tmp_path, sources):
    url = with_password(pg_url_or_skip(), database="specledger_no_such_database")
    result = specledger_run(tmp_path / "home", url, sources)
    assert_clear_failure(result, url, 'database "specledger_no_such_database" does not exist')


@pytest.mark.postgres
def test_migrate_prints_the_ledger_url_with_its_password_masked(cli, monkeypatch):
    monkeypatch.setenv("SPECLEDGER_DATABASE_URL", with_password(pg_url_or_skip()))
    result = cli("migrate")
    assert result.exit_code == 0, result.output
    assert PASSWORD not in result.output and "postgres:***@" in result.output


def test_settings_print_the_database_url_as_a_secret():
    settings = Settings(database_url=f"postgresql://postgres:{PASSWORD}@db/ledger")
    assert PASSWORD not in repr(settings) and PASSWORD not in str(settings.model_dump())
    assert settings.resolved_database_url == f"postgresql://postgres:{PASSWORD}@db/ledger"


@pytest.mark.parametrize("text, expected", [
    ("postgresql://postgres:S3cr3t-P4ss@127.0.0.1:5432/db",
     "postgresql://postgres:***@127.0.0.1:5432/db"),
    ("connect to 'postgresql+psycopg://u:p%40ss@h/db' failed",
     "connect to 'postgresql+psycopg://u:***@h/db' failed"),
    ("a password with an @: postgresql://u:a@b@h:5/d, then x@y",
     "a password with an @: postgresql://u:***@h:5/d, then x@y"),
    ("no password: postgresql://u@h/d and sqlite:////tmp/ledger.sqlite",
     "no password: postgresql://u@h/d and sqlite:////tmp/ledger.sqlite"),
])
def test_redact_masks_the_password_of_any_url_in_a_text(text, expected):
    assert redact(text) == expected


def test_a_known_password_is_masked_wherever_it_appears_and_short_ones_only_in_urls():
    url = f"postgresql://postgres:{PASSWORD}@h/d"
    assert redact(f"auth {PASSWORD} failed", secrets_of(url)) == "auth *** failed"
    assert redact_url(url) == "postgresql://postgres:***@h/d"
    assert redact("a b c", secrets_of("postgresql://u:a@h/d")) == "a b c"
    assert secrets_of("postgresql://u:p%40ss@h/d") == ["p%40ss", "p@ss"]


def test_a_command_without_prefect_fails_clearly_too(tmp_path, sources):
    url = f"postgresql://postgres:{PASSWORD}@127.0.0.1:{free_port()}/specledger"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPECLEDGER_")}
    result = subprocess.run([str(SPECLEDGER), "ingest", str(sources), "--home",
                             str(tmp_path / "home")], env={**env, "SPECLEDGER_DATABASE_URL": url},
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 5
    assert not leaks(result.stdout + result.stderr, url)
    assert result.stderr.strip().startswith("error: specledger ingest failed: the connection to "
                                            "the ledger database postgresql://postgres:***@127.0.0.1:")
    assert "Connection refused" in result.stderr and "Traceback" not in result.stderr
