"""docs/warehouse-reference.md is what the warehouse's own comments say: regenerated and
compared, and every object of a published file has its section there."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb

from db.warehouse_reference import empty_warehouse, reference_markdown
from tests.db.test_marts import published  # noqa: F401 - the fixture

PAGE = Path(__file__).resolve().parents[2] / "docs" / "warehouse-reference.md"


def test_the_reference_page_is_the_generated_one():
    with empty_warehouse() as con:
        generated = reference_markdown(con)
    assert PAGE.read_text(encoding="utf-8") == generated, (
        "docs/warehouse-reference.md is out of date: run "
        "`python -m db.warehouse_reference docs/warehouse-reference.md`")


def test_every_object_of_a_published_warehouse_has_its_section(published):  # noqa: F811
    sections = set(re.findall(r"^### `(\w+)`", PAGE.read_text(encoding="utf-8"), re.M))
    with duckdb.connect(str(published), read_only=True) as con:
        objects = {name for name, in con.execute(
            "select table_name from duckdb_tables() where not internal "
            "union select view_name from duckdb_views() where not internal "
            "union select function_name from duckdb_functions() "
            "where not internal and function_type in ('macro', 'table_macro')").fetchall()}
    assert objects and objects == sections


def test_every_column_is_described():
    described = PAGE.read_text(encoding="utf-8")
    assert "(no comment)" not in described
    assert "| `new_value` | DOUBLE | The resolved value at this version" in described
