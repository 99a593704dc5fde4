"""Engines for the ledger, the write lock that serialises writers, and migrations."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Engine, create_engine, event, inspect, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, OperationalError, SQLAlchemyError
from sqlalchemy.orm import Session

if TYPE_CHECKING:  # Alembic costs 0.4 s to import: only a migration that runs pays it
    from alembic.config import Config

__all__ = ["Engine", "Session", "make_engine", "write_session", "writing", "lock_wait_of",
           "LockWait", "upgrade", "LedgerBusyError", "LEDGER_ERRORS"]

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
# One fixed advisory-lock key for "someone is writing the ledger" (PostgreSQL).
LEDGER_LOCK_KEY = 0x5EC1ED9E
# Date-prefixed migration files, as in pyproject.toml's [tool.alembic].
FILE_TEMPLATE = "%%(year)d_%%(month).2d_%%(day).2d_%%(rev)s_%%(slug)s"


class LedgerBusyError(RuntimeError):
    """Another process held the ledger's write lock for longer than we were willing to wait."""


# What a failed ledger read or write raises (a database error, a lock wait given up), for
# callers outside db/ that carry on without the ledger (a delivery's record).
LEDGER_ERRORS: tuple[type[Exception], ...] = (SQLAlchemyError, LedgerBusyError)


@dataclass(frozen=True)
class LockWait:
    """How a writer got the ledger's write lock: at once, or after waiting for `holder`."""

    waited: bool
    seconds: float
    holder: str | None = None  # who held it when we asked (PostgreSQL names the session)

    def describe(self) -> str:
        if not self.waited:
            return "took the ledger's write lock at once"
        who = self.holder or "another run"
        return f"waited {self.seconds:.1f} s for {who} to finish writing the ledger"

    def then(self, later: LockWait) -> LockWait:
        """The waits of two steps of one command (a migration, then the write), as one."""
        if not later.waited:
            return self
        if not self.waited:
            return later
        return LockWait(True, self.seconds + later.seconds, later.holder or self.holder)


NO_WAIT = LockWait(False, 0.0)


def application_name() -> str:
    """How this process appears to PostgreSQL (and so to a run waiting for its lock)."""
    return f"specledger pid {os.getpid()} on {socket.gethostname()}"[:63]


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
        return create_engine(url, pool_pre_ping=True,
                             connect_args={"application_name": application_name()})
    if parsed.database and parsed.database != ":memory:":
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, connect_args={"timeout": lock_timeout_seconds})
    _configure_sqlite(engine, lock_timeout_seconds)
    return engine


def _configure_sqlite(engine: Engine, lock_timeout_seconds: float,
                      foreign_keys: bool = True) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Take transaction control from pysqlite so BEGIN IMMEDIATE can be issued.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        if foreign_keys:
            cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={int(lock_timeout_seconds * 1000)}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        # Writers start IMMEDIATE: they take the write lock up front and wait for it
        # (busy_timeout), instead of two deferred writers deadlocking on upgrade.
        mode = conn.get_execution_options().get("sqlite_begin", "")
        if mode != "IMMEDIATE":
            conn.exec_driver_sql(f"BEGIN {mode}")
            return
        conn.info["lock_wait"] = _begin_immediate(conn, lock_timeout_seconds)


def _begin_immediate(conn: Connection, lock_timeout_seconds: float) -> LockWait:
    """BEGIN IMMEDIATE, first without waiting so we know whether another writer held it."""
    conn.exec_driver_sql("PRAGMA busy_timeout=0")
    try:
        conn.exec_driver_sql("BEGIN IMMEDIATE")
        return NO_WAIT
    except OperationalError as exc:
        if not _is_lock_timeout(exc):
            raise
    finally:
        conn.exec_driver_sql(f"PRAGMA busy_timeout={int(lock_timeout_seconds * 1000)}")
    started = time.monotonic()
    conn.exec_driver_sql("BEGIN IMMEDIATE")
    return LockWait(True, time.monotonic() - started)


@contextmanager
def write_session(engine: Engine, lock_timeout_seconds: float = 60.0) -> Iterator[Session]:
    """One transaction that holds the ledger's write lock; commits on success, else rolls back.
    `lock_wait_of(session)` tells whether it had to wait for another writer."""
    with engine.connect() as conn:
        conn.execution_options(sqlite_begin="IMMEDIATE")
        try:
            with conn.begin():
                wait = _take_write_lock(conn, lock_timeout_seconds)
                with Session(bind=conn) as session:
                    session.info["lock_wait"] = wait
                    yield session
                    session.flush()
        except OperationalError as exc:
            if _is_lock_timeout(exc):
                raise _busy(lock_timeout_seconds) from exc
            raise


def _busy(lock_timeout_seconds: float) -> LedgerBusyError:
    return LedgerBusyError(
        f"the ledger is being written by another run and stayed locked for more than "
        f"{lock_timeout_seconds:g} s; try again when it has finished")


@contextmanager
def writing(target: Engine | Session, lock_timeout_seconds: float = 60.0) -> Iterator[Session]:
    """A write session: `target` itself when it already is one (a caller that groups several
    steps into one transaction), else a new `write_session` on the engine."""
    if isinstance(target, Session):
        yield target
        return
    with write_session(target, lock_timeout_seconds) as session:
        yield session


def lock_wait_of(session: Session) -> LockWait:
    """How the write session got its lock (at once for sessions not made by write_session)."""
    return session.info.get("lock_wait") or NO_WAIT


def _take_write_lock(conn: Connection, lock_timeout_seconds: float) -> LockWait:
    if conn.dialect.name != "postgresql":
        return conn.info.pop("lock_wait", NO_WAIT)  # set by BEGIN IMMEDIATE
    conn.execute(text(f"SET LOCAL lock_timeout = '{int(lock_timeout_seconds * 1000)}ms'"))
    if conn.execute(text("SELECT pg_try_advisory_xact_lock(:key)"),
                    {"key": LEDGER_LOCK_KEY}).scalar():
        return NO_WAIT
    holder = conn.execute(text(
        "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
        "WHERE l.locktype = 'advisory' AND l.granted AND l.objid::bigint = :key "
        # Advisory locks are per database: a writer of another ledger on the server is not it.
        "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"),
        {"key": LEDGER_LOCK_KEY}).scalar()
    started = time.monotonic()
    conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": LEDGER_LOCK_KEY})
    return LockWait(True, time.monotonic() - started, holder or None)


# What psycopg says when the server went away or is not there yet (a restart, a failover).
_CONNECTION_LOST = ("server closed the connection", "terminating connection",
                    "connection refused", "could not connect", "shutting down",
                    "starting up", "connection is closed", "consuming input failed",
                    "connection timeout expired", "ssl syscall error")


def is_connection_lost(exc: BaseException) -> bool:
    """Whether `exc` means the database connection was lost (worth retrying the whole
    transaction once the server is back), as opposed to a bug, bad data or a lock timeout."""
    if isinstance(exc, LedgerBusyError) or not isinstance(exc, DBAPIError):
        return False
    return exc.connection_invalidated or any(
        phrase in str(exc.orig).lower() for phrase in _CONNECTION_LOST)


def _is_lock_timeout(exc: OperationalError) -> bool:
    message = str(exc.orig).lower()
    return "database is locked" in message or "lock timeout" in message


# The newest revision of db/migrations/versions: a ledger whose alembic_version says this is
# current without Alembic being imported (tests/db/test_migrations.py keeps it true).
SCHEMA_HEAD = "0019"


def alembic_config(url: str) -> Config:
    """An Alembic config for this project's one migration chain, pointed at `url`."""
    from alembic.config import Config

    url = normalize_url(url)
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    config.set_main_option("file_template", FILE_TEMPLATE)
    return config


def upgrade(url: str, revision: str = "head", lock_timeout_seconds: float = 60.0) -> LockWait:
    """Bring the ledger at `url` to `revision` (creating it if needed); returns how long it
    waited for other writers. A ledger already at head is only read; otherwise the migration
    runs in one transaction holding the ledger's write lock, so concurrent upgrades and writers
    queue. Either way it waits up to `lock_timeout_seconds`, like every other writer."""
    engine = _migration_engine(url, lock_timeout_seconds)
    try:
        with engine.connect() as conn:
            waited = _wait_to_read(conn, lock_timeout_seconds)
            current = _current_revisions(conn)
            conn.rollback()  # release the read lock before queueing for the write lock
            if revision == "head" and current == {SCHEMA_HEAD}:
                return waited
            from alembic import command

            config = alembic_config(url)
            conn.execution_options(sqlite_begin="IMMEDIATE")
            with conn.begin():
                waited = waited.then(_take_write_lock(conn, lock_timeout_seconds))
                # db/migrations/env.py runs the migrations on this connection, in this
                # transaction, so they hold the lock; Alembic reads the version again inside it.
                config.attributes["connection"] = conn
                command.upgrade(config, revision)
            return waited
    except OperationalError as exc:
        if _is_lock_timeout(exc):
            raise _busy(lock_timeout_seconds) from exc
        raise
    finally:
        engine.dispose()


def _current_revisions(conn: Connection) -> set[str]:
    """The revisions alembic_version holds (none for a new ledger), read without Alembic."""
    if not inspect(conn).has_table("alembic_version"):
        return set()
    return {row[0] for row in conn.exec_driver_sql("SELECT version_num FROM alembic_version")}


def _migration_engine(url: str, lock_timeout_seconds: float) -> Engine:
    """make_engine's engine, but without SQLite's foreign-key enforcement: batch migrations
    rebuild tables that others reference (Alembic's own engine never enforced it either)."""
    parsed = make_url(normalize_url(url))
    if parsed.get_backend_name() != "sqlite":
        return make_engine(url, lock_timeout_seconds)
    if parsed.database and parsed.database != ":memory:":
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(parsed, connect_args={"timeout": lock_timeout_seconds})
    _configure_sqlite(engine, lock_timeout_seconds, foreign_keys=False)
    return engine


def _wait_to_read(conn: Connection, lock_timeout_seconds: float) -> LockWait:
    """Read the SQLite ledger's schema, first without waiting, so we know whether a writer
    holding it exclusively (committing, or spilling a large transaction) made us wait. Only
    the PostgreSQL write lock is advisory: reading never waits for it."""
    if conn.dialect.name != "sqlite":
        return NO_WAIT
    probe = "SELECT count(*) FROM sqlite_master"
    conn.exec_driver_sql("PRAGMA busy_timeout=0")
    try:
        conn.exec_driver_sql(probe).all()
        return NO_WAIT
    except OperationalError as exc:
        if not _is_lock_timeout(exc):
            raise
        conn.rollback()
    finally:
        conn.exec_driver_sql(f"PRAGMA busy_timeout={int(lock_timeout_seconds * 1000)}")
    started = time.monotonic()
    conn.exec_driver_sql(probe).all()
    return LockWait(True, time.monotonic() - started)
