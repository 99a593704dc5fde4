"""The market in valid time: which offers are fresh enough to price the market on a date, and
how prices moved between two dates over the offers priced on both.

An offer is valid from its price date (`as_of`: the date of the price list it comes from),
not from when the ledger learnt it. A dataset version's market on its date D holds the offers
valid on D (models.market.snapshots); the ones priced more than `max_age_days` before D are
stale: they leave the index and are listed apart. The week-over-week (90-day) change of a
version compares its market on D with its own knowledge of the market on D - 7 (D - 90), so
two weekly catalogs loaded on one day give a change, and only offers priced on both dates
count (same provider, region, instance and term): a provider that adds 11 regions changes
the composition, reported apart, never the change.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from models.market.frames import (
    AS_OF,
    GPU,
    GPUS_PER_INSTANCE,
    PRICE,
    PROVIDER,
    REGION,
    TERM,
    VERSION,
    VERSION_DATE,
)
from models.market.index import without_false_spot

# The ledger item of an offer (a provider's instance type, region and term): an optional
# column of the offers frame that snapshots.offers_at_versions adds. Without it, an offer is
# told apart by provider, region, GPU and GPUs per instance.
OFFER = "offer"
# Offers priced more than this many days before the market's date are stale (the default of
# SPECLEDGER_MARKET_MAX_AGE_DAYS).
MAX_OFFER_AGE_DAYS = 120
# The columns matched_changes gives, after VERSION, GPU and TERM.
CHANGE, MATCHED, COMPOSITION = "change", "n_matched", "composition"


def age_days(offers: pd.DataFrame) -> pd.Series:
    """Each offer's age on its version's date: version_date - as_of, in days."""
    return (pd.to_datetime(offers[VERSION_DATE]) - pd.to_datetime(offers[AS_OF])).dt.days


def fresh_offers(offers: pd.DataFrame, max_age_days: int | None) -> pd.DataFrame:
    """The offers priced at most `max_age_days` before their version's date (all of them when
    None)."""
    if max_age_days is None or offers.empty:
        return offers
    return offers[age_days(offers) <= max_age_days]


def stale_offers(offers: pd.DataFrame, max_age_days: int | None) -> pd.DataFrame:
    """The offers fresh_offers leaves out, with their age (`age_days`), oldest first."""
    if max_age_days is None or offers.empty:
        return offers.iloc[0:0].assign(age_days=pd.Series(dtype="int64"))
    aged = offers.assign(age_days=age_days(offers))
    return aged[aged["age_days"] > max_age_days].sort_values(
        ["age_days", PROVIDER, GPU, TERM], ascending=[False, True, True, True])


def matched_changes(now: pd.DataFrame, then: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset version, GPU, term) of `now`: the change of the market median from `then`
    (the same version's offers on an earlier date) over the offers priced on both, as a
    fraction (-0.12: 12 % cheaper); how many offers matched; and the composition change in
    words ("gcp added 11 offers; aws dropped 2"), "" when none.

    The median is taken as the index takes it (models.market.index.price_index): a
    provider's matched offers give one price, their median, and the change is that of the
    median over providers. NaN when no offer is priced on both dates. Spot prices at or above
    on-demand are left out of both sides first."""
    now_offers, then_offers = without_false_spot(now), without_false_spot(then)
    now_keyed, then_keyed = _keyed(now_offers), _keyed(then_offers)
    rows = []
    for (version, gpu, term), current in now_keyed.groupby([VERSION, GPU, TERM], sort=True):
        before = then_keyed[(then_keyed[VERSION] == version) & (then_keyed[GPU] == gpu)
                            & (then_keyed[TERM] == term)]
        shared = set(current["_key"]) & set(before["_key"])
        matched_now = current[current["_key"].isin(shared)]
        matched_then = before[before["_key"].isin(shared)]
        change = (_voice_median(matched_now) / _voice_median(matched_then) - 1
                  if shared else float("nan"))
        rows.append({VERSION: version, GPU: gpu, TERM: term, CHANGE: change,
                     MATCHED: len(shared), COMPOSITION: _composition(current, before)})
    return pd.DataFrame(rows, columns=[VERSION, GPU, TERM, CHANGE, MATCHED, COMPOSITION])


def _keyed(offers: pd.DataFrame) -> pd.DataFrame:
    """The offers with `_key`: the offer's identity across dates."""
    if OFFER in offers.columns:
        key = offers[OFFER].astype(str)
    else:
        key = (offers[PROVIDER].astype(str) + "|" + offers[REGION].astype(str) + "|"
               + offers[GPU].astype(str) + "|" + offers[GPUS_PER_INSTANCE].astype(str))
    return offers.assign(_key=key)


def _voice_median(offers: pd.DataFrame) -> float:
    """The median over providers of each provider's median price."""
    return float(offers.groupby(PROVIDER)[PRICE].median().median())


def _composition(current: pd.DataFrame, before: pd.DataFrame) -> str:
    """"gcp added 11 offers; aws dropped 2 offers", by provider; "" when the same offers."""
    words: list[str] = []
    providers: Sequence[str] = sorted(set(current[PROVIDER]) | set(before[PROVIDER]))
    for provider in providers:
        now_keys = set(current.loc[current[PROVIDER] == provider, "_key"])
        then_keys = set(before.loc[before[PROVIDER] == provider, "_key"])
        added, dropped = len(now_keys - then_keys), len(then_keys - now_keys)
        parts = [f"{verb} {n} offer{'s' if n != 1 else ''}"
                 for verb, n in (("added", added), ("dropped", dropped)) if n]
        if parts:
            words.append(f"{provider} {' and '.join(parts)}")
    return "; ".join(words)
