"""The `ingest-files` flow: ingest files or folders on demand (a deployment's ad-hoc run)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from prefect import flow

from pipelines.jobs import steps as jobs
from pipelines.jobs.ingest import IngestReport
from pipelines.settings import Settings


@flow(name="ingest-files", flow_run_name="ingest-files {paths}")
def ingest_files(paths: list[Path], home: Path | None = None, item: str | None = None,
                 as_of: date | None = None) -> IngestReport:
    """Ingest `paths` (source packs or files users already have) into the ledger; `item` and
    `as_of` say what the files cannot. The ledger and other settings come from the worker's
    SPECLEDGER_* environment (a database URL is never a parameter: the UI shows those)."""
    settings = Settings(home=home) if home is not None else Settings()
    return jobs.ingest(settings, list(paths), today=jobs.utc_now().date(), item=item,
                       as_of=as_of)
