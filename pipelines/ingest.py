"""Ingest files into the ledger: one transaction per run, nothing lost.

For every file: keep its bytes (sha256), read it with the reader its content needs (a source
pack, or an adapter for Epoch AI, nccl-tests or MLPerf files), validate every row, append what
is new, supersede what the same source changed, store measured runs, and keep every rejected
row with its line, field and reason. rows read = accepted + unchanged + rejected, per file and
per run.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from db import queries, store
from db.engine import Engine, Session, writing
from db.schema import Item, Metric, Source
from models.digest import EMPTY_DIGEST, combine, observation_digest
from models.observations import (
    COLUMN_FIELD,
    CleanObservation,
    MetricDef,
    RowError,
    validate_rows,
)
from pipelines.adapters.base import AdapterOptions, MeasurementRun, Parsed
from pipelines.adapters.registry import FOLDER_SUFFIXES, SOURCE_PACK, read_file
from pipelines.packs import Pack, PackError, PackRow


@dataclass
class FileReport:
    path: str
    sha256: str
    outcome: str  # ingested | unchanged_file | rejected_file
    format: str = SOURCE_PACK
    read: int = 0
    accepted: int = 0
    unchanged: int = 0
    rejected: int = 0
    errors: list[RowError] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # e.g. unknown columns, skipped lines
    measured_runs: int = 0
    added_digests: list[str] = field(default_factory=list, repr=False)
    removed_digests: list[str] = field(default_factory=list, repr=False)

    @property
    def superseded(self) -> int:
        return len(self.removed_digests)

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "sha256": self.sha256, "outcome": self.outcome,
                "format": self.format, "notes": self.notes, "measured_runs": self.measured_runs,
                "read": self.read, "accepted": self.accepted, "unchanged": self.unchanged,
                "rejected": self.rejected, "superseded": self.superseded,
                "errors": [dataclasses.asdict(e) for e in self.errors]}


@dataclass
class IngestReport:
    run_id: int
    files: list[FileReport]
    dataset_version: int
    dataset_hash: str
    dataset_changed: bool

    def total(self, name: str) -> int:
        return sum(getattr(f, name) for f in self.files)

    def to_json(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "files": [f.to_json() for f in self.files],
                "dataset_version": self.dataset_version, "dataset_hash": self.dataset_hash,
                "dataset_changed": self.dataset_changed}


def expand_paths(paths: Iterable[Path]) -> list[Path]:
    """Files as given, and readable files inside folders (sorted, so runs are repeatable)."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*")
                                if p.suffix.lower() in FOLDER_SUFFIXES and p.is_file()))
        else:
            found.append(path)
    return found


def ingest_paths(
    target: Engine | Session,
    paths: Sequence[Path],
    *,
    metrics: dict[str, MetricDef],
    today: date,
    now: Callable[[], datetime],
    code_version: str,
    lock_timeout_seconds: float = 60.0,
    on_file: Callable[[FileReport], None] | None = None,
    options: AdapterOptions | None = None,
) -> IngestReport:
    """Ingest `paths` in one transaction and return what happened to every file.

    `target` is an engine (this ingest is its own transaction) or an open write session (a
    caller that commits the ingest together with what it computes from it).

    `now` is the knowledge clock: every observation of the run is recorded at its first tick.
    `options` is what the user said about the files (--item, --as-of) and the item aliases.
    """
    options = options or AdapterOptions()
    files = expand_paths(paths)
    with writing(target, lock_timeout_seconds) as session:
        recorded_at = now()
        run = store.start_run(session, recorded_at, code_version)
        store.sync_metrics(session, [dataclasses.asdict(m) for m in metrics.values()])
        reports = []
        for path in files:
            report = _ingest_file(session, run.id, path, metrics, today, recorded_at, options)
            reports.append(report)
            if on_file is not None:
                on_file(report)
        store.finish_run(session, run, now())
        version = _dataset_version(session, recorded_at, run.id, reports)
        return IngestReport(run.id, reports, version.id, version.content_hash,
                            dataset_changed=version.ingest_run_id == run.id)


def _dataset_version(session: Session, cutoff: datetime, run_id: int,
                     reports: list[FileReport]) -> Any:
    """The version after this run: the latest if the live set is unchanged, else a new one
    whose digest is the latest's plus what was appended minus what was superseded."""
    latest = store.latest_dataset_version(session)
    added = [d for r in reports for d in r.added_digests]
    removed = [d for r in reports for d in r.removed_digests]
    if latest is None:
        digests = queries.live_digests(session, cutoff)
        digest, count = combine(EMPTY_DIGEST, digests), len(digests)
    else:
        digest = combine(latest.content_hash, added, removed)
        count = latest.observation_count + len(added) - len(removed)
    if latest is not None and digest == latest.content_hash:
        return latest
    return store.record_dataset_version(session, digest, count, cutoff, run_id)


def _ingest_file(session: Session, run_id: int, path: Path, metrics: dict[str, MetricDef],
                 today: date, recorded_at: datetime, options: AdapterOptions) -> FileReport:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise FileNotFoundError(f"{path}: cannot read ({exc.strerror})") from exc
    raw, is_new = store.keep_raw_file(session, data, path.name, recorded_at)
    options_json = options_identity(options)
    previous = None if is_new else store.last_ingest_of(session, raw.id, options_json)
    if previous is not None:
        return _unchanged_file(session, run_id, raw.id, str(path), raw.sha256, previous)
    try:
        parsed = read_file(path.name, data, options)
    except PackError as exc:  # AdapterError is one too: the file is unusable as a whole
        report = FileReport(str(path), raw.sha256, "rejected_file", format="unknown", read=1,
                            rejected=1, errors=[RowError(exc.line, "file", exc.reason)])
        _record(session, run_id, raw.id, report, {}, options_json)
        return report
    return _ingest_parsed(session, run_id, raw.id, str(path), raw.sha256, parsed, metrics,
                          today, recorded_at, options_json)


def options_identity(options: AdapterOptions) -> str:
    """What the user said about a file, as canonical JSON (part of a re-ingest's identity)."""
    said = {"item": options.item, "as_of": options.as_of and options.as_of.isoformat()}
    return json.dumps({k: v for k, v in said.items() if v is not None}, sort_keys=True)


def _unchanged_file(session: Session, run_id: int, raw_id: int, path: str, sha: str,
                    previous: Any) -> FileReport:
    """The same bytes were ingested before: nothing changes; the earlier verdicts stand."""
    errors = [RowError(r.line, r.field, r.reason)
              for r in store.rejections_of(session, previous.id)]
    report = FileReport(path, sha, "unchanged_file", format=previous.format,
                        read=previous.rows_read,
                        unchanged=previous.rows_read - previous.rows_rejected,
                        rejected=previous.rows_rejected, errors=errors)
    store.record_file(session, ingest_run_id=run_id, raw_file_id=raw_id, path=path,
                      outcome=report.outcome, format=previous.format, options=previous.options,
                      rows_read=report.read, rows_accepted=0,
                      rows_unchanged=report.unchanged, rows_rejected=report.rejected)
    return report


def _ingest_parsed(session: Session, run_id: int, raw_id: int, path: str, sha: str,
                   parsed: Parsed, metrics: dict[str, MetricDef], today: date,
                   recorded_at: datetime, options_json: str) -> FileReport:
    pack = parsed.pack
    store.upsert_sources(session, [dataclasses.asdict(s) for s in pack.sources], recorded_at)
    items = [dataclasses.asdict(i) for i in pack.items]
    if parsed.format == SOURCE_PACK:
        store.upsert_items(session, items)
    else:  # a file's names never rename the ledger's items; it may add them and their dates
        store.add_items(session, items, dates=("released_on", "announced_on"))
    item_ids, source_ids = store.key_ids(session, Item), store.key_ids(session, Source)
    source_keys = set(source_ids) - set(pack.invalid_sources)
    prechecked, to_validate = _precheck(pack)
    clean, errors = validate_rows([(row.line, _with_column(row)) for row in to_validate],
                                  metrics=metrics, items=set(item_ids), sources=source_keys,
                                  today=today)
    unread = [RowError(r.line, r.field, r.reason) for r in parsed.rejected]
    errors = sorted(prechecked + errors + unread, key=lambda e: (e.line or 0, e.field))
    metric_ids = store.key_ids(session, Metric)
    result = store.append_observations(
        session, [_observation_row(o, item_ids, metric_ids, source_ids, run_id, raw_id)
                  for o in clean], recorded_at)
    report = FileReport(path, sha, "ingested", format=parsed.format, read=parsed.read,
                        accepted=result.accepted + parsed.measured_rows, unchanged=result.unchanged,
                        rejected=len(errors), errors=errors, notes=_notes(parsed),
                        measured_runs=len(parsed.runs),
                        added_digests=result.added_digests,
                        removed_digests=result.removed_digests)
    raw_text = {row.line: row.raw_text for row in pack.rows}
    raw_text.update({r.line: r.raw_text for r in parsed.rejected})
    ingest_file = _record(session, run_id, raw_id, report, raw_text, options_json)
    for run in parsed.runs:
        store.add_measurement_run(session, ingest_file, _run_fields(run),
                                  [dataclasses.asdict(p) for p in run.points])
    return report


def _with_column(row: PackRow) -> dict[str, Any]:
    """The row's fields, telling the validator which column of the file a value came from."""
    return row.fields if row.column is None else {**row.fields, COLUMN_FIELD: row.column}


def _notes(parsed: Parsed) -> list[str]:
    notes = list(parsed.notes)
    if parsed.skipped_lines:
        notes.append(f"{parsed.skipped_lines} lines that are not results skipped "
                     "(logs, comments, device listings)")
    return notes


def _run_fields(run: MeasurementRun) -> dict[str, Any]:
    fields = {f.name: getattr(run, f.name) for f in dataclasses.fields(run)
              if f.name not in ("item", "metadata", "points")}
    return {**fields, "item_key": run.item,
            "metadata_json": json.dumps(run.metadata, sort_keys=True, default=str)}


def _precheck(pack: Pack) -> tuple[list[RowError], list[PackRow]]:
    """Rows that are not rows (garbled CSV, a YAML scalar) or belong to a broken source."""
    errors: list[RowError] = []
    valid: list[PackRow] = []
    for row in pack.rows:
        if "__malformed__" in row.fields:
            reason = f"malformed row: {row.fields['__malformed__']}"
            errors.append(RowError(row.line, "row", reason))
        elif (source := row.fields.get("source")) in pack.invalid_sources:
            invalid = pack.invalid_sources[source]
            errors.append(RowError(row.line, "source", f"source {source!r} is invalid: "
                                                       f"{invalid.reason}"))
        else:
            valid.append(row)
    return errors, valid


def _observation_row(obs: CleanObservation, item_ids: dict[str, int],
                     metric_ids: dict[str, int], source_ids: dict[str, int], run_id: int,
                     raw_id: int) -> dict[str, Any]:
    # getattr, not dataclasses.asdict: asdict deep-copies and cost 20% of a 100k-row ingest.
    content = {name: getattr(obs, name) for name in store.CONTENT_FIELDS}
    digest = observation_digest((obs.item, obs.metric, obs.source, obs.as_of,
                                 *content.values()))
    return {**content, "as_of": obs.as_of, "item_id": item_ids[obs.item],
            "metric_id": metric_ids[obs.metric], "source_id": source_ids[obs.source],
            "ingest_run_id": run_id, "raw_file_id": raw_id, "line": obs.line,
            "content_sha256": digest}


def _record(session: Session, run_id: int, raw_id: int, report: FileReport,
            raw_text_by_line: dict[int | None, str], options_json: str) -> Any:
    ingest_file = store.record_file(
        session, ingest_run_id=run_id, raw_file_id=raw_id, path=report.path,
        outcome=report.outcome, format=report.format, options=options_json,
        rows_read=report.read, rows_accepted=report.accepted,
        rows_unchanged=report.unchanged, rows_rejected=report.rejected)
    store.record_rejections(session, ingest_file, (
        (e.line, e.field, e.reason, raw_text_by_line.get(e.line)) for e in report.errors))
    return ingest_file
