"""Create or drop the throwaway PostgreSQL database the test run uses, and reset it fast.

    python -m tests.pg_database create|drop ADMIN_URL NAME
Fails with a clear message when the server cannot be reached: CI must exercise PostgreSQL.

`reset_to_empty_head(url)` gives a test an empty ledger at head without running the Alembic
chain again: when the schema is exactly the one the chain left at head earlier in this session
(a fingerprint of the catalogue and alembic_version), it empties the tables that hold rows and
restarts the sequences; otherwise (a test changed the schema) it drops the schema and migrates.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import psycopg
from psycopg import sql
from sqlalchemy.engine import make_url


def main(action: str, admin_url: str, name: str) -> int:
    try:
        with psycopg.connect(admin_url, autocommit=True, connect_timeout=10) as conn:
            if action == "create":
                conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
            else:
                conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)")
                             .format(sql.Identifier(name)))
    except psycopg.OperationalError as exc:
        sys.stderr.write(f"PostgreSQL is required for the tests and is unreachable at "
                         f"{admin_url}: {exc}\n(start it with: pg_ctlcluster --skip-systemctl-"
                         f"redirect $(ls /etc/postgresql) main start)\n")
        return 1
    return 0


def plain(url: str) -> str:
    """`url` as libpq reads it (no SQLAlchemy driver suffix)."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


# Everything in the public schema a migration makes or a test could change, as sorted text.
_FINGERPRINT = """
select md5(coalesce(string_agg(x, E'\\n' order by x), '')) from (
  select 'column ' || table_name || '.' || column_name || ' ' || data_type || ' '
         || is_nullable || ' ' || coalesce(column_default, '') as x
    from information_schema.columns where table_schema = 'public'
  union all select 'index ' || indexdef from pg_indexes where schemaname = 'public'
  union all select 'constraint ' || conrelid::regclass::text || ' ' || conname || ' '
                   || pg_get_constraintdef(oid)
    from pg_constraint where connamespace = 'public'::regnamespace
  union all select 'view ' || viewname || ' ' || definition
    from pg_views where schemaname = 'public'
  union all select 'function ' || oid::regprocedure::text
    from pg_proc where pronamespace = 'public'::regnamespace
  union all select 'trigger ' || tgname from pg_trigger t join pg_class c on c.oid = t.tgrelid
    where c.relnamespace = 'public'::regnamespace and not t.tgisinternal
  union all select 'sequence ' || sequencename from pg_sequences where schemaname = 'public'
  union all select 'type ' || typname from pg_type
    where typnamespace = 'public'::regnamespace and typrelid = 0
) as catalogue
"""

# url -> (fingerprint, alembic revision) of the schema the real chain left at head
_HEAD: dict[str, tuple[str, list[tuple[str, ...]]]] = {}


def _state(conn: psycopg.Connection) -> tuple[str, list[tuple[str, ...]]] | None:
    fingerprint = conn.execute(_FINGERPRINT).fetchone()[0]
    if not conn.execute("select to_regclass('public.alembic_version')").fetchone()[0]:
        return None
    return fingerprint, conn.execute("select version_num from alembic_version "
                                     "order by 1").fetchall()


def _empty(conn: psycopg.Connection) -> None:
    """Empty every table but alembic_version (only those holding rows: TRUNCATE costs a new
    file per table) and restart every used sequence, as on a freshly migrated ledger."""
    tables = [name for (name,) in conn.execute(
        "select tablename from pg_tables where schemaname = 'public' "
        "and tablename <> 'alembic_version' order by 1")]
    if tables:
        probe = sql.SQL(" union all ").join(
            sql.SQL("(select {} where exists (select from {}))").format(
                sql.Literal(name), sql.Identifier(name)) for name in tables)
        full = [name for (name,) in conn.execute(probe)]
        if full:
            conn.execute(sql.SQL("truncate {} restart identity cascade").format(
                sql.SQL(", ").join(map(sql.Identifier, full))))
    conn.execute("select setval(format('%I.%I', schemaname, sequencename)::regclass, "
                 "start_value, false) from pg_sequences "
                 "where schemaname = 'public' and last_value is not null")


def drop_schema(url: str) -> None:
    with psycopg.connect(plain(url), autocommit=True) as conn:
        conn.execute("drop schema public cascade")
        conn.execute("create schema public")


def reset_to_empty_head(url: str, migrate: Callable[[str], object]) -> None:
    """An empty ledger at head in the database at `url`; `migrate(url)` runs the chain the
    first time in this session and whenever the schema is not the one it left."""
    with psycopg.connect(plain(url), autocommit=True) as conn:
        state = _state(conn)
        if state is not None and state == _HEAD.get(url):
            _empty(conn)
            return
    drop_schema(url)
    migrate(url)
    with psycopg.connect(plain(url), autocommit=True) as conn:
        state = _state(conn)
    assert state is not None, "the migrations left no alembic_version"
    _HEAD[url] = state


@contextmanager
def extra_database(url: str, suffix: str) -> Iterator[str]:
    """An empty database named after `url`'s plus `suffix`, on the same server, dropped
    afterwards; yields its URL (same driver as `url`)."""
    parsed = make_url(url)
    name = f"{parsed.database}_{suffix}"[:63]
    main("create", plain(url), name)
    try:
        yield parsed.set(database=name).render_as_string(hide_password=False)
    finally:
        main("drop", plain(url), name)


@contextmanager
def copied_database(url: str, suffix: str) -> Iterator[str]:
    """A copy of the database at `url` (nobody may be connected to it meanwhile: PostgreSQL
    copies it as a template), named after it plus `suffix`, dropped afterwards; yields its
    URL (same driver as `url`)."""
    parsed = make_url(url)
    name = f"{parsed.database}_{suffix}"[:63]
    with psycopg.connect(plain(url), autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
            sql.Identifier(name)))
        conn.execute(sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
            sql.Identifier(name), sql.Identifier(parsed.database)))
    try:
        yield parsed.set(database=name).render_as_string(hide_password=False)
    finally:
        main("drop", plain(url), name)


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
