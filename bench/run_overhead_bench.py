"""`specledger run` against an empty Prefect flow, each as a user starts it (a fresh process).

Four timings, `--runs` times each, the median printed: an empty flow in a fresh Prefect home
and in a warm one (its database migrated), then `specledger run --offline` in a fresh home (the
first run: ledger, warehouse and briefing made) and again in the same home (nothing new: the
run re-reads its sources and republishes; its briefing's pages are those laid out before, taken
from the render cache). Target (issue 42): a run within 2x of
the empty flow in the same state (fresh vs fresh, warm vs warm). Reports only.

    python -m bench.run_overhead_bench [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SPECLEDGER = Path(sys.executable).parent / "specledger"
EMPTY_FLOW = """
from prefect import flow

@flow
def empty() -> None:
    pass

empty()
"""
TARGET = 2.0


def seconds(args: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(args, check=True, capture_output=True, env={**os.environ, **env})
    return time.perf_counter() - started


def empty_flow(runs: int) -> tuple[float, float]:
    """Median seconds of the empty flow in a fresh Prefect home, then in a warm one."""
    fresh, warm = [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="empty-flow-") as home:
            env = {"PREFECT_HOME": home}
            fresh.append(seconds([sys.executable, "-c", EMPTY_FLOW], env))
            warm.append(seconds([sys.executable, "-c", EMPTY_FLOW], env))
    return statistics.median(fresh), statistics.median(warm)


def specledger_run(runs: int) -> tuple[float, float]:
    """Median seconds of `specledger run --offline` in a fresh home, then again in it."""
    first, again = [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="specledger-run-") as home:
            command = [str(SPECLEDGER), "run", "--home", home, "--offline"]
            first.append(seconds(command, {}))
            again.append(seconds(command, {}))
    return statistics.median(first), statistics.median(again)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    empty_fresh, empty_warm = empty_flow(args.runs)
    run_first, run_again = specledger_run(args.runs)
    for label, run, empty in (("fresh home", run_first, empty_fresh),
                              ("warm home", run_again, empty_warm)):
        ratio = run / empty
        print(f"{label:<11} specledger run {run:6.2f} s, empty flow {empty:5.2f} s: "
              f"{ratio:.2f}x (target <= {TARGET:g}x: {'met' if ratio <= TARGET else 'MISSED'})")


if __name__ == "__main__":
    main()
