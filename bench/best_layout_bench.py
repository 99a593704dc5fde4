"""Best-layout search benchmark: what searching each training scenario's layout adds to a run.

For every shipped C2C scenario, on a ledger of the shipped source packs, times the recompute
graph's C2C work twice (every scenario searched, though the shipped C2C illustrations pin
their layouts: an upper bound): as a pinned estimate of the file's layout (what a run did before the
search) and as the search in the calibrated space plus the file's layout kept beside it (what
a run does now); median of `--runs` runs each. Prints per scenario and in total, and the share
of a whole `specledger run` the difference is (`--run-seconds`: a run's wall time measured on
the same machine; the target is a run within 1.2x of its time without the search).
Reports only: the exit code is 0 even when a target is missed.

    python bench/best_layout_bench.py [--runs 5] [--run-seconds 66]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from pipelines.inputs.scenarios import load_scenario, scenario_paths
from pipelines.jobs import c2c
from pipelines.ledger.view import scenario_specs

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "data" / "scenarios"


def ingest_shipped_sources(home: Path) -> None:
    """A ledger of the shipped source packs in `home`, as `specledger ingest` makes it."""
    subprocess.run([sys.executable, "-c", "from pipelines.cli.app import main; main()",
                    "ingest", str(ROOT / "data" / "sources"), "--home", str(home), "--json"],
                   check=False, capture_output=True, cwd=ROOT)


def median_seconds(action: Callable[[], Any], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--run-seconds", type=float, default=None,
                        help="a whole `specledger run`'s wall time on this machine")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        ingest_shipped_sources(Path(home))
        pinned_total = searched_total = 0.0
        print(f"{'scenario':32} {'pinned s':>9} {'searched s':>11} {'layouts':>8}")
        for path in scenario_paths(SCENARIOS):
            scenario = load_scenario(path)
            hw, used, version = scenario_specs(scenario, Path(home))
            pinned = median_seconds(partial(c2c.estimate, scenario, (hw, used), version),
                                    args.runs)
            found = c2c.best_layout(scenario, (hw, used), version)
            searched = median_seconds(partial(c2c.best_layout, scenario, (hw, used), version),
                                      args.runs)
            pinned_total += pinned
            searched_total += searched
            print(f"{scenario.name:32} {pinned:9.3f} {searched:11.3f} "
                  f"{found['layout_choice']['evaluated']:8,}")
        extra = searched_total - pinned_total
        print(f"{'all':32} {pinned_total:9.3f} {searched_total:11.3f}")
        print(f"searching every scenario adds {extra:.2f} s")
        if args.run_seconds:
            print(f"a run of {args.run_seconds:.0f} s becomes {1 + extra / args.run_seconds:.3f}x "
                  "(target <= 1.2x)")


if __name__ == "__main__":
    main()
