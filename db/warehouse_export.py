"""Export the published warehouse: every table, mart and view, one file each, Parquet or CSV
(`specledger export`). Read-only: the warehouse stays as it is.

The folder is taken as given: nothing in its name is expanded (DuckDB would read a leading
`~` as the home folder; the path handed to it is absolute, so it never starts with one). A
file already there is refused unless `force`, before anything is written; each file is
written to a temporary name beside it and renamed, so a reader sees the old file or the new
one, never half of one.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path

import duckdb

FORMATS = ("parquet", "csv")


@dataclass(frozen=True)
class Exported:
    table: str
    rows: int
    path: Path


class ExportExists(FileExistsError):
    """Files of the export are in the folder already (and `force` was not given)."""

    def __init__(self, paths: list[Path]) -> None:
        self.paths = paths
        shown = ", ".join(p.name for p in paths[:5]) + (
            f" and {len(paths) - 5} more" if len(paths) > 5 else "")
        super().__init__(f"{paths[0].parent} already holds {shown}")


def relations(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The warehouse's tables and views (current_value, the *_latest views, changes), by
    name; the table macros take arguments and are not exported."""
    return [name for (name,) in con.execute(
        "select table_name from duckdb_tables() where not temporary and schema_name = 'main' "
        "union all select view_name from duckdb_views() where not internal "
        "and not temporary and schema_name = 'main' order by 1").fetchall()]


def export_warehouse(warehouse: Path, folder: Path, file_format: str = "parquet", *,
                     force: bool = False) -> list[Exported]:
    """Write each table and view of `warehouse` to `folder/<name>.<format>`.
    FileNotFoundError without a warehouse; ExportExists when a file would be overwritten and
    `force` is not given (nothing is written then)."""
    if file_format not in FORMATS:
        raise ValueError(f"format {file_format!r}: expected one of {', '.join(FORMATS)}")
    if not warehouse.is_file():
        raise FileNotFoundError(warehouse)
    where = folder.absolute()  # as written: "~/exp" is ./~/exp, never $HOME/exp
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        names = relations(con)
        targets = {name: where / f"{name}.{file_format}" for name in names}
        present = [t for t in targets.values() if os.path.lexists(t)]
        if present and not force:
            raise ExportExists(present)
        where.mkdir(parents=True, exist_ok=True)
        options = "format parquet" if file_format == "parquet" else "format csv, header"
        written = []
        for name, target in targets.items():
            tmp = where / f".{name}.{secrets.token_hex(6)}.tmp.{file_format}"
            quoted = str(tmp).replace("'", "''")
            try:
                con.execute(f'copy (select * from "{name}") to \'{quoted}\' ({options})')
                os.replace(tmp, target)
            finally:
                tmp.unlink(missing_ok=True)
            (rows,) = con.execute(f'select count(*) from "{name}"').fetchone() or (0,)
            written.append(Exported(name, int(rows), target))
        return written
    finally:
        con.close()
