"""A run's ledger work is one transaction: a version lands with its results and flags, or
nothing lands; a second run waits for the first and says for whom."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import func, select

from db.engine import Session, make_engine, write_session
from db.schema import C2CResult, DatasetVersion, Flag, IngestRun, Observation, TcoResult
from models.trends import TrendParams
from pipelines.inputs.adapters.base import AdapterOptions
from pipelines.inputs.scenarios import scenario_paths
from pipelines.jobs.ledger_update import LedgerUpdate, UpdateInputs, update_ledger
from tests.conftest import TODAY
from tests.pipelines.conftest import SHIPPED_SCENARIOS, SOURCES


@pytest.fixture
def shipped(metrics) -> UpdateInputs:
    return UpdateInputs(paths=[SOURCES], scenarios_dir=SHIPPED_SCENARIOS, metrics=metrics,
                        params=TrendParams(), options=AdapterOptions())


def run(engine, inputs: UpdateInputs, clock, **kwargs) -> LedgerUpdate:
    return update_ledger(engine, inputs, today=TODAY, as_of=TODAY, now=clock,
                         code_version="test", **kwargs)


def count(engine, model) -> int:
    with Session(engine) as session:
        return session.scalar(select(func.count()).select_from(model))


# The file's ~15 s (each test updates a ledger with the shipped packs), half per dialect: its
# weight in the order of ./dev test (tests/conftest.py), so it does not start last.
@pytest.mark.slow(seconds=8)
def test_a_run_commits_its_dataset_version_with_its_results_and_flags(ledger, shipped, clock):
    update = run(ledger, shipped, clock)

    assert update.ingest.dataset_changed and not update.lock_wait.waited
    with Session(ledger) as session:
        def of_version(model) -> int:
            return session.scalar(select(func.count()).select_from(model).where(
                model.dataset_version_id == update.dataset_version))
        assert of_version(C2CResult) == len(scenario_paths(SHIPPED_SCENARIOS)) > 0
        assert of_version(TcoResult) == len(scenario_paths(SHIPPED_SCENARIOS, "tco")) > 0
        assert of_version(Flag) == update.flags.stored > 0
    assert not update.c2c.failed and not update.tco.failed


class FailingClock:
    """A clock that stops working after `ticks` readings: a step after the ingest fails."""

    def __init__(self, clock, ticks: int) -> None:
        self.clock, self.left = clock, ticks

    def __call__(self):
        self.left -= 1
        if self.left < 0:
            raise RuntimeError("the clock broke")
        return self.clock()


def test_a_step_that_fails_after_the_ingest_leaves_no_trace_of_the_run(ledger, shipped, clock):
    # Ticks: the ingest's knowledge time, its finish time; the third (results) fails.
    with pytest.raises(RuntimeError, match="clock broke"):
        run(ledger, shipped, FailingClock(clock, ticks=2))

    assert [count(ledger, m) for m in (IngestRun, Observation, DatasetVersion)] == [0, 0, 0]
    update = run(ledger, shipped, clock)  # the next run does the whole work
    assert update.ingest.total("accepted") > 0 and update.c2c.computed


def test_a_second_run_waits_for_the_first_and_says_for_whom(ledger, ledger_url, shipped,
                                                            clock):
    holder = make_engine(ledger_url)
    found: list[LedgerUpdate] = []
    with write_session(holder) as session:
        session.execute(select(1))
        second = threading.Thread(target=lambda: found.append(run(ledger, shipped, clock)))
        second.start()
        time.sleep(1.5)
        assert second.is_alive()  # waiting for the lock, not failed
    second.join(timeout=120)
    holder.dispose()

    [update] = found
    # That it waited and says so, not for how long: on a loaded machine the run can reach the
    # lock late in the 1.5 s hold (test_cli_lock's twin failed so in CI).
    assert update.lock_wait.waited and update.lock_wait.seconds > 0
    message = update.lock_wait.describe()
    assert message.startswith("waited ") and "to finish writing the ledger" in message
    if ledger_url.startswith("postgresql"):  # PostgreSQL names the session holding the lock
        assert update.lock_wait.holder.startswith(f"specledger pid {os.getpid()} on ")
    assert update.ingest.total("accepted") > 0


def test_the_write_lock_wait_is_reported_only_when_there_was_one(ledger, tmp_path, metrics,
                                                                 clock):
    empty = UpdateInputs(paths=[], scenarios_dir=Path(tmp_path), metrics=metrics,
                         params=TrendParams(), options=AdapterOptions())
    update = run(ledger, empty, clock)
    assert not update.lock_wait.waited
    assert update.lock_wait.describe() == "took the ledger's write lock at once"
