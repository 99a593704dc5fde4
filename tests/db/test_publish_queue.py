"""Publishers of one warehouse queue on its lock, and never put an older version over a newer
one (in-process; tests/deploy/test_concurrent_writers.py runs real `specledger` processes)."""

from __future__ import annotations

import dataclasses
import threading
import time
from datetime import date, timedelta
from pathlib import Path

import duckdb
import pytest

from db.engine import Engine, Session
from db.queries import dataset_version
from db.warehouse import (
    Published,
    WarehouseBusyError,
    WarehouseMeta,
    publish_version,
)
from db.warehouse_lock import holder_name, lock_path, publish_lock
from models.resolve import SOURCE_KIND_RANK
from tests.conftest import NVLINK_PACK


@pytest.fixture
def out(tmp_path: Path) -> Path:
    """The folder the warehouse is published into."""
    (tmp_path / "out").mkdir()
    return tmp_path / "out"


@pytest.fixture
def versions(ledger, ingest, write_pack, clock) -> list[WarehouseMeta]:
    """Two dataset versions of the ledger, as the metas their publishes would carry."""
    metas = []
    for n, value in enumerate(("1.8", "1.9")):
        clock.tick()
        report = ingest(write_pack(f"v{n}.yaml", NVLINK_PACK.replace("value: 1.8,",
                                                                     f"value: {value},")))
        with Session(ledger) as session:
            version = dataset_version(session, report.dataset_version)
            metas.append(WarehouseMeta(version.id, version.content_hash, version.cutoff_at,
                                       date(2026, 11, 22), clock.tick(), "test"))
    return metas


def publish(ledger: Engine, target: Path, meta: WarehouseMeta, **options) -> Published:
    return publish_version(ledger, target, meta, SOURCE_KIND_RANK, **options)


def held_version(target: Path) -> int:
    with duckdb.connect(str(target), read_only=True) as con:
        return con.execute("select dataset_version from meta").fetchone()[0]


def test_an_older_version_is_never_published_over_a_newer_one(ledger, versions, out):
    older, newer = versions
    target = out / "warehouse.duckdb"
    assert publish(ledger, target, newer).outcome == "built"

    left = publish(ledger, target, older)

    assert (left.outcome, left.held_version) == ("newer_held", newer.dataset_version)
    assert left.describe() == (f"holds dataset version {newer.dataset_version}, newer than "
                               f"{older.dataset_version}: left as it is")
    assert held_version(target) == newer.dataset_version


def test_a_newer_version_of_another_ledger_is_published_over(ledger, versions, out):
    older, newer = versions
    target = out / "warehouse.duckdb"
    stranger = WarehouseMeta(newer.dataset_version + 5, "f" * 64, newer.cutoff_at,
                             newer.as_of, newer.built_at, "test")
    publish(ledger, target, newer)
    with duckdb.connect(str(target)) as con:  # as if another ledger had built it
        con.execute("update meta set dataset_version = ?, dataset_hash = ?",
                    [stranger.dataset_version, stranger.dataset_hash])

    assert publish(ledger, target, older).outcome == "built"
    assert held_version(target) == older.dataset_version


def test_a_publisher_waits_for_another_and_says_for_whom(ledger, versions, out):
    _, newer = versions
    target = out / "warehouse.duckdb"
    with publish_lock(target, timeout_seconds=5):
        results: list[Published] = []
        worker = threading.Thread(target=lambda: results.append(
            publish(ledger, target, newer, lock_timeout_seconds=10)))
        worker.start()
        time.sleep(0.5)
        assert worker.is_alive()  # queued behind the lock we hold
    worker.join(timeout=60)

    (done,) = results
    # It waited and says so; not for how long (a loaded machine can reach the lock late).
    assert done.outcome == "built" and done.wait.waited and done.wait.seconds > 0
    assert done.wait.holder == holder_name()
    assert done.describe().startswith(
        f"rebuilt for dataset version {newer.dataset_version}; waited ")
    assert not lock_path(target).exists()  # an idle warehouse has no lock file


def test_a_version_published_while_waiting_is_not_built_again(ledger, versions, out):
    _, newer = versions
    target = out / "warehouse.duckdb"
    asked = newer.built_at
    with publish_lock(target, timeout_seconds=5):
        results: list[Published] = []
        worker = threading.Thread(target=lambda: results.append(
            publish(ledger, target, newer, lock_timeout_seconds=10)))
        worker.start()
        # What the publisher we wait for does: build the same version, asked for later.
        later = dataclasses.replace(newer, built_at=asked + timedelta(seconds=1))
        with duckdb.connect(str(target)) as con:
            con.execute("create table meta as select ?::bigint as dataset_version, "
                        "?::varchar as dataset_hash, ?::timestamptz as built_at",
                        [later.dataset_version, later.dataset_hash, later.built_at])
    worker.join(timeout=60)

    (done,) = results
    assert done.outcome == "already_published"
    assert "published by another run while this one waited" in done.describe()


def test_a_publisher_gives_up_after_the_timeout_naming_the_holder(ledger, versions, out):
    target = out / "warehouse.duckdb"
    with publish_lock(target, timeout_seconds=5), \
            pytest.raises(WarehouseBusyError) as raised:
        publish(ledger, target, versions[1], lock_timeout_seconds=0.3)
    assert raised.value.filename == str(target)
    assert raised.value.strerror == (f"was being published by {holder_name()} for more than "
                                     "0.3 s; try again when it has finished")
    assert not target.exists()


def test_temporary_files_of_a_killed_publisher_are_removed(ledger, versions, out):
    target = out / "warehouse.duckdb"
    leftovers = [out / "warehouse.duckdb.4242-deadbeef.tmp",
                 out / "warehouse.duckdb.4242-deadbeef.tmp.wal",
                 out / "warehouse.duckdb.tmp"]  # the name before publishers queued
    for leftover in leftovers:
        leftover.write_bytes(b"half a warehouse")

    publish(ledger, target, versions[1])

    assert sorted(p.name for p in out.iterdir()) == ["warehouse.duckdb"]
