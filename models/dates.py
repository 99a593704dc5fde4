"""The calendar the stack can compute with.

pandas keeps dates as nanoseconds since 1970 in 64 bits: 1677-09-21 to 2262-04-11. A date
outside that span is accepted by Python and by both databases, then fails every later
computation that puts it in a frame (the flags, the price index, the warehouse). Readers
refuse such dates, so one row can never stop every later run of the append-only ledger.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date
from typing import Any

# A whole year of margin inside pandas' span: a quote's valid_to is valid_until + 1 day, and
# an as-of view adds days to a date.
EARLIEST_DATE = date(1678, 1, 1)
LATEST_DATE = date(2261, 12, 31)


def out_of_range(day: date, field: str) -> str | None:
    """Why `day` cannot be used (None when it can): the message names the field and the span,
    and for a far-future end date ("9999-12-31", the usual "no end") says to leave it empty."""
    if EARLIEST_DATE <= day <= LATEST_DATE:
        return None
    if day > LATEST_DATE:
        return (f"{field} {day.isoformat()} is after {LATEST_DATE.isoformat()}, the latest date "
                "specledger can compute with; leave it empty for a figure with no end date")
    return (f"{field} {day.isoformat()} is before {EARLIEST_DATE.isoformat()}, the earliest "
            "date specledger can compute with")



def shown(as_of: str | None, precision: str | None) -> str:
    """An ISO date as precise as its source gave it: "2024-07" for a month's (stored as its
    first day), "2024" for a year's, the day otherwise; "undated" without one."""
    if not as_of:
        return "undated"
    return as_of[:7] if precision == "month" else as_of[:4] if precision == "year" else as_of


def date_span(figures: Iterable[Mapping[str, Any]]) -> tuple[str | None, str | None, int]:
    """The oldest and newest dates of the ledger and market figures among `figures`, to the
    month at most (a cell on page 1 is narrow) and no more precise than each source gave it
    ("2024", "2024-07"), and how many of them are undated. Figures of other origins (inline,
    defaults, derived) are the scenario's, not evidence, and are not counted."""
    dated: list[tuple[str, str]] = []
    undated = 0
    for figure in figures:
        if figure.get("origin") not in ("ledger", "market"):
            continue
        if figure.get("as_of"):
            as_of = str(figure["as_of"])
            precision = "year" if figure.get("as_of_precision") == "year" else "month"
            dated.append((as_of, shown(as_of, precision)))
        else:
            undated += 1
    if not dated:
        return None, None, undated
    return min(dated)[1], max(dated)[1], undated


def span_text(oldest: str | None, newest: str | None) -> str:
    """"2024-03–2026-11", one date when both ends are the same, "" without one."""
    if oldest is None or newest is None:
        return ""
    return oldest if oldest == newest else f"{oldest}–{newest}"
