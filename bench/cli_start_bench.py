"""CLI start-up benchmark: `specledger --help`, `--version` and `value` as a user runs them.

Each command runs as a fresh process (the cost a user sees: interpreter, imports, the query),
`--runs` times after one warm-up; the median and the slowest are printed. Target: each under
1 s on the 2-core development machine. `value` reads a ledger holding the shipped packs,
built once in a temporary folder. Reports only: the exit code is 0 even when a target is missed.

    python bench/cli_start_bench.py [--runs 7]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPECLEDGER = Path(sys.executable).parent / "specledger"
TARGET_S = 1.0


def timed(args: list[str], runs: int) -> list[float]:
    subprocess.run([str(SPECLEDGER), *args], check=True, capture_output=True)  # warm-up
    seconds = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([str(SPECLEDGER), *args], check=True, capture_output=True)
        seconds.append(time.perf_counter() - start)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="specledger-cli-bench-") as home:
        subprocess.run([str(SPECLEDGER), "ingest", str(ROOT / "data" / "sources"), "--home",
                        home], check=True, capture_output=True)
        cases = {
            "specledger --help": ["--help"],
            "specledger --version": ["--version"],
            "specledger value": ["value", "nvlink-5", "scaleup_bw_per_gpu_bidir", "--home",
                                 home],
            "specledger list scenarios": ["list", "scenarios"],
        }
        print(f"{'command':<24}{'median s':>10}{'max s':>8}   target")
        verdicts = []
        for name, command in cases.items():
            seconds = timed(command, args.runs)
            median = statistics.median(seconds)
            verdicts.append(median <= TARGET_S)
            print(f"{name:<24}{median:>10.2f}{max(seconds):>8.2f}   <= {TARGET_S:g} s  "
                  f"{'PASS' if median <= TARGET_S else 'MISS'}")
    print("RESULT: " + ("PASS" if all(verdicts) else "MISS"))


if __name__ == "__main__":
    main()
