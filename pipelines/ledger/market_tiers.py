"""The rental tiers of a GPU at a dataset version: its neocloud and hyperscaler on-demand
prices among the offers that version knew, priced within the market's age limit."""

from __future__ import annotations

import pandas as pd

from db import queries
from db.engine import Session
from models.market.snapshots import VersionCut, offers_at_versions
from models.market.tiers import TierPrice, tier_prices
from models.market.valid_time import fresh_offers
from pipelines.settings import Settings


def known_offers(session: Session, dataset_version: int) -> pd.DataFrame:
    """Every offer `dataset_version` knew, valid on its date, however old its price.

    Read once per session and version: what a version knew never changes (the ledger is
    append-only and the version's cut-off is fixed), and every serving scenario of a run, and
    the briefing's stale-offer list, ask for the same offers; on a ledger holding a large price
    list the offer history is the costly read. Callers get a copy to do with as they like."""
    key = ("known_offers", dataset_version)
    if key not in session.info:
        cutoff = queries.dataset_version(session, dataset_version).cutoff_at
        session.info[key] = offers_at_versions(
            queries.offer_history(session), [VersionCut(dataset_version, cutoff, cutoff.date())])
    return session.info[key].copy()


def market_max_age_days() -> int:
    """The market's age limit (SPECLEDGER_MARKET_MAX_AGE_DAYS), as the price index uses it."""
    return Settings().market_max_age_days


def version_offers(session: Session, dataset_version: int,
                   max_age_days: int | None = None) -> pd.DataFrame:
    """The offers `dataset_version` knew, valid on its date, at most `max_age_days` old (by
    default the market's age limit, as the price index)."""
    limit = market_max_age_days() if max_age_days is None else max_age_days
    return fresh_offers(known_offers(session, dataset_version), limit)


def rental_tiers(offers: pd.DataFrame, gpu: str | None) -> dict[str, TierPrice]:
    """`gpu`'s on-demand price per rental tier among `offers` (version_offers)."""
    return {} if gpu is None else tier_prices(offers, gpu, "on_demand")
