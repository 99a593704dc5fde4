"""Prefect's local state for `specledger run`: its database migrated by one process at a time.

Without PREFECT_API_URL, each `specledger run` starts Prefect's temporary server, which
migrates the SQLite database under PREFECT_HOME (the home's `.prefect/`) as it starts. Two
first runs of a home at once migrate it together and one fails (`duplicate column name`),
so the first migration is done here, under a file lock, and remembered by a marker file:
later servers find the database at head.

Migrating an empty database through Prefect's whole chain takes 10-15 s, the same every time
for one Prefect release: the first home migrated keeps a copy of the result in the cache
(SPECLEDGER_CACHE_DIR, else $XDG_CACHE_HOME/specledger or ~/.cache/specledger), and a new
home starts from that copy. A cache that cannot be read or written is only slower.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import sqlite3
import time
from contextlib import closing, suppress
from pathlib import Path

POLL_SECONDS = 0.1


def migrate_prefect_home(timeout_seconds: float) -> None:
    """Bring the temporary server's database to Prefect's head once per Prefect release,
    waiting up to `timeout_seconds` for another run doing it. Nothing to do against a
    Prefect server (PREFECT_API_URL) or a database of the operator's choosing."""
    if os.environ.get("PREFECT_API_URL") or os.environ.get(
            "PREFECT_API_DATABASE_CONNECTION_URL") or not os.environ.get("PREFECT_HOME"):
        return
    import prefect

    home = Path(os.environ["PREFECT_HOME"])
    marker = home / f"specledger-migrated-{prefect.__version__}"
    if marker.exists():
        return
    fd = os.open(home / "specledger-migrate.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        if _lock(fd, timeout_seconds) and not marker.exists():  # not done by the one we waited for
            database = _database_path()
            template = cache_dir() / f"prefect-{prefect.__version__}.db"
            if (database is None or database.exists()
                    or not _copy_database(template, database)):
                from prefect.server.database import provide_database_interface

                # What the server does as it starts (Alembic runs in a worker thread of a loop).
                asyncio.run(provide_database_interface().create_db())
                if database is not None and not template.exists():
                    _copy_database(database, template)
            marker.touch()
    finally:
        os.close(fd)  # releases the lock


def _database_path() -> Path | None:
    """The SQLite file Prefect's server uses, as Prefect's settings give it (by default
    PREFECT_HOME/prefect.db); None for any other database."""
    from prefect.settings import get_current_settings

    url = get_current_settings().server.database.connection_url
    value = url.get_secret_value() if url is not None else ""
    prefix = "sqlite+aiosqlite:///"
    return Path(value[len(prefix):]) if value.startswith(prefix) else None


def cache_dir() -> Path:
    """Where specledger keeps what any home can reuse: SPECLEDGER_CACHE_DIR, else the XDG
    cache folder's `specledger`."""
    if os.environ.get("SPECLEDGER_CACHE_DIR"):
        return Path(os.environ["SPECLEDGER_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "specledger"


def _copy_database(source: Path, target: Path) -> bool:
    """A consistent copy of the SQLite database `source` (its write-ahead log included:
    SQLite's backup, not a file copy) written to `target` whole or not at all. False when
    there is no source or it cannot be read or written (the caller then migrates)."""
    if not source.is_file():
        return False
    partial = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with closing(sqlite3.connect(f"file:{source}?mode=ro", uri=True)) as reader, \
                closing(sqlite3.connect(partial)) as writer:
            reader.backup(writer)
            # A standalone file (no -wal beside it); Prefect turns its log back on when it opens.
            writer.execute("PRAGMA journal_mode=DELETE")
        os.replace(partial, target)
        return True
    except (OSError, sqlite3.Error):
        with suppress(OSError):  # the folder may be what could not be written
            partial.unlink(missing_ok=True)
        return False


def _lock(fd: int, timeout_seconds: float) -> bool:
    """flock `fd`, waiting up to `timeout_seconds`; False when it stayed held (the server
    then migrates as it starts, as it would have without this)."""
    deadline = time.monotonic() + timeout_seconds
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(POLL_SECONDS)
