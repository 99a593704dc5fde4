"""The scale-up vs scale-out comparison table, filled from the ledger by data/comparison.yaml."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from pathlib import Path
from typing import Any

from models.observations import UNDATED
from pipelines.inputs.yaml_lines import load_yaml, read_bounded_text
from pipelines.ledger.resolved import ResolvedValue
from reports.context import Cited, ComparisonRow, SourceLine

Resolved = Mapping[tuple[str, str], ResolvedValue]


class ComparisonError(ValueError):
    """data/comparison.yaml does not say what a cell is."""


def load_comparison(path: Path) -> dict[str, Any]:
    spec = load_yaml(read_bounded_text(path))
    for row in spec["rows"]:
        if len(row["cells"]) != len(spec["options"]):
            raise ComparisonError(f"{path}: row {row['attribute']!r} has {len(row['cells'])} "
                                  f"cells for {len(spec['options'])} options")
    return spec


def comparison_table(spec: dict[str, Any], resolved: Resolved,
                     vendors: Mapping[str, str | None]) -> tuple[tuple[str, ...],
                                                              list[ComparisonRow]]:
    """Column headings and rows; a ledger figure the ledger lacks is a None cell."""
    references = {ref["key"]: ref for ref in spec.get("references", [])}
    rows = [ComparisonRow(row["attribute"],
                          tuple(_cell(cell, resolved, vendors, references)
                                for cell in row["cells"]))
            for row in spec["rows"]]
    return tuple(option["title"] for option in spec["options"]), rows


def reference_sources(spec: dict[str, Any]) -> list[SourceLine]:
    """The references behind the table's qualitative cells, for the appendix."""
    return [SourceLine(key=ref["key"], title=ref["title"], publisher=ref.get("publisher"),
                       kind="reference", published_on=_as_date(ref.get("published_on")),
                       url=ref.get("url")) for ref in spec.get("references", [])]


def comparison_pairs(spec: dict[str, Any]) -> set[tuple[str, str]]:
    """The (item, metric) pairs the table's ledger cells read."""
    return {(cell["item"], cell["metric"]) for row in spec["rows"] for cell in row["cells"]
            if cell is not None and "item" in cell and "metric" in cell}


def _cell(cell: dict[str, Any] | None, resolved: Resolved, vendors: Mapping[str, str | None],
          references: dict[str, dict[str, Any]]) -> Cited | None:
    if cell is None:
        return None
    if "text" in cell:
        ref = references[cell["reference"]]
        return Cited(0.0, 0.0, "", source=ref["key"], as_of=_as_date(ref.get("published_on")),
                     text=cell["text"])
    if "vendors_of" in cell:
        names = sorted({v for key in cell["vendors_of"] if (v := vendors.get(key))})
        return Cited(0.0, 0.0, "", text=", ".join(names) or "none recorded",
                     formula=f"vendors of {', '.join(cell['vendors_of'])} in the ledger")
    value = resolved.get((cell["item"], cell["metric"]))
    if value is None:
        return None
    winner = value.winner
    # An undated figure prints "undated", not the start of its valid time.
    return Cited(winner["low"], winner["high"], winner["unit"], source=winner["source"],
                 as_of=None if winner.get("as_of_precision") == UNDATED else winner["as_of"])


def _as_date(value: Any) -> date | None:
    if value is None or isinstance(value, date):
        return value
    return date.fromisoformat(str(value))
