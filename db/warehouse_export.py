"""Export the published warehouse: every table and mart, one file each, Parquet or CSV
(`specledger export`). Read-only: the warehouse stays as it is."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb

FORMATS = ("parquet", "csv")


@dataclass(frozen=True)
class Exported:
    table: str
    rows: int
    path: Path


def export_warehouse(warehouse: Path, folder: Path, file_format: str = "parquet"
                     ) -> list[Exported]:
    """Write each base table of `warehouse` to `folder/<table>.<format>`; views and macros
    are queries over them and are not copied. FileNotFoundError without a warehouse."""
    if file_format not in FORMATS:
        raise ValueError(f"format {file_format!r}: expected one of {', '.join(FORMATS)}")
    if not warehouse.is_file():
        raise FileNotFoundError(warehouse)
    folder.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        tables = [name for (name,) in con.execute(
            "select table_name from duckdb_tables() where not temporary "
            "and schema_name = 'main' order by table_name").fetchall()]
        written = []
        for table in tables:
            target = folder / f"{table}.{file_format}"
            options = "format parquet" if file_format == "parquet" else "format csv, header"
            quoted = str(target).replace("'", "''")
            con.execute(f'copy (select * from "{table}") to \'{quoted}\' ({options})')
            (rows,) = con.execute(f'select count(*) from "{table}"').fetchone() or (0,)
            written.append(Exported(table, int(rows), target))
        return written
    finally:
        con.close()
