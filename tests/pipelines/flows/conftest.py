"""One Prefect test server per test process for the flow tests (Prefect's test harness: a
temporary SQLite database that the server migrates as it starts, ~10-15 s). The flows these
tests run each read back only their own flow run's artifacts and task runs (by flow run id),
so they can share a server; a server per file cost that start-up once per file."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from prefect.testing.utilities import prefect_test_harness

from pipelines.flows import weekly_briefing
from tests.support.shipped_week import Clock


@pytest.fixture(scope="session")
def prefect_harness() -> Iterator[None]:
    with prefect_test_harness(server_startup_timeout=90):
        yield


@pytest.fixture(autouse=True)
def flow_clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """The weekly flow's knowledge clock, from the shipped week's morning: a flow test reports
    on fixed dates, so what it records must be known by them on any real date. A test that
    runs a later week sets `weekly_briefing.clock` to a Clock of its own."""
    clock = Clock()
    monkeypatch.setattr(weekly_briefing, "clock", clock)
    return clock
