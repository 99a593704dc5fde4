"""Warehouse benchmark: publish warehouse.duckdb from a 1,000,000-observation SQLite ledger,
then time as-of queries on the built file.

The ledger is written straight into a migrated SQLite file (sqlite3 executemany, not ingest):
~2,000 items x 50 metrics, each (item, metric) told by three sources in five runs a month
apart: a yearly series, a second source's two figures, a third source's figure (a tenth with
a valid_to), then restatements that supersede two earlier rows and one new figure. Ten
observations per (item, metric), a fifth of them superseded; a dataset version per run and a
flag per item on the last one. Cached under /tmp/specledger-bench/ by row count.

Targets: publish <= 15 s, an as-of query <= 100 ms. Reports only, never fails on a target.
spec_as_of reads the resolved_span table the publish builds; spec_known_at resolves on the fly.

    python bench/warehouse_bench.py [--observations 1000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import duckdb

from db.engine import make_engine, upgrade
from db.schema import SOURCE_KINDS
from db.warehouse import WarehouseMeta, publish_warehouse
from db.warehouse_checks import declared_checks, run_checks
from models.resolve import SOURCE_KIND_RANK
from pipelines.inputs.catalog import load_metrics

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path("/tmp/specledger-bench")
BUILD_VERSION = 1  # bump when the generated ledger changes, to invalidate the cache
METRICS, PER_PAIR, RUNS = 50, 10, 5
FIRST_RUN = datetime(2026, 1, 5, 9, tzinfo=UTC)
PUBLISH_TARGET_S, QUERY_TARGET_MS = 15.0, 100.0
AS_OF = date(2024, 6, 30)
# (run, source slot, as_of, valid_to?) of the ten rows of each (item, metric); a row whose
# (slot, as_of) an earlier row already has restates it, superseding the earlier one.
PAIR_ROWS = ((0, 0, date(2021, 6, 30)), (0, 0, date(2022, 6, 30)), (0, 0, date(2023, 6, 30)),
             (0, 0, date(2024, 1, 15)), (1, 1, date(2023, 3, 1)), (1, 1, date(2024, 3, 1)),
             (2, 2, date(2024, 2, 1)), (3, 0, date(2024, 1, 15)), (4, 1, date(2024, 3, 1)),
             (4, 0, date(2025, 1, 15)))
# Index in PAIR_ROWS -> the run of the later row that restates (and so supersedes) it.
SUPERSEDED_IN = {n: next(run for run, *key in PAIR_ROWS[n + 1:] if tuple(key) == row[1:])
                 for n, row in enumerate(PAIR_ROWS)
                 if row[1:] in {later[1:] for later in PAIR_ROWS[n + 1:]}}


def _ts(moment: datetime) -> str:
    """A UTC time as SQLAlchemy stores it on SQLite (naive, microseconds)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")


def _run_at(run: int) -> datetime:
    return FIRST_RUN + timedelta(days=30 * run)


def _reference_rows(con: sqlite3.Connection, items: int) -> None:
    """Runs, raw files, sources (one per kind), items and the catalogue's first metrics."""
    for run in range(RUNS):
        at = _ts(_run_at(run))
        con.execute("insert into ingest_run values (?, ?, ?, 0, 0, 0, 0, 'bench')",
                    (run + 1, at, at))
        digest = hashlib.sha256(f"bench run {run}".encode()).hexdigest()
        con.execute("insert into raw_file values (?, ?, ?, 0, x'', ?)",
                    (run + 1, digest, f"run{run}.csv", at))
    con.executemany("insert into source values (?, ?, ?, 'Bench', ?, ?, ?, null, ?)",
                    [(n + 1, f"bench-{kind}", f"Bench {kind}", f"https://example.org/{kind}",
                      kind, date(2024, 1 + n, 1).isoformat(), _ts(FIRST_RUN))
                     for n, kind in enumerate(SOURCE_KINDS)])
    con.executemany("insert into item values (?, ?, ?, 'gpu', 'Bench', 'Bench', null, null)",
                    [(n + 1, f"gpu-{n:05d}", f"GPU {n}") for n in range(items)])
    catalog = sorted(load_metrics(ROOT / "data" / "catalog.yaml").values(), key=lambda m: m.key)
    con.executemany("insert into metric values (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [(n + 1, m.key, m.unit, m.counts, m.scope, m.direction, m.min_value,
                      m.max_value, m.description) for n, m in enumerate(catalog[:METRICS])])


def _observations(items: int, rng: random.Random) -> Iterator[tuple[object, ...]]:
    """Every observation row in id (recording) order, closed when later restated."""
    row_id = 0
    for run in range(RUNS):
        recorded = _ts(_run_at(run))
        for pair in range(items * METRICS):
            item, metric = divmod(pair, METRICS)
            slots = (pair % 8, (pair + 3) % 8, (pair + 5) % 8)
            for n, (row_run, slot, as_of) in enumerate(PAIR_ROWS):
                if row_run != run:
                    continue
                row_id += 1
                value = round(rng.uniform(10, 5000), 1)
                valid_to = (as_of + timedelta(days=365)).isoformat() \
                    if slot == 2 and pair % 10 == 0 else None
                superseded = _ts(_run_at(SUPERSEDED_IN[n])) if n in SUPERSEDED_IN else None
                yield (row_id, item + 1, metric + 1, slots[slot] + 1, value, value, value,
                       str(value), "GB/s", "reported", "CSU"[row_id % 3],
                       f"bench figure, run {run}", as_of.isoformat(), "day", valid_to,
                       recorded, superseded, run + 1, run + 1, row_id,
                       hashlib.sha256(str(row_id).encode()).hexdigest())


def build(path: Path, observations: int) -> int:
    """Write the ledger at `path`; returns the number of items."""
    items = max(1, observations // (METRICS * PER_PAIR))
    url = f"sqlite:///{path}"
    upgrade(url)
    con = sqlite3.connect(path)
    try:
        _reference_rows(con, items)
        con.executemany("insert into observation values "
                        "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        _observations(items, random.Random(20261122)))
        _versions_and_flags(con, items)
        con.commit()
    finally:
        con.close()
    return items


def _versions_and_flags(con: sqlite3.Connection, items: int) -> None:
    for run in range(RUNS):
        at = _ts(_run_at(run))
        live = con.execute("select count(*) from observation where recorded_at <= ? and "
                           "(superseded_at is null or superseded_at > ?)", (at, at)).fetchone()
        con.execute("insert into dataset_version values (?, ?, ?, ?, ?, ?)",
                    (run + 1, at, hashlib.sha256(at.encode()).hexdigest(), live[0], run + 1, at))
    first_rows = con.execute("select item_id, min(id) from observation where metric_id = 1 "
                             "group by item_id").fetchall()
    con.executemany("insert into flag values (?, ?, 'single_source', 'info', ?, ?, ?, null, "
                    "'bench flag', ?, 'bench', ?)",
                    [(item_id, RUNS, f"gpu-{item_id - 1:05d} / m1", f"gpu-{item_id - 1:05d}",
                      None, json.dumps([first]), _ts(_run_at(RUNS - 1)))
                     for item_id, first in first_rows])
    assert len(first_rows) == items


def ledger(observations: int) -> Path:
    """The cached ledger for this size, built when missing."""
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"warehouse-v{BUILD_VERSION}-{observations}.sqlite"
    if path.exists():
        print(f"ledger: cached {path}")
        return path
    print(f"ledger: building {path}")
    partial = path.with_suffix(".building")
    partial.unlink(missing_ok=True)
    started = time.perf_counter()
    build(partial, observations)
    os.replace(partial, path)
    print(f"  built in {time.perf_counter() - started:.1f} s")
    return path


def timed(fn: Callable[[], object], repeat: int) -> tuple[list[float], object]:
    """Milliseconds of each of `repeat` calls after one warm-up call, and the last result."""
    result = fn()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - started) * 1000)
    return times, result


def report(name: str, times_ms: list[float], target_ms: float) -> None:
    worst = max(times_ms)
    verdict = "PASS" if worst <= target_ms else "MISS"
    print(f"  {name:<52} median {statistics.median(times_ms):8.1f} ms  max {worst:8.1f} ms"
          f"  target <= {target_ms:g} ms  {verdict}")


def publish(path: Path, target: Path, repeat: int) -> None:
    engine = make_engine(f"sqlite:///{path}")
    cutoff = _run_at(RUNS - 1)
    meta = WarehouseMeta(RUNS, "0" * 64, cutoff, date(2026, 6, 1), cutoff, "bench")
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        publish_warehouse(engine, target, meta, SOURCE_KIND_RANK)
        times.append(time.perf_counter() - started)
    engine.dispose()
    print(f"\npublish_warehouse x {repeat}: median {statistics.median(times):.2f} s, "
          f"max {max(times):.2f} s, target <= {PUBLISH_TARGET_S:g} s  "
          f"{'PASS' if max(times) <= PUBLISH_TARGET_S else 'MISS'}"
          f"   ({target.stat().st_size / 2**20:.0f} MiB)")


def queries(target: Path, items: int, repeat: int) -> None:
    con = duckdb.connect(str(target), read_only=True)
    rng = random.Random(7)
    try:
        observations, = con.execute("select count(*) from observation").fetchone()
        print(f"\nas-of queries on {target.name} ({observations:,} observations), "
              f"{repeat} runs each after a warm-up")
        item = f"gpu-{rng.randrange(items):05d}"
        cases = {
            f"spec_as_of(DATE '{AS_OF}') where item = '{item}'":
                f"select * from spec_as_of(DATE '{AS_OF}') where item = '{item}'",
            f"count(*) from spec_as_of(DATE '{AS_OF}')":
                f"select count(*) from spec_as_of(DATE '{AS_OF}')",
            # Every column read, so nothing of the resolution can be pruned away.
            f"sum(value), max(len(quote)) from spec_as_of(DATE '{AS_OF}')":
                f"select count(*), sum(value), max(len(quote)), max(recorded_at), "
                f"sum(alternatives) from spec_as_of(DATE '{AS_OF}')",
            f"spec_known_at(TIMESTAMP '{_run_at(2):%Y-%m-%d %H:%M}') where item = ...":
                f"select * from spec_known_at(TIMESTAMP '{_run_at(2):%Y-%m-%d %H:%M}') "
                f"where item = '{item}'",
            f"count(*) from spec_known_at(TIMESTAMP '{_run_at(2):%Y-%m-%d %H:%M}')":
                f"select count(*) from spec_known_at(TIMESTAMP '{_run_at(2):%Y-%m-%d %H:%M}')",
            "sum(value), max(len(quote)) from spec_known_at(...)":
                f"select count(*), sum(value), max(len(quote)), max(recorded_at), "
                f"sum(alternatives) from spec_known_at(TIMESTAMP '{_run_at(2):%Y-%m-%d %H:%M}')",
            "count(*) from current_value": "select count(*) from current_value",
        }
        for name, sql in cases.items():
            times, rows = timed(lambda sql=sql: con.execute(sql).fetchall(), repeat)
            count = len(rows) if sql.startswith("select *") else rows[0][0]
            report(f"{name} ({count:,} rows)", times, QUERY_TARGET_MS)
        differ = con.execute(
            f"select (select count(*) from (from spec_as_of(DATE '{AS_OF}') except all "
            f"from value_as_of(DATE '{AS_OF}', (select cutoff_at from meta)))) + "
            f"(select count(*) from (from value_as_of(DATE '{AS_OF}', (select cutoff_at from "
            f"meta)) except all from spec_as_of(DATE '{AS_OF}')))").fetchall()[0][0]
        print(f"\nspec_as_of (resolved_span) vs value_as_of at the cut-off: {differ} rows differ")
        times, failures = timed(lambda: run_checks(con), 1)
        print(f"{len(declared_checks())} declared checks (run by every publish): "
              f"{times[0]:.0f} ms, {len(failures)} failing")
    finally:
        con.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--observations", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3, help="publishes and query runs")
    args = parser.parse_args()
    path = ledger(args.observations)
    items = max(1, args.observations // (METRICS * PER_PAIR))
    print(f"  {args.observations:,} observations: {items:,} items x {METRICS} metrics x "
          f"{PER_PAIR} rows, {RUNS} runs; {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="specledger-warehouse-bench-") as tmp:
        target = Path(tmp) / "warehouse.duckdb"
        publish(path, target, args.repeat)
        queries(target, items, max(args.repeat, 5))


if __name__ == "__main__":
    main()
