"""What a person reads about one weekly run in the Prefect UI: a markdown summary and the
rejected rows as a table. Pure text from the run's reports and the version's stored flags;
pipelines/flows/artifacts.py hands them to Prefect."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from models.trends.types import SEVERITIES
from pipelines.delivery.deliver import DeliveryReport
from pipelines.fetch.remote import FetchReport
from pipelines.jobs.ingest import FileReport
from pipelines.jobs.recompute import RecomputeReport
from pipelines.jobs.steps import RunResult

# A table artifact is for reading, not for bulk review (`specledger review` lists them all).
MAX_REJECTED_ROWS = 500


def summary_markdown(result: RunResult, flags: Iterable[Mapping[str, Any]]) -> str:
    """The run in a page: outputs and their delivery, files and rows, results, flags, changed
    recommendations."""
    flags = list(flags)
    ingest = result.ingest
    version = (f"**{ingest.dataset_version}** (new)" if ingest.dataset_changed
               else f"**{ingest.dataset_version}** (unchanged: no new or changed observation)")
    lines = [f"# specledger run: dataset version {ingest.dataset_version}", "",
             f"- Dataset version: {version}, content hash `{ingest.dataset_hash[:16]}`",
             f"- Ledger write lock: {result.lock_wait.describe()}",
             f"- Briefing: [{result.briefing.name}]({_file_url(result.briefing)}) "
             f"`{result.briefing}`",
             f"- Warehouse: [{result.warehouse.name}]({_file_url(result.warehouse)}) "
             f"`{result.warehouse}`", ""]
    lines += _delivery_section(result.delivery, result.briefing)
    lines += _rows_section(ingest.files)
    lines += _remote_section(result.remote)
    lines += _results_section(result.c2c, result.tco, result.serving)
    lines += _flags_section(flags)
    lines += _moves_section(flags)
    return "\n".join(lines).rstrip() + "\n"


def rejected_rows_table(files: Iterable[FileReport]) -> list[dict[str, Any]]:
    """One row per rejected row of the run: file, line, field, reason, and whether the verdict
    is new (file ingested now) or stands from an earlier run (same bytes, unchanged file)."""
    return [{"file": Path(f.path).name, "line": e.line, "field": e.field, "reason": e.reason,
             "verdict": "standing" if f.outcome == "unchanged_file" else "new"}
            for f in files for e in f.errors][:MAX_REJECTED_ROWS]


def _file_url(path: Path) -> str:
    return path.resolve().as_uri()


def _rows_section(files: list[FileReport]) -> list[str]:
    lines = ["## Rows per source file", "",
             "| file | outcome | read | accepted | unchanged | rejected |",
             "|---|---|---:|---:|---:|---:|"]
    lines += [f"| {_cell(Path(f.path).name)} | {f.outcome} | {f.read} | {f.accepted} "
              f"| {f.unchanged} | {f.rejected} |" for f in files]
    totals = [sum(getattr(f, n) for f in files) for n in ("read", "accepted", "unchanged",
                                                          "rejected")]
    lines += ["| **total** | | " + " | ".join(f"**{t}**" for t in totals) + " |", ""]
    if totals[3]:
        lines += [f"{totals[3]} rejected rows are kept in the ledger for review "
                  "(`specledger review`); the table artifact lists them.", ""]
    return lines


def _delivery_section(delivery: DeliveryReport | None, briefing: Path) -> list[str]:
    """Each channel's outcome; a failed one first, in bold, saying where the briefing is."""
    if delivery is None or not delivery.outcomes:
        return ["## Delivery", "", "No delivery configured (SPECLEDGER_SMTP_HOST and "
                "SPECLEDGER_MAIL_TO for e-mail, SPECLEDGER_DELIVERY_DIR for a folder).", ""]
    lines = ["## Delivery", ""]
    lines += [f"- **failed** after {o.attempts} attempts: {o.channel} {_cell(o.target)}: "
              f"{_cell(o.error or '')} — the briefing is kept at `{briefing}`"
              for o in delivery.failed]
    lines += [f"- **not recorded** in the ledger: {o.channel} {_cell(o.target)}: "
              f"{_cell(o.unrecorded)}" for o in delivery.outcomes if o.unrecorded]
    lines += [""] if len(lines) > 2 else []
    lines += ["| channel | target | status | attempts | message id |", "|---|---|---|---:|---|"]
    lines += [f"| {o.channel} | {_cell(o.target)} | {o.status} | {o.attempts} "
              f"| {_cell(o.message_id or '')} |" for o in delivery.outcomes]
    return lines + [""]


def _remote_section(remote: FetchReport) -> list[str]:
    if not remote.sources:
        return []
    lines = ["## Remote sources", "", "| source | outcome | HTTP | attempts | detail |",
             "|---|---|---:|---:|---|"]
    lines += [f"| {_cell(s.name)} | {s.outcome.replace('_', ' ')} | {s.http_status or ''} "
              f"| {s.attempts} | {_cell(s.error or s.url)} |" for s in remote.sources]
    if remote.failed:
        lines += ["", f"{len(remote.failed)} remote sources could not be fetched; the run went "
                      "on with what the ledger holds, and the briefing lists them as stale."]
    return lines + [""]


def _results_section(c2c: RecomputeReport, tco: RecomputeReport,
                     serving: RecomputeReport | None = None) -> list[str]:
    lines = ["## Scenarios", ""]
    for label, report in (("C2C", c2c), ("TCO", tco), ("Serving", serving)):
        if report is None:
            continue
        lines.append(f"- {label}: {len(report.computed)} computed, {len(report.reused)} reused "
                     f"(inputs unchanged), {len(report.unchanged)} already stored, "
                     f"{len(report.failed)} failed")
        lines += [f"  - **failed** {_cell(name)}: {_cell(reason)}"
                  for name, reason in report.failed.items()]
        if report.deferred:
            lines.append(f"  - {len(report.deferred)} new or changed, not stored: dataset "
                         f"version {report.dataset_version} has a briefing; they are computed "
                         f"with the next version ({_cell(', '.join(report.deferred))})")
    return lines + [""]


def _flags_section(flags: list[Mapping[str, Any]]) -> list[str]:
    by_severity = Counter(f["severity"] for f in flags)
    counts = ", ".join(f"{by_severity[s]} {s}" for s in SEVERITIES if by_severity[s])
    lines = ["## Flags", "", f"{len(flags)} flags on this version ({counts or 'none'}).", ""]
    serious = [f for f in flags if f["severity"] != "info" and f["kind"] != "result_moved"]
    lines += [f"- **{f['severity']}** {f['kind']}: {_cell(f['message'])}" for f in serious]
    return lines + ([""] if serious else [])


def _moves_section(flags: list[Mapping[str, Any]]) -> list[str]:
    moves = [f for f in flags if f["kind"] == "result_moved"]
    if not moves:
        return ["## Recommendations", "",
                "No scenario's recommendation moved since the previous dataset version.", ""]
    return ["## Recommendations that changed", "",
            *[f"- {_cell(f['subject'])}: {_cell(f['message'])}" for f in moves], ""]


def _cell(text: str) -> str:
    """Text safe inside a markdown table cell or list item (one line, no column breaks)."""
    return " ".join(str(text).split()).replace("|", "\\|")
