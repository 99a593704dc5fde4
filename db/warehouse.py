"""Publish the analyst warehouse: a DuckDB file rebuilt from the ledger, never the record.

Built into a temporary file beside the target, checked (db/warehouse_checks.py) and moved into
place with os.replace, so a reader sees either the previous warehouse or the new one, never
half of one, and a connection open on the old file keeps reading it. Written in the v1.5.0
storage format so the duckdb CLI analysts use (1.5.x) can open it.

Publishers of one file queue on its lock (db/warehouse_lock.py), each building its own
temporary file; one that finds the file already holding its version (published while it
waited) or a newer version of the same ledger leaves it as it is.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

import duckdb
import numpy as np
from sqlalchemy import Connection, Engine, TextClause, bindparam, text

from db.marts import MARTS, mart_checks
from db.schema import UTCDateTime
from db.warehouse_checks import CHECKS, TableChecks, WarehouseCheckError, run_checks
from db.warehouse_lock import PublishWait, WarehouseBusyError, publish_lock

__all__ = ["WarehouseMeta", "Published", "publish_version", "publish_warehouse",
           "WarehouseWriteError", "WarehouseBusyError", "WarehouseCheckError", "PublishWait"]

SQL_DIR = Path(__file__).resolve().parent / "sql"
# Tables, then the flag, briefing and delivery tables and resolved_span, then the macros and
# views, and the temporary staging tables the ledger's observations arrive in.
SQL_FILES = ("warehouse.sql", "outputs.sql", "resolved_span.sql", "macros.sql", "staging.sql")
# Tables computed in DuckDB from the loaded ones, in order.
MART_FILES = ("build_observation.sql", "build_resolved_span.sql")
STORAGE_VERSION = "v1.5.0"
# Ledger rows fetched and inserted at a time: bounded memory, few round trips.
CHUNK_ROWS = 100_000

# Ledger SELECTs feeding each warehouse table, columns in DDL order.
_LOADS = {
    "source": "select key, title, publisher, url, kind, published_on, retrieved_on from source",
    "item": "select key, name, kind, vendor, family, announced_on, released_on from item",
    "metric": "select key, unit, counts, scope, direction, min_value, max_value, description "
              "from metric",
    # Ids, not keys: build_observation.sql joins the keys in DuckDB.
    "stg_item": "select id, key from item",
    "stg_metric": "select id, key, unit from metric",
    "stg_source": "select id, key from source",
    "stg_raw_file": "select id, sha256 from raw_file",
    "stg_observation": (
        "select id, item_id, metric_id, source_id, value, low, high, value_written, "
        "unit_written, value_kind, status, quote, as_of, as_of_precision, valid_to, "
        "recorded_at, "
        # Closures after the cut-off are later knowledge: the version saw these rows live.
        "case when superseded_at <= :cutoff then superseded_at end, ingest_run_id, raw_file_id, "
        "offer_provider, offer_region, offer_term, offer_gpu, offer_units, offer_instance, "
        "offer_currency, offer_valid_until "
        "from observation where recorded_at <= :cutoff order by id"),
    "dataset_version": "select id, cutoff_at, content_hash, observation_count, ingest_run_id, "
                       "created_at from dataset_version where cutoff_at <= :cutoff order by id",
    "rejected_row": (
        "select j.ingest_run_id, f.path, r.sha256, j.line, j.field, j.reason, j.raw_text "
        "from rejected_row j join ingest_file f on f.id = j.ingest_file_id "
        "join raw_file r on r.id = j.raw_file_id order by j.id"),
    "measurement_run": (
        "select m.id, m.kind, r.sha256, m.item_key, m.started_at, m.finished_at, m.ranks, "
        "m.nodes, m.gpus_per_node, m.device, m.nccl_version, m.collective, m.benchmark, "
        "m.duration_s, m.metadata_json from measurement_run m "
        "join raw_file r on r.id = m.raw_file_id join ingest_run i on i.id = m.ingest_run_id "
        "where i.started_at <= :cutoff order by m.id"),
    "nccl_point": (
        "select p.measurement_run_id, p.line, p.collective, p.size_bytes, p.count, p.dtype, "
        "p.redop, p.root, p.oop_time_us, p.oop_algbw, p.oop_busbw, p.oop_wrong, p.ip_time_us, "
        "p.ip_algbw, p.ip_busbw, p.ip_wrong from nccl_point p "
        "join measurement_run m on m.id = p.measurement_run_id "
        "join ingest_run i on i.id = m.ingest_run_id "
        "where i.started_at <= :cutoff order by p.id"),
    "inference_point": (
        "select p.measurement_run_id, p.line, p.source_key, p.as_of, p.hardware, "
        "p.hardware_written, p.system, p.gpus, p.model, p.model_written, p.precision, "
        "p.framework, p.framework_version, p.spec_decoding, p.tp, p.ep, p.dp, p.disaggregated, "
        "p.prefill_gpus, p.decode_gpus, p.input_tokens, p.output_tokens, p.concurrency, "
        "p.tok_s_per_gpu, p.total_tok_s_per_gpu, p.tok_s_per_user, p.ttft_s, p.tpot_s, "
        "p.scenario, p.benchmark, p.samples_per_s, p.target_qps, p.ttft_p99_s, p.tpot_p99_s, "
        "p.ttft_limit_s, p.tpot_limit_s from inference_point p "
        "join measurement_run m on m.id = p.measurement_run_id "
        "join ingest_run i on i.id = m.ingest_run_id "
        "where i.started_at <= :cutoff order by p.id"),
    # Scenarios known at the cut-off, and those the published results were computed from
    # (results are made after their version's cut-off: their definitions travel with them).
    "scenario": (
        "select id, name, kind, content_sha256, definition, path, recorded_at from scenario "
        "where recorded_at <= :cutoff or id in (select c.scenario_id from c2c_result c "
        "join dataset_version d on d.id = c.dataset_version_id where d.cutoff_at <= :cutoff) "
        "or id in (select t.scenario_id from tco_result t "
        "join dataset_version d on d.id = t.dataset_version_id where d.cutoff_at <= :cutoff) "
        "or id in (select v.scenario_id from serving_result v "
        "join dataset_version d on d.id = v.dataset_version_id where d.cutoff_at <= :cutoff) "
        "order by id"),
    # Ad-hoc results (no dataset version) are not published.
    "c2c_result": (
        "select c.id, s.name, s.content_sha256, c.dataset_version_id, c.code_version, "
        "c.inputs_sha256, c.computed_at, c.reused_from_id, c.gpus, c.t_iter_s, c.t_compute_s, "
        "c.t_bubble_s, c.c2c, c.c2c_scale_up, c.c2c_scale_out, c.c2c_class, "
        "c.recommended_fabric, c.mfu, c.hw_tflops_per_gpu, c.model_tflops_per_gpu, "
        "c.memory_gib_per_gpu, c.fits, c.time_to_train_days, c.result_json "
        "from c2c_result c join scenario s on s.id = c.scenario_id "
        "join dataset_version d on d.id = c.dataset_version_id "
        "where d.cutoff_at <= :cutoff order by c.id"),
    "tco_result": (
        "select t.id, s.name, s.content_sha256, t.dataset_version_id, t.code_version, "
        "t.inputs_sha256, t.computed_at, t.reused_from_id, t.mode, t.scale_up_option, "
        "t.scale_out_option, t.break_even_speedup, t.break_even_p10, t.break_even_p50, "
        "t.break_even_p90, t.speedup, t.cheaper_option, null, t.total_cost_usd, t.result_json "
        "from tco_result t join scenario s on s.id = t.scenario_id "
        "join dataset_version d on d.id = t.dataset_version_id "
        "where d.cutoff_at <= :cutoff order by t.id"),
    "serving_result": (
        "select v.id, s.name, s.content_sha256, v.dataset_version_id, v.code_version, "
        "v.inputs_sha256, v.computed_at, v.reused_from_id, v.target_tok_s_per_user, "
        "v.cheaper_option, null, v.margin, v.margin_p10, v.margin_p90, v.result_json "
        "from serving_result v join scenario s on s.id = v.scenario_id "
        "join dataset_version d on d.id = v.dataset_version_id "
        "where d.cutoff_at <= :cutoff order by v.id"),
    # observation_ids is JSON text in the ledger; the insert casts it to BIGINT[].
    "flag": (
        "select f.id, f.dataset_version_id, f.kind, f.severity, f.subject, f.item_key, "
        "f.metric_key, f.scenario_name, f.message, f.observation_ids, f.code_version, "
        "f.computed_at from flag f join dataset_version d on d.id = f.dataset_version_id "
        "where d.cutoff_at <= :cutoff order by f.id"),
    "briefing": (
        "select b.id, b.dataset_version_id, b.as_of, b.path, b.sha256, b.size_bytes, b.pages, "
        "b.code_version, b.rendered_at from briefing b "
        "join dataset_version d on d.id = b.dataset_version_id "
        "where d.cutoff_at <= :cutoff order by b.id"),
    "briefing_delivery": (
        "select x.id, x.briefing_id, x.channel, x.target, x.status, x.attempts, x.message_id, "
        "x.error, x.delivered_at from briefing_delivery x "
        "join briefing b on b.id = x.briefing_id "
        "join dataset_version d on d.id = b.dataset_version_id "
        "where d.cutoff_at <= :cutoff order by x.id"),
}
# Figures of each option of a TCO comparison, in tco_option_result's order after `option`.
_OPTION_FIGURES = ("gpus", "annual_capex_usd", "annual_opex_usd", "annual_total_usd",
                   "usd_per_gpu_hour", "usd_per_useful_gpu_hour", "jct_days", "job_cost_usd")
# Numeric DDL types, loaded through typed numpy arrays (see _array).
_NUMPY_TYPES: dict[str, type[np.generic]] = {"DOUBLE": np.float64, "BIGINT": np.int64,
                                             "INTEGER": np.int64}
# Views whose columns take the comments of a table's columns of the same name.
_COMMENTED_LIKE = {"c2c_latest": "c2c_result", "tco_latest": "tco_result",
                   "serving_latest": "serving_result", "flag_latest": "flag",
                   "current_value": "resolved_span", "observation_changes": "observation"}


# The *_latest views' own column.
_CURRENT_VERSION = ("Whether these rows are of this file''s dataset version "
                    "(meta.dataset_version): false after an ingest whose recompute has not "
                    "run yet")


@dataclass(frozen=True)
class WarehouseMeta:
    dataset_version: int
    dataset_hash: str
    cutoff_at: datetime
    as_of: date
    built_at: datetime
    code_version: str
    # The market's age limit the build applies (SPECLEDGER_MARKET_MAX_AGE_DAYS): the
    # market_offer mart's `stale` reads it from meta, as the price index does from settings.
    market_max_age_days: int = 120


@dataclass(frozen=True)
class Published:
    """What one publish did to the warehouse file at `path`.

    outcome: "built" (the file now holds `dataset_version`), "already_published" (another
    publisher built it for this version while this one waited) or "newer_held" (the file
    holds `held_version`, a newer version of the same ledger, which has these rows too).
    """

    path: Path
    dataset_version: int
    held_version: int
    outcome: str
    wait: PublishWait

    def describe(self) -> str:
        """`rebuilt for dataset version 7`, or why the file was left as it is."""
        if self.outcome == "built":
            said = f"rebuilt for dataset version {self.dataset_version}"
        elif self.outcome == "already_published":
            said = (f"already holds dataset version {self.dataset_version} (published by "
                    "another run while this one waited)")
        else:
            said = (f"holds dataset version {self.held_version}, newer than "
                    f"{self.dataset_version}: left as it is")
        return f"{said}; {self.wait.describe()}" if self.wait.waited else said


@dataclass(frozen=True)
class _Held:
    """The meta row of the file already in place."""

    dataset_version: int
    dataset_hash: str
    built_at: datetime


def publish_version(engine: Engine, target: Path, meta: WarehouseMeta,
                    source_kind_rank: dict[str, int], *, lock_timeout_seconds: float = 60.0,
                    checks: Mapping[str, TableChecks] | None = None,
                    model_errors: Sequence[Sequence[object]] = (),
                    price_index: Sequence[Sequence[object]] = ()) -> Published:
    """Publish the warehouse for `meta`'s dataset version at `target`, atomically, after any
    other publisher of `target` (waiting up to `lock_timeout_seconds`).

    Left as it is when it already holds a newer version of this ledger, or this version
    built after `meta.built_at` (by the publisher this one waited for). Other arguments and
    errors as publish_warehouse's; also raises WarehouseBusyError when the wait gave up.
    """
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with publish_lock(target, lock_timeout_seconds) as wait:
            held = _held(target)
            if (outcome := _left_as_is(engine, held, meta, wait)) is not None:
                assert held is not None
                return Published(target, meta.dataset_version, held.dataset_version, outcome,
                                 wait)
            _build_in_place(engine, target, meta, source_kind_rank, checks, model_errors,
                            price_index)
    except WarehouseBusyError:
        raise
    except OSError as exc:
        if isinstance(exc, WarehouseWriteError):
            raise
        raise WarehouseWriteError(target, exc) from exc
    return Published(target, meta.dataset_version, meta.dataset_version, "built", wait)


def publish_warehouse(engine: Engine, target: Path, meta: WarehouseMeta,
                      source_kind_rank: dict[str, int], *,
                      checks: Mapping[str, TableChecks] | None = None,
                      model_errors: Sequence[Sequence[object]] = (),
                      price_index: Sequence[Sequence[object]] = (),
                      lock_timeout_seconds: float = 60.0) -> Path:
    """Build the warehouse for `meta`'s dataset version at `target`, atomically (see
    publish_version, which also says whether it was built or left as it is).

    Args:
        checks: the declared checks to run on the built file (default warehouse_checks.CHECKS).
        model_errors: rows of the model_error table (the C2C model's calibration errors).
        price_index: rows of the price_index table (the GPU-hour price index of every dataset
            version up to this one, models/market).

    Raises:
        WarehouseCheckError: a check failed; `target` is left as it was.
        WarehouseWriteError: the file could not be written (full disk, a file size limit, an
            unwritable folder); `target` is left as it was and no temporary file remains.
    """
    return publish_version(engine, target, meta, source_kind_rank,
                           lock_timeout_seconds=lock_timeout_seconds, checks=checks,
                           model_errors=model_errors, price_index=price_index).path


def _build_in_place(engine: Engine, target: Path, meta: WarehouseMeta,
                    source_kind_rank: dict[str, int],
                    checks: Mapping[str, TableChecks] | None,
                    model_errors: Sequence[Sequence[object]],
                    price_index: Sequence[Sequence[object]]) -> None:
    """Build, check and swap in the file; the caller holds the lock. The temporary file's
    name is this publisher's own, so no other publisher can open or remove it."""
    tmp = target.with_name(f"{target.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        _remove_leftovers(target)
        _build(engine, tmp, meta, source_kind_rank, model_errors, price_index)
        _verify(tmp, checks)
        # A reader holding the old file keeps its inode; new connections open the new file.
        os.replace(tmp, target)
    except OSError as exc:
        raise WarehouseWriteError(target, exc) from exc
    except duckdb.Error as exc:
        # DuckDB reports a failed write as an IO or a commit error naming the file.
        if str(tmp) not in str(exc):
            raise
        raise WarehouseWriteError(target, exc) from exc
    finally:
        _remove(tmp, quietly=True)


def _remove_leftovers(target: Path) -> None:
    """Temporary files of publishers killed halfway: every publisher holds the lock while
    its own exists, so under the lock any other is a leftover."""
    for pattern in (".tmp", ".tmp.wal", ".*.tmp", ".*.tmp.wal"):
        for leftover in target.parent.glob(target.name + pattern):
            try:
                leftover.unlink(missing_ok=True)
            except OSError:
                pass  # not ours to fail on: the publish goes on beside it


def _held(target: Path) -> _Held | None:
    """The meta row of the file at `target` (None: no file, or not a readable warehouse)."""
    if not target.is_file():
        return None
    try:
        con = duckdb.connect(str(target), read_only=True)
        try:
            con.execute("set TimeZone = 'UTC'")
            row = con.execute("select dataset_version, dataset_hash, built_at from meta"
                              ).fetchone()
        finally:
            con.close()
    except duckdb.Error:
        return None
    if row is None:
        return None
    built_at = row[2] if row[2].tzinfo else row[2].replace(tzinfo=UTC)
    return _Held(int(row[0]), str(row[1]), built_at)


def _left_as_is(engine: Engine, held: _Held | None, meta: WarehouseMeta,
                wait: PublishWait) -> str | None:
    """Why the file in place must not be rebuilt for `meta`, or None to build it."""
    if held is None:
        return None
    if held.dataset_version > meta.dataset_version:
        # A newer version of another ledger (SPECLEDGER_DATABASE_URL changed, a ledger
        # started again) says nothing about this one: only this ledger's own counts.
        return "newer_held" if _ledger_hash(engine, held.dataset_version) == held.dataset_hash \
            else None
    # Built after this publish was asked for: it read the ledger after our commit. Only a
    # publisher we waited for can have done that (a file built earlier may lack results,
    # flags or briefings recorded since).
    built_at = meta.built_at if meta.built_at.tzinfo else meta.built_at.replace(tzinfo=UTC)
    if (wait.waited and held.dataset_version == meta.dataset_version
            and held.dataset_hash == meta.dataset_hash and held.built_at >= built_at):
        return "already_published"
    return None


def _ledger_hash(engine: Engine, dataset_version: int) -> str | None:
    with engine.connect() as ledger:
        return ledger.execute(text("select content_hash from dataset_version where id = :id"),
                              {"id": dataset_version}).scalar()


class WarehouseWriteError(OSError):
    """The warehouse file could not be written; the previous one is unchanged."""

    def __init__(self, target: Path, cause: OSError | duckdb.Error) -> None:
        reason = cause.strerror if isinstance(cause, OSError) and cause.strerror else str(cause)
        code = cause.errno if isinstance(cause, OSError) else errno.EIO
        kept = "; the previous warehouse is unchanged" if target.exists() else ""
        super().__init__(code, f"could not be written ({reason}){kept}", str(target))


def _remove(path: Path, quietly: bool = False) -> None:
    """Delete a temporary warehouse and its WAL; `quietly`: after a failure, whose error
    must not be hidden by one of the clean-up (the next publish tries again first)."""
    for leftover in (path, path.with_name(path.name + ".wal")):
        try:
            leftover.unlink(missing_ok=True)
        except OSError:
            if not quietly:
                raise


def _verify(path: Path, checks: Mapping[str, TableChecks] | None) -> None:
    """Run the declared checks on the built file, read-only, as an analyst would open it."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        failures = run_checks(con, checks if checks is not None else CHECKS | mart_checks())
    finally:
        con.close()
    if failures:
        raise WarehouseCheckError(failures)


def _build(engine: Engine, path: Path, meta: WarehouseMeta,
           source_kind_rank: dict[str, int], model_errors: Sequence[Sequence[object]],
           price_index: Sequence[Sequence[object]] = ()) -> None:
    con = duckdb.connect(str(path), config={"storage_compatibility_version": STORAGE_VERSION})
    try:
        # Ledger times arrive as naive UTC text from SQLite: the casts must read them as UTC.
        con.execute("set TimeZone = 'UTC'")
        create_objects(con)
        con.executemany("insert into source_kind_rank values (?, ?)",
                        sorted(source_kind_rank.items()))
        con.execute("insert into meta values (?, ?, ?, ?, ?, ?, ?)",
                    [meta.dataset_version, meta.dataset_hash, meta.cutoff_at, meta.as_of,
                     meta.built_at, meta.code_version, meta.market_max_age_days])
        with engine.connect() as ledger:
            for table, query in _LOADS.items():
                _load(ledger, con, table, query, meta.cutoff_at)
        _set_verdicts(con)
        _insert(con, "tco_option_result", _option_rows(con))
        _insert(con, "serving_curve", _curve_rows(con))
        _insert(con, "model_error", model_errors)
        _insert(con, "price_index", price_index)
        derive_objects(con)
        con.execute("checkpoint")
    finally:
        con.close()


def create_objects(con: duckdb.DuckDBPyConnection) -> None:
    """The tables, macros and views, empty, with their comments (SQL_FILES)."""
    for name in SQL_FILES:
        con.execute((SQL_DIR / name).read_text(encoding="utf-8"))


def derive_objects(con: duckdb.DuckDBPyConnection) -> None:
    """Once the ledger's rows are loaded: the derived tables, changes and the marts, and the
    views' column comments (from the tables they select from)."""
    for name in MART_FILES:
        con.execute((SQL_DIR / name).read_text(encoding="utf-8"))
    _fill_changes(con)
    for mart in MARTS:
        con.execute(mart.sql.read_text(encoding="utf-8"))
    for view, table in _COMMENTED_LIKE.items():
        _copy_column_comments(con, table, view)
        if view.endswith("_latest"):
            con.execute(f"comment on column {view}.current_version is '{_CURRENT_VERSION}'")


# Each version's resolved values, what current_value showed at its cut-off (valid on the
# cut-off's UTC date): one value_as_of per version, kept for the diff below.
_VERSION_VALUES = """
insert into version_value
select $version, item, metric, value, low, high, unit, source, as_of, observation_id
from value_as_of(timezone('UTC', $cutoff_at::timestamptz)::date, $cutoff_at::timestamptz)
"""
# Every version's values against the version before's (none for the first), in one pass:
# a version's row meets the previous version's row of the same (item, metric).
_CHANGES = """
insert into changes
with versions as (
    select id, cutoff_at, lag(id) over w as previous, lead(id) over w as next,
        lead(cutoff_at) over w as next_cutoff_at
    from dataset_version
    window w as (order by cutoff_at, id)
),
new as (
    select x.*, v.previous, v.cutoff_at
    from version_value x join versions v on v.id = x.dataset_version
),
old as (
    select x.*, v.next, v.next_cutoff_at
    from version_value x join versions v on v.id = x.dataset_version
    where v.next is not null
),
final as (
    select coalesce(n.dataset_version, o.next) as dataset_version,
        coalesce(n.previous, o.dataset_version) as previous_version,
        coalesce(n.item, o.item) as item, coalesce(n.metric, o.metric) as metric,
        case when o.item is null then 'added' when n.item is null then 'removed'
             else 'changed' end as change,
        o.value, n.value, o.low, o.high, n.low, n.high, coalesce(n.unit, o.unit),
        o.source, n.source, o.as_of, n.as_of, o.observation_id, n.observation_id,
        coalesce(n.cutoff_at, o.next_cutoff_at)
    from new n full join old o
      on o.next = n.dataset_version and o.item = n.item and o.metric = n.metric
    where o.item is null or n.item is null or o.low <> n.low or o.high <> n.high
       or o.source <> n.source
)
select * from final
"""


def _fill_changes(con: duckdb.DuckDBPyConnection) -> None:
    """The changes table: each dataset version's resolved values against the previous
    version's, old -> new. Each version is resolved once (what one spec_known_at costs),
    then all are compared in one statement."""
    con.execute("create temp table version_value (dataset_version integer, item varchar, "
                "metric varchar, value double, low double, high double, unit varchar, "
                "source varchar, as_of date, observation_id bigint)")
    try:
        for version, cutoff_at in con.execute("select id, cutoff_at from dataset_version "
                                              "order by cutoff_at, id").fetchall():
            con.execute(_VERSION_VALUES, {"version": version, "cutoff_at": cutoff_at})
        con.execute(_CHANGES)
    finally:
        con.execute("drop table version_value")


def _load(ledger: Connection, con: duckdb.DuckDBPyConnection, table: str, query: str,
          cutoff: datetime) -> None:
    """Copy the rows of one ledger query into `table`, CHUNK_ROWS at a time."""
    result = ledger.execution_options(stream_results=True).execute(_statement(query),
                                                                   {"cutoff": cutoff})
    for rows in result.partitions(CHUNK_ROWS):
        _insert(con, table, rows)


# Where each result's verdict (as page 1 states it) sits in its result_json; the ledger
# keeps it there only, so the warehouse fills its `verdict` column (loaded NULL) from it.
_VERDICT_PATHS = {"tco_result": "$.verdict.call", "serving_result": "$.call"}


def _set_verdicts(con: duckdb.DuckDBPyConnection) -> None:
    for table, path in _VERDICT_PATHS.items():
        con.execute(f"update {table} set verdict = json_extract_string(result_json, ?)",
                    [path])


def _option_rows(con: duckdb.DuckDBPyConnection) -> list[tuple[object, ...]]:
    """One row per option of each published TCO comparison, read from its result_json."""
    results = con.execute("select id, scenario, dataset_version_id, result_json from tco_result "
                          "where mode = 'comparison' order by id").fetchall()
    rows = []
    for result_id, scenario, version, result_json in results:
        for option in json.loads(result_json).get("options", []):
            job_cost = (option.get("ranges") or {}).get("job_cost_usd") or {}
            rows.append((result_id, scenario, version, option["name"],
                         *(option.get(figure) for figure in _OPTION_FIGURES),
                         job_cost.get("p10"), job_cost.get("p90")))
    return rows


def _curve_rows(con: duckdb.DuckDBPyConnection) -> list[tuple[object, ...]]:
    """One row per point of each option's curve in each published serving answer; the
    point at the target interactivity is flagged (it is interpolated between two others)."""
    results = con.execute("select id, scenario, dataset_version_id, result_json "
                          "from serving_result order by id").fetchall()
    rows = []
    for result_id, scenario, version, result_json in results:
        for option in json.loads(result_json).get("options", []):
            points = [(p, False) for p in option.get("curve", [])]
            if option.get("at_target"):
                points.append((option["at_target"], True))
            rows += [(result_id, scenario, version, option["name"], option["source"],
                      option["usd_per_gpu_hour"], at_target, point["concurrency"],
                      point["tok_s_per_gpu"], point["tok_s_per_user"], point["ttft_s"],
                      point["usd_per_mtok_out"]) for point, at_target in points]
    return rows


def _copy_column_comments(con: duckdb.DuckDBPyConnection, table: str, view: str) -> None:
    """Give each column of `view` the comment of the same column of `table`."""
    comments = con.execute("select column_name, comment from duckdb_columns() "
                           "where table_name = ? and comment is not null", [table]).fetchall()
    columns = {c for c, in con.execute("select column_name from duckdb_columns() "
                                       "where table_name = ?", [view]).fetchall()}
    for column, comment in comments:
        if column not in columns:
            continue
        quoted = comment.replace("'", "''")  # COMMENT ON takes a literal, not a parameter
        con.execute(f"comment on column {view}.{column} is '{quoted}'")


def _statement(query: str) -> TextClause:
    statement = text(query)
    # Raw SQL skips column types: bind the cut-off through the same UTC type the ORM uses.
    if ":cutoff" in query:
        statement = statement.bindparams(bindparam("cutoff", type_=UTCDateTime()))
    return statement


def _insert(con: duckdb.DuckDBPyConnection, table: str, rows: Sequence[Sequence[object]]) -> None:
    """Insert ledger rows (in DDL column order) into `table`.

    The INSERT casts each column to its DDL type, so SQLite's text dates and naive UTC times
    (read in the session's UTC), its 0/1 booleans and the JSON id lists arrive as they are.
    """
    if not rows:
        return
    types = con.execute("select column_name, data_type from duckdb_columns() "
                        "where table_name = ? order by column_index", [table]).fetchall()
    frame = {name: _array(values, _NUMPY_TYPES.get(data_type))
             for (name, data_type), values in zip(types, zip(*rows, strict=True), strict=True)}
    con.register("frame", frame)
    try:
        con.execute(f"insert into {table} select * from frame")
    finally:
        con.unregister("frame")


def _array(values: tuple[object, ...], dtype: type[np.generic] | None) -> np.ndarray:
    """One column as numpy: typed when numeric without NULLs (DuckDB scans it without the
    GIL), else Python objects (str, date, datetime, None) whose type DuckDB infers."""
    if dtype is None:
        return np.array(values, dtype=object)
    if None not in values:
        return np.array(values, dtype=dtype)
    # Nullable numbers: one Python type per column, so DuckDB's sampling cannot guess wrong.
    number = float if dtype is np.float64 else int
    return np.array([None if v is None else number(v) for v in values], dtype=object)
