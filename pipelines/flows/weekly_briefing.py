"""The `weekly-briefing` flow: fetch the sources declared by URL, update the ledger (ingest,
recompute, flag: one transaction), render the PDF, deliver it to its readers (e-mail, a folder),
publish the warehouse, leave a summary for the Prefect UI.

Tasks are thin wrappers over pipelines.jobs.steps; settings come from the worker's SPECLEDGER_*
environment (never a flow parameter: a database URL would show in the UI).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.client.schemas.objects import TaskRun
from prefect.runtime import flow_run
from prefect.states import State

from db.engine import is_connection_lost
from pipelines.delivery import deliver as delivery
from pipelines.delivery.deliver import DeliveryReport
from pipelines.fetch import remote
from pipelines.fetch.remote import FetchReport
from pipelines.flows.artifacts import publish_run_artifacts
from pipelines.jobs import steps as jobs
from pipelines.jobs.ledger_update import LedgerUpdate
from pipelines.settings import Settings

# The run's knowledge clock: every task reads "now" through it, never the wall clock directly,
# so one run has one clock (a test sets it to the dates its briefings report on).
clock: Callable[[], datetime] = jobs.utc_now


def now() -> datetime:
    """The knowledge clock's reading (the real UTC time unless `clock` was set)."""
    return clock()


def retry_on_lost_connection(_task: Any, _run: TaskRun, state: State) -> bool:
    """Retry a ledger update whose database connection dropped (the transaction rolled back,
    so a retry starts clean); anything else fails at once."""
    exc = state.result(raise_on_failure=False)
    return isinstance(exc, BaseException) and is_connection_lost(exc)


@task(name="fetch-remote-sources", cache_policy=NO_CACHE)
def fetch_remote_sources(settings: Settings) -> FetchReport:
    fetched = remote.fetch_remote_sources(settings, now=now())
    logger = get_run_logger()
    for source in fetched.failed:  # the run goes on; the briefing lists the source as stale
        if not source.unreachable:
            logger.warning("Remote source not fetched: %s", source.describe())
    if any(s.unreachable for s in fetched.failed):  # offline: one line, not one per source
        logger.warning("Remote sources: %s", fetched.summary())
    return fetched


@task(name="update-ledger", cache_policy=NO_CACHE, retry_condition_fn=retry_on_lost_connection)
def update_ledger(settings: Settings, paths: list[Path], as_of: date,
                  on_stage: Callable[[str], None] | None = None) -> LedgerUpdate:
    update = jobs.update(settings, paths, as_of=as_of, now=now, on_stage=on_stage)
    if update.lock_wait.waited:
        get_run_logger().warning("%s", update.lock_wait.describe().capitalize())
    return update


@task(name="render-briefing", cache_policy=NO_CACHE, retry_condition_fn=retry_on_lost_connection)
def render_briefing(settings: Settings, dataset_version: int,
                    as_of: date) -> jobs.RenderedBriefing:
    # The version compared with may lack stages (a standalone ingest's): they run first.
    jobs.prepare_briefing(settings, dataset_version, as_of=as_of, now=now)
    return jobs.render_briefing(settings, dataset_version, as_of=as_of, now=now)


# Only finding the briefing's ledger row can raise (before anything is sent): a retry after a
# lost connection never sends twice.
@task(name="deliver-briefing", cache_policy=NO_CACHE, retry_condition_fn=retry_on_lost_connection)
def deliver_briefing(settings: Settings, briefing: jobs.RenderedBriefing,
                     as_of: date) -> DeliveryReport:
    """E-mail the briefing and copy it into the delivery folder, as configured. A failed
    delivery is logged and reported, and the run goes on: the briefing stays where it is."""
    if not delivery.channels(settings):
        return DeliveryReport()
    try:
        briefing_id = delivery.briefing_id_of(settings, briefing.path)
    except LookupError as exc:
        # Without its ledger row no outcome can be recorded: nothing is sent, the run goes on.
        report = delivery.not_attempted(settings, str(exc))
    else:
        report = delivery.deliver_briefing(
            settings, briefing_id, briefing.path, briefing.appendix,
            delivery.briefing_subject(as_of, briefing.dataset_version),
            delivery.briefing_body(briefing.digest, briefing.path, briefing.appendix), now=now)
    for failed in report.failed:
        get_run_logger().warning("Briefing not delivered: %s", failed.describe())
    return report


@task(name="publish-warehouse", cache_policy=NO_CACHE,
      retry_condition_fn=retry_on_lost_connection)
def publish_warehouse(settings: Settings, dataset_version: int, as_of: date) -> Path:
    """Publish after any other publisher of the file; a run that waited for one, or found
    the file already holding this version or a newer one, says so and succeeds."""
    published = jobs.publish(settings, dataset_version, as_of=as_of, built_at=now())
    if published.outcome != "built" or published.wait.waited:
        get_run_logger().warning("Warehouse %s %s", published.path, published.describe())
    return published.path


@task(name="run-summary", cache_policy=NO_CACHE)
def run_summary(settings: Settings, result: jobs.RunResult) -> None:
    publish_run_artifacts(result, jobs.stored_flags(settings, result.ingest.dataset_version))


def run_name() -> str:
    """A scheduled run passes no date: it reports on the day it runs (UTC)."""
    as_of = flow_run.parameters.get("as_of") or now().date()
    return f"weekly-briefing {as_of}"


@flow(name="weekly-briefing", flow_run_name=run_name)
def weekly_briefing(as_of: date | None = None, home: Path | None = None,
                    sources_dir: Path | None = None,
                    scenarios_dir: Path | None = None,
                    offline: bool | None = None,
                    on_stage: Callable[[str], None] | None = None) -> jobs.RunResult:
    """Ingest the source packs, recompute the C2C and TCO scenarios and compute the flags (one
    ledger transaction), render the briefing, deliver it and publish the warehouse for the
    resulting dataset version. Parameters left out come from the worker's SPECLEDGER_* environment;
    `as_of` defaults to today (UTC). `on_stage` hears each stage's name as it starts (the CLI's
    progress on a terminal; a deployment passes none)."""
    stage = on_stage or (lambda name: None)
    as_of = as_of or now().date()
    given = (("home", home), ("sources_dir", sources_dir), ("scenarios_dir", scenarios_dir),
             ("offline", offline))
    settings = Settings(**{k: v for k, v in given if v is not None})
    stage("fetch remote sources")
    fetched = fetch_remote_sources(settings)
    # The steps that read or write the ledger retry a lost connection (all are safe to repeat).
    update, render, deliver, publish = (t.with_options(
        retries=settings.ledger_retries, retry_delay_seconds=settings.ledger_retry_delay_seconds)
        for t in (update_ledger, render_briefing, deliver_briefing, publish_warehouse))
    ledger = update(settings, [settings.sources_dir, *fetched.paths_to_ingest], as_of, on_stage)
    # Render and deliver before publishing, so the warehouse lists this briefing and its
    # deliveries too.
    stage("render the briefing")
    briefing = render(settings, ledger.dataset_version, as_of)
    stage("deliver the briefing")
    delivered = deliver(settings, briefing, as_of)
    stage("publish warehouse.duckdb")
    warehouse = publish(settings, ledger.dataset_version, as_of)
    result = jobs.RunResult(ledger, warehouse, briefing.path, fetched, delivery=delivered,
                            briefing_reused=briefing.reused)
    run_summary(settings, result)
    return result
