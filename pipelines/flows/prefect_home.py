"""Prefect's local state for `specledger run`: its database migrated by one process at a time.

Without PREFECT_API_URL, each `specledger run` starts Prefect's temporary server, which
migrates the SQLite database under PREFECT_HOME (the home's `.prefect/`) as it starts. Two
first runs of a home at once migrate it together and one fails (`duplicate column name`),
so the first migration is done here, under a file lock, and remembered by a marker file:
later servers find the database at head.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import time
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
            from prefect.server.database import provide_database_interface

            # What the server does as it starts (Alembic runs in a worker thread of a loop).
            asyncio.run(provide_database_interface().create_db())
            marker.touch()
    finally:
        os.close(fd)  # releases the lock


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
