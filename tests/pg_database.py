"""Create or drop the throwaway PostgreSQL database the test run uses.

    python -m tests.pg_database create|drop ADMIN_URL NAME
Fails with a clear message when the server cannot be reached: CI must exercise PostgreSQL.
"""

from __future__ import annotations

import sys

import psycopg
from psycopg import sql


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


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
