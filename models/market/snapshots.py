"""The offers each dataset version knew: from the full history of market prices (both clocks)
to the offers frame the index reads.

A version sees an observation recorded by its cut-off and not superseded by then, valid on
its date. One offer (a ledger item: a provider's instance type, region and term) may be priced
by several live observations: successive price lists of one publisher, or a list and a quote
copied by hand. The newest price stands (as_of, then recording), as the resolution rule's
series do; the others are history.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

import pandas as pd

from models.frame_dates import day_stamps
from models.market.frames import (
    AS_OF,
    GPU,
    GPUS_PER_INSTANCE,
    ITEM,
    LEAD_TIME,
    OBSERVATION_ID,
    OFFER_COLUMNS,
    PRICE,
    PRICE_LIST_TERMS,
    PROVIDER,
    QUOTE_COLUMNS,
    QUOTED_ON,
    REGION,
    SOURCE,
    TERM,
    UNIT_PRICE,
    VALID_UNTIL,
    VENDOR,
    VERSION,
    VERSION_DATE,
)
from models.market.valid_time import OFFER

# The history frame's columns (db.queries.offer_history): one row per observation.
HISTORY_COLUMNS = ("observation_id", "item", "source", "value", "as_of", "valid_to",
                   "recorded_at", "superseded_at", "offer_provider", "offer_region",
                   "offer_term", "offer_gpu", "offer_units")


@dataclass(frozen=True)
class VersionCut:
    """A dataset version: its id, its knowledge cut-off and the date its values hold on."""

    version: int
    cutoff_at: datetime
    on: date


def offers_at_versions(history: pd.DataFrame, versions: Sequence[VersionCut]) -> pd.DataFrame:
    """The offers frame (models.market.frames.OFFER_COLUMNS, and `offer`: the offer's ledger
    item): for each version, every offer with a GPU and a price-list term that it knew, valid
    on the cut's date (`on`, the version_date of its rows), at its newest price."""
    missing = [c for c in HISTORY_COLUMNS if c not in history.columns]
    if missing:
        raise ValueError(f"offer history is missing column(s) {', '.join(missing)}")
    usable = history[history["offer_gpu"].notna()
                     & history["offer_term"].isin(PRICE_LIST_TERMS)]
    if usable.empty or not versions:
        return pd.DataFrame(columns=[*OFFER_COLUMNS, OFFER])
    recorded = pd.to_datetime(usable["recorded_at"], utc=True)
    superseded = pd.to_datetime(usable["superseded_at"], utc=True)
    as_of = day_stamps(usable["as_of"])
    valid_to = day_stamps(usable["valid_to"])
    frames = []
    for cut in versions:
        cutoff, on = pd.Timestamp(cut.cutoff_at).tz_convert("UTC"), pd.Timestamp(cut.on)
        seen = usable[(recorded <= cutoff) & (superseded.isna() | (superseded > cutoff))
                      & (as_of <= on) & (valid_to.isna() | (valid_to > on))]
        newest = (seen.sort_values(["item", "as_of", "recorded_at", "observation_id"])
                  .drop_duplicates("item", keep="last"))
        frames.append(pd.DataFrame({
            VERSION: cut.version, VERSION_DATE: cut.on, PROVIDER: newest["offer_provider"],
            REGION: newest["offer_region"], TERM: newest["offer_term"], GPU: newest["offer_gpu"],
            GPUS_PER_INSTANCE: newest["offer_units"], PRICE: newest["value"],
            AS_OF: newest["as_of"], SOURCE: newest["source"],
            OBSERVATION_ID: newest["observation_id"], OFFER: newest["item"]}))
    return pd.concat(frames, ignore_index=True)[[*OFFER_COLUMNS, OFFER]]


QUOTE_HISTORY_COLUMNS = ("observation_id", "item", "metric", "source", "value", "as_of",
                         "recorded_at", "superseded_at", "offer_provider", "offer_valid_until")
QUOTE_PRICE_METRICS = ("system_price", "gpu_price")


def quotes_at_version(history: pd.DataFrame, cut: VersionCut) -> pd.DataFrame:
    """The quotes frame (models.market.frames.QUOTE_COLUMNS) of one version: every vendor quote
    it knew (recorded by its cut-off, not superseded), expired ones included (a quote's figures
    stop holding after valid_until, but "it expired" is worth saying), one row per quote: its
    unit price, with the lead time quoted the same day for the same item by the same vendor."""
    missing = [c for c in QUOTE_HISTORY_COLUMNS if c not in history.columns]
    if missing:
        raise ValueError(f"quote history is missing column(s) {', '.join(missing)}")
    cutoff = pd.Timestamp(cut.cutoff_at).tz_convert("UTC")
    recorded = pd.to_datetime(history["recorded_at"], utc=True)
    superseded = pd.to_datetime(history["superseded_at"], utc=True)
    known = history[(recorded <= cutoff) & (superseded.isna() | (superseded > cutoff))]
    key = ["item", "offer_provider", "as_of"]
    prices = known[known["metric"].isin(QUOTE_PRICE_METRICS)]
    leads = (known[known["metric"] == "lead_time"][[*key, "value"]]
             .rename(columns={"value": LEAD_TIME}).drop_duplicates(key, keep="last"))
    quotes = prices.merge(leads, on=key, how="left")
    return pd.DataFrame({
        ITEM: quotes["item"], VENDOR: quotes["offer_provider"], UNIT_PRICE: quotes["value"],
        QUOTED_ON: quotes["as_of"], VALID_UNTIL: quotes["offer_valid_until"],
        LEAD_TIME: quotes[LEAD_TIME], SOURCE: quotes["source"],
        OBSERVATION_ID: quotes["observation_id"], VERSION: cut.version})[list(QUOTE_COLUMNS)]
