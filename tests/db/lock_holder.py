"""Another writer holding the ledger's write lock for a while, as a long first write does."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from db.engine import LEDGER_LOCK_KEY, normalize_url

HOLDER_NAME = "test lock holder"


@contextmanager
def lock_held(url: str, seconds: float, *, exclusive: bool = False) -> Iterator[None]:
    """From entry, a thread holds the ledger's lock for `seconds`, then commits. SQLite:
    BEGIN IMMEDIATE (readers go on), or with `exclusive` BEGIN EXCLUSIVE (readers wait too,
    as while a large write spills its cache or commits). PostgreSQL: the engine's advisory
    lock, in a session named HOLDER_NAME."""
    taken, failures = threading.Event(), []

    def hold() -> None:
        try:
            if url.startswith("sqlite"):
                conn = sqlite3.connect(make_url(url).database, isolation_level=None)
                conn.execute("BEGIN EXCLUSIVE" if exclusive else "BEGIN IMMEDIATE")
                taken.set()
                time.sleep(seconds)
                conn.execute("COMMIT")
                conn.close()
                return
            engine = create_engine(normalize_url(url),
                                   connect_args={"application_name": HOLDER_NAME})
            with engine.begin() as conn:
                conn.execute(text("SELECT pg_advisory_xact_lock(:key)"),
                             {"key": LEDGER_LOCK_KEY})
                taken.set()
                time.sleep(seconds)
            engine.dispose()
        except BaseException as exc:  # reported by the test, not lost in the thread
            failures.append(exc)
            taken.set()

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    assert taken.wait(30), "the lock was never taken"
    try:
        if failures:
            raise failures[0]
        yield
    finally:
        thread.join()
    if failures:
        raise failures[0]
