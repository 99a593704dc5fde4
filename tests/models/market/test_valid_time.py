"""The market in valid time (issue 27, cases 4 and 6): offers older than the age limit leave
the market and are listed as stale; a change is measured over the offers priced on both dates,
and a provider adding regions is a composition change, reported apart."""

from datetime import date
from itertools import count

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.market import OFFER_COLUMNS
from models.market.valid_time import (
    MAX_OFFER_AGE_DAYS,
    fresh_offers,
    matched_changes,
    stale_offers,
)
from tests.conftest import examples

_IDS = count(1)
ON = date(2026, 11, 26)


def offer(price, *, provider="aws", region="us-east-1", as_of=ON, on=ON, term="on_demand",
          gpu="h100-sxm5", version=1):
    return {"dataset_version": version, "version_date": on, "provider": provider,
            "region": region, "term": term, "gpu": gpu, "gpus_per_instance": 8,
            "usd_per_gpu_hour": price, "as_of": as_of, "source": f"{provider}-{as_of}",
            "observation_id": next(_IDS), "offer": f"{provider}-{region}-{gpu}-{term}"}


def frame(*rows):
    return pd.DataFrame(list(rows), columns=[*OFFER_COLUMNS, "offer"])


def test_an_offer_older_than_the_limit_is_stale_and_one_at_the_limit_is_not():
    offers = frame(offer(2.0, provider="lambda", as_of=date(2025, 3, 1)),
                   offer(3.0, as_of=date(2026, 7, 29)),   # 120 days before ON
                   offer(4.0, provider="gcp", as_of=date(2026, 7, 28)))  # 121 days
    assert MAX_OFFER_AGE_DAYS == 120
    fresh = fresh_offers(offers, MAX_OFFER_AGE_DAYS)
    stale = stale_offers(offers, MAX_OFFER_AGE_DAYS)
    assert fresh["provider"].tolist() == ["aws"]
    assert stale["provider"].tolist() == ["lambda", "gcp"]  # oldest first
    assert stale["age_days"].tolist() == [(ON - date(2025, 3, 1)).days, 121]
    assert len(fresh) + len(stale) == len(offers)


def test_without_a_limit_every_offer_is_fresh():
    offers = frame(offer(2.0, as_of=date(2021, 1, 1)))
    assert len(fresh_offers(offers, None)) == 1
    assert stale_offers(offers, None).empty


def test_a_provider_adding_regions_changes_the_composition_not_the_price():
    week_ago = date(2026, 11, 19)
    then = frame(offer(3.0, as_of=week_ago, on=week_ago),
                 offer(10.0, provider="gcp", region="us-east4", as_of=week_ago, on=week_ago))
    # A week later: the same two prices, and GCP lists 11 more regions, all cheaper.
    now = frame(offer(3.0, as_of=week_ago), offer(10.0, provider="gcp", region="us-east4",
                                                  as_of=week_ago),
                *(offer(4.0, provider="gcp", region=f"region-{n}") for n in range(11)))
    [row] = matched_changes(now, then).to_dict("records")
    assert row["change"] == pytest.approx(0.0)
    assert row["n_matched"] == 2
    assert row["composition"] == "gcp added 11 offers"


def test_the_change_is_over_matched_offers_one_voice_per_provider():
    week_ago = date(2026, 11, 19)
    then = frame(offer(4.0, as_of=week_ago, on=week_ago),
                 offer(2.0, provider="lambda", as_of=week_ago, on=week_ago),
                 offer(9.0, provider="oracle", as_of=week_ago, on=week_ago))
    now = frame(offer(3.0), offer(2.0, provider="lambda", as_of=week_ago))  # oracle left
    [row] = matched_changes(now, then).to_dict("records")
    # Matched: aws 4 -> 3 and lambda 2 -> 2; the median of the two voices 3 -> 2.5.
    assert row["change"] == pytest.approx(2.5 / 3.0 - 1)
    assert row["composition"] == "oracle dropped 1 offer"


def test_no_offer_priced_on_both_dates_gives_no_change():
    then = frame(offer(3.0, provider="lambda", as_of=date(2026, 11, 1), on=date(2026, 11, 19)))
    now = frame(offer(3.5))
    [row] = matched_changes(now, then).to_dict("records")
    assert pd.isna(row["change"]) and row["n_matched"] == 0
    assert row["composition"] == "aws added 1 offer; lambda dropped 1 offer"


def test_spot_at_on_demand_is_left_out_of_both_dates():
    week_ago = date(2026, 11, 19)
    then = frame(offer(3.0, as_of=week_ago, on=week_ago),
                 offer(3.0, as_of=week_ago, on=week_ago, term="spot"))
    now = frame(offer(3.0), offer(1.5, term="spot"))
    rows = {r["term"]: r for r in matched_changes(now, then).to_dict("records")}
    assert pd.isna(rows["spot"]["change"])  # last week's "spot" was the on-demand price
    assert rows["on_demand"]["change"] == pytest.approx(0.0)


# --- properties ----------------------------------------------------------------------------

_PRICES = st.floats(min_value=0.5, max_value=50, allow_nan=False)
_MARKET = st.lists(st.tuples(st.sampled_from("abcde"), st.sampled_from(["us", "eu", "ap"]),
                             _PRICES, _PRICES), min_size=1, max_size=12,
                   unique_by=lambda t: (t[0], t[1]))


@settings(max_examples=examples(60), deadline=None)
@given(_MARKET, st.lists(st.tuples(st.sampled_from("vwxyz"), _PRICES), max_size=6))
def test_offers_priced_on_one_date_only_never_change_the_change(pairs, newcomers):
    week_ago = date(2026, 11, 19)
    then = frame(*(offer(p0, provider=v, region=r, as_of=week_ago, on=week_ago)
                   for v, r, p0, _ in pairs))
    now = frame(*(offer(p1, provider=v, region=r) for v, r, _, p1 in pairs))
    with_newcomers = frame(*(offer(p1, provider=v, region=r) for v, r, _, p1 in pairs),
                           *(offer(p, provider=v, region=f"new-{n}")
                             for n, (v, p) in enumerate(newcomers)))
    [plain] = matched_changes(now, then).to_dict("records")
    [grown] = matched_changes(with_newcomers, then).to_dict("records")
    assert grown["change"] == pytest.approx(plain["change"])
    assert grown["n_matched"] == plain["n_matched"] == len(pairs)
    assert (grown["composition"] == "") == (not newcomers)
