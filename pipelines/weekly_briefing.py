"""The `weekly-briefing` flow: ingest data/sources, recompute, flag, render the PDF, publish
the warehouse.

Tasks are thin wrappers over pipelines.jobs; every setting arrives as a flow parameter.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

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


@flow(name="weekly-briefing", flow_run_name="weekly-briefing {as_of}")
def weekly_briefing(as_of: date, home: Path, database_url: str | None = None,
                    sources_dir: Path | None = None,
                    scenarios_dir: Path | None = None) -> jobs.RunResult:
    """Ingest the source packs, recompute the C2C and TCO scenarios, then publish and render for
    the resulting dataset version."""
    folders = {k: v for k, v in (("sources_dir", sources_dir), ("scenarios_dir", scenarios_dir))
               if v is not None}
    settings = Settings(home=home, database_url=database_url, **folders)
    report = ingest_sources(settings)
    c2c = recompute_c2c(settings, report.dataset_version, as_of)
    # A TCO scenario that names a C2C scenario runs the C2C model itself on this version.
    tco = recompute_tco(settings, report.dataset_version, as_of)
    flags = compute_flags(settings, report.dataset_version)
    # Render before publishing, so the warehouse's briefing table lists this briefing too.
    briefing = render_briefing(settings, report.dataset_version, as_of)
    warehouse = publish_warehouse(settings, report.dataset_version, as_of)
    return jobs.RunResult(report, warehouse, briefing, c2c=c2c, tco=tco, flags=flags)
