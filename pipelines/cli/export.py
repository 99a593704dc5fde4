"""`specledger export DIR`: every table, mart and view of the published warehouse as Parquet or
CSV files, for tools that do not read DuckDB. DIR is taken as written (no `~` expanded); files
already there are refused unless --force."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich import box
from rich.table import Table

from pipelines.cli.ledger import settings_for
from pipelines.cli.options import JsonOption, home_option
from pipelines.cli.terminal import label, plain_console, write_json

# db.warehouse_export.FORMATS (not imported here: --help must not load DuckDB; a test holds
# the two equal).
FORMATS = ("parquet", "csv")
console = plain_console()
errors = plain_console(stderr=True)


def export_command(
        folder: Annotated[Path, typer.Argument(help="Folder to write the files to.")],
        file_format: Annotated[str, typer.Option(
            "--format", help=f"One of {', '.join(FORMATS)}.")] = "parquet",
        home: home_option("warehouse.duckdb") = None,
        force: Annotated[bool, typer.Option(
            "--force", help="Replace files of the same names already in DIR.")] = False,
        as_json: JsonOption = False) -> None:
    """Write every table, mart and view of warehouse.duckdb to DIR, a file each (Parquet or
    CSV), each written whole or not at all."""
    if file_format not in FORMATS:
        errors.print(label("error:", "red", f"--format {file_format!r}: expected one of "
                                             f"{', '.join(FORMATS)}"), highlight=False)
        raise typer.Exit(2)
    from db.warehouse_export import ExportExists, export_warehouse

    warehouse = settings_for(home).warehouse_path
    try:
        written = export_warehouse(warehouse, folder, file_format, force=force)
    except ExportExists as exc:
        errors.print(label("error:", "red", f"{exc}; nothing written (give --force to "
                                             "replace them)"), highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    except FileNotFoundError:
        errors.print(label("error:", "red", f"no warehouse at {warehouse} yet: run "
                                             "`specledger run` or `specledger ingest` first"),
                     highlight=False, soft_wrap=True)
        raise typer.Exit(1) from None
    if as_json:
        write_json({"warehouse": str(warehouse), "format": file_format,
                    "files": [{"table": w.table, "rows": w.rows, "path": str(w.path)}
                              for w in written]})
        return
    table = Table(title=f"{warehouse} -> {folder}", title_justify="left", box=box.SIMPLE)
    for column in ("table", "rows", "file"):
        table.add_column(column, justify="right" if column == "rows" else "left")
    for w in written:
        table.add_row(w.table, f"{w.rows:,}", w.path.name)
    console.print(table)


def register(app: typer.Typer) -> None:
    app.command(name="export")(export_command)
