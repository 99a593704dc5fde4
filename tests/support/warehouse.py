"""A warehouse published from a test ledger, as the jobs publish it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime
from pathlib import Path

from db.engine import Engine, Session
from db.queries import dataset_version
from db.warehouse import WarehouseMeta, publish_warehouse
from models.resolve import SOURCE_KIND_RANK


def publish_test_warehouse(ledger: Engine, version_id: int, target: Path, on: date,
                           now: Callable[[], datetime]) -> Path:
    """Publish dataset version `version_id` of `ledger` to `target` (as of `on`, built at
    `now()`), its checks run; the file's path."""
    with Session(ledger) as session:
        version = dataset_version(session, version_id)
        meta = WarehouseMeta(version.id, version.content_hash, version.cutoff_at, on, now(),
                             "test")
    return publish_warehouse(ledger, target, meta, SOURCE_KIND_RANK)
