"""The docs quote no figure the shipped scenarios do not give: results that depend on the
ledger (prices, power, the C2C model's job times) move with every dataset version, so the
table of shipped TCO scenarios (docs/scenarios.md, moved there from the README) names those
scenarios and leaves their figures to page 1 and `specledger tco`."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "data" / "scenarios"
# The page that holds the table of shipped TCO scenarios.
TABLE_PAGE = ROOT / "docs" / "scenarios.md"
# The one TCO scenario whose every input is inline: its figures cannot move.
FIXED = "tco-worked-illustration"


def tco_table() -> dict[str, str]:
    """The docs' table of shipped TCO scenarios: name -> what the row says."""
    text = TABLE_PAGE.read_text(encoding="utf-8")
    start = text.index("| scenario | what |")
    rows = text[start:].split("\n\n")[0].splitlines()[2:]
    return {re.search(r"`([^`]+)`", row)[1]: row for row in rows}  # type: ignore[index]


def test_the_docs_name_every_shipped_tco_scenario():
    shipped = {p.stem for p in SCENARIOS.glob("tco-*.yaml")}
    assert set(tco_table()) == shipped


def test_only_the_all_inline_scenario_quotes_results():
    for name, row in tco_table().items():
        figures = re.findall(r"s\* [0-9.]+|\$[0-9.]+ ?[MB]|[0-9.]+ days", row)
        assert (name == FIXED) == bool(figures), (name, figures)
