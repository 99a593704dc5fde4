"""The main job's steps as plain functions: ingest, publish, render. Flows wrap these."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from db import queries
from db.engine import Engine, Session, make_engine, upgrade
from db.warehouse import WarehouseMeta, publish_warehouse
from models.resolve import SOURCE_KIND_RANK
from pipelines import c2c, tco
from pipelines.adapters.base import AdapterOptions
from pipelines.adapters.registry import load_aliases
from pipelines.briefing_context import briefing_context
from pipelines.catalog import load_metrics
from pipelines.ingest import FileReport, IngestReport, ingest_paths
from pipelines.recompute import RecomputeReport
from pipelines.settings import Settings
from reports.briefing import render_pdf


def code_version() -> str:
    try:
        return version("specledger")
    except PackageNotFoundError:  # running from a source tree that was not installed
        return "0+unknown"


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class RunResult:
    ingest: IngestReport
    warehouse: Path
    briefing: Path
    c2c: RecomputeReport | None = None
    tco: RecomputeReport | None = None


def open_ledger(settings: Settings) -> Engine:
    """Migrate the ledger to the current schema and return an engine on it."""
    upgrade(settings.resolved_database_url)
    return connect_ledger(settings)


def connect_ledger(settings: Settings) -> Engine:
    """An engine on a ledger that is already migrated (readers after an ingest)."""
    return make_engine(settings.resolved_database_url, settings.lock_timeout_seconds)


def ingest(settings: Settings, paths: list[Path], *, today: date,
           now: Callable[[], datetime] = utc_now,
           on_file: Callable[[FileReport], None] | None = None,
           item: str | None = None, as_of: date | None = None) -> IngestReport:
    """Ingest `paths`; `item` and `as_of` say what the files cannot (see AdapterOptions)."""
    options = AdapterOptions(item=item, as_of=as_of, aliases=item_aliases(settings))
    engine = open_ledger(settings)
    try:
        return ingest_paths(engine, paths, metrics=load_metrics(settings.catalog_path),
                            today=today, now=now, code_version=code_version(),
                            lock_timeout_seconds=settings.lock_timeout_seconds, on_file=on_file,
                            options=options)
    finally:
        engine.dispose()


def item_aliases(settings: Settings) -> dict[str, str]:
    """The alias table (absent file: no aliases, every name becomes its own item)."""
    path = settings.aliases_path
    return load_aliases(path.read_text(encoding="utf-8")) if path.exists() else {}


_RECOMPUTE = {"c2c": c2c.recompute, "tco": tco.recompute}


def recompute(settings: Settings, kind: str, dataset_version: int, *, on: date,
              now: Callable[[], datetime] = utc_now) -> RecomputeReport:
    """Results of one model (c2c or tco) for every scenario of that kind in
    settings.scenarios_dir, for a dataset version."""
    engine = connect_ledger(settings)
    try:
        return _RECOMPUTE[kind](engine, settings.scenarios_dir, dataset_version, on=on,
                                now=now(), code_version=code_version(),
                                lock_timeout_seconds=settings.lock_timeout_seconds)
    finally:
        engine.dispose()


def publish(settings: Settings, dataset_version: int, *, as_of: date, built_at: datetime) -> Path:
    """Rebuild warehouse.duckdb for a dataset version."""
    engine = connect_ledger(settings)
    try:
        with Session(engine) as session:
            version = queries.dataset_version(session, dataset_version)
            meta = WarehouseMeta(version.id, version.content_hash, version.cutoff_at, as_of,
                                 built_at, code_version())
        return publish_warehouse(engine, settings.warehouse_path, meta, SOURCE_KIND_RANK)
    finally:
        engine.dispose()


def render_briefing(settings: Settings, dataset_version: int, *, as_of: date) -> Path:
    """Render briefing-<as_of>.pdf for a dataset version, written atomically."""
    engine = connect_ledger(settings)
    try:
        with Session(engine) as session:
            version = queries.dataset_version(session, dataset_version)
            context = briefing_context(session, as_of=as_of, known=version.cutoff_at,
                                       version=version, code_version=code_version())
    finally:
        engine.dispose()
    target = settings.briefings_dir / f"briefing-{as_of.isoformat()}.pdf"
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_bytes(render_pdf(context))
    tmp.replace(target)
    return target

