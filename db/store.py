"""Writes to the ledger. Append-only: an observation's value is never updated; a changed
value from the same source closes the old row (superseded_at) and appends a new one."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from datetime import datetime
from itertools import repeat
from operator import itemgetter
from pathlib import Path
from typing import Any

from sqlalchemy import Select, Table, bindparam, func, insert, select, update
from sqlalchemy.orm import Session

from db.schema import (
    DatasetVersion,
    InferencePoint,
    IngestFile,
    IngestRun,
    Item,
    MeasurementRun,
    Metric,
    NcclPoint,
    Observation,
    RawFile,
    RejectedRow,
    Source,
)

# Fields that make two observations of the same fact "the same"; any difference supersedes.
# Their digest (with the fact's identity) is the observation's content_sha256.
CONTENT_FIELDS = ("value", "low", "high", "value_written", "unit_written", "value_kind",
                  "status", "quote", "as_of_precision", "valid_to")
_CHUNK = 500  # bound the size of IN (...) lists
# A market price's terms, in the order of models.observations.OfferTerms.as_tuple().
OFFER_COLUMNS = ("offer_provider", "offer_term", "offer_region", "offer_gpu", "offer_units",
                 "offer_instance", "offer_currency", "offer_valid_until")



@dataclass(frozen=True)
class Conflict:
    """A row that another file of the same run contradicts: not appended, rejected."""

    line: int | None
    earlier_id: int  # the observation the same run appended first


@dataclass(frozen=True)
class AppendResult:
    accepted: int
    unchanged: int
    added_digests: list[str]  # content_sha256 of the rows appended
    removed_digests: list[str]  # content_sha256 of the rows superseded
    conflicts: list[Conflict] = field(default_factory=list)

    @property
    def superseded(self) -> int:
        return len(self.removed_digests)


def start_run(session: Session, started_at: datetime, code_version: str) -> IngestRun:
    run = IngestRun(started_at=started_at, code_version=code_version)
    session.add(run)
    session.flush()
    return run


def finish_run(session: Session, run: IngestRun, finished_at: datetime) -> None:
    """Close a run with its totals, summed from its files."""
    totals = session.execute(
        select(func.coalesce(func.sum(IngestFile.rows_read), 0),
               func.coalesce(func.sum(IngestFile.rows_accepted), 0),
               func.coalesce(func.sum(IngestFile.rows_unchanged), 0),
               func.coalesce(func.sum(IngestFile.rows_rejected), 0))
        .where(IngestFile.ingest_run_id == run.id)
    ).one()
    run.rows_read, run.rows_accepted, run.rows_unchanged, run.rows_rejected = totals
    run.finished_at = finished_at
    session.flush()


def keep_raw_file(session: Session, data: bytes, file_name: str,
                  recorded_at: datetime) -> tuple[RawFile, bool]:
    """Store the file's bytes by sha256; return (row, whether it is new to the ledger)."""
    sha = hashlib.sha256(data).hexdigest()
    existing = session.scalar(select(RawFile).where(RawFile.sha256 == sha))
    if existing is not None and existing.size_bytes == len(existing.content):
        return existing, False
    if existing is not None:  # known before only by its digest (too large then): keep it now
        existing.content = data
        session.flush()
        return existing, True
    raw = RawFile(sha256=sha, file_name=file_name, size_bytes=len(data), content=data,
                  recorded_at=recorded_at)
    session.add(raw)
    session.flush()
    return raw, True


def keep_raw_file_digest(session: Session, sha: str, file_name: str, size: int,
                         recorded_at: datetime) -> RawFile:
    """Record a file known only by its digest (too large to keep): no bytes are stored."""
    existing = session.scalar(select(RawFile).where(RawFile.sha256 == sha))
    if existing is not None:
        return existing
    raw = RawFile(sha256=sha, file_name=file_name, size_bytes=size, content=b"",
                  recorded_at=recorded_at)
    session.add(raw)
    session.flush()
    return raw


def file_sha256(path: Path) -> str:
    """A file's sha256, read in blocks (for files too large to hold)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def last_ingest_of(session: Session, raw_file_id: int, options: str = "{}") -> IngestFile | None:
    """The latest ingest of these bytes read with these options (--item, --as-of)."""
    return session.scalar(select(IngestFile).where(IngestFile.raw_file_id == raw_file_id,
                                                   IngestFile.options == options)
                          .order_by(IngestFile.id.desc()).limit(1))


def record_file(session: Session, **fields: Any) -> IngestFile:
    ingest_file = IngestFile(**fields)
    session.add(ingest_file)
    session.flush()
    return ingest_file


def record_rejections(session: Session, ingest_file: IngestFile,
                      rejections: Iterable[tuple[int | None, str, str, str | None]]) -> None:
    """Keep rejected rows (line, field, reason, raw text) for review. A NUL, which PostgreSQL
    text cannot hold, is kept as the four characters `\\x00` (the raw file has the byte)."""
    rows = [{"ingest_run_id": ingest_file.ingest_run_id, "ingest_file_id": ingest_file.id,
             "raw_file_id": ingest_file.raw_file_id, "line": line, "field": _no_nul(field),
             "reason": _no_nul(reason), "raw_text": _no_nul(raw_text)}
            for line, field, reason, raw_text in rejections]
    if rows:
        session.execute(insert(RejectedRow), rows)


def _no_nul(text: str | None) -> str | None:
    return text.replace("\x00", "\\x00") if text is not None and "\x00" in text else text


def rejections_of(session: Session, ingest_file_id: int) -> list[RejectedRow]:
    return list(session.scalars(select(RejectedRow).where(RejectedRow.ingest_file_id
                                                          == ingest_file_id)
                                .order_by(RejectedRow.line, RejectedRow.id)))


def sync_metrics(session: Session, metrics: Iterable[dict[str, Any]]) -> None:
    """Insert or refresh metric definitions (the catalogue is the schema of the numbers)."""
    _upsert_by_key(session, Metric, metrics)


def upsert_items(session: Session, items: Iterable[dict[str, Any]]) -> dict[str, int]:
    """Insert or refresh items; key -> id of those inserted."""
    return _upsert_by_key(session, Item, items)


def upsert_sources(session: Session, sources: Iterable[dict[str, Any]],
                   recorded_at: datetime) -> None:
    _upsert_by_key(session, Source, ({**s, "recorded_at": recorded_at} for s in sources),
                   keep=("recorded_at",))


def _upsert_by_key(session: Session, model: Any, rows: Iterable[dict[str, Any]],
                   keep: Sequence[str] = (), only: Sequence[str] | None = None,
                   ) -> dict[str, int]:
    """Insert rows whose key is new; refresh existing rows' fields except `keep` — or, with
    `only`, just those fields, and only where the row gives a value. Key -> id of the rows
    inserted."""
    rows = list(rows)
    existing: dict[str, Any] = {}
    # Which keys exist, through Core; only those rows are loaded as ORM objects (a fresh
    # price list's 100,000 offer items load none).
    known = ids_of(session, model, {r["key"] for r in rows})
    for chunk in _chunks(sorted(known)):
        existing.update((row.key, row) for row in session.scalars(
            select(model).where(model.key.in_(chunk))))
    new: dict[str, dict[str, Any]] = {}
    for fields in rows:
        current = existing.get(fields["key"])
        if current is None and fields["key"] not in new:
            new[fields["key"]] = dict(fields)
            continue
        refresh = ((name, value) for name, value in fields.items() if name not in keep) \
            if only is None else ((name, fields[name]) for name in only
                                  if fields.get(name) is not None)
        for name, value in refresh:
            if current is None:
                new[fields["key"]][name] = value
            elif getattr(current, name) != value:
                setattr(current, name, value)
    session.flush()
    # New rows through Core, not ORM objects: a price list declares 100,000 offer items, and
    # building an object for each cost seconds.
    if not new:
        return {}
    columns = sorted({name for fields in new.values() for name in fields})
    # The table, not the mapped class: the ORM's bulk insert still handles each row.
    # Rows that give every column go as they are (a price list's items all do).
    listed = list(new.values())
    before = session.connection().execute(select(func.max(model.id))).scalar() or 0
    insert_rows(session, model.__table__, listed if all(
        len(f) == len(columns) for f in listed) else [{c: f.get(c) for c in columns}
                                                      for f in listed])
    # Their ids in one read, not 200 look-ups: new ids are above the largest before (the
    # read may also see rows another transaction committed meanwhile: only ours are kept).
    # Any not found there (a sequence set back by hand) are looked up by key.
    added = {key: row_id for key, row_id in session.connection().execute(
        select(model.key, model.id).where(model.id > before)).fetchall() if key in new}
    if len(added) < len(new):
        added.update(ids_of(session, model, set(new) - set(added)))
    return added


def add_items(session: Session, items: Iterable[dict[str, Any]],
              dates: Sequence[str] = ()) -> dict[str, int]:
    """Add items the ledger lacks; of existing ones, only set the given date fields (a file's
    name for a chip never renames the ledger's item). Key -> id of the items added."""
    return _upsert_by_key(session, Item, items, only=dates)


# Where a run's points go, by its kind: an inference run's serving points, else (nccl-tests)
# its size points.
_POINT_TABLES: dict[str, Any] = {"inference": InferencePoint}


def add_measurement_run(session: Session, ingest_file: IngestFile, fields: dict[str, Any],
                        points: Sequence[dict[str, Any]]) -> MeasurementRun:
    """Store a measured run of one file and its points (an nccl-tests run's size points, an
    inference run's serving points)."""
    run = MeasurementRun(ingest_run_id=ingest_file.ingest_run_id,
                         ingest_file_id=ingest_file.id, raw_file_id=ingest_file.raw_file_id,
                         **fields)
    session.add(run)
    session.flush()
    table = _POINT_TABLES.get(fields.get("kind", ""), NcclPoint)
    for chunk in _chunks(list(points), 5_000):
        session.execute(insert(table), [{**p, "measurement_run_id": run.id} for p in chunk])
    return run


def key_ids(session: Session, model: Any) -> dict[str, int]:
    return dict(session.execute(select(model.key, model.id)).tuples().all())


def ids_of(session: Session, model: Any, keys: Iterable[str]) -> dict[str, int]:
    """key -> id of the given keys that exist (an indexed lookup, whatever the table's size)."""
    session.flush()  # Core reads below: what the session holds must be in the database
    return dict(_rows_in(session, lambda listed: select(model.key, model.id).where(
        model.key.in_(listed)), sorted(keys)))


def measurement_runs_of(session: Session, raw_file_id: int) -> list[dict[str, Any]]:
    """The measured runs already stored from one raw file, as their stored fields."""
    columns = [c for c in MeasurementRun.__table__.columns
               if c.name not in ("id", "ingest_run_id", "ingest_file_id", "raw_file_id")]
    rows = session.execute(select(*columns).where(MeasurementRun.raw_file_id == raw_file_id))
    return [dict(row._mapping) for row in rows]


def observed_besides(session: Session, run_id: int) -> bool:
    """Whether the ledger holds an observation that ingest run `run_id` did not append."""
    session.flush()  # a Core read below
    return session.execute(select(Observation.id).where(
        Observation.ingest_run_id != run_id).limit(1)).first() is not None


def where_observed(session: Session, observation_id: int) -> str:
    """"file.yaml line 12": where an observation came from, for messages."""
    name, line = session.execute(
        select(RawFile.file_name, Observation.line).join(
            RawFile, RawFile.id == Observation.raw_file_id)
        .where(Observation.id == observation_id)).one()
    return f"{name} line {line}" if line is not None else name


def append_observations(session: Session, rows: Sequence[dict[str, Any]],
                        recorded_at: datetime,
                        new_items: AbstractSet[int] = frozenset()) -> AppendResult:
    """Append new facts, skip unchanged ones, supersede changed ones (same source and fact).

    Each row carries item_id, metric_id, source_id, as_of, the CONTENT_FIELDS, its
    content_sha256, provenance (ingest_run_id, raw_file_id, line). A changed fact that this
    same run appended from another file is a conflict, not a supersession: one run has no
    order, so neither value may replace the other. `new_items`: ids of items inserted by
    this same transaction just before, which cannot have an observation yet (not looked up:
    a fresh price list's 100,000 offer items).
    """
    live = _live_by_identity(session, {(r["source_id"], r["item_id"]) for r in rows
                                       if r["item_id"] not in new_items})
    # No live observation of these items (a fresh price list's): every row is new, and
    # 100,000 rows need not be looked for.
    inserts, superseded, conflicts, unchanged = (
        _against_live(rows, live) if live else (list(rows), [], [], 0))
    _close(session, [observation_id for observation_id, _ in superseded], recorded_at)
    insert_rows(session, Observation.__table__, inserts,
                {"recorded_at": recorded_at, "superseded_at": None})
    return AppendResult(len(inserts), unchanged, [r["content_sha256"] for r in inserts],
                        [digest for _, digest in superseded], conflicts)


def _against_live(rows: Sequence[dict[str, Any]], live: dict[tuple[Any, ...], Any],
                  ) -> tuple[list[dict[str, Any]], list[tuple[int, str]], list[Conflict], int]:
    """Rows sorted against the live observations of their facts: (rows to insert, live
    observations they supersede as (id, digest), conflicts, how many are unchanged)."""
    inserts: list[dict[str, Any]] = []
    superseded: list[tuple[int, str]] = []
    conflicts: list[Conflict] = []
    unchanged = 0
    for row in rows:
        identity = (row["source_id"], row["item_id"], row["metric_id"], row["as_of"])
        current = live.get(identity)
        if current is not None and current[1] == row["content_sha256"]:
            unchanged += 1
            continue
        if current is not None and current[2] == row["ingest_run_id"]:
            conflicts.append(Conflict(row["line"], current[0]))
            continue
        if current is not None:
            superseded.append((current[0], current[1]))
        inserts.append(row)
    return inserts, superseded, conflicts, unchanged


def insert_rows(session: Session, table: Table, rows: Sequence[dict[str, Any]],
                constants: dict[str, Any] | None = None, size: int = 5_000) -> None:
    """INSERT `rows` (each with the first row's keys), and `constants` in every row, `size`
    at a time: one executemany per batch of the statement compiled once, each value through
    its column type's bind processor (SQLite's dates and times become text exactly as
    SQLAlchemy writes them). What Connection.execute does with a list of rows, without its
    per-row machinery, which was a third of a 100k-offer price list's append."""
    if not rows:
        return
    connection = session.connection()
    dialect = connection.dialect
    constants = constants or {}
    names = [name for name in rows[0] if name not in constants]
    compiled = insert(table).compile(dialect=dialect, column_keys=[*names, *constants])
    order = list(compiled.positiontup) if compiled.positional else [*names, *constants]
    # A constant is converted once; a row's own values each time, a column at a time.
    fixed = tuple(_convert(_processor(table, dialect, name), constants[name])
                  for name in constants)
    converted = [(index, processor) for index, name in enumerate(names)
                 if (processor := _processor(table, dialect, name)) is not None]
    pick = itemgetter(*names) if len(names) > 1 else (lambda row: (row[names[0]],))
    # A row's values then the constants, in the statement's order.
    given = [*names, *constants]
    places = [given.index(name) for name in order]
    for chunk in _chunks(rows, size):
        values = [pick(row) for row in chunk]
        if converted or fixed or given != order:
            values = _arranged(values, converted, fixed, places)
        params: list[Any] = (values if compiled.positional else
                             [dict(zip(order, v, strict=True)) for v in values])
        connection.exec_driver_sql(compiled.string, params)


def _arranged(values: list[tuple[Any, ...]], converted: list[tuple[int, Any]],
              fixed: tuple[Any, ...], places: list[int]) -> list[tuple[Any, ...]]:
    """Rows of a row's own values, each converted column through its processor and the
    constants appended, in the statement's order (`places`: where each of its parameters is
    among the row's values then the constants). A column at a time: no tuple is built per row
    but the one sent."""
    columns: list[Any] = list(zip(*values, strict=True))
    for index, processor in converted:
        columns[index] = tuple(map(processor, columns[index]))
    columns += [repeat(value, len(values)) for value in fixed]
    return list(zip(*(columns[place] for place in places), strict=True))


def _processor(table: Table, dialect: Any, name: str) -> Any:
    """The column's bind processor, or None when its type needs none."""
    return table.c[name].type.dialect_impl(dialect).bind_processor(dialect)


def _convert(processor: Any, value: Any) -> Any:
    return value if processor is None else processor(value)


def _live_by_identity(session: Session,
                      source_items: set[tuple[int, int]]) -> dict[tuple[Any, ...], Any]:
    """Live observations of the given (source, item) pairs:
    identity -> (id, digest, ingest run)."""
    live: dict[tuple[Any, ...], Any] = {}
    session.flush()  # Core reads below
    dialect = session.connection().dialect
    # The driver's value of a date (SQLite's text) as SQLAlchemy reads it.
    as_date = Observation.__table__.c.as_of.type.dialect_impl(dialect).result_processor(
        dialect, None) or (lambda value: value)

    def query(listed: list[Any]) -> Select[Any]:
        return select(Observation.id, Observation.item_id, Observation.metric_id,
                      Observation.as_of, Observation.content_sha256,
                      Observation.ingest_run_id).where(
            Observation.source_id == bindparam("source_id"), Observation.item_id.in_(listed),
            Observation.superseded_at.is_(None))

    for source_id in sorted({source for source, _ in source_items}):
        item_ids = sorted(item for source, item in source_items if source == source_id)
        for row_id, item_id, metric_id, as_of, digest, run_id in _rows_in(
                session, query, item_ids, {"source_id": source_id}):
            live[(source_id, item_id, metric_id, as_date(as_of))] = (row_id, digest, run_id)
    return live


def _rows_in(session: Session, query: Callable[[list[Any]], Select[Any]],
             values: Sequence[Any], params: dict[str, Any] | None = None) -> Iterator[Any]:
    """The rows of `query(IN list)` over `values`, _CHUNK at a time, as the driver gives them.

    Each statement is compiled once per chunk length and run as the driver's SQL: SQLAlchemy
    renders an IN list's every value on every run, seconds for a price list's 100,000 keys."""
    connection = session.connection()
    compiled: dict[int, tuple[Any, list[str]]] = {}
    for chunk in _chunks(values):
        if len(chunk) not in compiled:
            names = [f"in_{index}" for index in range(len(chunk))]
            compiled[len(chunk)] = (query([bindparam(name) for name in names]).compile(
                dialect=connection.dialect), names)
        statement, names = compiled[len(chunk)]
        given = {**(params or {}), **dict(zip(names, chunk, strict=True))}
        yield from connection.exec_driver_sql(statement.string, tuple(
            given[name] for name in statement.positiontup) if statement.positional else given
        ).fetchall()  # at once: a row at a time through the result costs as much as the query


def _close(session: Session, observation_ids: list[int], at: datetime) -> None:
    for chunk in _chunks(observation_ids):
        session.execute(update(Observation).where(Observation.id.in_(chunk))
                        .values(superseded_at=at))


def _chunks(values: Sequence[Any], size: int = _CHUNK) -> Iterable[Sequence[Any]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


def latest_dataset_version(session: Session) -> DatasetVersion | None:
    return session.scalar(select(DatasetVersion).order_by(DatasetVersion.id.desc()).limit(1))


def record_dataset_version(session: Session, content_hash: str, observation_count: int,
                           cutoff_at: datetime, run_id: int | None) -> DatasetVersion:
    """Record a new version (the caller checked that the content changed)."""
    version = DatasetVersion(cutoff_at=cutoff_at, content_hash=content_hash,
                             observation_count=observation_count, ingest_run_id=run_id,
                             created_at=cutoff_at)
    session.add(version)
    session.flush()
    return version
