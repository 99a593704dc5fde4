"""Ingest benchmark: N valid observations as CSV packs into a fresh SQLite ledger.

Times a first ingest (target <= 10 s for 100,000 rows), a plain sqlite3 executemany of the
same rows as a floor, and a re-ingest of the same files (all unchanged; target <= 1 s).
Reports only: the exit code is 0 even when a target is missed.

    python bench/ingest_bench.py [--rows 100000] [--files 10]
"""

from __future__ import annotations

import argparse
import csv
import random
import sqlite3
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from db.engine import make_engine, upgrade
from pipelines.inputs.catalog import load_metrics
from pipelines.jobs.ingest import IngestReport, ingest_paths

ROOT = Path(__file__).resolve().parent.parent
CATALOG = ROOT / "data" / "catalog.yaml"
HEADER = ("source", "source_title", "source_kind", "source_published_on", "item", "item_name",
          "item_kind", "metric", "value", "unit", "as_of", "status", "quote")
SOURCE_KINDS = ("vendor_datasheet", "vendor_press", "standard_body", "dataset", "analyst",
                "measurement", "secondary_press", "derived")
# metric -> (canonical unit, other unit, factor other -> canonical, canonical low, high)
METRICS = {
    "tdp": ("W", "kW", 1000.0, 200, 1500),
    "scaleup_bw_per_gpu_bidir": ("GB/s", "TB/s", 1000.0, 100, 3600),
    "hbm_bandwidth": ("TB/s", "GB/s", 0.001, 1, 8),
    "port_rate": ("Gb/s", "Tb/s", 1000.0, 100, 1600),
    "gpu_price": ("USD", "USD", 1.0, 1000, 50000),
}
ITEMS = 1000
DAYS = 3650  # as_of spread: ten years ending 2025-12-31
LAST_DAY = date(2025, 12, 31)
SOURCES_PER_FILE = 4
TARGET_INGEST_S, TARGET_REINGEST_S = 10.0, 1.0
BASELINE_DDL = ("CREATE TABLE obs (id INTEGER PRIMARY KEY, file TEXT, line INTEGER, "
                + ", ".join(f"{c} TEXT" for c in HEADER) + ")")


def _value(rng: random.Random, metric: str) -> tuple[str, str]:
    """A value and the unit it is written in; a third of the rows use the other unit."""
    unit, other, factor, low, high = METRICS[metric]
    canonical = rng.randint(low * 10, high * 10) / 10
    if other != unit and rng.random() < 1 / 3:
        return f"{canonical / factor:.6g}", other
    return f"{canonical:g}", unit


def _rows(rng: random.Random, file_no: int, count: int) -> Iterator[list[str]]:
    """`count` rows for one file; each source's (item, metric, as_of) is unique."""
    metrics = sorted(METRICS)
    per_source = -(-count // SOURCES_PER_FILE)
    emitted = 0
    for s in range(SOURCES_PER_FILE):
        n = min(per_source, count - emitted)
        source = f"bench-src-{file_no:03d}-{s}"
        kind = SOURCE_KINDS[(file_no * SOURCES_PER_FILE + s) % len(SOURCE_KINDS)]
        published = (LAST_DAY - timedelta(days=rng.randrange(DAYS))).isoformat()
        for ident in rng.sample(range(ITEMS * len(metrics) * DAYS), n):
            item_no, rest = divmod(ident, len(metrics) * DAYS)
            metric_no, day = divmod(rest, DAYS)
            metric = metrics[metric_no]
            value, unit = _value(rng, metric)
            as_of = (LAST_DAY - timedelta(days=day)).isoformat()
            quote = f"{metric} of gpu {item_no}: {value} {unit}, per datasheet"
            yield [source, f"Bench source {source}", kind, published, f"gpu-{item_no:04d}",
                   f"GPU {item_no}", "gpu", metric, value, unit, as_of, rng.choice("CSU"), quote]
        emitted += n


def write_packs(folder: Path, rows: int, files: int, seed: int = 20261122) -> list[Path]:
    """Write `rows` observations as `files` CSV packs (reproducible for a given seed)."""
    rng = random.Random(seed)
    paths = []
    for file_no in range(files):
        count = rows // files + (1 if file_no < rows % files else 0)
        path = folder / f"bench-{file_no:03d}.csv"
        with path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(HEADER)
            writer.writerows(_rows(rng, file_no, count))
        paths.append(path)
    return paths


def ingest(url: str, paths: list[Path]) -> tuple[IngestReport, float]:
    """Ingest `paths` into the ledger at `url`; return the report and wall-clock seconds."""
    engine = make_engine(url)
    metrics = load_metrics(CATALOG)
    try:
        start = time.perf_counter()
        report = ingest_paths(engine, paths, metrics=metrics, today=date.today(),
                              now=lambda: datetime.now(UTC), code_version="bench")
        return report, time.perf_counter() - start
    finally:
        engine.dispose()


def baseline(db_path: Path, paths: list[Path]) -> float:
    """Seconds for a plain sqlite3 executemany of the same rows (CSV parsing not timed)."""
    rows: list[tuple[str | int, ...]] = []
    for path in paths:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.reader(handle)
            next(reader)
            rows.extend((path.name, line, *values) for line, values in enumerate(reader, 2))
    conn = sqlite3.connect(db_path, isolation_level=None)
    try:
        conn.execute(BASELINE_DDL)
        placeholders = ", ".join("?" * (len(HEADER) + 2))
        start = time.perf_counter()
        conn.execute("BEGIN")
        conn.executemany(f"INSERT INTO obs (file, line, {', '.join(HEADER)}) "
                         f"VALUES ({placeholders})", rows)
        conn.execute("COMMIT")
        return time.perf_counter() - start
    finally:
        conn.close()


def _line(name: str, rows: int, seconds: float, target: float | None) -> str:
    verdict = "-" if target is None else ("PASS" if seconds <= target else "MISS")
    target_text = "-" if target is None else f"<= {target:g} s"
    return (f"{name:<22}{rows:>9,}{seconds:>10.2f}{rows / seconds:>12,.0f}"
            f"{target_text:>11}  {verdict}")


def main() -> None:
    """Generate packs, run the three timings and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--files", type=int, default=10)
    args = parser.parse_args()
    scale = args.rows / 100_000  # targets are for 100,000 rows; scale them linearly
    with tempfile.TemporaryDirectory(prefix="specledger-ingest-bench-") as tmp:
        folder = Path(tmp)
        start = time.perf_counter()
        paths = write_packs(folder, args.rows, args.files)
        print(f"generated {args.rows:,} rows in {len(paths)} files "
              f"({time.perf_counter() - start:.1f} s) under {folder}")
        url = f"sqlite:///{folder / 'bench.sqlite'}"
        upgrade(url)
        report, first_s = ingest(url, paths)
        assert report.total("accepted") == args.rows, report.total("accepted")
        assert report.total("rejected") == 0, [f.errors[:3] for f in report.files]
        base_s = baseline(folder / "baseline.sqlite", paths)
        again, again_s = ingest(url, paths)
        assert again.total("accepted") == 0, again.total("accepted")
        assert again.total("unchanged") == args.rows, again.total("unchanged")
    print(f"\n{'step':<22}{'rows':>9}{'seconds':>10}{'rows/s':>12}{'target':>11}  result")
    lines = [_line("specledger ingest", args.rows, first_s, TARGET_INGEST_S * scale),
             _line("sqlite3 executemany", args.rows, base_s, None),
             _line("specledger re-ingest", args.rows, again_s, TARGET_REINGEST_S * scale)]
    print("\n".join(lines))
    print(f"\nspecledger / sqlite3 baseline: {first_s / base_s:.1f}x")
    misses = [line.split("  ")[0].strip() for line in lines if line.endswith("MISS")]
    print("RESULT: " + (f"MISS ({', '.join(misses)})" if misses else "PASS (all targets met)"))


if __name__ == "__main__":
    main()
