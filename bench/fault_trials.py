"""Kill -9 trials of `specledger run`, run by hand: the harness (tests/support/fault_trials.py,
which the kill and restart tests drive) with its figures printed.

Prints figures only (trials, kills per phase, violations, recovery times); exit 1 when an
invariant was violated, so it doubles as a check. From the repository root:

    python -m bench.fault_trials [--trials 20] [--targeted 5] [--seed 7]
    python -m bench.fault_trials --pg-admin-url postgresql://postgres@127.0.0.1:5432/test
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

from tests.support.fault_trials import Trial, TrialsReport, run_trials, scratch_databases


def print_trial(trial: Trial) -> None:
    state = "ok" if not trial.violations else f"{len(trial.violations)} VIOLATIONS"
    aim = "targeted" if trial.targeted else "uniform"
    print(f"trial {trial.number:2d} ({aim}): kill at {trial.delay:5.2f} s in {trial.phase:<18} "
          f"writable after {trial.writable_after:.2f} s  {state}", flush=True)
    for violation in trial.violations:
        print(f"    {violation}")
    if trial.leftover_tmp:
        print(f"    temp files left: {', '.join(trial.leftover_tmp)}")


def print_report(report: TrialsReport, label: str) -> None:
    print(f"{label}: {len(report.trials)} kills, undisturbed run {report.undisturbed_s:.1f} s "
          f"(tasks: {' > '.join(report.tasks)})")
    for aim, chosen in (("uniform", False), ("targeted", True)):
        phases = Counter(t.phase for t in report.trials if t.targeted == chosen)
        if phases:
            print(f"{aim} kills per phase: "
                  + ", ".join(f"{p} {n}" for p, n in sorted(phases.items())))
    writable = [t.writable_after for t in report.trials]
    if writable:
        print(f"ledger writable after a kill: max {max(writable):.2f} s, "
              f"mean {sum(writable) / len(writable):.2f} s")
    print(f"runs after the kills: final run {report.final_run_s:.1f} s; violations "
          f"{report.violations} ({len(report.final_violations)} after the final run)")
    for violation in report.final_violations:
        print(f"    {violation}")
    same = "equal" if report.final_hash == report.fresh_hash else "DIFFERENT"
    print(f"dataset hash after the trials {report.final_hash[:12]}, fresh ledger "
          f"{report.fresh_hash[:12]}: {same}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--targeted", type=int, default=5,
                        help="extra kills inside the ledger transaction")
    parser.add_argument("--pg-admin-url", help="run on PostgreSQL: two scratch databases are "
                                               "created beside this one and dropped after")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="specledger-faults-") as tmp:
        if args.pg_admin_url:
            names = (f"specledger_faults_{os.getpid()}", f"specledger_faults_{os.getpid()}_fresh")
            with scratch_databases(args.pg_admin_url, *names) as (ledger, fresh):
                report = run_trials(Path(tmp), trials=args.trials, seed=args.seed,
                                    targeted=args.targeted, database_url=ledger,
                                    fresh_database_url=fresh, on_trial=print_trial)
            label = "postgresql"
        else:
            report = run_trials(Path(tmp), trials=args.trials, seed=args.seed,
                                targeted=args.targeted, on_trial=print_trial)
            label = "sqlite"
    print_report(report, label)
    return 1 if report.violations or report.final_hash != report.fresh_hash else 0


if __name__ == "__main__":
    sys.exit(main())
