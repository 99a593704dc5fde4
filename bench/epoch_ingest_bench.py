"""Epoch AI ml_hardware.csv ingest benchmark: a full-size snapshot into a fresh SQLite ledger.

A full snapshot has ~170 chips x 39 columns (December 2025). The file is built from the real
2025-12-16 rows the tests read (in the shared data folder), repeated under distinct chip names
up to `--chips`, so its cells, notes, multi-line quotes and numbers are Epoch's own. Times the
parse alone, a first ingest, a re-ingest of the same bytes (unchanged) and a later snapshot in
which every tenth chip's figures changed (supersession). Reports only: the exit code is always 0.

    python -m bench.epoch_ingest_bench [--chips 170] [--repeat 3]   # from the repository root
"""

from __future__ import annotations

import argparse
import csv
import io
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from db.engine import make_engine, upgrade
from pipelines.inputs.adapters import epoch
from pipelines.inputs.adapters.base import AdapterOptions
from pipelines.inputs.catalog import load_metrics
from pipelines.jobs.ingest import IngestReport, ingest_paths
from tests.support.shared_data import FIXTURES, SHARED_DATA

ROOT = Path(__file__).resolve().parent.parent
SNAPSHOT = SHARED_DATA.joinpath(*FIXTURES, "epoch", "ml_hardware_2025-12-16.csv")
CATALOG = ROOT / "data" / "catalog.yaml"


def full_snapshot(chips: int, revision: int = 0) -> bytes:
    """`chips` rows cycled from the real fixture, each chip renamed so keys are distinct; with
    `revision` > 0, every tenth chip's TDP is raised by `revision` W (a later snapshot)."""
    rows = list(csv.DictReader(io.StringIO(SNAPSHOT.read_text(encoding="utf-8"), newline="")))
    out = io.StringIO(newline="")
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    for n in range(chips):
        row = dict(rows[n % len(rows)])
        row["Hardware name"] = f"{row['Hardware name']} #{n}"
        if revision and n % 10 == 0 and row.get("TDP (W)"):
            row["TDP (W)"] = str(float(row["TDP (W)"]) + revision)
        writer.writerow(row)
    return out.getvalue().encode("utf-8")


def timed(action: Callable[[], object], repeat: int) -> tuple[float, object]:
    """Median seconds over `repeat` runs, and the last run's result."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = action()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chips", type=int, default=170)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if not SNAPSHOT.is_file():
        print(f"{SNAPSHOT} is not here (the shared data folder; SPECLEDGER_SHARED_DATA)")
        return
    metrics = load_metrics(CATALOG)
    first_bytes, later_bytes = full_snapshot(args.chips), full_snapshot(args.chips, 5)

    parse_s, parsed = timed(lambda: epoch.parse("ml_hardware.csv", first_bytes,
                                                AdapterOptions()), args.repeat)
    print(f"file: {args.chips} chips, {len(first_bytes) / 1024:.0f} KiB, "  # noqa: T201
          f"{len(parsed.pack.rows)} figures")
    print(f"parse only                  {parse_s * 1000:8.1f} ms")  # noqa: T201

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        first, later = folder / "ml_hardware.csv", folder / "ml_hardware_later.csv"
        first.write_bytes(first_bytes)
        later.write_bytes(later_bytes)
        clock = iter(datetime(2026, 1, 1, tzinfo=UTC) + timedelta(hours=h) for h in range(99))
        ticks: dict[str, datetime] = {}

        def now() -> datetime:
            ticks.setdefault("t", next(clock))
            return ticks["t"]

        def ingest(path: Path, ledger: str) -> IngestReport:
            ticks.clear()
            engine = make_engine(ledger)
            try:
                return ingest_paths(engine, [path], metrics=metrics, today=date(2026, 11, 22),
                                    now=now, code_version="bench",
                                    options=AdapterOptions(as_of=date(2025, 12, 16)))
            finally:
                engine.dispose()

        firsts = []
        for attempt in range(args.repeat):
            ledger = f"sqlite:///{folder / f'ledger{attempt}.sqlite'}"
            upgrade(ledger)
            start = time.perf_counter()
            report = ingest(first, ledger)
            firsts.append(time.perf_counter() - start)
        [f] = report.files
        print(f"first ingest                {statistics.median(firsts) * 1000:8.1f} ms "  # noqa: T201
              f"(read {f.read}, accepted {f.accepted}, rejected {f.rejected})")
        again_s, again = timed(lambda: ingest(first, ledger), args.repeat)
        print(f"re-ingest, same bytes       {again_s * 1000:8.1f} ms "  # noqa: T201
              f"({again.files[0].outcome})")
        start = time.perf_counter()
        revised = ingest(later, ledger)
        [g] = revised.files
        print(f"later snapshot, 1 in 10 changed {(time.perf_counter() - start) * 1000:4.1f} ms "  # noqa: T201
              f"(accepted {g.accepted}, unchanged {g.unchanged}, superseded {g.superseded})")


if __name__ == "__main__":
    main()
