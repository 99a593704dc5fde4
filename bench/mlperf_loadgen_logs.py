"""MLPerf loadgen logs of a real results checkout, read as the ingest reads them: every
`mlperf_log_summary.txt` / `mlperf_log_detail.txt` under ROOT (a clone of
mlcommons/inference_results_v<round>, or a part of it with its `systems/` folders), with the
systems JSON beside its tree. Prints how many logs became points, were skipped (a detail log
beside its summary, an accuracy run) or were rejected and why, the time and the reader's peak
memory; with `--table CSV` (rows naming each log's path in a `source_url_or_repo@commit_path`
column and the system's tokens/s in `result_tokens_s_system`, as extractions of these results
are kept), how many of its rows the points match and the largest throughput difference.
Reports only: the exit code is 0 whatever it finds.

    python -m bench.mlperf_loadgen_logs ROOT --as-of 2024-08-28 [--table rows.csv]
"""

from __future__ import annotations

import argparse
import csv
import time
import tracemalloc
from collections import Counter
from datetime import date
from pathlib import Path

from pipelines.inputs.adapters.base import AdapterError, AdapterOptions, InferencePoint
from pipelines.inputs.adapters.mlperf_loadgen import LOG_NAMES
from pipelines.inputs.adapters.registry import read_file, reader_name
from pipelines.jobs.ingest import with_files_beside

Key = tuple[str, ...]


def run_key(path: Path | str) -> Key | None:
    """(division, submitter, system, benchmark, scenario, log) of a log's path."""
    parts = Path(path).parts
    if "results" not in parts:
        return None
    at = parts.index("results")
    if at < 2 or len(parts) < at + 5:
        return None
    return (parts[at - 2], parts[at - 1], parts[at + 1], parts[at + 2], parts[at + 3].lower(),
            parts[-1])


def read_all(root: Path, as_of: date) -> tuple[dict[Key, InferencePoint], Counter[str],
                                                 Counter[str], float, int]:
    """Every log under `root`: its point by run key, outcomes, rejection reasons, seconds and
    the reader's peak traced bytes."""
    logs = sorted(p for p in root.rglob("*") if p.name in LOG_NAMES and p.is_file())
    points: dict[Key, InferencePoint] = {}
    outcomes: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    tracemalloc.start()
    started = time.perf_counter()
    for log in logs:
        options = with_files_beside(AdapterOptions(as_of=as_of), log.resolve())
        try:
            parsed = read_file(reader_name(log.resolve()), log.read_bytes(), options)
        except AdapterError as exc:
            outcomes["rejected"] += 1
            reasons[f"file: {exc.reason[:100]}"] += 1
            continue
        if parsed.rejected:
            outcomes["rejected"] += 1
            first = parsed.rejected[0]
            reasons[f"{first.field}: {first.reason[:100]}"] += 1
        elif parsed.runs:
            outcomes["point"] += 1
            key = run_key(log)
            if key is not None:
                points[key] = parsed.runs[0].points[0]
        else:
            outcomes["skipped"] += 1
    seconds = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return points, outcomes, reasons, seconds, peak


def compare(points: dict[Key, InferencePoint], table: Path) -> None:
    """How many of the table's rows a point matches, and the largest relative difference."""
    with table.open(newline="") as rows:
        listed = list(csv.DictReader(rows))
    matched, worst, missing = 0, 0.0, []
    for row in listed:
        key = run_key(row["source_url_or_repo@commit_path"].split(":", 2)[-1])
        point = points.get(key) if key else None
        if point is None:
            missing.append(row["source_url_or_repo@commit_path"])
            continue
        published = float(row["result_tokens_s_system"])
        worst = max(worst, abs(point.tok_s_per_gpu * point.gpus - published) / published)
        matched += 1
    print(f"table {table.name}: {len(listed)} rows, {matched} matched, largest throughput "
          f"difference {100 * worst:.4f} %; {len(missing)} without a point")
    for path in missing[:10]:
        print(f"  no point: {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--as-of", type=date.fromisoformat, required=True,
                        help="the round's publication date (a summary carries none)")
    parser.add_argument("--table", type=Path)
    args = parser.parse_args()
    points, outcomes, reasons, seconds, peak = read_all(args.root, args.as_of)
    total = sum(outcomes.values())
    print(f"{total} logs: {outcomes['point']} points, {outcomes['skipped']} skipped, "
          f"{outcomes['rejected']} rejected; {seconds:.2f} s ({1000 * seconds / max(total, 1):.1f}"
          f" ms a log), reader's peak {peak / 1e6:.1f} MB")
    for reason, times in reasons.most_common():
        print(f"  {times} rejected, {reason}")
    if args.table is not None:
        compare(points, args.table)


if __name__ == "__main__":
    main()
