"""A layout search cut into shares (Prefect tasks) gives exactly the unsplit search's answer."""

from __future__ import annotations

import time

import pytest
from prefect import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId
from prefect.events.worker import EventsWorker

from pipelines.flows.c2c_sweep import c2c_sweep
from pipelines.inputs.scenarios import load_scenario
from pipelines.jobs import c2c
from pipelines.ledger.view import scenario_specs
from tests.pipelines.conftest import GPT3_INLINE

pytestmark = pytest.mark.slow

# The inline GPT-3 scenario with its layout left free except the global batch.
SEARCH = GPT3_INLINE.replace(
    "parallel: {tp: 8, pp: 8, dp: 1, ep: 1, micro_batch: 1, global_batch: 64, interleave: 1,\n"
    "           sequence_parallel: false, recompute: full, zero: 1}",
    "parallel: {global_batch: 1536}")


def ranked(result: dict) -> list[tuple]:
    return [(r["t_iter_s"], tuple(sorted(r["parallel"].items()))) for r in result["best"]]


@pytest.mark.parametrize("parts", [1, 3, 7])
def test_shares_merge_into_exactly_the_unsplit_search(write_scenario, parts):
    scenario = load_scenario(write_scenario(SEARCH))
    specs = scenario_specs(scenario, None)[:2]
    whole = c2c.sweep_scenario(scenario, specs, 10, None)
    split = c2c.sweep_scenario(scenario, specs, 10, None, parts=parts)
    assert (split["evaluated"], split["valid"]) == (whole["evaluated"], whole["valid"]) > (0, 0)
    assert ranked(split) == ranked(whole)


def test_the_sweep_flow_runs_each_share_as_a_task(prefect_harness, write_scenario, tmp_path):
    path = write_scenario(SEARCH)
    scenario = load_scenario(path)
    whole = c2c.sweep_scenario(scenario, scenario_specs(scenario, None)[:2], 5, None)
    # Prefect's events worker is per process: one left from a flow an earlier test of this
    # worker ran (the CLI's temporary server, now gone) would swallow this flow's task-run
    # events, so that the server never records them. Drain it first.
    EventsWorker.drain_all()
    state = c2c_sweep(scenario_file=path, parts=4, top=5, home=tmp_path / "home",
                      return_state=True)
    # Prefect 3 records task runs from events sent in the background: on a busy machine
    # they can arrive after the flow has returned, so wait for them (up to 30 s).
    deadline = time.monotonic() + 30
    with get_client(sync_client=True) as client:
        while True:
            tasks = client.read_task_runs(flow_run_filter=FlowRunFilter(
                id=FlowRunFilterId(any_=[state.state_details.flow_run_id])))
            done = [t for t in tasks if t.state is not None and t.state.is_completed()]
            if len(done) >= 4 or time.monotonic() > deadline:
                break
            time.sleep(0.5)
    assert sorted(t.name for t in tasks) == [f"sweep-share {n}/4" for n in range(1, 5)]
    assert all(t.state.is_completed() for t in tasks)
    assert ranked(state.result()) == ranked(whole)
