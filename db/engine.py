"""Engines for the ledger, the write lock that serialises writers, and migrations."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

__all__ = ["Engine", "Session", "make_engine", "write_session", "upgrade", "LedgerBusyError"]

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
# One fixed advisory-lock key for "someone is writing the ledger" (PostgreSQL).
LEDGER_LOCK_KEY = 0x5EC1ED9E
# Date-prefixed migration files, as in pyproject.toml's [tool.alembic].
FILE_TEMPLATE = "%%(year)d_%%(month).2d_%%(day).2d_%%(rev)s_%%(slug)s"


class LedgerBusyError(RuntimeError):
    """Another process held the ledger's write lock for longer than we were willing to wait."""


def normalize_url(url: str) -> str:
    """`postgresql://` means psycopg 3 here (the only PostgreSQL driver specledger ships)."""
    parsed = make_url(url)
    if parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed.render_as_string(hide_password=False)


def make_engine(url: str, lock_timeout_seconds: float = 60.0) -> Engine:
    """Create an engine; on SQLite, make writers queue instead of failing or deadlocking."""
    url = normalize_url(url)
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return create_engine(url, pool_pre_ping=True)
    if parsed.database and parsed.database != ":memory:":
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, connect_args={"timeout": lock_timeout_seconds})
    _configure_sqlite(engine, lock_timeout_seconds)
    return engine


def _configure_sqlite(engine: Engine, lock_timeout_seconds: float) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Take transaction control from pysqlite so BEGIN IMMEDIATE can be issued.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={int(lock_timeout_seconds * 1000)}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        # Writers start IMMEDIATE: they take the write lock up front and wait for it
        # (busy_timeout), instead of two deferred writers deadlocking on upgrade.
        conn.exec_driver_sql(f"BEGIN {conn.get_execution_options().get('sqlite_begin', '')}")


@contextmanager
def write_session(engine: Engine, lock_timeout_seconds: float = 60.0) -> Iterator[Session]:
    """One transaction that holds the ledger's write lock; commits on success, else rolls back."""
    with engine.connect() as conn:
        conn.execution_options(sqlite_begin="IMMEDIATE")
        try:
            with conn.begin():
                _take_write_lock(conn, lock_timeout_seconds)
                with Session(bind=conn) as session:
                    yield session
                    session.flush()
        except OperationalError as exc:
            if _is_lock_timeout(exc):
                raise LedgerBusyError(
                    f"the ledger is being written by another run and stayed locked for more than "
                    f"{lock_timeout_seconds:g} s; try again when it has finished"
                ) from exc
            raise


def _take_write_lock(conn: Connection, lock_timeout_seconds: float) -> None:
    if conn.dialect.name == "postgresql":
        conn.execute(text(f"SET LOCAL lock_timeout = '{int(lock_timeout_seconds * 1000)}ms'"))
        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": LEDGER_LOCK_KEY})


def _is_lock_timeout(exc: OperationalError) -> bool:
    message = str(exc.orig).lower()
    return "database is locked" in message or "lock timeout" in message


def alembic_config(url: str) -> Config:
    """An Alembic config for this project's one migration chain, pointed at `url`."""
    url = normalize_url(url)
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    config.set_main_option("file_template", FILE_TEMPLATE)
    return config


def upgrade(url: str, revision: str = "head") -> None:
    """Bring the ledger at `url` to `revision` (creating it if needed)."""
    if make_url(url).get_backend_name() == "sqlite":
        make_engine(url).dispose()  # creates the parent folder
    command.upgrade(alembic_config(url), revision)

