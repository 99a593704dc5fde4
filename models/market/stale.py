"""The market the age limit leaves out: per GPU and term, the offers priced longer ago than
the limit, summarised (how many, from how many providers, their median over providers and
the newest price date), so a briefing without a current offer still says what it knows."""

from __future__ import annotations

import pandas as pd

from models.market.frames import AS_OF, GPU, PRICE, PROVIDER, TERM
from models.market.valid_time import age_days

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
