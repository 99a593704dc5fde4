"""The GPU-hour price index: per dataset version, GPU and term, the spread of prices across
providers and regions and the cheapest offer."""

from datetime import date
from itertools import count

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.market import INDEX_COLUMNS, OFFER_COLUMNS, price_index
from tests.conftest import examples

V1 = date(2026, 11, 16)
_IDS = count(1)


def offer(provider, price, *, version=1, version_date=V1, region="us-east", term="on_demand",
          gpu="h100-sxm5", observation_id=None):
    return {"dataset_version": version, "version_date": version_date, "provider": provider,
            "region": region, "term": term, "gpu": gpu, "gpus_per_instance": 8,
            "usd_per_gpu_hour": price, "as_of": version_date,
            "source": f"{provider}-prices-{version_date}",
            "observation_id": observation_id or next(_IDS)}


def offers(*rows):
    return pd.DataFrame(list(rows), columns=list(OFFER_COLUMNS))


def test_median_percentiles_and_cheapest_across_providers_and_regions():
    index = price_index(offers(
        offer("lambda", 2.0, region="us-east"), offer("lambda", 3.0, region="us-west"),
        offer("coreweave", 4.0), offer("vast", 1.0, region=None, observation_id=900)))
    [row] = index.to_dict("records")
    # prices 1, 2, 3, 4: median 2.5; linear interpolation puts p25 at 1.75, p75 at 3.25
    assert (row["median"], row["min"], row["p25"], row["p75"]) == (2.5, 1.0, 1.75, 3.25)
    assert (row["n_offers"], row["n_providers"]) == (4, 3)
    assert (row["cheapest_provider"], row["cheapest_region"], row["cheapest_price"],
            row["cheapest_source"], row["cheapest_observation_id"]) == (
        "vast", None, 1.0, "vast-prices-2026-11-16", 900)
    assert row["version_date"] == pd.Timestamp(V1)
    assert list(index.columns) == list(INDEX_COLUMNS)


def test_one_row_per_version_gpu_and_term_even_when_nothing_changed():
    v2 = date(2026, 11, 23)
    index = price_index(offers(
        offer("lambda", 2.0), offer("lambda", 1.0, term="spot"),
        offer("lambda", 2.0, version=2, version_date=v2),
        offer("lambda", 1.0, term="spot", version=2, version_date=v2),
        offer("lambda", 5.0, gpu="b200", version=2, version_date=v2)))
    assert list(zip(index["dataset_version"], index["gpu"], index["term"], index["median"],
                    strict=True)) == [
        (1, "h100-sxm5", "on_demand", 2.0), (1, "h100-sxm5", "spot", 1.0),
        (2, "b200", "on_demand", 5.0),        # no b200 offer at version 1: no row, not zero
        (2, "h100-sxm5", "on_demand", 2.0), (2, "h100-sxm5", "spot", 1.0)]


def test_equal_prices_pick_the_cheapest_by_provider_then_region():
    index = price_index(offers(offer("lambda", 2.0, region="us-west"),
                               offer("coreweave", 2.0, region="us-west"),
                               offer("coreweave", 2.0, region="eu-west")))
    assert (index.loc[0, "cheapest_provider"], index.loc[0, "cheapest_region"]) == (
        "coreweave", "eu-west")


def test_the_callers_frame_is_not_modified():
    frame = offers(offer("lambda", 2.0), offer("vast", 1.0))
    before = frame.copy()
    price_index(frame)
    pd.testing.assert_frame_equal(frame, before)


def test_no_offers_give_an_empty_index_with_its_columns():
    index = price_index(offers())
    assert index.empty and list(index.columns) == list(INDEX_COLUMNS)


@pytest.mark.parametrize("column", ["usd_per_gpu_hour", "version_date", "term"])
def test_a_missing_column_is_named(column):
    frame = offers(offer("lambda", 2.0)).drop(columns=[column])
    with pytest.raises(ValueError, match=f"missing column.*{column}"):
        price_index(frame)


@pytest.mark.parametrize(("change", "message"), [
    ({"term": "quote"}, "term"),
    ({"usd_per_gpu_hour": -1.0}, "positive finite"),
    ({"usd_per_gpu_hour": float("nan")}, "positive finite"),
    ({"version_date": date(2026, 11, 17)}, "more than one version_date"),
])
def test_unusable_values_are_refused(change, message):
    frame = offers(offer("lambda", 2.0), {**offer("vast", 1.0), **change})
    with pytest.raises(ValueError, match=message):
        price_index(frame)


price_lists = st.lists(
    st.tuples(st.sampled_from(["lambda", "vast", "coreweave", "aws"]),
              st.sampled_from(["us-east", "eu-west", None]),
              st.sampled_from(["on_demand", "spot"]),
              st.floats(0.01, 100, allow_nan=False)),
    min_size=1, max_size=40)


def false_spot(rows):
    """The spot rows priced at or above the cheapest on-demand row of their provider and
    region: what the index leaves out."""
    on_demand = {}
    for provider, region, term, price in rows:
        if term == "on_demand":
            on_demand[provider, region] = min(price, on_demand.get((provider, region), price))
    return [r for r in rows if r[2] == "spot" and (r[0], r[1]) in on_demand
            and r[3] >= on_demand[r[0], r[1]]]


@settings(max_examples=examples(60), deadline=None)
@given(rows=price_lists, seed=st.integers(0, 2**32 - 1))
def test_percentiles_are_ordered_and_the_index_ignores_row_order(rows, seed):
    frame = offers(*(offer(provider, price, region=region, term=term, observation_id=n + 1)
                     for n, (provider, region, term, price) in enumerate(rows)))
    index = price_index(frame)
    assert (index["min"] <= index["p25"]).all()
    assert (index["p25"] <= index["median"]).all()
    assert (index["median"] <= index["p75"]).all()
    assert (index["cheapest_price"] == index["min"]).all()
    assert index["n_offers"].sum() == len(rows) - len(false_spot(rows))
    shuffled = price_index(frame.sample(frac=1, random_state=seed % 2**32))
    pd.testing.assert_frame_equal(shuffled, index)


def test_a_spot_price_at_or_above_on_demand_is_not_spot():
    # Azure writes SpotPrice = Price where it has no spot price: not a spot offer.
    index = price_index(offers(
        offer("azure", 12.4, region="eastus"), offer("azure", 12.4, region="eastus", term="spot"),
        offer("azure", 12.4, region="westus"), offer("azure", 3.1, region="westus", term="spot"),
        offer("aws", 3.2, region=None, term="spot")))  # no on-demand to compare with: kept
    spot = index[index["term"] == "spot"].iloc[0]
    assert (spot["n_offers"], spot["median"]) == (2, pytest.approx(3.15))
    assert spot["cheapest_provider"] == "azure"


def test_a_spot_price_below_another_regions_on_demand_is_still_compared_with_its_own():
    index = price_index(offers(
        offer("azure", 2.0, region="eastus"), offer("azure", 12.0, region="westus"),
        offer("azure", 3.0, region="westus", term="spot")))
    assert index[index["term"] == "spot"]["n_offers"].tolist() == [1]


def test_a_provider_with_many_regions_is_one_voice():
    # Ten regions of one price list at 10.0 against two providers at 2.0 and 3.0: the index
    # is the providers' middle price, not the regions'.
    index = price_index(offers(*(offer("bigcloud", 10.0, region=f"r{n}") for n in range(10)),
                               offer("lambda", 2.0), offer("vast", 3.0)))
    [row] = index.to_dict("records")
    assert (row["median"], row["n_offers"], row["n_providers"]) == (3.0, 12, 3)
    assert (row["p25"], row["p75"]) == (2.5, 6.5)
    assert (row["min"], row["cheapest_provider"]) == (2.0, "lambda")


def test_a_provider_spelt_in_two_cases_is_one_voice():
    """A ledger ingested before identities were normalised may hold "Lambda" beside
    "lambda" (issue 43): the index counts one provider, whose offers give one price."""
    index = price_index(offers(offer("lambda", 2.0), offer("Lambda ", 4.0, region="US-West"),
                               offer("coreweave", 6.0)))
    [row] = index.to_dict("records")
    assert row["n_providers"] == 2 and row["median"] == 4.5   # lambda's 3.0 and coreweave's 6
