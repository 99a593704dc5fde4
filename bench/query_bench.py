"""Query benchmark: `resolved_value` (valid on D, as known at T) on a 1,000,000-row ledger.

The ledger is built through `ingest_paths` in six runs a month apart: four append new facts,
two restate facts from the same sources with changed values, which supersedes the earlier
rows; about a tenth of the rows also carry a valid_to. So both clocks matter. The database is
cached under /tmp/specledger-bench/ by row count; a second run skips the build.

    python bench/query_bench.py [--rows 1000000]
"""

from __future__ import annotations

import argparse
import csv
import os
import random
import statistics
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from ingest_bench import CATALOG, HEADER, METRICS, SOURCE_KINDS, _value
from sqlalchemy import event, func, select

from db.engine import Engine, Session, make_engine, upgrade
from db.schema import Observation
from pipelines.inputs.catalog import load_metrics
from pipelines.jobs.ingest import ingest_paths
from pipelines.ledger.resolved import resolved_value

CACHE = Path("/tmp/specledger-bench")
BUILD_VERSION = 3  # bump when the generated data changes, to invalidate the cache
SOURCES, DAYS, LAST_DAY = 40, 3650, date(2025, 12, 31)
FILE_ROWS = 50_000
FIRST_RUN = datetime(2026, 1, 1, 9, tzinfo=UTC)
# Share of all rows per run: four runs of new facts, then two runs of restated facts.
RUNS = (("new", 0.20), ("new", 0.20), ("new", 0.15), ("new", 0.15), ("restate", 0.20),
        ("restate", 0.10))
QUERIES, TARGET_MS = 200, 50.0


def _run_at(run_no: int) -> datetime:
    return FIRST_RUN + timedelta(days=30 * run_no)


def _pack_rows(rng: random.Random, idents: list[tuple[int, int]],
               run_no: int) -> list[list[str]]:
    """CSV rows for (source, identity) pairs; an identity encodes (item, metric, as_of).

    The quote names the run, so a restated fact always differs and supersedes."""
    metrics = sorted(METRICS)
    rows = []
    for source_no, ident in idents:
        item_no, rest = divmod(ident, len(metrics) * DAYS)
        metric_no, day = divmod(rest, DAYS)
        value, unit = _value(rng, metrics[metric_no])
        as_of = LAST_DAY - timedelta(days=day)
        valid_to = as_of + timedelta(days=365) if ident % 10 == 0 else None
        source = f"query-src-{source_no:02d}"
        rows.append([source, f"Bench source {source}",
                     SOURCE_KINDS[source_no % len(SOURCE_KINDS)],
                     (LAST_DAY - timedelta(days=source_no * 50)).isoformat(),
                     f"gpu-{item_no:05d}", f"GPU {item_no}", "gpu", metrics[metric_no], value,
                     unit, as_of.isoformat(), rng.choice("CSU"),
                     f"stated in run {run_no}",
                     valid_to.isoformat() if valid_to else ""])
    return rows


def build(path: Path, rows: int) -> int:
    """Build the ledger at `path` through ingest_paths; return the number of items."""
    rng = random.Random(20261122)
    items = max(10, rows // 500)  # about 100 rows per (item, metric)
    space = items * len(METRICS) * DAYS
    per_source = -(-int(rows * sum(s for k, s in RUNS if k == "new")) // SOURCES)
    fresh = [rng.sample(range(space), per_source) for _ in range(SOURCES)]
    stated: list[tuple[int, int]] = []
    url, metrics = f"sqlite:///{path}", load_metrics(CATALOG)
    upgrade(url)
    engine = make_engine(url)
    with tempfile.TemporaryDirectory(prefix="specledger-query-bench-") as tmp:
        for run_no, (kind, share) in enumerate(RUNS):
            count = int(rows * share) if run_no < len(RUNS) - 1 else rows - _count(engine)
            if kind == "new":
                idents = [(s, fresh[s].pop()) for s in range(SOURCES) for _ in
                          range(min(len(fresh[s]), -(-count // SOURCES)))][:count]
                stated.extend(idents)
            else:
                idents = rng.sample(stated, count)
            paths = []
            for start in range(0, len(idents), FILE_ROWS):
                paths.append(Path(tmp) / f"run{run_no}-{start // FILE_ROWS:03d}.csv")
                with paths[-1].open("w", newline="", encoding="utf-8") as handle:
                    writer = csv.writer(handle)
                    writer.writerow((*HEADER, "valid_to"))
                    writer.writerows(_pack_rows(rng, idents[start : start + FILE_ROWS],
                                                run_no))
            started = time.perf_counter()
            report = ingest_paths(engine, paths, metrics=metrics, today=date.today(),
                                  now=lambda run_no=run_no: _run_at(run_no),
                                  code_version="bench")
            assert report.total("rejected") == 0, [f.errors[:3] for f in report.files]
            print(f"  run {run_no} ({kind}): {report.total('accepted'):,} accepted, "
                  f"{report.total('superseded'):,} superseded, "
                  f"{time.perf_counter() - started:.1f} s")
            for path_done in paths:
                path_done.unlink()
    engine.dispose()
    return items


def _count(engine: Engine) -> int:
    with Session(engine) as session:
        return session.scalar(select(func.count()).select_from(Observation)) or 0


def explain(engine: Engine, item: str, metric: str, on: date, known: datetime) -> list[str]:
    """EXPLAIN QUERY PLAN of the exact SQL that resolved_value sends (captured by an event)."""
    captured: list[tuple[str, Any]] = []

    def _capture(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        captured.append((statement, parameters))

    event.listen(engine, "before_cursor_execute", _capture)
    try:
        with Session(engine) as session:
            resolved_value(session, item, metric, on=on, known=known)
    finally:
        event.remove(engine, "before_cursor_execute", _capture)
    statement, parameters = captured[-1]
    raw = engine.raw_connection()
    try:
        plan = raw.cursor().execute(f"EXPLAIN QUERY PLAN {statement}", parameters).fetchall()
    finally:
        raw.close()
    return [" ".join(statement.split()), *(f"  {row[-1]}" for row in plan)]


def main() -> None:
    """Build or reuse the ledger, time the queries and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"query-v{BUILD_VERSION}-{args.rows}.sqlite"
    items = max(10, args.rows // 500)
    if path.exists():
        print(f"ledger: cached {path}")
    else:
        print(f"ledger: building {path} ({args.rows:,} rows)")
        partial = path.with_suffix(".building")
        partial.unlink(missing_ok=True)
        started = time.perf_counter()
        items = build(partial, args.rows)
        os.replace(partial, path)
        print(f"  built in {time.perf_counter() - started:.1f} s")
    engine = make_engine(f"sqlite:///{path}")
    with Session(engine) as session:
        total = session.scalar(select(func.count()).select_from(Observation))
        closed = session.scalar(select(func.count()).select_from(Observation)
                                .where(Observation.superseded_at.is_not(None)))
    assert total == args.rows, f"{path} holds {total:,} observations, not {args.rows:,}"
    print(f"  {total:,} observations, {closed:,} superseded, {items:,} items x "
          f"{len(METRICS)} metrics")
    rng = random.Random(7)
    queries = [(f"gpu-{rng.randrange(items):05d}", rng.choice(sorted(METRICS)),
                LAST_DAY - timedelta(days=rng.randrange(DAYS)),
                _run_at(0) + timedelta(hours=rng.randrange(24 * 30 * len(RUNS))))
               for _ in range(QUERIES + 1)]
    times_ms, found, candidates = [], 0, 0
    with Session(engine) as session:
        for n, (item, metric, on, known) in enumerate(queries):
            started = time.perf_counter()
            result = resolved_value(session, item, metric, on=on, known=known)
            elapsed = (time.perf_counter() - started) * 1000
            if n == 0:
                continue  # warm-up: statement compilation and page cache
            times_ms.append(elapsed)
            if result is not None:
                found += 1
                candidates += len(result.rows)
    times_ms.sort()
    p95 = times_ms[max(0, int(len(times_ms) * 0.95) - 1)]
    print(f"\nresolved_value x {QUERIES} ({found} resolved, "
          f"{candidates / max(found, 1):.1f} live candidates on average)")
    for name, value in (("median", statistics.median(times_ms)), ("p95", p95),
                        ("max", times_ms[-1])):
        verdict = "PASS" if value <= TARGET_MS else "MISS"
        print(f"  {name:<7}{value:>9.2f} ms   target <= {TARGET_MS:g} ms   {verdict}")
    print("RESULT: " + ("PASS" if times_ms[-1] <= TARGET_MS else
                        "MISS (at least one query over the target)"))
    print("\nEXPLAIN QUERY PLAN of the candidates query:")
    print("\n".join(explain(engine, *queries[1])))
    engine.dispose()


if __name__ == "__main__":
    main()
