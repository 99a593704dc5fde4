"""Price tiers of renting a GPU: the hyperscalers' on-demand price and the neoclouds', apart.

Buyers of serving compare owning a GPU with renting it from a neocloud (Lambda, RunPod, ...)
and from a hyperscaler (AWS, Azure, GCP, Oracle); the two rent at very different prices for
the same part, so one median over both answers neither question.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from models.market.frames import AS_OF, GPU, PRICE, PROVIDER, TERM

# The clouds that sell every kind of compute at scale; every other provider is a neocloud
# (a GPU cloud). Keys as the price readers write the provider.
HYPERSCALERS: frozenset[str] = frozenset({"aws", "azure", "gcp", "oracle", "oci", "ibm"})
HYPERSCALER, NEOCLOUD = "hyperscaler", "neocloud"
RENTAL_TIERS: tuple[str, ...] = (NEOCLOUD, HYPERSCALER)


def provider_tier(provider: str) -> str:
    """`hyperscaler` or `neocloud`."""
    return HYPERSCALER if provider.strip().lower() in HYPERSCALERS else NEOCLOUD


@dataclass(frozen=True)
class TierPrice:
    """One tier's price of a GPU on one term: the median over its providers, each provider one
    voice (the median of its own offers), with the dates its offers were priced on."""

    tier: str
    usd_per_gpu_hour: float
    providers: tuple[str, ...]
    offers: int
    price_from: pd.Timestamp   # the oldest price date among the offers counted
    price_to: pd.Timestamp     # the newest

    def describe(self) -> str:
        """`neocloud on-demand median over 3 providers (lambda, runpod, cudo), priced
        2025-03-01 to 2026-02-01`."""
        n = len(self.providers)
        dates = (f"{self.price_to.date()}" if self.price_from == self.price_to
                 else f"{self.price_from.date()} to {self.price_to.date()}")
        return (f"{self.tier} median over {n} provider{'s' * (n != 1)} "
                f"({', '.join(self.providers)}), priced {dates}")


def tier_prices(offers: pd.DataFrame, gpu: str, term: str = "on_demand") -> dict[str, TierPrice]:
    """Each rental tier's price of `gpu` on `term` among `offers` (one version's offers, the
    columns of models.market.frames); a tier without an offer is left out."""
    mine = offers[(offers[GPU] == gpu) & (offers[TERM] == term)]
    if mine.empty:
        return {}
    tiers = mine[PROVIDER].map(provider_tier)
    found = {}
    for tier in RENTAL_TIERS:
        rows = mine[tiers == tier]
        if rows.empty:
            continue
        voices = rows.groupby(PROVIDER)[PRICE].median().sort_values()
        dates = pd.to_datetime(rows[AS_OF])
        found[tier] = TierPrice(tier, float(voices.median()), tuple(voices.index),
                                len(rows), dates.min(), dates.max())
    return found
