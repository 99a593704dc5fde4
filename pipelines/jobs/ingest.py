"""Ingest files into the ledger: one transaction per run, nothing lost.

For every file: keep its bytes (sha256), read it with the reader its content needs (a source
pack, or an adapter for Epoch AI, nccl-tests or MLPerf files), validate every row, append what
is new, supersede what the same source changed, store measured runs, and keep every rejected
row with its line, field and reason. rows read = accepted + unchanged + rejected, per file and
per run.
"""

from __future__ import annotations

import dataclasses
import gc
import gzip
import hashlib
import io
import json
import zlib
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime
from functools import cache
from operator import attrgetter
from pathlib import Path
from typing import Any

from db import queries, store
from db.engine import Engine, Session, writing
from db.schema import Item, Metric, Source
from models.bulk_rows import validate_rows
from models.digest import EMPTY_DIGEST, combine, observation_digest
from models.observations import (
    COLUMN_FIELD,
    CleanObservation,
    MetricDef,
    RowError,
)
from pipelines.inputs.adapters import mlperf_loadgen
from pipelines.inputs.adapters.base import (
    AdapterError,
    AdapterOptions,
    Beside,
    MeasurementRun,
    Parsed,
    date_in_name,
)
from pipelines.inputs.adapters.registry import (
    FOLDER_SUFFIXES,
    SOURCE_PACK,
    read_file,
    reader_name,
)
from pipelines.inputs.packs import MALFORMED, ItemDecl, Pack, PackError, PackRow, SourceDecl
from pipelines.jobs.price_index import store_price_index


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
    # Digests of the measured runs stored (not observations): they change the dataset version
    # too, so points ingested on their own reach the stages that read them (issue 30, case 5).
    measured_digests: list[str] = field(default_factory=list, repr=False)

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
    """Files as given, and readable files inside folders: each file once, in path order.

    The order of the arguments never changes what an ingest does: `ingest b.yaml a.yaml`
    reads a.yaml first, as `ingest a.yaml b.yaml` and `ingest .` do."""
    found: dict[str, Path] = {}
    for path in paths:
        inside = (p for p in path.rglob("*") if p.suffix.lower() in FOLDER_SUFFIXES
                  and p.is_file()) if path.is_dir() else [path]
        for file in inside:
            found.setdefault(str(file.resolve()), file)
    return [found[key] for key in sorted(found)]


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
    market_max_age_days: int | None = None,
    bulk: bool = True,
) -> IngestReport:
    """Ingest `paths` in one transaction and return what happened to every file.

    `target` is an engine (this ingest is its own transaction) or an open write session (a
    caller that commits the ingest together with what it computes from it).

    `now` is the knowledge clock: every observation of the run is recorded at its first tick.
    `options` is what the user said about the files (--item, --as-of) and the item aliases.
    `market_max_age_days`: the price index's age limit (Settings.market_max_age_days; None,
    no limit). `bulk`: validate a price list's plain rows column by column
    (models.bulk_rows); False checks every row alone, with the same result, slower.
    """
    # The reader of a price list dated by its data counts what is in force on `today`.
    options = dataclasses.replace(options or AdapterOptions(), today=today)
    files = expand_paths(paths)
    with _collector_paused(), writing(target, lock_timeout_seconds) as session:
        recorded_at = now()
        run = store.start_run(session, recorded_at, code_version)
        store.sync_metrics(session, [dataclasses.asdict(m) for m in metrics.values()])
        context = _RunContext(run.id, metrics, store.key_ids(session, Metric), today,
                              recorded_at, options, bulk)
        reports = []
        for path in files:
            report = _ingest_file(session, context, path)
            reports.append(report)
            if on_file is not None:
                on_file(report)
        store.finish_run(session, run, now())
        version = _dataset_version(session, recorded_at, run.id, reports)
        # The graph's first stage after ingest, in the same transaction: a version is never
        # without its price index.
        store_price_index(session, version.id, code_version=code_version, now=recorded_at,
                          max_age_days=market_max_age_days)
        return IngestReport(run.id, reports, version.id, version.content_hash,
                            dataset_changed=version.ingest_run_id == run.id)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector off while the ingest runs: a price list makes millions of
    short-lived rows, dicts and tuples, freed by reference counting, and the collector walked
    them all again and again (a sixth of a 100k-offer ingest's CPU). On again afterwards;
    the few cycles an ingest makes (ORM objects) are collected then."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _dataset_version(session: Session, cutoff: datetime, run_id: int,
                     reports: list[FileReport]) -> Any:
    """The version after this run: the latest if the live set is unchanged, else a new one
    whose digest is the latest's plus what was appended minus what was superseded."""
    latest = store.latest_dataset_version(session)
    added = [d for r in reports for d in r.added_digests]
    removed = [d for r in reports for d in r.removed_digests]
    measured = [d for r in reports for d in r.measured_digests]
    if latest is None:
        # The ledger's first version. When this run appended every observation it holds (a
        # fresh ledger), the live ones are those it added (it supersedes none of its own):
        # not read back (a price list's 100,000).
        digests = (queries.live_digests(session, cutoff)
                   if store.observed_besides(session, run_id) else added)
        digest, count = combine(EMPTY_DIGEST, [*digests, *measured]), len(digests)
    else:
        digest = combine(latest.content_hash, [*added, *measured], removed)
        count = latest.observation_count + len(added) - len(removed)
    if latest is not None and digest == latest.content_hash:
        return latest
    return store.record_dataset_version(session, digest, count, cutoff, run_id)


@dataclass
class _RunContext:
    """What every file of one ingest run shares."""

    run_id: int
    metrics: dict[str, MetricDef]
    metric_ids: dict[str, int]
    today: date
    recorded_at: datetime
    options: AdapterOptions
    bulk: bool = True
    # Declarations already written in this run, and ledger ids already looked up: a folder of
    # many small files of one source writes and asks for the same few rows once, not per file.
    declared: set[Hashable] = field(default_factory=set)
    ids: dict[str, dict[str, int]] = field(default_factory=lambda: {"item": {}, "source": {}})

    def new_declarations(self, kind: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Of these declarations, those not written identically earlier in this run."""
        fresh = []
        for row in rows:
            identity = _identity(kind, row)
            if identity not in self.declared:
                self.declared.add(identity)
                fresh.append(row)
        return fresh

    def ids_of(self, session: Session, kind: str, keys: set[str]) -> dict[str, int]:
        known = self.ids[kind]
        missing = {key for key in keys if key not in known}
        if missing:
            known.update(store.ids_of(session, {"item": Item, "source": Source}[kind], missing))
        return {key: known[key] for key in keys if key in known}


def _identity(kind: str, row: dict[str, Any]) -> Hashable:
    """A declaration's identity: its fields as a tuple (a price list declares 100,000 offer
    items, and JSON text of each cost seconds), as JSON text when a field is unhashable."""
    identity = (kind, tuple(row.items()))
    try:
        hash(identity)
    except TypeError:
        return (kind, json.dumps(row, sort_keys=True, default=str))
    return identity


def _ingest_file(session: Session, context: _RunContext, path: Path) -> FileReport:
    options = with_files_beside(context.options, path)
    options_json = options_identity(options, path.name)
    limit = context.options.limits.max_file_bytes
    size = _size(path)
    if size > limit:
        return _oversized_file(session, context, path, size, options_json)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise FileNotFoundError(f"{path}: cannot read ({exc.strerror})") from exc
    raw, is_new = store.keep_raw_file(session, data, path.name, context.recorded_at)
    previous = None if is_new else store.last_ingest_of(session, raw.id, options_json)
    # A file refused as a whole is read again: what refused it may have been its name or
    # folder (a catalog's cloud), not its bytes.
    if previous is not None and previous.outcome != "rejected_file":
        return _unchanged_file(session, context.run_id, raw.id, str(path), raw.sha256, previous)
    try:
        name, data = gunzipped(path, data, limit)
        parsed = read_file(name, data, options)
    except PackError as exc:  # AdapterError is one too: the file is unusable as a whole
        return _rejected_file(session, context, raw, path, exc.line, exc.reason, options_json)
    del data  # the parsed rows are what matter now; a large file's bytes need not stay
    return _ingest_parsed(session, context, raw.id, str(path), raw.sha256, parsed,
                          options_json, is_new)


def gunzipped(path: Path, data: bytes, limit: int) -> tuple[str, bytes]:
    """The name a reader sees and the bytes it reads: a `.gz` file's published bytes under
    its name without `.gz` (a price list kept gzipped), inflated no further than `limit`."""
    if path.suffix.lower() != ".gz":
        return reader_name(path), data
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as inflating:
            inflated = inflating.read(limit + 1)
    except (OSError, EOFError, zlib.error) as exc:
        raise AdapterError(None, f"not a readable gzip file: {exc}") from exc
    if len(inflated) > limit:
        raise AdapterError(None, f"inflates to more than SPECLEDGER_MAX_FILE_BYTES "
                                 f"({limit:,} bytes): refused")
    return reader_name(path.with_suffix("")), inflated


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError as exc:
        raise FileNotFoundError(f"{path}: cannot read ({exc.strerror})") from exc


def _oversized_file(session: Session, context: _RunContext, path: Path, size: int,
                    options_json: str) -> FileReport:
    """A file beyond max_file_bytes: rejected unread; its sha256 is kept, not its bytes."""
    sha = store.file_sha256(path)
    raw = store.keep_raw_file_digest(session, sha, path.name, size, context.recorded_at)
    limit = context.options.limits.max_file_bytes
    reason = (f"the file is {size:,} bytes, more than SPECLEDGER_MAX_FILE_BYTES ({limit:,}); "
              "split it, or raise the limit if the machine has the memory")
    return _rejected_file(session, context, raw, path, None, reason, options_json)


def _rejected_file(session: Session, context: _RunContext, raw: Any, path: Path,
                   line: int | None, reason: str, options_json: str) -> FileReport:
    report = FileReport(str(path), raw.sha256, "rejected_file", format="unknown", read=1,
                        rejected=1, errors=[RowError(line, "file", reason)])
    _record(session, context.run_id, raw.id, report, {}, options_json)
    return report


def options_identity(options: AdapterOptions, name: str = "") -> str:
    """What the user said about a file, the date in its name when --as-of gives none, and the
    digest of the files beside it that its reader reads, as canonical JSON (part of a
    re-ingest's identity: the same bytes named with a later date are a later snapshot, read
    again, issue 27; a loadgen log whose systems JSON changed is read again)."""
    dated = date_in_name(name) if options.as_of is None else None
    beside = options.beside
    said = {"item": options.item, "as_of": options.as_of and options.as_of.isoformat(),
            "dated": dated and dated.isoformat(),
            "beside": _beside_digest(beside) if beside != Beside() else None}
    return json.dumps({k: v for k, v in said.items() if v is not None}, sort_keys=True)


def _beside_digest(beside: Beside) -> str:
    found = beside.system_json
    system = hashlib.sha256(found[1]).hexdigest()[:16] if found else "-"
    return f"{beside.place}:{system}{'+summary' if beside.summary else ''}"


def with_files_beside(options: AdapterOptions, path: Path) -> AdapterOptions:
    """`options` with the files a loadgen log's reader needs from its submission tree: the
    systems JSON of its system (<submitter>/systems/<system>.json, beside results/), and
    whether its run folder holds the run's summary. Other files: `options` as they are."""
    if path.name not in mlperf_loadgen.LOG_NAMES:
        return options
    place = mlperf_loadgen.place_of(path.as_posix())
    summary = path.name == mlperf_loadgen.DETAIL and (path.parent
                                                       / mlperf_loadgen.SUMMARY).is_file()
    system_json = None
    if place is not None:
        results = next(p for p in path.parents if p.name == "results")
        described = results.parent / "systems" / f"{place.system}.json"
        try:
            if described.is_file() and described.stat().st_size <= options.limits.max_file_bytes:
                system_json = (f"systems/{described.name}", described.read_bytes())
        except OSError:
            system_json = None
    return dataclasses.replace(options, beside=Beside(system_json, summary,
                                                      reader_name(path)))


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


def _ingest_parsed(session: Session, context: _RunContext, raw_id: int, path: str, sha: str,
                   parsed: Parsed, options_json: str, is_new: bool) -> FileReport:
    pack = parsed.pack
    sources = context.new_declarations("source", [_fields(s) for s in pack.sources])
    if sources:
        store.upsert_sources(session, sources, context.recorded_at)
    items = context.new_declarations(parsed.format, [_fields(i) for i in pack.items])
    added: dict[str, int] = {}
    if items and parsed.format == SOURCE_PACK:
        added = store.upsert_items(session, items)
    elif items:  # a file's names never rename the ledger's items; it may add them and dates
        added = store.add_items(session, items, dates=("released_on", "announced_on"))
    context.ids["item"].update(added)  # known without a look-up
    # Only the keys this file names: the time per file must not grow with the ledger.
    item_ids = context.ids_of(session, "item", _named(pack.rows, "item"))
    source_ids = context.ids_of(session, "source", _named(pack.rows, "source"))
    prechecked, to_validate = _precheck(pack)
    # Items added just now have no observation to supersede: not looked up.
    new_items = {item_ids[key] for key in added if key in item_ids}
    appended = _validate_and_append(session, context, to_validate, item_ids, source_ids,
                                    set(source_ids) - set(pack.invalid_sources), raw_id,
                                    new_items)
    unread = [RowError(r.line, r.field, r.reason) for r in parsed.rejected]
    errors = sorted(prechecked + appended.errors + unread, key=lambda e: (e.line or 0, e.field))
    runs = parsed.runs if is_new else _new_runs(session, raw_id, parsed.runs)
    repeated_rows = sum(len(run.points) or 1 for run in parsed.runs
                        if not any(run is kept for kept in runs))
    report = FileReport(path, sha, "ingested", format=parsed.format, read=parsed.read,
                        accepted=appended.accepted + parsed.measured_rows - repeated_rows,
                        unchanged=appended.unchanged + repeated_rows,
                        rejected=len(errors), errors=errors, notes=_notes(parsed),
                        measured_runs=len(runs),
                        added_digests=appended.added_digests,
                        removed_digests=appended.removed_digests,
                        measured_digests=[_run_digest(run) for run in runs])
    error_lines = {e.line for e in errors}
    raw_text = {row.line: row.shown() for row in pack.rows if row.line in error_lines}
    raw_text.update({r.line: r.raw_text for r in parsed.rejected})
    ingest_file = _record(session, context.run_id, raw_id, report, raw_text, options_json)
    for run in runs:
        store.add_measurement_run(session, ingest_file, _run_fields(run),
                                  [dataclasses.asdict(p) for p in run.points])
    return report


def _named(rows: list[PackRow], field_name: str) -> set[str]:
    texts: set[str] = set()  # each distinct text stripped once (a price list's one source)
    others: list[Any] = []
    for row in rows:
        value = row.fields.get(field_name)
        if value.__class__ is str:
            texts.add(value)
        elif isinstance(value, str | int | float):
            others.append(value)
    return {text.strip() for text in texts} | {str(value).strip() for value in others}


_CHUNK_ROWS = 20_000  # rows validated and appended at a time: bounds a large file's memory


@dataclass
class _Appended:
    accepted: int = 0
    unchanged: int = 0
    errors: list[RowError] = field(default_factory=list)
    added_digests: list[str] = field(default_factory=list)
    removed_digests: list[str] = field(default_factory=list)


def _validate_and_append(session: Session, context: _RunContext, rows: list[PackRow],
                         item_ids: dict[str, int], source_ids: dict[str, int],
                         source_keys: set[str], raw_id: int,
                         new_items: set[int] | None = None) -> _Appended:
    """Validate and append `rows` a chunk at a time (duplicates are found across chunks)."""
    appended = _Appended()
    seen: dict[tuple[str, str, str, date], int | None] = {}
    items = set(item_ids)
    for chunk in _chunks(rows, _CHUNK_ROWS):
        clean, errors = validate_rows([(row.line, _with_column(row)) for row in chunk],
                                      metrics=context.metrics, items=items,
                                      sources=source_keys, today=context.today, seen=seen,
                                      bulk=context.bulk)
        clean, errors = _whole_lines(chunk, clean, errors)
        result = store.append_observations(
            session, [_observation_row(o, item_ids, context.metric_ids, source_ids,
                                       context.run_id, raw_id) for o in clean],
            context.recorded_at, new_items or frozenset())
        appended.accepted += result.accepted
        appended.unchanged += result.unchanged
        appended.errors += errors + [_conflict(session, c) for c in result.conflicts]
        appended.added_digests += result.added_digests
        appended.removed_digests += result.removed_digests
    return appended


def _chunks(rows: list[PackRow], size: int) -> Iterator[list[PackRow]]:
    """`rows` about `size` at a time, never splitting the rows of a whole line."""
    start = 0
    while start < len(rows):
        end = min(start + size, len(rows))
        while end < len(rows) and rows[end].whole_line and rows[end].line == rows[end - 1].line:
            end += 1
        yield rows[start:end]
        start = end


def _whole_lines(chunk: list[PackRow], clean: list[CleanObservation],
                 errors: list[RowError]) -> tuple[list[CleanObservation], list[RowError]]:
    """A line whose rows stand or fall together loses its clean rows when one is rejected,
    each kept as a rejected row that names the reason."""
    whole = {row.line for row in chunk if row.whole_line}
    failed = {e.line: e for e in errors if e.line in whole}
    if not failed:
        return clean, errors
    column = {(row.line, row.fields.get("metric")): row.column for row in chunk}
    dropped = [RowError(o.line, column.get((o.line, o.metric)) or "value",
                        f"not stored: the same line's {failed[o.line].field} was rejected "
                        f"({failed[o.line].reason})")
               for o in clean if o.line in failed]
    return [o for o in clean if o.line not in failed], errors + dropped


def _conflict(session: Session, conflict: store.Conflict) -> RowError:
    """A row that contradicts what another file of the same ingest said of the same fact."""
    earlier = store.where_observed(session, conflict.earlier_id)
    return RowError(conflict.line, "value", (
        f"conflicts with {earlier} in the same ingest (same source, item, metric and as_of, "
        "another value); ingest the newer file in a later run to supersede the older"))


def _new_runs(session: Session, raw_id: int, runs: list[MeasurementRun]) -> list[MeasurementRun]:
    """Of runs read again from bytes the ledger has (other --item/--as-of), those not stored
    yet: the same run is never stored twice; naming its item when it had none is new."""
    stored = [(s.pop("item_key"), s) for s in store.measurement_runs_of(session, raw_id)]
    fresh = []
    for run in runs:
        fields = _run_fields(run)
        item = fields.pop("item_key")
        if not any(other == fields and (item is None or item == stored_item)
                   for stored_item, other in stored):
            fresh.append(run)
    return fresh


def _with_column(row: PackRow) -> dict[str, Any]:
    """The row's fields, telling the validator which column of the file a value came from."""
    return row.fields if row.column is None else {**row.fields, COLUMN_FIELD: row.column}


def _notes(parsed: Parsed) -> list[str]:
    notes = list(parsed.notes)
    # A reader that says what it skipped and why (the price lists) needs no generic count.
    if parsed.skipped_lines and not any("skipped" in note for note in notes):
        notes.append(f"{parsed.skipped_lines} lines that are not results skipped "
                     "(logs, comments, device listings)")
    return notes


def _run_digest(run: MeasurementRun) -> str:
    """sha256 of a measured run's fields and points: what it adds to the dataset digest."""
    fields = json.dumps(_run_fields(run), sort_keys=True, default=str)
    points = json.dumps([dataclasses.asdict(p) for p in run.points], sort_keys=True, default=str)
    return observation_digest(["measured-run", fields, points])


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
        if MALFORMED in row.fields:
            reason = f"malformed row: {row.fields[MALFORMED]}"
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
    # attrgetter, not dataclasses.asdict: asdict deep-copies and cost 20% of a 100k-row ingest.
    content = _CONTENT(obs)
    # An offer's terms are part of its content; a figure without them hashes as it always did.
    offer = obs.offer
    terms = () if offer is None else offer.as_tuple()
    digest = observation_digest((obs.item, obs.metric, obs.source, obs.as_of, *content, *terms))
    return dict(zip(_ROW_COLUMNS, (
        *content, *(terms or _NO_OFFER), obs.as_of, item_ids[obs.item], metric_ids[obs.metric],
        source_ids[obs.source], run_id, raw_id, obs.line, digest), strict=True))


_CONTENT = attrgetter(*store.CONTENT_FIELDS)
_NO_OFFER = (None,) * len(store.OFFER_COLUMNS)  # a figure that is not a market price
_ROW_COLUMNS = (*store.CONTENT_FIELDS, *store.OFFER_COLUMNS, "as_of", "item_id", "metric_id",
                "source_id", "ingest_run_id", "raw_file_id", "line", "content_sha256")


def _fields(declaration: SourceDecl | ItemDecl) -> dict[str, Any]:
    """A flat declaration's fields (dataclasses.asdict deep-copies: seconds for the 100,000
    offer items of a price list)."""
    names, values = _field_getter(type(declaration))
    return dict(zip(names, values(declaration), strict=True))


@cache
def _field_getter(kind: type) -> tuple[tuple[str, ...], Callable[[Any], tuple[Any, ...]]]:
    """A dataclass's field names, and a getter of their values as a tuple (once per class)."""
    names = tuple(f.name for f in dataclasses.fields(kind))
    return names, attrgetter(*names) if len(names) > 1 else (lambda d: (getattr(d, names[0]),))


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
