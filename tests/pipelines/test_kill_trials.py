"""Kill -9 `specledger run` at random points (seeded): the ledger keeps its promises.

The harness is tests/support/fault_trials.py; these tests run it on SQLite and PostgreSQL and check
that the checker itself notices a broken ledger. The default suite runs one sample, small
enough for the default run: on SQLite, one kill targeted at the ledger transaction (where a
kill can do the most harm; a uniform kill seldom lands there), in a copy of the shipped
week the suite builds once instead of a first run of its own. Everything else is marked
`trials` and runs with `./dev trials`: a seeded kill and a targeted one on SQLite, the single
targeted kill on PostgreSQL (~100 s: a reference run, the kill, a final run), and the full
runs, twenty kills on SQLite and five on PostgreSQL (two of them targeted at its ledger
transaction). The default run still cuts a PostgreSQL run's ledger transaction short in
tests/db/test_pg_restart.py (the server restarts under it).
"""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url

from db.engine import write_session
from pipelines.jobs import steps as jobs
from tests.conftest import pg_url_or_skip, reset_pg
from tests.support.fault_trials import (
    LOCK_RELEASE_LIMIT_S,
    TrialsReport,
    check_ledger,
    run_trials,
    scratch_databases,
    shipped_scenarios,
)
from tests.support.shipped_week import DAY, shipped_week

SEED = 20261122
# The sample's seed: its uniform kill lands at 14 % of an undisturbed run (its next ones, which
# the sample no longer makes, at 49 % and 96 %).
SAMPLE_SEED = 20261172


def assert_promises_kept(report: TrialsReport, kills: int) -> None:
    assert len(report.trials) == kills
    broken = {t.number: (t.phase, t.violations) for t in report.trials if t.violations}
    assert not broken, f"kills broke the ledger (trial: phase, violations): {broken}"
    assert report.final_violations == []
    assert all(t.writable_after < LOCK_RELEASE_LIMIT_S for t in report.trials)
    assert report.final_hash == report.fresh_hash
    assert math.isfinite(report.final_run_s) and report.final_run_s > 0
    # The targeted kills did hit the ledger transaction (the uniform ones rarely do).
    assert any(t.phase == "update-ledger" for t in report.trials if t.targeted), report.phases


def postgresql_trials(tmp_path, *, trials: int, targeted: int, seed: int) -> TrialsReport:
    """The trials on the test database (emptied), the fresh run in a scratch database."""
    url = pg_url_or_skip()
    reset_pg(url)
    fresh = f"{make_url(url).database}_fresh"
    with scratch_databases(url, fresh) as (fresh_url,):
        return run_trials(tmp_path, trials=trials, targeted=targeted, seed=seed,
                          database_url=url, fresh_database_url=fresh_url)


@pytest.mark.slow(seconds=45)
def test_a_kill_inside_the_ledger_transaction_on_sqlite_leaves_a_ledger_the_next_run_completes(
        tmp_path, tmp_path_factory):
    # The first week is the run's shared one (tests/support/shipped_week.py), copied and its
    # warehouse published: the week the trials would otherwise run undisturbed first, a
    # whole run of CPU.
    week = shipped_week(tmp_path_factory)
    first = week.copied_to(tmp_path / "first-week" / "home")
    jobs.publish(first, week.version, as_of=DAY, built_at=datetime.now(UTC))
    report = run_trials(tmp_path / "trials", trials=0, targeted=1, seed=SAMPLE_SEED,
                        first_week=first.home)
    assert_promises_kept(report, 1)
    assert report.phases == {"update-ledger": 1}, report.phases


@pytest.mark.trials
@pytest.mark.slow(seconds=90)
def test_a_seeded_and_a_targeted_kill_on_sqlite_leave_a_ledger_the_next_run_completes(tmp_path):
    report = run_trials(tmp_path, trials=1, targeted=1, seed=SAMPLE_SEED)
    assert_promises_kept(report, 2)
    assert len(report.phases) == 2, report.phases  # the ledger update and another step


@pytest.mark.trials
@pytest.mark.slow(seconds=100)
@pytest.mark.postgres
def test_a_kill_inside_the_ledger_transaction_on_postgresql_leaves_a_ledger_the_next_run_completes(
        tmp_path):
    report = postgresql_trials(tmp_path, trials=0, targeted=1, seed=SAMPLE_SEED)
    assert_promises_kept(report, 1)


@pytest.mark.trials
@pytest.mark.slow
def test_twenty_kills_on_sqlite_leave_a_ledger_the_next_run_completes(tmp_path):
    report = run_trials(tmp_path, trials=20, targeted=3, seed=SEED)
    assert_promises_kept(report, 23)
    assert len(report.phases) >= 3, report.phases  # startup, the ledger update, later steps


@pytest.mark.trials
@pytest.mark.slow
@pytest.mark.postgres
def test_five_kills_on_postgresql_leave_a_ledger_the_next_run_completes(tmp_path):
    report = postgresql_trials(tmp_path, trials=5, targeted=2, seed=SEED)
    assert_promises_kept(report, 7)


def test_the_checker_finds_a_version_without_results_and_a_tampered_raw_file(
        ledger, ledger_url, ingest, nvlink_pack):
    ingest(nvlink_pack)  # a dataset version, but no recompute and no flags
    with write_session(ledger) as session:
        session.execute(text("update raw_file set content = :bytes"), {"bytes": b"tampered"})

    scenarios = shipped_scenarios()
    found = check_ledger(ledger_url, scenarios)
    c2c = len(scenarios["c2c"])
    assert any(f"no c2c result for {c2c} of {c2c}" in v for v in found), found
    assert any("no tco result" in v for v in found), found
    assert any("has no flags" in v for v in found), found
    assert any("bytes do not match sha256" in v for v in found), found


def test_the_checker_passes_an_empty_ledger(ledger_url):
    assert check_ledger(ledger_url, shipped_scenarios()) == []
