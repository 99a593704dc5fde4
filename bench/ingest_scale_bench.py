"""Ingest scale benchmark: the same rows as one YAML pack or one CSV pack, and many one-row files.

Targets (issue "hostile and careless input"): 200,000 rows as YAML in <= 30 s and <= 1 GB peak
memory, like the same rows as CSV; 10,000 one-row files in <= 60 s, with the time per file
not growing with the ledger. Each case runs in a fresh process so that its peak RSS is its own.
Reports only: the exit code is 0 even when a target is missed.

    python bench/ingest_scale_bench.py [--rows 200000] [--files 10000]
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, date, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from ingest_bench import HEADER, _rows  # noqa: E402 - the same rows as the ingest benchmark

TARGET_SECONDS = {"yaml": 30.0, "csv": 30.0, "files": 60.0}
TARGET_MIB = 1024


def _yaml_scalar(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a valid YAML scalar


def write_pack(folder: Path, rows: int, fmt: str) -> Path:
    """`rows` observations of four sources as one pack in `fmt` (yaml or csv)."""
    generated = list(_rows(random.Random(20261122), 0, rows))
    path = folder / f"pack.{fmt}"
    with path.open("w", newline="", encoding="utf-8") as handle:
        if fmt == "csv":
            writer = csv.writer(handle)
            writer.writerow(HEADER)
            writer.writerows(generated)
            return path
        by_source: dict[str, list[list[str]]] = {}
        for row in generated:
            by_source.setdefault(row[0], []).append(row)
        handle.write("sources:\n")
        items: dict[str, str] = {}
        for source, source_rows in by_source.items():
            first = source_rows[0]
            handle.write(f"  - source: {{key: {source}, title: {_yaml_scalar(first[1])}, "
                         f"kind: {first[2]}, published_on: {first[3]}}}\n    observations:\n")
            for row in source_rows:
                items[row[4]] = row[5]
                handle.write(f"      - {{item: {row[4]}, metric: {row[7]}, value: {row[8]}, "
                             f"unit: {row[9]}, as_of: {row[10]}, status: {row[11]}, "
                             f"quote: {_yaml_scalar(row[12])}}}\n")
        handle.write("items:\n")
        for key, name in sorted(items.items()):
            handle.write(f"  - {{key: {key}, name: {_yaml_scalar(name)}, kind: gpu}}\n")
    return path


def write_one_row_files(folder: Path, files: int) -> list[Path]:
    """`files` CSV packs of one row each, from one source (the case that grew with the ledger)."""
    generated = _rows(random.Random(7), 0, files)
    paths = []
    for number, row in enumerate(generated):
        path = folder / f"one-{number:05d}.csv"
        with path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(HEADER)
            writer.writerow(["bench-one-source", *row[1:]])
        paths.append(path)
    return paths


def run_case(url: str, paths: list[str]) -> dict[str, float]:
    """In this process: ingest `paths` into `url`; seconds, peak MiB and row counts."""
    from db.engine import make_engine, upgrade
    from pipelines.inputs.catalog import load_metrics
    from pipelines.jobs.ingest import ingest_paths

    upgrade(url)
    engine = make_engine(url)
    start = time.perf_counter()
    report = ingest_paths(engine, [Path(p) for p in paths],
                          metrics=load_metrics(ROOT / "data" / "catalog.yaml"),
                          today=date.today(), now=lambda: datetime.now(UTC), code_version="bench")
    seconds = time.perf_counter() - start
    engine.dispose()
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"seconds": seconds, "peak_mib": peak_mib,
            "read": report.total("read"), "accepted": report.total("accepted"),
            "rejected": report.total("rejected")}


def _in_child(url: str, paths: list[Path]) -> dict[str, float]:
    code = ("import json, sys; sys.path.insert(0, sys.argv[1] + '/bench'); "
            "from ingest_scale_bench import run_case; "
            "print(json.dumps(run_case(sys.argv[2], sys.argv[3:])))")
    out = subprocess.run([sys.executable, "-c", code, str(ROOT), url, *map(str, paths)],
                         check=True, capture_output=True, text=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _line(name: str, result: dict[str, float], target_s: float) -> str:
    ok = result["seconds"] <= target_s and result["peak_mib"] <= TARGET_MIB
    return (f"{name:<26}{int(result['read']):>9,}{result['seconds']:>9.1f}"
            f"{result['peak_mib']:>9.0f}   <= {target_s:g} s, <= {TARGET_MIB} MiB  "
            f"{'PASS' if ok else 'MISS'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--files", type=int, default=10_000)
    args = parser.parse_args()
    lines = []
    with tempfile.TemporaryDirectory(prefix="specledger-scale-bench-") as tmp:
        folder = Path(tmp)
        for fmt in ("yaml", "csv"):
            pack = write_pack(folder, args.rows, fmt)
            result = _in_child(f"sqlite:///{folder / f'{fmt}.sqlite'}", [pack])
            assert result["accepted"] == args.rows, result
            lines.append(_line(f"one {fmt.upper()} pack", result, TARGET_SECONDS[fmt]))
        few = folder / "few"
        few.mkdir()
        small = max(args.files // 10, 1)
        paths = write_one_row_files(few, small)
        result = _in_child(f"sqlite:///{folder / 'few.sqlite'}", [few])
        assert result["accepted"] == len(paths), result
        lines.append(_line(f"{small:,} one-row files", result, TARGET_SECONDS["files"] / 10))
        many = folder / "many"
        many.mkdir()
        paths = write_one_row_files(many, args.files)
        result = _in_child(f"sqlite:///{folder / 'many.sqlite'}", [many])
        assert result["accepted"] == len(paths), result
        lines.append(_line(f"{args.files:,} one-row files", result, TARGET_SECONDS["files"]))
    print(f"{'case':<26}{'rows':>9}{'seconds':>9}{'peak MiB':>9}   target")
    print("\n".join(lines))
    print("RESULT: " + ("PASS" if all(line.endswith("PASS") for line in lines) else "MISS"))


if __name__ == "__main__":
    main()
