"""What a one-off command reads: the ledger's newest dataset version, or no ledger at all."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

from db import store
from db.engine import Session
from pipelines.inputs.scenarios import Scenario
from pipelines.ledger.cluster_specs import resolve_cluster
from pipelines.ledger.connection import open_ledger, utc_now
from pipelines.ledger.figures import FigureUsed
from pipelines.settings import Settings


@dataclass(frozen=True)
class LedgerView:
    session: Session | None  # None: no ledger was needed, or it holds no dataset version
    on: date  # valid time: today
    known: datetime  # knowledge time: the newest dataset version's cut-off, else now
    dataset_version: int | None


@contextmanager
def newest_version(settings: Settings, needed: bool = True) -> Iterator[LedgerView]:
    """Open the ledger (migrating it) at its newest dataset version; inline-only work
    (`needed` false) never creates a ledger."""
    now = utc_now()
    if not needed:
        yield LedgerView(None, now.date(), now, None)
        return
    engine = open_ledger(settings)
    try:
        with Session(engine) as session:
            latest = store.latest_dataset_version(session)
            if latest is None:  # an empty ledger: inline figures only, named when missing
                yield LedgerView(None, now.date(), now, None)
            else:
                yield LedgerView(session, now.date(), latest.cutoff_at, latest.id)
    finally:
        engine.dispose()


def scenario_specs(scenario: Scenario,
                   home: Path | None) -> tuple[Any, list[FigureUsed], int | None]:
    """Resolve a scenario's cluster from the ledger's newest dataset version (inline values
    win); also the version it was read from (None without a ledger)."""
    settings = Settings(home=home) if home is not None else Settings()
    needs_ledger = any((scenario.cluster.gpu, scenario.cluster.scale_up_item,
                        scenario.cluster.scale_up_system, scenario.cluster.scale_out_item))
    with newest_version(settings, needs_ledger) as view:
        hw, used = resolve_cluster(scenario.cluster, view.session, on=view.on, known=view.known,
                                   offloads=scenario.layout.offload_layers > 0)
        return hw, used, view.dataset_version
