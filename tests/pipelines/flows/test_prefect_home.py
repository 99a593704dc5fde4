"""A home's Prefect database: migrated once, by one run, and a new home starts from the copy
the first one left in the cache instead of migrating again. Each home is migrated by a process
of its own, as `specledger run` does it: Prefect reads PREFECT_HOME once, when it is imported."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import prefect
import pytest

from pipelines.settings import PROJECT_ROOT

pytestmark = pytest.mark.slow(seconds=18)   # a cold migration of Prefect's database each

MIGRATE = "from pipelines.flows.prefect_home import migrate_prefect_home; migrate_prefect_home(60)"


def migrate(home: Path, cache: Path) -> None:
    home.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("PREFECT_API_URL", "PREFECT_API_DATABASE_CONNECTION_URL")}
    subprocess.run([sys.executable, "-c", MIGRATE], check=True, cwd=PROJECT_ROOT, timeout=300,
                   env={**env, "PREFECT_HOME": str(home), "SPECLEDGER_CACHE_DIR": str(cache)})


def head(database: Path) -> list[tuple[str]]:
    with closing(sqlite3.connect(database)) as db:
        return db.execute("select version_num from alembic_version").fetchall()


def test_the_first_home_migrates_and_the_next_starts_from_its_copy(tmp_path):
    cache = tmp_path / "cache"
    migrate(tmp_path / "first", cache)
    template = cache / f"prefect-{prefect.__version__}.db"
    assert template.is_file() and head(template) == head(tmp_path / "first" / "prefect.db")
    assert head(template) != []
    assert not template.with_name(template.name + "-wal").exists()   # a standalone file

    migrate(tmp_path / "second", cache)
    assert head(tmp_path / "second" / "prefect.db") == head(template)
    assert (tmp_path / "second" / f"specledger-migrated-{prefect.__version__}").exists()
    assert list(cache.iterdir()) == [template]                         # no partial copies


def test_a_cache_that_cannot_be_written_only_costs_the_migration(tmp_path):
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache folder should be")
    migrate(tmp_path / "home", blocked)
    assert head(tmp_path / "home" / "prefect.db") != []
    assert (tmp_path / "home" / f"specledger-migrated-{prefect.__version__}").exists()
