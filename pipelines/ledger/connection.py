"""The ledger's connection for every command and job: migrate it, connect to it, and the two
clocks a command reads (now, and the code version that stamps what it writes).

Light on purpose: the CLI imports this for `specledger value` without Prefect, WeasyPrint,
pandas or (on a current ledger) Alembic.
"""

from __future__ import annotations

from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version

from db.engine import Engine, LockWait, make_engine, upgrade
from pipelines.settings import Settings


def code_version() -> str:
    try:
        return version("specledger")
    except PackageNotFoundError:  # running from a source tree that was not installed
        return "0+unknown"


def utc_now() -> datetime:
    return datetime.now(UTC)


def open_ledger(settings: Settings) -> Engine:
    """Migrate the ledger to the current schema and return an engine on it."""
    migrate_ledger(settings)
    return connect_ledger(settings)


def migrate_ledger(settings: Settings) -> LockWait:
    """Bring the ledger to the current schema, waiting for other writers as long as a write
    does (SPECLEDGER_LOCK_TIMEOUT_SECONDS); returns how long that was."""
    return upgrade(settings.resolved_database_url,
                   lock_timeout_seconds=settings.lock_timeout_seconds)


def connect_ledger(settings: Settings) -> Engine:
    """An engine on a ledger that is already migrated (readers after an ingest)."""
    return make_engine(settings.resolved_database_url, settings.lock_timeout_seconds)
