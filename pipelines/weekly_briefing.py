"""The `weekly-briefing` flow: ingest data/sources, publish the warehouse, render the PDF.

Tasks are thin wrappers over pipelines.jobs; every setting arrives as a flow parameter.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from pipelines import jobs
from pipelines.ingest import IngestReport
from pipelines.settings import Settings


@task(name="ingest-sources", cache_policy=NO_CACHE)
def ingest_sources(settings: Settings) -> IngestReport:
    # "Future" means after the real today, whatever date the briefing reports on.
    return jobs.ingest(settings, [settings.sources_dir], today=jobs.utc_now().date())


@task(name="publish-warehouse", cache_policy=NO_CACHE)
def publish_warehouse(settings: Settings, dataset_version: int, as_of: date) -> Path:
    return jobs.publish(settings, dataset_version, as_of=as_of, built_at=jobs.utc_now())


@task(name="render-briefing", cache_policy=NO_CACHE)
def render_briefing(settings: Settings, dataset_version: int, as_of: date) -> Path:
    return jobs.render_briefing(settings, dataset_version, as_of=as_of)


@flow(name="weekly-briefing", flow_run_name="weekly-briefing {as_of}")
def weekly_briefing(as_of: date, home: Path, database_url: str | None = None,
                    sources_dir: Path | None = None) -> jobs.RunResult:
    """Ingest the source packs, then publish and render for the resulting dataset version."""
    settings = Settings(home=home, database_url=database_url,
                        **({"sources_dir": sources_dir} if sources_dir else {}))
    report = ingest_sources(settings)
    warehouse = publish_warehouse(settings, report.dataset_version, as_of)
    briefing = render_briefing(settings, report.dataset_version, as_of)
    return jobs.RunResult(report, warehouse, briefing)
