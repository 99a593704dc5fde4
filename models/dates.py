"""The calendar the stack can compute with.

pandas keeps dates as nanoseconds since 1970 in 64 bits: 1677-09-21 to 2262-04-11. A date
outside that span is accepted by Python and by both databases, then fails every later
computation that puts it in a frame (the flags, the price index, the warehouse). Readers
refuse such dates, so one row can never stop every later run of the append-only ledger.
"""

from __future__ import annotations

from datetime import date

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
