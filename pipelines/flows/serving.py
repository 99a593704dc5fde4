"""`specledger serve`: the weekly briefing on its schedule and the on-demand ingest, served from
this process against the Prefect server PREFECT_API_URL names."""

from __future__ import annotations

from pathlib import Path

from prefect import serve
from prefect.schedules import Cron

from pipelines.flows.ingest_files import ingest_files
from pipelines.flows.weekly_briefing import weekly_briefing


def serve_deployments(home: Path, cron: str, timezone: str) -> None:
    """Serve both deployments until interrupted; `home` is their runs' SPECLEDGER_HOME."""
    weekly = weekly_briefing.to_deployment(
        name="weekly", schedules=[Cron(cron, timezone=timezone)], concurrency_limit=1,
        parameters={"home": str(home)})
    ingest = ingest_files.to_deployment(name="ingest", parameters={"home": str(home)})
    serve(weekly, ingest)
