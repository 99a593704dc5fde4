"""Declarative data checks on a built warehouse, dbt style, run before it replaces the last one.

CHECKS maps a table to its checks: "unique" (column tuples), "not_null" (columns),
"accepted_values" ({column: values}), "relationships" ([(column, other_table, other_column)];
a tuple of columns on each side for a composite key, or a SQL expression such as
"unnest(observation_ids)" on the left), "row_count" (exact rows) and "expression_is_true"
(SQL conditions every row meets). Each check is one query counting the rows that fail it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import duckdb

from db.schema import (
    DELIVERY_CHANNELS,
    DELIVERY_STATUSES,
    FLAG_KINDS,
    FLAG_SEVERITIES,
    MEASUREMENT_KINDS,
    SCENARIO_KINDS,
    SOURCE_KINDS,
    STATUSES,
    TCO_MODES,
    VALUE_KINDS,
)

# Copies of models' vocabularies (db/ may not import models/; a test keeps them equal).
C2C_CLASSES = ("compute-bound", "performance-sensitive", "communication-bound")
AS_OF_PRECISIONS = ("day", "month", "year", "none")  # none: undated (models.observations)
COUNTS = ("bits", "bytes")
DIRECTIONS = ("bidirectional", "unidirectional", "n/a")

TableChecks = Mapping[str, Any]

CHECKS: dict[str, TableChecks] = {
    "meta": {"row_count": 1, "not_null": ["dataset_version", "dataset_hash", "cutoff_at",
                                          "built_at", "code_version", "market_max_age_days"],
             "expression_is_true": ["market_max_age_days >= 1"],
             "relationships": [("dataset_version", "dataset_version", "id")]},
    "source_kind_rank": {"unique": [("kind",), ("rank",)],
                         "accepted_values": {"kind": SOURCE_KINDS}},
    "source": {"unique": [("key",)], "not_null": ["title", "kind"],
               "accepted_values": {"kind": SOURCE_KINDS},
               # A kind without a rank would drop its values from every resolved view.
               "relationships": [("kind", "source_kind_rank", "kind")]},
    "item": {"unique": [("key",)], "not_null": ["name", "kind"]},
    "metric": {"unique": [("key",)], "not_null": ["unit", "scope", "direction"],
               "accepted_values": {"counts": COUNTS, "direction": DIRECTIONS}},
    "observation": {
        "unique": [("observation_id",)],
        "not_null": ["item", "metric", "source", "value", "low", "high", "unit", "as_of",
                     "recorded_at", "raw_file_sha256"],
        "accepted_values": {"status": STATUSES, "value_kind": VALUE_KINDS,
                            "as_of_precision": AS_OF_PRECISIONS},
        "relationships": [("item", "item", "key"), ("metric", "metric", "key"),
                          ("source", "source", "key"), (("metric", "unit"), "metric",
                                                        ("key", "unit"))],
        "expression_is_true": ["low <= value and value <= high",
                               "superseded_at is null or superseded_at >= recorded_at",
                               "recorded_at <= (select cutoff_at from meta)",
                               "superseded_at is null or superseded_at <= "
                               "(select cutoff_at from meta)"]},
    "resolved_span": {
        "unique": [("item", "metric", "valid_from")],
        "relationships": [("observation_id", "observation", "observation_id"),
                          (("item", "metric"), "observation", ("item", "metric"))],
        "expression_is_true": ["valid_until is null or valid_until > valid_from",
                               "as_of <= valid_from", "alternatives >= 0"]},
    "dataset_version": {"unique": [("id",)], "not_null": ["cutoff_at", "content_hash"],
                        "expression_is_true": ["cutoff_at <= (select cutoff_at from meta)"]},
    "rejected_row": {"not_null": ["ingest_run_id", "path", "sha256", "field", "reason"]},
    "measurement_run": {"unique": [("id",)], "accepted_values": {"kind": MEASUREMENT_KINDS}},
    "nccl_point": {"relationships": [("measurement_run_id", "measurement_run", "id")]},
    "inference_point": {
        "not_null": ["source_key", "as_of", "hardware", "gpus", "model", "tok_s_per_gpu",
                     "benchmark"],
        "relationships": [("measurement_run_id", "measurement_run", "id"),
                          ("source_key", "source", "key")],
        "expression_is_true": ["gpus >= 1", "tok_s_per_gpu > 0",
                               "prefill_gpus is null or prefill_gpus + decode_gpus = gpus",
                               "ttft_s is null or ttft_s >= 0"]},
    "scenario": {"unique": [("id",), ("name", "content_sha256")],
                 "accepted_values": {"kind": SCENARIO_KINDS}},
    "c2c_result": {
        "unique": [("id",), ("scenario", "scenario_sha256", "dataset_version_id")],
        "accepted_values": {"c2c_class": C2C_CLASSES},
        "relationships": [("dataset_version_id", "dataset_version", "id"),
                          (("scenario", "scenario_sha256"), "scenario",
                           ("name", "content_sha256"))]},
    "tco_result": {
        "unique": [("id",), ("scenario", "scenario_sha256", "dataset_version_id")],
        "accepted_values": {"mode": TCO_MODES},
        "relationships": [("dataset_version_id", "dataset_version", "id"),
                          (("scenario", "scenario_sha256"), "scenario",
                           ("name", "content_sha256"))]},
    "tco_option_result": {"unique": [("result_id", "option")],
                          "relationships": [("result_id", "tco_result", "id")]},
    "flag": {
        "unique": [("id",), ("dataset_version_id", "kind", "subject")],
        "not_null": ["kind", "severity", "subject", "message", "observation_ids"],
        "accepted_values": {"kind": FLAG_KINDS, "severity": FLAG_SEVERITIES},
        "relationships": [("dataset_version_id", "dataset_version", "id"),
                          ("unnest(observation_ids)", "observation", "observation_id"),
                          ("item", "item", "key"), ("metric", "metric", "key")]},
    "briefing": {
        "unique": [("id",)], "not_null": ["as_of", "path", "sha256", "size_bytes"],
        "relationships": [("dataset_version_id", "dataset_version", "id")],
        "expression_is_true": ["regexp_full_match(sha256, '[0-9a-f]{64}')",
                               "size_bytes > 0"]},
    "briefing_delivery": {
        "unique": [("id",)], "not_null": ["target", "attempts", "delivered_at"],
        "accepted_values": {"channel": DELIVERY_CHANNELS, "status": DELIVERY_STATUSES},
        "relationships": [("briefing_id", "briefing", "id")],
        "expression_is_true": ["attempts >= 1",
                               "status = 'failed' or error is null"]},
}
# Not checked: rejected_row.ingest_run_id and the results' reused_from_id may name ledger rows
# the warehouse does not carry (ingest runs; ad-hoc results).


@dataclass(frozen=True)
class Check:
    """One declared check: a readable name and the query counting its failing rows."""

    name: str
    sql: str


@dataclass(frozen=True)
class CheckFailure:
    check: str
    failing_rows: int


class WarehouseCheckError(Exception):
    """A built warehouse failed its checks; the previous one was left in place."""

    def __init__(self, failures: Sequence[CheckFailure]) -> None:
        self.failures = tuple(failures)
        lines = "\n".join(f"  {f.check}: {f.failing_rows} failing row(s)" for f in failures)
        super().__init__(f"{len(failures)} warehouse check(s) failed; the previous warehouse "
                         f"was kept:\n{lines}")


def declared_checks(checks: Mapping[str, TableChecks] | None = None) -> list[Check]:
    """Every check of `checks` (default CHECKS) as a named query, in declaration order."""
    found = []
    for table, declared in (CHECKS if checks is None else checks).items():
        for kind, spec in declared.items():
            found.extend(_BUILDERS[kind](table, spec))
    return found


def run_checks(con: duckdb.DuckDBPyConnection,
               checks: Mapping[str, TableChecks] | None = None) -> list[CheckFailure]:
    """Run every check (default CHECKS) on `con`; the ones with failing rows."""
    failures = []
    for check in declared_checks(checks):
        (count,) = con.execute(check.sql).fetchone() or (0,)
        if count:
            failures.append(CheckFailure(check.name, int(count)))
    return failures


def _literal(value: object) -> str:
    return "'" + str(value).replace("'", "''") + "'"


def _unique(table: str, spec: Sequence[Sequence[str]]) -> list[Check]:
    # Rows sharing their values with another row; NULLs are not compared (dbt's rule).
    return [Check(f"unique: {table}({', '.join(cols)})",
                  f"select coalesce(sum(n), 0) from (select count(*) as n from {table} "
                  f"where {' and '.join(f'{c} is not null' for c in cols)} "
                  f"group by {', '.join(cols)} having count(*) > 1)") for cols in spec]


def _not_null(table: str, spec: Sequence[str]) -> list[Check]:
    return [Check(f"not_null: {table}.{col}",
                  f"select count(*) from {table} where {col} is null") for col in spec]


def _accepted_values(table: str, spec: Mapping[str, Sequence[str]]) -> list[Check]:
    return [Check(f"accepted_values: {table}.{col} in ({', '.join(values)})",
                  f"select count(*) from {table} where {col} is not null and {col} not in "
                  f"({', '.join(_literal(v) for v in values)})")
            for col, values in spec.items()]


def _relationships(table: str, spec: Sequence[tuple[Any, str, Any]]) -> list[Check]:
    checks = []
    for column, other, other_column in spec:
        mine = (column,) if isinstance(column, str) else tuple(column)
        theirs = (other_column,) if isinstance(other_column, str) else tuple(other_column)
        values = ", ".join(f"{expr} as v{n}" for n, expr in enumerate(mine))
        present = " and ".join(f"v{n} is not null" for n in range(len(mine)))
        match = " and ".join(f"p.{col} = child.v{n}" for n, col in enumerate(theirs))
        checks.append(Check(
            f"relationships: {table}({', '.join(mine)}) -> {other}({', '.join(theirs)})",
            f"with child as (select {values} from {table}) select count(*) from child "
            f"where {present} and not exists (select 1 from {other} p where {match})"))
    return checks


def _row_count(table: str, rows: int) -> list[Check]:
    return [Check(f"row_count: {table} has {rows} row(s)",
                  f"select abs(count(*) - {int(rows)}) from {table}")]


def _expression_is_true(table: str, spec: Sequence[str]) -> list[Check]:
    return [Check(f"expression_is_true: {table}: {expr}",
                  f"select count(*) from {table} where not ({expr})") for expr in spec]


_BUILDERS = {"unique": _unique, "not_null": _not_null, "accepted_values": _accepted_values,
             "relationships": _relationships, "row_count": _row_count,
             "expression_is_true": _expression_is_true}
