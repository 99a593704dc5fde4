"""The market frames' columns, and their checks at the boundary.

Offers: one row per (offer, dataset version), as the offer was known at that version (a
cloud price list's row: provider, region, term, GPU, price per GPU-hour). Quotes: one row per
(vendor quote, dataset version). Every function of models/market takes a frame in these
columns, checks it here once, and works on the checked copy (the caller's frame is never
modified).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from models.frame_dates import day_stamps
from models.observations import OFFER_TERMS, identity

# Offers.
VERSION = "dataset_version"          # int
VERSION_DATE = "version_date"        # date: when that dataset version was recorded
PROVIDER = "provider"                # str
REGION = "region"                    # str | None
TERM = "term"                        # one of PRICE_LIST_TERMS
GPU = "gpu"                          # ledger GPU item key, e.g. "h100-sxm5"
GPUS_PER_INSTANCE = "gpus_per_instance"  # int
PRICE = "usd_per_gpu_hour"           # float, USD per GPU-hour
AS_OF = "as_of"                      # date of the price
SOURCE = "source"                    # source key
OBSERVATION_ID = "observation_id"    # int
OFFER_COLUMNS: tuple[str, ...] = (VERSION, VERSION_DATE, PROVIDER, REGION, TERM, GPU,
                                  GPUS_PER_INSTANCE, PRICE, AS_OF, SOURCE, OBSERVATION_ID)

# Quotes (also SOURCE, OBSERVATION_ID and VERSION).
ITEM = "item"                        # ledger item key of what is quoted
VENDOR = "vendor"                    # str
UNIT_PRICE = "unit_price_usd"        # float, USD a unit
QUOTED_ON = "quoted_on"              # date
VALID_UNTIL = "valid_until"          # date | None
LEAD_TIME = "lead_time_days"         # float | None
QUOTE_COLUMNS: tuple[str, ...] = (ITEM, VENDOR, UNIT_PRICE, QUOTED_ON, VALID_UNTIL, LEAD_TIME,
                                  SOURCE, OBSERVATION_ID, VERSION)

# The terms of a price list (a vendor's "quote" is a row of the quotes frame instead).
PRICE_LIST_TERMS: tuple[str, ...] = tuple(t for t in OFFER_TERMS if t != "quote")

# How terms read in a sentence.
TERM_LABELS = {"on_demand": "on-demand", "spot": "spot", "reserved_1y": "1-year reserved",
               "reserved_3y": "3-year reserved", "capacity_block": "capacity-block",
               "contract": "contract"}


def require_columns(frame: pd.DataFrame, required: Sequence[str], what: str) -> None:
    """ValueError naming every missing column (in `required` order)."""
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise ValueError(f"{what} frame is missing column(s) {', '.join(missing)} "
                         f"(expected {', '.join(required)})")


def _dates(values: pd.Series, column: str, what: str) -> pd.Series:
    try:
        return day_stamps(values)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{what} column {column} holds a value that is not a date: "
                         f"{error}") from None


def checked_offers(offers: pd.DataFrame) -> pd.DataFrame:
    """The offers in OFFER_COLUMNS order, dates as datetime64, ids as int64, region None
    where missing; ValueError for a missing column, an unknown term, a price that is not a
    positive finite number, a missing GPU or provider, or a version with two dates."""
    require_columns(offers, OFFER_COLUMNS, "offers")
    frame = offers.loc[:, list(OFFER_COLUMNS)].copy()
    frame[VERSION] = frame[VERSION].astype("int64")
    frame[OBSERVATION_ID] = frame[OBSERVATION_ID].astype("int64")
    frame[VERSION_DATE] = _dates(frame[VERSION_DATE], VERSION_DATE, "offers")
    frame[AS_OF] = _dates(frame[AS_OF], AS_OF, "offers")
    frame[PRICE] = frame[PRICE].astype("float64")
    frame[REGION] = frame[REGION].astype(object).where(frame[REGION].notna(), None)
    unknown = sorted(set(frame[TERM].dropna().unique()) - set(PRICE_LIST_TERMS))
    if unknown or frame[TERM].isna().any():
        shown = ", ".join(map(str, unknown)) or "a missing term"
        raise ValueError(f"offers frame has term(s) {shown}; expected one of "
                         f"{', '.join(PRICE_LIST_TERMS)}")
    bad = ~(np.isfinite(frame[PRICE].to_numpy()) & (frame[PRICE].to_numpy() > 0))
    if bad.any():
        ids = frame.loc[bad, OBSERVATION_ID].head(5).tolist()
        raise ValueError(f"offers frame has {int(bad.sum())} price(s) in {PRICE} that are not "
                         f"positive finite numbers (observation ids {ids})")
    for column in (GPU, PROVIDER, SOURCE):
        if frame[column].isna().any():
            raise ValueError(f"offers frame has a missing {column}")
    # One provider, one spelling (issue 43): ingest writes identities lower case, but a
    # ledger ingested before that may hold "Lambda" beside "lambda", which would count twice.
    frame[PROVIDER] = _each_distinct(frame[PROVIDER], lambda name: identity(str(name)))
    frame[REGION] = _each_distinct(frame[REGION], lambda name: identity(str(name)))
    if frame[VERSION_DATE].isna().any():
        raise ValueError(f"offers frame has a missing {VERSION_DATE}")
    dates_per_version = frame.groupby(VERSION)[VERSION_DATE].nunique()
    if (dates_per_version > 1).any():
        versions = dates_per_version[dates_per_version > 1].index.tolist()
        raise ValueError(f"offers frame gives dataset version(s) {versions} more than one "
                         f"{VERSION_DATE}")
    return frame


def _each_distinct(values: pd.Series, spelling: Callable[[Any], Any]) -> pd.Series:
    """`spelling` of every value, worked out once per distinct value (a price list's 100,000
    offers name a few providers and a few hundred regions); None stays None."""
    codes, distinct = pd.factorize(values.to_numpy(dtype=object), use_na_sentinel=True)
    spelt = np.array([*map(spelling, distinct), None], dtype=object)
    return pd.Series(spelt[codes], index=values.index, dtype=object)


def checked_quotes(quotes: pd.DataFrame) -> pd.DataFrame:
    """The quotes in QUOTE_COLUMNS order, dates as datetime64 (valid_until NaT where
    missing), lead time float (NaN where missing); ValueError for a missing column, a missing
    item, vendor or quote date."""
    require_columns(quotes, QUOTE_COLUMNS, "quotes")
    frame = quotes.loc[:, list(QUOTE_COLUMNS)].copy()
    frame[VERSION] = frame[VERSION].astype("int64")
    frame[OBSERVATION_ID] = frame[OBSERVATION_ID].astype("int64")
    frame[QUOTED_ON] = _dates(frame[QUOTED_ON], QUOTED_ON, "quotes")
    frame[VALID_UNTIL] = _dates(frame[VALID_UNTIL], VALID_UNTIL, "quotes")
    frame[UNIT_PRICE] = frame[UNIT_PRICE].astype("float64")
    frame[LEAD_TIME] = pd.to_numeric(frame[LEAD_TIME]).astype("float64")
    for column in (ITEM, VENDOR, QUOTED_ON):
        if frame[column].isna().any():
            raise ValueError(f"quotes frame has a missing {column}")
    return frame


def term_label(term: str) -> str:
    return TERM_LABELS.get(term, term)


def gpu_label(gpu: str, labels: Mapping[str, str] | None = None) -> str:
    """The GPU as printed: its name from `labels`, else its key in capitals (H100-SXM5)."""
    return (labels or {}).get(gpu, gpu.upper())
