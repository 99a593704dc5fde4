"""Publish the analyst warehouse: a DuckDB file rebuilt from the ledger, never the record.

Built into a temporary file beside the target and moved into place with os.replace, so a
reader sees either the previous warehouse or the new one, never half of one. Written in the
v1.5.0 storage format so the duckdb CLI analysts use (1.5.x) can open it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

import duckdb
import pandas as pd
from sqlalchemy import Engine, TextClause, bindparam, text

from db.schema import UTCDateTime

SQL_DIR = Path(__file__).resolve().parent / "sql"
STORAGE_VERSION = "v1.5.0"

# Ledger SELECTs feeding each warehouse table, columns in DDL order.
_LOADS = {
    "source": "select key, title, publisher, url, kind, published_on, retrieved_on from source",
    "item": "select key, name, kind, vendor, family, announced_on, released_on from item",
    "metric": "select key, unit, counts, scope, direction, min_value, max_value, description "
              "from metric",
    "observation": (
        "select o.id, i.key, m.key, s.key, o.value, o.low, o.high, m.unit, o.value_written, "
        "o.unit_written, o.value_kind, o.status, o.quote, o.as_of, o.as_of_precision, "
        "o.valid_to, o.recorded_at, "
        # Closures after the cut-off are later knowledge: the version saw these rows live.
        "case when o.superseded_at <= :cutoff then o.superseded_at end, o.ingest_run_id, r.sha256 "
        "from observation o join item i on i.id = o.item_id join metric m on m.id = o.metric_id "
        "join source s on s.id = o.source_id join raw_file r on r.id = o.raw_file_id "
        "where o.recorded_at <= :cutoff order by o.id"),
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
    # Scenarios known at the cut-off, and those the published results were computed from
    # (results are made after their version's cut-off: their definitions travel with them).
    "scenario": (
        "select id, name, kind, content_sha256, definition, path, recorded_at from scenario "
        "where recorded_at <= :cutoff or id in (select c.scenario_id from c2c_result c "
        "join dataset_version d on d.id = c.dataset_version_id where d.cutoff_at <= :cutoff) "
        "or id in (select t.scenario_id from tco_result t "
        "join dataset_version d on d.id = t.dataset_version_id where d.cutoff_at <= :cutoff) "
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
        "t.break_even_p90, t.speedup, t.cheaper_option, t.total_cost_usd, t.result_json "
        "from tco_result t join scenario s on s.id = t.scenario_id "
        "join dataset_version d on d.id = t.dataset_version_id "
        "where d.cutoff_at <= :cutoff order by t.id"),
}
# Figures of each option of a TCO comparison, in tco_option_result's order after `option`.
_OPTION_FIGURES = ("gpus", "annual_capex_usd", "annual_opex_usd", "annual_total_usd",
                   "usd_per_gpu_hour", "usd_per_useful_gpu_hour", "jct_days", "job_cost_usd")
# Views showing each scenario's latest row of a result table, with that table's column comments.
_LATEST_VIEWS = {"c2c_latest": "c2c_result", "tco_latest": "tco_result"}
_DATE_COLUMNS = {"published_on", "retrieved_on", "as_of", "valid_to", "announced_on",
                 "released_on"}
_TIME_COLUMNS = {"recorded_at", "superseded_at", "cutoff_at", "created_at", "computed_at",
                 "started_at", "finished_at"}
_BOOL_COLUMNS = {"fits"}  # SQLite hands booleans back as 0/1


@dataclass(frozen=True)
class WarehouseMeta:
    dataset_version: int
    dataset_hash: str
    cutoff_at: datetime
    as_of: date
    built_at: datetime
    code_version: str


def publish_warehouse(engine: Engine, target: Path, meta: WarehouseMeta,
                      source_kind_rank: dict[str, int]) -> Path:
    """Build the warehouse for `meta`'s dataset version at `target`, atomically."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    tmp.unlink(missing_ok=True)
    try:
        _build(engine, tmp, meta, source_kind_rank)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def _build(engine: Engine, path: Path, meta: WarehouseMeta,
           source_kind_rank: dict[str, int]) -> None:
    con = duckdb.connect(str(path), config={"storage_compatibility_version": STORAGE_VERSION})
    try:
        con.execute("set TimeZone = 'UTC'")
        con.execute((SQL_DIR / "warehouse.sql").read_text(encoding="utf-8"))
        con.executemany("insert into source_kind_rank values (?, ?)",
                        sorted(source_kind_rank.items()))
        con.execute("insert into meta values (?, ?, ?, ?, ?, ?)",
                    [meta.dataset_version, meta.dataset_hash, meta.cutoff_at, meta.as_of,
                     meta.built_at, meta.code_version])
        with engine.connect() as ledger:
            for table, query in _LOADS.items():
                rows = ledger.execute(_statement(query), {"cutoff": meta.cutoff_at}).all()
                _insert(con, table, rows)
        _insert(con, "tco_option_result", _option_rows(con))
        for view, table in _LATEST_VIEWS.items():
            _copy_column_comments(con, table, view)
        con.execute("checkpoint")
    finally:
        con.close()


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


def _copy_column_comments(con: duckdb.DuckDBPyConnection, table: str, view: str) -> None:
    """Give each column of `view` the comment of the same column of `table`."""
    comments = con.execute("select column_name, comment from duckdb_columns() "
                           "where table_name = ? and comment is not null", [table]).fetchall()
    for column, comment in comments:
        quoted = comment.replace("'", "''")  # COMMENT ON takes a literal, not a parameter
        con.execute(f"comment on column {view}.{column} is '{quoted}'")


def _statement(query: str) -> TextClause:
    statement = text(query)
    # Raw SQL skips column types: bind the cut-off through the same UTC type the ORM uses.
    if ":cutoff" in query:
        statement = statement.bindparams(bindparam("cutoff", type_=UTCDateTime()))
    return statement


def _insert(con: duckdb.DuckDBPyConnection, table: str, rows: list[object]) -> None:
    if not rows:
        return
    columns = [c[0] for c in con.execute(f"describe {table}").fetchall()]
    frame = pd.DataFrame([tuple(r) for r in rows], columns=columns)  # type: ignore[arg-type]
    for column in _DATE_COLUMNS.intersection(columns):
        frame[column] = pd.to_datetime(frame[column]).dt.date
    for column in _TIME_COLUMNS.intersection(columns):
        frame[column] = pd.to_datetime(frame[column], utc=True, format="mixed")
    for column in _BOOL_COLUMNS.intersection(columns):
        frame[column] = frame[column].astype(bool)
    con.register("frame", frame)
    try:
        con.execute(f"insert into {table} select * from frame")
    finally:
        con.unregister("frame")
