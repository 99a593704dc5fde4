"""The `weekly-briefing` flow: ingest data/sources, recompute, flag, render the PDF, publish
the warehouse.

Tasks are thin wrappers over pipelines.jobs; every setting arrives as a flow parameter.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from prefect.runtime import flow_run

from pipelines import jobs
from pipelines.flags import FlagReport
from pipelines.ingest import IngestReport
from pipelines.recompute import RecomputeReport
from pipelines.settings import Settings


@task(name="ingest-sources", cache_policy=NO_CACHE)
def ingest_sources(settings: Settings) -> IngestReport:
    # "Future" means after the real today, whatever date the briefing reports on.
    return jobs.ingest(settings, [settings.sources_dir], today=jobs.utc_now().date())


@task(name="recompute-c2c", cache_policy=NO_CACHE)
def recompute_c2c(settings: Settings, dataset_version: int, as_of: date) -> RecomputeReport:
    return jobs.recompute(settings, "c2c", dataset_version, on=as_of)


@task(name="recompute-tco", cache_policy=NO_CACHE)
def recompute_tco(settings: Settings, dataset_version: int, as_of: date) -> RecomputeReport:
    return jobs.recompute(settings, "tco", dataset_version, on=as_of)


@task(name="compute-flags", cache_policy=NO_CACHE)
def compute_flags(settings: Settings, dataset_version: int) -> FlagReport:
    return jobs.flags(settings, dataset_version)


@task(name="publish-warehouse", cache_policy=NO_CACHE)
def publish_warehouse(settings: Settings, dataset_version: int, as_of: date) -> Path:
    return jobs.publish(settings, dataset_version, as_of=as_of, built_at=jobs.utc_now())


@task(name="render-briefing", cache_policy=NO_CACHE)
def render_briefing(settings: Settings, dataset_version: int, as_of: date) -> Path:
    return jobs.render_briefing(settings, dataset_version, as_of=as_of).path


def run_name() -> str:
    """A scheduled run passes no date: it reports on the day it runs (UTC)."""
    as_of = flow_run.parameters.get("as_of") or jobs.utc_now().date()
    return f"weekly-briefing {as_of}"


@flow(name="weekly-briefing", flow_run_name=run_name)
def weekly_briefing(as_of: date | None = None, home: Path | None = None,
                    database_url: str | None = None, sources_dir: Path | None = None,
                    scenarios_dir: Path | None = None) -> jobs.RunResult:
    """Ingest the source packs, recompute the C2C and TCO scenarios, compute the flags, render
    the briefing and publish the warehouse for the resulting dataset version. Parameters left
    out come from the worker's SPECLEDGER_* environment; `as_of` defaults to today (UTC)."""
    as_of = as_of or jobs.utc_now().date()
    given = (("home", home), ("database_url", database_url), ("sources_dir", sources_dir),
             ("scenarios_dir", scenarios_dir))
    settings = Settings(**{k: v for k, v in given if v is not None})
    report = ingest_sources(settings)
    c2c = recompute_c2c(settings, report.dataset_version, as_of)
    # A TCO scenario that names a C2C scenario runs the C2C model itself on this version.
    tco = recompute_tco(settings, report.dataset_version, as_of)
    flags = compute_flags(settings, report.dataset_version)
    # Render before publishing, so the warehouse's briefing table lists this briefing too.
    briefing = render_briefing(settings, report.dataset_version, as_of)
    warehouse = publish_warehouse(settings, report.dataset_version, as_of)
    return jobs.RunResult(report, warehouse, briefing, c2c=c2c, tco=tco, flags=flags)
