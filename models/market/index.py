"""The GPU-hour price index: per dataset version, GPU and term, the spread of prices across
providers and regions and the cheapest offer, as known at that version."""

from __future__ import annotations

import pandas as pd

from models.market.frames import (
    AS_OF,
    GPU,
    GPUS_PER_INSTANCE,
    OBSERVATION_ID,
    PRICE,
    PROVIDER,
    REGION,
    SOURCE,
    TERM,
    VERSION,
    VERSION_DATE,
    checked_offers,
)

INDEX_KEY: tuple[str, ...] = (VERSION, GPU, TERM)
# The index's columns, in order. Prices are USD per GPU-hour.
MEDIAN, MIN, P25, P75 = "median", "min", "p25", "p75"
N_OFFERS, N_PROVIDERS = "n_offers", "n_providers"
CHEAPEST_PROVIDER, CHEAPEST_REGION = "cheapest_provider", "cheapest_region"
CHEAPEST_PRICE, CHEAPEST_SOURCE = "cheapest_price", "cheapest_source"
CHEAPEST_AS_OF, CHEAPEST_ID = "cheapest_as_of", "cheapest_observation_id"
CHEAPEST_GPUS = "cheapest_gpus_per_instance"
INDEX_COLUMNS: tuple[str, ...] = (
    VERSION, VERSION_DATE, GPU, TERM, MEDIAN, MIN, P25, P75, N_OFFERS, N_PROVIDERS,
    CHEAPEST_PROVIDER, CHEAPEST_REGION, CHEAPEST_PRICE, CHEAPEST_SOURCE, CHEAPEST_AS_OF,
    CHEAPEST_ID, CHEAPEST_GPUS)

# The order that picks the cheapest offer: lowest price, then provider, region and
# observation id (so equal prices give the same answer whatever the row order).
_CHEAPEST_ORDER = [VERSION, GPU, TERM, PRICE, PROVIDER, REGION, OBSERVATION_ID]


def price_index(offers: pd.DataFrame) -> pd.DataFrame:
    """One row per (dataset version, GPU, term) that has at least one offer at that version,
    in INDEX_COLUMNS, ordered by version, GPU and term.

    Spot prices at or above the same offer's on-demand price are left out
    (without_false_spot). A provider is one voice: its offers (regions, instance sizes) give
    one price, their median, and `median`, `p25` and `p75` are taken over the providers'
    prices, interpolating linearly (numpy's default: the 25th percentile of 1, 2, 3, 4 is
    1.75); a provider listing 68 regions of one price list weighs what a provider listing
    one does. `min` and the cheapest offer are over every offer; `n_offers` counts offers,
    `n_providers` providers. The cheapest offer is the lowest price, ties broken by provider,
    region and observation id. A version repeats every offer still known at it, so an
    unchanged price gives a row per version; a version without any offer of a GPU and term
    has no row for it (the changes and spreads treat it as missing, not as zero).

    Raises ValueError when a column is missing or a value is unusable (see checked_offers).
    """
    frame = without_false_spot(checked_offers(offers))
    if frame.empty:
        return _empty()
    key = list(INDEX_KEY)
    prices = frame.groupby(key, sort=True)[PRICE]
    voices = (frame.groupby([*key, PROVIDER], sort=True)[PRICE].median()
              .groupby(level=key, sort=True))
    stats = pd.DataFrame({
        VERSION_DATE: frame.groupby(key, sort=True)[VERSION_DATE].first(),
        MEDIAN: voices.median(),
        MIN: prices.min(),
        P25: voices.quantile(0.25),
        P75: voices.quantile(0.75),
        N_OFFERS: prices.size(),
        N_PROVIDERS: frame.groupby(key, sort=True)[PROVIDER].nunique(),
    })
    cheapest = (frame.sort_values(_CHEAPEST_ORDER, na_position="last", kind="mergesort")
                .drop_duplicates(key, keep="first").set_index(key))
    stats[CHEAPEST_PROVIDER] = cheapest[PROVIDER]
    stats[CHEAPEST_REGION] = cheapest[REGION]
    stats[CHEAPEST_PRICE] = cheapest[PRICE]
    stats[CHEAPEST_SOURCE] = cheapest[SOURCE]
    stats[CHEAPEST_AS_OF] = cheapest[AS_OF]
    stats[CHEAPEST_ID] = cheapest[OBSERVATION_ID]
    stats[CHEAPEST_GPUS] = cheapest[GPUS_PER_INSTANCE]
    index = stats.reset_index()[list(INDEX_COLUMNS)]
    index[CHEAPEST_REGION] = index[CHEAPEST_REGION].astype(object).where(
        index[CHEAPEST_REGION].notna(), None)
    return index


# What makes two rows of a price list the same offer on two terms.
_SAME_OFFER = [VERSION, PROVIDER, REGION, GPU, GPUS_PER_INSTANCE]


def without_false_spot(offers: pd.DataFrame) -> pd.DataFrame:
    """The offers without the spot prices that are not spot: at or above the on-demand price
    of the same offer (provider, region, GPU and GPUs per instance, at one version). Price
    lists write SpotPrice = Price where they have no spot price (Azure; AWS in some
    regions); counted as spot, they would raise the spot index to on-demand levels."""
    spot = offers[offers[TERM] == "spot"]
    on_demand = offers[offers[TERM] == "on_demand"]
    if spot.empty or on_demand.empty:
        return offers
    cheapest = (_keyed(on_demand).groupby(_SAME_OFFER)[PRICE].min()
                .rename("_on_demand").reset_index())
    paired = _keyed(spot).reset_index().merge(cheapest, on=_SAME_OFFER, how="left")
    false = paired.loc[paired[PRICE] >= paired["_on_demand"], "index"]
    return offers.drop(index=false)


def _keyed(offers: pd.DataFrame) -> pd.DataFrame:
    """The offers with their same-offer key comparable: a missing region or GPU count is one
    value ("" / -1), as the price list means it, not a null that matches nothing."""
    return offers.assign(**{REGION: offers[REGION].astype(object).where(
                              offers[REGION].notna(), ""),
                            GPUS_PER_INSTANCE: offers[GPUS_PER_INSTANCE].fillna(-1)})


def _empty() -> pd.DataFrame:
    return pd.DataFrame({
        VERSION: pd.Series(dtype="int64"), VERSION_DATE: pd.Series(dtype="datetime64[ns]"),
        GPU: pd.Series(dtype=object), TERM: pd.Series(dtype=object),
        MEDIAN: pd.Series(dtype=float), MIN: pd.Series(dtype=float),
        P25: pd.Series(dtype=float), P75: pd.Series(dtype=float),
        N_OFFERS: pd.Series(dtype="int64"), N_PROVIDERS: pd.Series(dtype="int64"),
        CHEAPEST_PROVIDER: pd.Series(dtype=object), CHEAPEST_REGION: pd.Series(dtype=object),
        CHEAPEST_PRICE: pd.Series(dtype=float), CHEAPEST_SOURCE: pd.Series(dtype=object),
        CHEAPEST_AS_OF: pd.Series(dtype="datetime64[ns]"),
        CHEAPEST_ID: pd.Series(dtype="int64"), CHEAPEST_GPUS: pd.Series(dtype="int64"),
    })


def index_rows(index: pd.DataFrame, version: int) -> pd.DataFrame:
    """The index's rows of one dataset version, keyed by (gpu, term)."""
    return index[index[VERSION] == version].set_index([GPU, TERM])
