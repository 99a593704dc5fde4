"""The market the age limit leaves out: per GPU and term, the offers priced longer ago than
the limit, summarised (how many, from how many providers, their median over providers and
the newest price date), so a briefing without a current offer still says what it knows."""

from __future__ import annotations

import pandas as pd

from models.market.frames import AS_OF, GPU, PRICE, PROVIDER, TERM
from models.market.valid_time import age_days
from models.trends.types import Flag

STALE_COLUMNS = (GPU, TERM, "offers", "providers", "median", "newest", "age_days")


def stale_summary(offers: pd.DataFrame, max_age_days: int) -> pd.DataFrame:
    """Per (GPU, term) with no offer within `max_age_days` of its version's date: its offers'
    count, providers, median over providers (each provider one voice), newest price date
    and that date's age in days; ordered by GPU and term. `offers`: one version's offers
    (models.market.snapshots.offers_at_versions)."""
    if offers.empty:
        return pd.DataFrame(columns=list(STALE_COLUMNS))
    aged = offers.assign(age_days=age_days(offers))
    fresh = aged[aged["age_days"] <= max_age_days].groupby([GPU, TERM]).size()
    rows = []
    for (gpu, term), group in aged.groupby([GPU, TERM], sort=True):
        if (gpu, term) in fresh.index:
            continue
        voices = group.groupby(PROVIDER)[PRICE].median()
        rows.append({GPU: gpu, TERM: term, "offers": len(group), "providers": len(voices),
                     "median": float(voices.median()),
                     "newest": pd.Timestamp(group[AS_OF].max()).date(),
                     "age_days": int(group["age_days"].min())})
    return pd.DataFrame(rows, columns=list(STALE_COLUMNS))


def stale_offer_flags(summary: pd.DataFrame, max_age_days: int) -> list[Flag]:
    """One `stale` flag per offer group (GPU and term) of `stale_summary`: a catalog's many
    rows of one GPU and term are one finding, not one per row."""
    return [Flag("stale", "info", f"market: {row[GPU]} {str(row[TERM]).replace('_', ' ')}",
                 f"market: {row[GPU]} {str(row[TERM]).replace('_', ' ')}: {row['offers']:,} "
                 f"offer(s) from {row['providers']} provider(s), the newest priced "
                 f"{row['newest'].isoformat()} ({row['age_days']:,} days old, past the "
                 f"market's {max_age_days}-day age limit): the market's history, so no price "
                 "or rent is taken from them; a current price list would replace them.")
            for _, row in summary.iterrows()]
