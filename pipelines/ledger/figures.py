"""The provenance of one figure a model ran with: its value, where it came from, and why.

Both models record every figure this way (C2C: a cluster's hardware figures; TCO: every cost
input), so the CLI, the stored results and the briefing cite them alike: a ledger value with
its source, date and observation, an inline value as the scenario wrote it, a measurement, a
default with the reason for it, or a C2C estimate's time to train.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from models.observations import UNDATED


@dataclass(frozen=True)
class FigureUsed:
    """One figure a model ran with, and its origin."""

    name: str
    value: float  # in `unit` (SI for hardware figures)
    unit: str
    origin: str  # inline | ledger | measured | default | c2c | market (the price index)
    low: float | None = None  # a range the figure may take (Monte Carlo bands), when it has one
    high: float | None = None
    item: str | None = None
    metric: str | None = None
    source: str | None = None
    as_of: str | None = None
    observation_id: int | None = None
    note: str | None = None
    # How precise `as_of` is (day, month, year): a month's prints "2024-07" (models.dates.shown).
    as_of_precision: str | None = None

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @property
    def is_range(self) -> bool:
        return self.low is not None and self.high is not None and self.low < self.high


def undated_note(row: Mapping[str, Any]) -> str | None:
    """What a figure read from an undated ledger row says in place of its date, None for a
    dated one."""
    if figure_date(row) is not None:
        return None
    return f"undated (its source gives no date; valid from {row['as_of'].isoformat()})"


def figure_date(row: Mapping[str, Any]) -> str | None:
    """A ledger row's as_of as a figure prints it (ISO), None when its source gives no date
    (precision UNDATED: the stored as_of is only where its valid time starts)."""
    if row.get("as_of_precision") == UNDATED:
        return None
    return row["as_of"].isoformat()

