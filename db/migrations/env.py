"""Alembic environment: one dialect-neutral chain for SQLite (batch mode) and PostgreSQL.

The URL comes from `-x url=...`, else SPECLEDGER_DATABASE_URL, else the config's own
`sqlalchemy.url` (set by db.engine.alembic_config).
"""

from __future__ import annotations

import os

from alembic import context
from sqlalchemy import Connection, create_engine, pool

from db.engine import normalize_url
from db.schema import Base

config = context.config


def _configured_url() -> str | None:
    try:
        return config.get_main_option("sqlalchemy.url")
    except Exception:  # the `alembic` CLI reads pyproject.toml and has no ini file to ask
        return None


url = (
    context.get_x_argument(as_dictionary=True).get("url")
    or _configured_url()
    or os.environ.get("SPECLEDGER_DATABASE_URL")
)
if not url:
    raise SystemExit("no database URL: pass -x url=... or set SPECLEDGER_DATABASE_URL")


def run_migrations_online() -> None:
    # db.engine.upgrade passes its connection, inside the transaction that holds the
    # ledger's write lock (and waits for it as long as every writer does).
    given = config.attributes.get("connection")
    if given is not None:
        _run_migrations(given)
        return
    engine = create_engine(normalize_url(url), poolclass=pool.NullPool)
    with engine.connect() as connection:
        _run_migrations(connection)
    engine.dispose()


def _run_migrations(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():  # a no-op inside the caller's transaction
        context.run_migrations()


if context.is_offline_mode():
    context.configure(url=url, target_metadata=Base.metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()
else:
    run_migrations_online()
