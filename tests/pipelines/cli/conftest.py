"""A ledger with a history, for the commands that read one (`flags`, `changes`): three dataset
versions, the first two made as a run makes them (ingest, recompute, flags in one transaction),
the third by a standalone ingest (no results, no flags)."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from pipelines.cli import listing
from pipelines.cli.app import app
from pipelines.jobs import steps as jobs
from pipelines.settings import Settings
from tests.pipelines.conftest import SHIPPED_SCENARIOS

SCENARIO = "racks-vs-nodes"   # the worked TCO illustration, its rack PUE from the ledger
LONG_KEY = "lambda-gpu-8x-a100-80gb-sxm4-australia-southeast-1-on-demand"  # 60, as shipped
PUE_V1 = """
source: {key: dc-survey, title: A data-centre survey, kind: analyst, published_on: 2025-01-01}
items: [{key: test-dc, name: Test DC, kind: facility}]
observations:
  - {item: test-dc, metric: pue, value: 1.15, unit: "1", as_of: 2025-01-01, status: C}
"""
# The survey's next edition: the rack PUE moves, so the scenario's break-even speed-up does.
PUE_V2 = """
source: {key: dc-survey, title: A data-centre survey, kind: analyst, published_on: 2025-06-01}
items:
  - {key: test-dc, name: Test DC, kind: facility}
  - {key: gb200-nvl72, name: GB200 NVL72, kind: rack}
observations:
  - {item: test-dc, metric: pue, value: 3.0, unit: "1", as_of: 2025-06-01, status: C}
  - {item: gb200-nvl72, metric: rack_it_power, value: 132, unit: kW, as_of: 2025-06-01,
     status: S}
"""
OFFER = f"""
source: {{key: a-price-list, title: A price list, kind: dataset, published_on: 2025-07-01}}
items: [{{key: {LONG_KEY}, name: An offer with a long key, kind: cloud_offer}}]
observations:
  - {{item: {LONG_KEY}, metric: tdp, value: 400, unit: W, as_of: 2025-07-01, status: S}}
"""


@dataclass(frozen=True)
class History:
    home: Path
    scenarios: Path
    stages: list[str]   # what the first run's ledger update said as each step started


def _clock(start: datetime) -> Callable[[], datetime]:
    """A knowledge clock a second further at each reading: every version has its cut-off."""
    ticks = iter(range(10**9))
    return lambda: start + timedelta(seconds=next(ticks))


@pytest.fixture(scope="session")
def history(tmp_path_factory: pytest.TempPathFactory) -> History:
    folder = tmp_path_factory.mktemp("history")
    scenarios = folder / "scenarios"
    scenarios.mkdir()
    worked = (SHIPPED_SCENARIOS / "tco-worked-illustration.yaml").read_text(encoding="utf-8")
    (scenarios / f"{SCENARIO}.yaml").write_text(
        worked.replace("name: tco-worked-illustration", f"name: {SCENARIO}")
        .replace("    pue: 1.15\n", "    pue: {item: test-dc, metric: pue}\n", 1))
    packs = []
    for name, text in (("v1.yaml", PUE_V1), ("v2.yaml", PUE_V2), ("v3.yaml", OFFER)):
        packs.append(folder / name)
        packs[-1].write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    with pytest.MonkeyPatch.context() as env:
        env.delenv("SPECLEDGER_DATABASE_URL", raising=False)
        settings = Settings(home=folder / "home", scenarios_dir=scenarios)
        now = _clock(datetime(2026, 1, 10, tzinfo=UTC))
        stages: list[str] = []
        jobs.update(settings, packs[:1], as_of=date(2026, 1, 10), now=now,
                    on_stage=stages.append)
        jobs.update(settings, packs[1:2], as_of=date(2026, 1, 10), now=now)
        jobs.ingest(settings, packs[2:], today=date(2026, 1, 10), now=now)
    return History(folder / "home", scenarios, stages)


@pytest.fixture
def specledger_in(monkeypatch: pytest.MonkeyPatch) -> Callable[..., Callable[..., Any]]:
    """`specledger_in(home)("list", "items", columns=40)`: a command on that ledger, its
    tables laid out `columns` wide, as in a terminal that wide."""
    monkeypatch.delenv("SPECLEDGER_DATABASE_URL", raising=False)

    def on(home: Path, *command: str) -> Callable[..., Any]:
        def invoke(*args: str, columns: int = 200) -> Any:
            monkeypatch.setattr(listing.console, "width", columns)
            return CliRunner().invoke(app, [*command, *args, "--home", str(home)])
        return invoke

    return on


def said(result: Any) -> str:
    """What a command printed (both streams), unwrapped: runs of white space and rich's box
    borders folded into single spaces."""
    return " ".join(result.output.replace("│", " ").split())
