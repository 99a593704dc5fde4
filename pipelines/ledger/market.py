"""The market as the ledger knows it: each dataset version's stored price index (the
price-index stage writes it, pipelines/jobs/price_index.py), the rows the warehouse's
price_index table holds, and the vendor quotes a version knew."""

from __future__ import annotations

from typing import Any

import pandas as pd

from db import price_index as stored
from db import queries
from db.engine import Session
from models.market import price_index
from models.market.frames import GPU, TERM, VERSION
from models.market.snapshots import VersionCut, quotes_at_version
from models.market.valid_time import price_dates
from pipelines.ledger.market_tiers import market_max_age_days, version_offers

# The warehouse's price_index columns, in order.
WAREHOUSE_COLUMNS = ["dataset_version", "version_date", "gpu", "term", "n_offers",
                     "n_providers", "median", "min", "p25", "p75", "cheapest_provider",
                     "cheapest_region", "cheapest_price", "cheapest_source", "wow_change",
                     "d90_change"]


def market_index(session: Session, up_to: int | None = None) -> pd.DataFrame:
    """The stored price index of every dataset version up to `up_to` (all when None), with
    its week-over-week and 90-day changes."""
    return stored.stored_index(session, up_to=up_to)


def price_index_rows(index: pd.DataFrame) -> list[tuple[Any, ...]]:
    """The warehouse's price_index rows (WAREHOUSE_COLUMNS)."""
    def plain(value: Any) -> Any:
        if value is None or (isinstance(value, float) and value != value) or value is pd.NA:
            return None
        if isinstance(value, pd.Timestamp):
            return value.date()
        return value.item() if hasattr(value, "item") else value

    return [tuple(plain(v) for v in row) for row in index.reindex(
        columns=WAREHOUSE_COLUMNS).itertuples(index=False, name=None)]


def index_row(session: Session, dataset_version: int, gpu: str, term: str,
              max_age_days: int | None = None) -> dict[str, Any] | None:
    """The price index of one GPU and term at a dataset version, at the market's age limit
    (`max_age_days`, by default SPECLEDGER_MARKET_MAX_AGE_DAYS); None when that version knew
    no such offer within it. The stored row when the version's index was built at that limit
    (or before the limit was recorded); otherwise the index computed here at the reader's
    limit, so one answer never mixes two limits (issue 43, case 1)."""
    limit = market_max_age_days() if max_age_days is None else max_age_days
    built = stored.stage_limit(session, dataset_version, stored.PRICE_INDEX_STAGE)
    if built is not None and built != limit:
        found = index_at_limit(session, dataset_version, limit)
        found = found[(found[GPU] == gpu) & (found[TERM] == term)]
    else:
        found = stored.stored_index(session, only=dataset_version, gpu=gpu, term=term)
    return None if found.empty else found.iloc[0].to_dict()


def index_at_limit(session: Session, dataset_version: int, max_age_days: int) -> pd.DataFrame:
    """A version's price index computed from the offers it knew at an age limit other than
    the one it was stored with: its levels, spread, cheapest offer and price dates (its
    week-over-week and 90-day changes are the stored index's alone). Computed once per
    session, version and limit (what a version knew never changes); callers do not modify
    it."""
    key = ("index_at_limit", dataset_version, max_age_days)
    if key not in session.info:   # once per session: every option of a run asks for it
        offers = version_offers(session, dataset_version, max_age_days)
        session.info[key] = price_index(offers).merge(price_dates(offers),
                                                      on=[VERSION, GPU, TERM], how="left")
    return session.info[key]


def market_quotes(session: Session, version: int) -> pd.DataFrame:
    """The vendor quotes a dataset version knew (models.market.frames.QUOTE_COLUMNS)."""
    cutoff = queries.dataset_version(session, version).cutoff_at
    return quotes_at_version(queries.quote_history(session),
                             VersionCut(version, cutoff, cutoff.date()))
