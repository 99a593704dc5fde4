"""Rental tiers: a GPU's on-demand price at the neoclouds and at the hyperscalers, apart, each
provider one voice."""

from __future__ import annotations

from datetime import date

import pandas as pd
import pytest

from models.market.tiers import HYPERSCALER, NEOCLOUD, provider_tier, tier_prices


def offers(*rows: tuple[str, str, str, float, date]) -> pd.DataFrame:
    return pd.DataFrame([{"provider": p, "gpu": g, "term": t, "usd_per_gpu_hour": usd,
                          "as_of": on} for p, g, t, usd, on in rows])


@pytest.mark.parametrize("provider,tier", [("aws", HYPERSCALER), ("Azure", HYPERSCALER),
                                           ("gcp", HYPERSCALER), ("oracle", HYPERSCALER),
                                           ("lambda", NEOCLOUD), ("runpod", NEOCLOUD)])
def test_the_big_clouds_are_hyperscalers_and_every_other_provider_a_neocloud(provider, tier):
    assert provider_tier(provider) == tier


def test_each_tier_is_the_median_over_its_providers_each_one_voice():
    market = offers(
        # AWS lists one price in three regions, GCP one: AWS counts once.
        ("aws", "h100", "on_demand", 12.0, date(2026, 9, 1)),
        ("aws", "h100", "on_demand", 12.0, date(2026, 9, 1)),
        ("aws", "h100", "on_demand", 12.0, date(2026, 9, 1)),
        ("gcp", "h100", "on_demand", 10.0, date(2026, 10, 1)),
        ("oracle", "h100", "on_demand", 4.0, date(2026, 8, 1)),
        ("lambda", "h100", "on_demand", 2.99, date(2026, 11, 1)),
        ("runpod", "h100", "on_demand", 2.69, date(2026, 11, 1)),
        ("lambda", "h100", "spot", 1.50, date(2026, 11, 1)),     # another term
        ("lambda", "b200", "on_demand", 4.99, date(2026, 11, 1)))  # another GPU
    tiers = tier_prices(market, "h100")
    assert tiers[HYPERSCALER].usd_per_gpu_hour == 10.0
    assert tiers[HYPERSCALER].providers == ("oracle", "gcp", "aws")
    assert tiers[HYPERSCALER].offers == 5
    assert tiers[NEOCLOUD].usd_per_gpu_hour == pytest.approx((2.99 + 2.69) / 2)
    assert tiers[HYPERSCALER].describe() == (
        "hyperscaler median over 3 providers (oracle, gcp, aws), priced 2026-08-01 to "
        "2026-10-01")
    assert tiers[NEOCLOUD].describe().endswith("priced 2026-11-01")


def test_a_tier_without_an_offer_is_left_out():
    market = offers(("lambda", "b200", "on_demand", 4.99, date(2026, 11, 1)))
    assert set(tier_prices(market, "b200")) == {NEOCLOUD}
    assert tier_prices(market, "gb200") == {}
