"""A run's ledger work as one transaction: ingest, recompute C2C and TCO, store the flags.

A dataset version is committed together with its results and its flags, or not at all: a run
killed halfway leaves the ledger as it was, and the next run does the whole work again. The
transaction holds the ledger's write lock, so two runs that would write at the same time are
serialised by the database (an advisory lock on PostgreSQL, BEGIN IMMEDIATE on SQLite), on
whichever machines their workers run; the second one reports how long it waited, and for whom.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

from db.engine import Engine, LockWait, lock_wait_of, write_session
from models.observations import MetricDef
from models.trends import TrendParams
from pipelines.inputs.adapters.base import AdapterOptions
from pipelines.jobs import c2c, serving, tco
from pipelines.jobs.flags import FlagReport, compute_flags
from pipelines.jobs.ingest import IngestReport, ingest_paths
from pipelines.jobs.recompute import RecomputeReport


@dataclass(frozen=True)
class LedgerUpdate:
    ingest: IngestReport
    c2c: RecomputeReport
    tco: RecomputeReport
    flags: FlagReport
    lock_wait: LockWait
    serving: RecomputeReport | None = None   # the serving scenarios' answers

    @property
    def dataset_version(self) -> int:
        return self.ingest.dataset_version


@dataclass(frozen=True)
class UpdateInputs:
    """What a run reads besides the ledger: files, scenarios, catalogue, flag parameters."""

    paths: Sequence[Path]
    scenarios_dir: Path
    metrics: dict[str, MetricDef]
    params: TrendParams
    options: AdapterOptions
    market_max_age_days: int | None = None  # the price index's age limit (None: no limit)


def update_ledger(engine: Engine, inputs: UpdateInputs, *, today: date, as_of: date,
                  now: Callable[[], datetime], code_version: str,
                  lock_timeout_seconds: float = 60.0,
                  on_stage: Callable[[str], None] | None = None) -> LedgerUpdate:
    """Ingest `inputs.paths`, then store the resulting dataset version's C2C, TCO and serving
    results (scenarios evaluated as of `as_of`) and its flags, all in one transaction.
    `on_stage` hears each step's name as it starts (the CLI's progress on a terminal)."""
    stage = on_stage or (lambda name: None)
    with write_session(engine, lock_timeout_seconds) as session:
        stage("ingest")
        ingest = ingest_paths(session, inputs.paths, metrics=inputs.metrics, today=today,
                              now=now, code_version=code_version, options=inputs.options,
                              market_max_age_days=inputs.market_max_age_days)
        version = ingest.dataset_version
        computed_at = now()
        stage("recompute C2C")
        c2c_report = c2c.recompute(session, inputs.scenarios_dir, version, on=as_of,
                                   now=computed_at, code_version=code_version,
                                   limits=inputs.options.limits)
        # A TCO scenario that names a C2C scenario runs the C2C model itself on this version.
        stage("recompute TCO")
        tco_report = tco.recompute(session, inputs.scenarios_dir, version, on=as_of,
                                   now=computed_at, code_version=code_version,
                                   limits=inputs.options.limits)
        # A serving scenario priced by a TCO option runs the TCO model itself on this version.
        stage("recompute serving")
        serving_report = serving.recompute(session, inputs.scenarios_dir, version, on=as_of,
                                           now=computed_at, code_version=code_version,
                                           limits=inputs.options.limits)
        stage("flags")
        flags = compute_flags(session, version, params=inputs.params,
                              code_version=code_version, now=computed_at)
        return LedgerUpdate(ingest, c2c_report, tco_report, flags, lock_wait_of(session),
                            serving_report)
