"""The market as the ledger knows it: each dataset version's offers, the price index over
every version up to one, and the rows the warehouse's price_index table holds."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

import pandas as pd

from db import queries
from db.engine import Session
from models.market import index_changes, price_index
from models.market.snapshots import VersionCut, offers_at_versions, quotes_at_version


def market_index(session: Session, up_to: int | None = None) -> pd.DataFrame:
    """The price index of every dataset version up to `up_to` (all when None), with its
    week-over-week and 90-day changes (models.market.index_changes' columns)."""
    versions = [VersionCut(v, cutoff, cutoff.date())
                for v, cutoff in queries.dataset_versions(session, up_to)]
    offers = offers_at_versions(queries.offer_history(session), versions)
    index = price_index(offers)
    if index.empty:
        return index
    changes = index_changes(index)
    keys = ["dataset_version", "gpu", "term"]
    extra = [c for c in changes.columns if c not in index.columns]
    return index.merge(changes[keys + extra], on=keys, how="left")


def price_index_rows(index: pd.DataFrame) -> list[tuple[Any, ...]]:
    """The warehouse's price_index rows (db/warehouse: dataset_version, version_date, gpu,
    term, offers, providers, median, min, p25, p75, cheapest provider / region / price /
    source, change week over week and over 90 days)."""
    def plain(value: Any) -> Any:
        if value is None or (isinstance(value, float) and value != value) or value is pd.NA:
            return None
        if isinstance(value, pd.Timestamp):
            return value.date()
        return value.item() if hasattr(value, "item") else value

    columns = ["dataset_version", "version_date", "gpu", "term", "n_offers", "n_providers",
               "median", "min", "p25", "p75", "cheapest_provider", "cheapest_region",
               "cheapest_price", "cheapest_source", "wow_change", "d90_change"]
    return [tuple(plain(v) for v in row) for row in index.reindex(columns=columns).itertuples(
        index=False, name=None)]


def index_row(session: Session, gpu: str, term: str, *, on: date,
              known: datetime) -> dict[str, Any] | None:
    """The price index of one GPU and term valid on `on` as known at `known` (the offers a
    dataset version with that cut-off sees); None when no offer is known."""
    offers = offers_at_versions(queries.offer_history(session),
                                [VersionCut(0, known, on)])
    index = price_index(offers[(offers["gpu"] == gpu) & (offers["term"] == term)])
    return None if index.empty else index.iloc[0].to_dict()


def market_quotes(session: Session, version: int) -> pd.DataFrame:
    """The vendor quotes a dataset version knew (models.market.frames.QUOTE_COLUMNS)."""
    cutoff = queries.dataset_version(session, version).cutoff_at
    return quotes_at_version(queries.quote_history(session),
                             VersionCut(version, cutoff, cutoff.date()))
