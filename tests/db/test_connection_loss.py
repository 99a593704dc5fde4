"""Which database errors mean "the connection was lost, retry the transaction"."""

from __future__ import annotations

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from db.engine import LedgerBusyError, is_connection_lost, make_engine


def error_of(engine, sql: str) -> DBAPIError:
    with pytest.raises(DBAPIError) as caught, engine.connect() as conn:
        conn.execute(text(sql))
    return caught.value


def test_a_server_that_is_not_there_is_a_lost_connection():
    engine = make_engine("postgresql://postgres@127.0.0.1:1/nowhere")
    assert is_connection_lost(error_of(engine, "SELECT 1"))
    engine.dispose()


def test_a_server_that_ends_our_session_is_a_lost_connection(ledger_url):
    if not ledger_url.startswith("postgresql"):
        pytest.skip("pg_terminate_backend is PostgreSQL's")
    engine = make_engine(ledger_url)
    with engine.connect() as victim:
        pid = victim.execute(text("SELECT pg_backend_pid()")).scalar()
        with engine.connect() as admin:
            admin.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
        with pytest.raises(DBAPIError) as caught:
            victim.execute(text("SELECT 1"))
    assert is_connection_lost(caught.value)
    engine.dispose()


def test_bad_sql_and_a_busy_ledger_are_not_retried(ledger_url, tmp_path):
    engine = make_engine(ledger_url)
    assert not is_connection_lost(error_of(engine, "SELECT * FROM no_such_table"))
    assert not is_connection_lost(LedgerBusyError("busy"))
    assert not is_connection_lost(ValueError("not a database error"))
    engine.dispose()
