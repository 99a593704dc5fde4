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

import numpy as np
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


def price_dates(offers: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset version, GPU, term): the oldest and newest price date (`price_from`,
    `price_to`) of the offers the index counts (false spot left out)."""
    counted = without_false_spot(offers)
    dates = pd.to_datetime(counted[AS_OF])
    grouped = dates.groupby([counted[VERSION], counted[GPU], counted[TERM]], sort=True)
    return pd.DataFrame({"price_from": grouped.min(), "price_to": grouped.max()}).reset_index()


def matched_changes(now: pd.DataFrame, then: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset version, GPU, term) of `now`: the change of the market median from `then`
    (the same version's offers on an earlier date) over the offers priced on both, as a
    fraction (-0.12: 12 % cheaper); how many offers matched; and the composition change in
    words ("gcp added 11 offers; aws dropped 2"), "" when none.

    The median is taken as the index takes it (models.market.index.price_index): a
    provider's matched offers give one price, their median, and the change is that of the
    median over providers. NaN when no offer is priced on both dates. Spot prices at or above
    on-demand are left out of both sides first."""
    group = [VERSION, GPU, TERM]
    current, before = _matched(without_false_spot(now), without_false_spot(then))
    groups = current.groupby(group, sort=True).size().index
    medians_now = _voice_medians(current[current["_matched"]], group).reindex(groups)
    medians_then = _voice_medians(before[before["_matched"]], group).reindex(groups)
    added = current[~current["_matched"]].groupby([*group, PROVIDER]).size()
    dropped = before[~before["_matched"]].groupby([*group, PROVIDER]).size()
    out = pd.DataFrame(index=groups).reset_index()
    out[CHANGE] = (medians_now / medians_then - 1).to_numpy()
    out[MATCHED] = current.groupby(group, sort=True)["_matched"].sum().reindex(
        groups).to_numpy().astype("int64")
    out[COMPOSITION] = [_composition(key, added, dropped) for key in groups]
    return out[[VERSION, GPU, TERM, CHANGE, MATCHED, COMPOSITION]]


def _matched(now: pd.DataFrame, then: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Both sides with `_matched`: whether the same offer is on the other side."""
    if now.empty or then.empty:
        # Nothing can match (a ledger's first prices have no earlier market): no offer's key
        # is built (a price list's 100,000, twice per ingest).
        return _unmatched(now), _unmatched(then)
    current, before = _keyed(now), _keyed(then)
    # Set membership in Python: pandas' isin on Arrow-backed strings loops in Python per
    # element and took 1.5 s for a 100,000-offer price list.
    keys_now, keys_then = current["_key"].tolist(), before["_key"].tolist()
    seen_now, seen_then = set(keys_now), set(keys_then)
    current["_matched"] = np.fromiter((k in seen_then for k in keys_now), bool, len(keys_now))
    before["_matched"] = np.fromiter((k in seen_now for k in keys_then), bool, len(keys_then))
    return current, before


def _unmatched(offers: pd.DataFrame) -> pd.DataFrame:
    return offers.assign(_matched=pd.Series(False, index=offers.index, dtype=bool))


def _keyed(offers: pd.DataFrame) -> pd.DataFrame:
    """The offers with `_key`: the offer's identity across dates, within its version, GPU and
    term."""
    if OFFER in offers.columns:
        offer = offers[OFFER].astype(str)
    else:
        offer = (offers[PROVIDER].astype(str) + "|" + offers[REGION].astype(str) + "|"
                 + offers[GPUS_PER_INSTANCE].astype(str))
    key = (offers[VERSION].astype(str) + "|" + offers[GPU].astype(str) + "|"
           + offers[TERM].astype(str) + "|" + offer)
    return offers.assign(_key=key.to_numpy(dtype=object))  # object: isin hashes it quickly


def _voice_medians(offers: pd.DataFrame, group: list[str]) -> pd.Series:
    """Per group: the median over providers of each provider's median price."""
    return offers.groupby([*group, PROVIDER])[PRICE].median().groupby(level=group).median()


def _composition(key: tuple, added: pd.Series, dropped: pd.Series) -> str:
    """"gcp added 11 offers; aws dropped 2 offers", by provider; "" when the same offers."""
    counts: dict[str, dict[str, int]] = {}
    for verb, series in (("added", added), ("dropped", dropped)):
        if key in series.index.droplevel(-1):
            for provider, n in series.loc[key].items():
                counts.setdefault(str(provider), {})[verb] = int(n)
    words = []
    for provider in sorted(counts):
        parts = [f"{verb} {n} offer{'s' if n != 1 else ''}"
                 for verb in ("added", "dropped") if (n := counts[provider].get(verb, 0))]
        words.append(f"{provider} {' and '.join(parts)}")
    return "; ".join(words)
