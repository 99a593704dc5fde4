"""Dates into pandas frames, where the stack's calendar ends (see models.dates)."""

from __future__ import annotations

from datetime import date, datetime

import pandas as pd

from models.dates import EARLIEST_DATE, LATEST_DATE


def day_stamps(values: pd.Series) -> pd.Series:
    """Dates as naive datetime64[ns] day stamps, a date outside the span as NaT.

    Ledgers written before readers refused such dates may hold one (a `valid_to` of
    9999-12-31 means "no end", which NaT also means); they must not stop every later run."""
    try:
        return pd.to_datetime(values).astype("datetime64[ns]")
    except pd.errors.OutOfBoundsDatetime:
        kept = values.map(lambda v: None if isinstance(v, date) and _outside(v) else v)
        return pd.to_datetime(kept).astype("datetime64[ns]")


def _outside(value: date) -> bool:
    day = value.date() if isinstance(value, datetime) else value
    return not EARLIEST_DATE <= day <= LATEST_DATE
