"""The warehouse reference (docs/warehouse-reference.md), generated from the warehouse's own
table, column, view and macro comments, so the page cannot omit an object or drift from the
DDL: a test regenerates it and compares.

    python -m db.warehouse_reference docs/warehouse-reference.md
"""

from __future__ import annotations

import sys
from pathlib import Path

import duckdb

from db.warehouse import create_objects, derive_objects

HEADER = """# Warehouse reference

Every table, view and macro of `warehouse.duckdb`, with its columns, as the file itself
describes them (`duckdb_tables()`, `duckdb_views()`, `duckdb_columns()` and
`duckdb_functions()` hold the same comments). How the file is built and read:
[The analyst warehouse](warehouse.md).

This page is generated: `python -m db.warehouse_reference docs/warehouse-reference.md`
(a test fails when it differs from what the warehouse's DDL gives).
"""


def empty_warehouse() -> duckdb.DuckDBPyConnection:
    """An in-memory warehouse with every object of a published one and no rows."""
    con = duckdb.connect()
    con.execute("set TimeZone = 'UTC'")
    create_objects(con)
    derive_objects(con)
    return con


def reference_markdown(con: duckdb.DuckDBPyConnection) -> str:
    """The reference page for the warehouse open on `con`: tables, then views, then macros,
    each in name order, temporary staging tables left out."""
    parts = [HEADER]
    tables = con.execute("select table_name, comment from duckdb_tables() "
                         "where not temporary and not internal order by table_name").fetchall()
    views = con.execute("select view_name, comment from duckdb_views() "
                        "where not temporary and not internal order by view_name").fetchall()
    for title, objects in (("Tables", tables), ("Views", views)):
        parts.append(f"## {title}\n")
        parts += [_object_section(con, name, comment) for name, comment in objects]
    parts.append("## Macros\n")
    macros = con.execute(
        "select function_name, function_type, any_value(comment), "
        "list(distinct array_to_string(parameters, ', ')) from duckdb_functions() "
        "where not internal and function_type in ('macro', 'table_macro') "
        "group by all order by function_name").fetchall()
    for name, kind, comment, signatures in macros:
        shown = "; ".join(f"`{name}({signature})`" for signature in sorted(signatures))
        table = " (a table macro: `select * from` it)" if kind == "table_macro" else ""
        parts.append(f"### `{name}`\n\n{shown}{table}\n\n{_text(comment)}\n")
    return "\n".join(parts)


def _object_section(con: duckdb.DuckDBPyConnection, name: str, comment: str | None) -> str:
    columns = con.execute("select column_name, data_type, comment from duckdb_columns() "
                          "where table_name = ? order by column_index", [name]).fetchall()
    rows = "\n".join(f"| `{column}` | {data_type} | {_cell(text)} |"
                     for column, data_type, text in columns)
    return (f"### `{name}`\n\n{_text(comment)}\n\n| column | type | description |\n"
            f"|---|---|---|\n{rows}\n")


def _text(comment: str | None) -> str:
    return comment.strip() if comment else "(no comment)"


def _cell(comment: str | None) -> str:
    """A comment as one table cell: pipes escaped, on one line."""
    return " ".join(_text(comment).split()).replace("|", "\\|")


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        sys.stderr.write("usage: python -m db.warehouse_reference OUT.md\n")
        return 2
    with empty_warehouse() as con:
        Path(argv[0]).write_text(reference_markdown(con), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
