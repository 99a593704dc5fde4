"""Kill -9 `specledger run` on PostgreSQL: the ledger keeps its promises (the SQLite trials
and the checker's own tests are in test_kill_trials.py; a file of its own so that the two
backends' trials run side by side under `./dev test`'s workers)."""

from __future__ import annotations

import pytest

from tests.pipelines.test_kill_trials import (
    SAMPLE_SEED,
    SEED,
    assert_promises_kept,
    postgresql_trials,
)


@pytest.mark.slow
@pytest.mark.postgres
def test_three_seeded_and_two_targeted_kills_on_postgresql_leave_a_ledger_the_next_run_completes(
        tmp_path):
    report = postgresql_trials(tmp_path, trials=3, targeted=2, seed=SAMPLE_SEED)
    assert_promises_kept(report, 5)
    assert len(report.phases) >= 2, report.phases


@pytest.mark.trials
@pytest.mark.slow
@pytest.mark.postgres
def test_five_kills_on_postgresql_leave_a_ledger_the_next_run_completes(tmp_path):
    report = postgresql_trials(tmp_path, trials=5, targeted=2, seed=SEED)
    assert_promises_kept(report, 7)
