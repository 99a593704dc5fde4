"""Hand a run's summary and rejected rows to Prefect as artifacts (shown on the flow run's
page in the UI, and under the keys below across runs)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any
from uuid import UUID

from prefect.artifacts import create_markdown_artifact, create_table_artifact

from pipelines.flows.run_summary import MAX_REJECTED_ROWS, rejected_rows_table, summary_markdown
from pipelines.jobs.steps import RunResult

SUMMARY_KEY = "specledger-run-summary"
REJECTED_KEY = "specledger-rejected-rows"
REJECTED_COLUMNS = ("file", "line", "field", "reason", "verdict")


def publish_run_artifacts(result: RunResult,
                          flags: Iterable[Mapping[str, Any]]) -> tuple[UUID, UUID]:
    """The markdown summary and the rejected-rows table of one run; their artifact ids."""
    version = result.ingest.dataset_version
    summary = create_markdown_artifact(
        markdown=summary_markdown(result, flags), key=SUMMARY_KEY,
        description=f"specledger weekly run, dataset version {version}")
    rows = rejected_rows_table(result.ingest.files)
    total = result.ingest.total("rejected")
    shown = f"the first {MAX_REJECTED_ROWS} of " if total > len(rows) else ""
    table = create_table_artifact(
        # Columns, not records: an empty table still shows its header.
        table={c: [r[c] for r in rows] for c in REJECTED_COLUMNS}, key=REJECTED_KEY,
        description=f"Rejected rows of dataset version {version}: {shown}{total} "
                    "(all kept in the ledger; `specledger review` lists them)")
    return summary, table
