"""Market flags: price moves, a new cheapest provider, expiring quotes, longer lead times."""

from datetime import date
from itertools import count

import pandas as pd
import pytest

from models.market import (
    OFFER_COLUMNS,
    QUOTE_COLUMNS,
    MarketParams,
    lead_time_flags,
    market_flags,
    new_cheapest_flags,
    price_index,
    price_move_flags,
    quote_expiry_flags,
)
from models.trends.types import FLAG_KINDS, by_severity

V41, V48 = date(2026, 10, 5), date(2026, 11, 23)
TODAY = date(2026, 11, 23)
_IDS = count(1)


def offer(version, provider, price, *, region="us-east", term="on_demand", gpu="h100-sxm5"):
    day = {41: V41, 48: V48}[version]
    return {"dataset_version": version, "version_date": day, "provider": provider,
            "region": region, "term": term, "gpu": gpu, "gpus_per_instance": 8,
            "usd_per_gpu_hour": price, "as_of": day,
            "source": f"{provider}-prices-{day}", "observation_id": next(_IDS)}


def index_of(*rows):
    return price_index(pd.DataFrame(list(rows), columns=list(OFFER_COLUMNS)))


def moves(before, after, **kwargs):
    """Price-move flags of one GPU whose only offer went from `before` to `after`."""
    index = index_of(offer(41, "lambda", before), offer(48, "lambda", after))
    return price_move_flags(index, previous_version=41, current_version=48, **kwargs)


def quote(vendor, quoted_on, *, valid_until=None, lead_time=None, item="dgx-b200",
          version=48, observation_id=None):
    return {"item": item, "vendor": vendor, "unit_price_usd": 515_000.0,
            "quoted_on": quoted_on, "valid_until": valid_until, "lead_time_days": lead_time,
            "source": f"{vendor}-quote-{quoted_on}", "observation_id": observation_id
            or next(_IDS), "dataset_version": version}


def quotes(*rows):
    return pd.DataFrame(list(rows), columns=list(QUOTE_COLUMNS))


def test_the_market_kinds_are_flag_kinds():
    assert {"price_move", "new_cheapest", "quote_expiring", "lead_time_grew"} <= set(
        FLAG_KINDS)


@pytest.mark.parametrize(("before", "after", "severity"), [
    (2.5, 2.75, None),         # +10 % exactly: not beyond the threshold
    (2.5, 2.25, None),         # -10 % exactly
    (2.5, 2.76, "info"),
    (2.5, 3.0, "info"),        # +20 % exactly: not beyond twice the threshold
    (2.5, 3.01, "warning"),
    (2.5, 1.99, "warning"),
])
def test_a_move_beyond_the_threshold_is_flagged_and_beyond_twice_it_is_a_warning(
        before, after, severity):
    assert [f.severity for f in moves(before, after)] == ([severity] if severity else [])


def test_a_price_move_says_how_much_between_which_versions_and_who_is_cheapest():
    was_cheapest, now_cheapest = offer(41, "coreweave", 3.52), offer(48, "lambda", 2.49)
    index = index_of(was_cheapest, offer(41, "lambda", 3.60),
                     offer(48, "coreweave", 3.30), now_cheapest,
                     offer(48, "vast", 3.10, region=None))
    [flag] = price_move_flags(index, previous_version=41, current_version=48)
    assert flag.message == (
        "H100-SXM5 on-demand median fell 12.9 % (beyond 10 %) from 3.56 to 3.10 "
        "USD/GPU-hour between 2026-10-05 (version 41, 2 offer(s) from 2 provider(s)) and "
        "2026-11-23 (version 48, 3 offer(s) from 3 provider(s)); cheapest now lambda "
        "us-east at 2.49 USD/GPU-hour (source lambda-prices-2026-11-23, 2026-11-23), was "
        "coreweave us-east at 3.52 USD/GPU-hour (source coreweave-prices-2026-10-05, "
        "2026-10-05).")
    assert (flag.kind, flag.severity, flag.subject, flag.item, flag.metric) == (
        "price_move", "info", "h100-sxm5 / on_demand", "h100-sxm5", "gpu_hour_price")
    assert flag.observation_ids == (was_cheapest["observation_id"],
                                    now_cheapest["observation_id"])


def test_threshold_and_labels_are_arguments():
    [flag] = moves(2.0, 2.1, threshold=0.02, labels={"h100-sxm5": "H100 SXM5"})
    assert flag.severity == "warning"           # +5 % is beyond twice 2 %
    assert flag.message.startswith("H100 SXM5 on-demand median rose 5.0 % (beyond 2 %)")
    assert moves(2.0, 2.1, threshold=0.05) == []


def test_only_gpus_and_terms_priced_at_both_versions_are_compared():
    index = index_of(offer(41, "lambda", 2.0), offer(48, "lambda", 4.0, term="spot"),
                     offer(48, "lambda", 9.0, gpu="b200"))
    assert price_move_flags(index, previous_version=41, current_version=48) == []
    assert new_cheapest_flags(index, previous_version=41, current_version=48) == []


def test_another_provider_becoming_the_cheapest_is_flagged():
    index = index_of(offer(41, "coreweave", 2.69, region="us-west"), offer(41, "lambda", 2.9),
                     offer(48, "coreweave", 2.69, region="us-west"), offer(48, "lambda", 2.49))
    [flag] = new_cheapest_flags(index, previous_version=41, current_version=48)
    assert (flag.kind, flag.severity, flag.subject) == (
        "new_cheapest", "info", "h100-sxm5 / on_demand")
    assert flag.message == (
        "H100-SXM5 on-demand: the cheapest offer at 2026-11-23 (version 48) is lambda "
        "us-east at 2.49 USD/GPU-hour (source lambda-prices-2026-11-23, 2026-11-23), where "
        "at 2026-10-05 (version 41) it was coreweave us-west at 2.69 USD/GPU-hour (source "
        "coreweave-prices-2026-10-05, 2026-10-05).")


def test_a_cheaper_region_of_the_same_provider_is_not_a_new_cheapest_provider():
    index = index_of(offer(41, "lambda", 2.9, region="us-east"), offer(41, "vast", 3.0),
                     offer(48, "lambda", 2.5, region="eu-west"), offer(48, "vast", 3.0))
    assert new_cheapest_flags(index, previous_version=41, current_version=48) == []


@pytest.mark.parametrize(("valid_until", "severity", "says"), [
    (date(2026, 12, 7), "info", "expires in 14 day(s), within the 14-day notice"),
    (date(2026, 12, 8), None, None),                       # 15 days: not yet
    (date(2026, 11, 23), "info", "expires today"),
    (date(2026, 11, 22), "warning", "expired on 2026-11-22, 1 day(s) before 2026-11-23"),
    (None, None, None),                                    # no validity given
])
def test_a_quote_is_flagged_within_the_notice_and_once_expired(valid_until, severity, says):
    found = quote_expiry_flags(quotes(quote("acme", date(2026, 11, 1),
                                            valid_until=valid_until)),
                               version=48, today=TODAY)
    assert [f.severity for f in found] == ([severity] if severity else [])
    if says:
        assert says in found[0].message
        assert found[0].message.startswith(
            "The quote for dgx-b200 from acme (515,000 USD a unit, quoted 2026-11-01, "
            "source acme-quote-2026-11-01)")
        assert (found[0].kind, found[0].subject, found[0].item) == (
            "quote_expiring", "dgx-b200 / acme", "dgx-b200")


def test_only_the_latest_quote_of_a_vendor_known_at_the_version_counts():
    found = quote_expiry_flags(quotes(
        quote("acme", date(2026, 9, 1), valid_until=date(2026, 10, 1)),     # replaced
        quote("acme", date(2026, 11, 1), valid_until=date(2027, 2, 1)),
        quote("acme", date(2026, 11, 1), valid_until=date(2026, 11, 30), version=41),
        quote("globex", date(2026, 11, 2), valid_until=date(2026, 11, 30))),
        version=48, today=TODAY)
    assert [(f.subject, f.severity) for f in found] == [("dgx-b200 / globex", "info")]


def test_the_notice_period_is_an_argument():
    rows = quotes(quote("acme", date(2026, 11, 1), valid_until=date(2026, 12, 23)))
    assert quote_expiry_flags(rows, version=48, today=TODAY) == []
    assert len(quote_expiry_flags(rows, version=48, today=TODAY, within_days=30)) == 1


@pytest.mark.parametrize(("before", "after", "severity"), [
    (60, 90, "info"),
    (60, 120, "warning"),       # doubled
    (90, 90, None),
    (90, 60, None),
    (None, 90, None),           # the earlier quote gave no lead time
    (60, None, None),           # the latest gave none: not compared with older ones
])
def test_a_longer_lead_time_than_the_vendors_previous_quote_is_flagged(
        before, after, severity):
    rows = quotes(quote("acme", date(2026, 9, 1), lead_time=before),
                  quote("acme", date(2026, 11, 1), lead_time=after))
    assert [f.severity for f in lead_time_flags(rows, version=48)] == (
        [severity] if severity else [])


def test_a_lead_time_flag_cites_both_quotes():
    rows = quotes(quote("acme", date(2026, 6, 1), lead_time=30, observation_id=5),
                  quote("acme", date(2026, 9, 1), lead_time=60, observation_id=7),
                  quote("acme", date(2026, 11, 1), lead_time=90, observation_id=9),
                  quote("globex", date(2026, 8, 1), lead_time=20))   # another vendor
    [flag] = lead_time_flags(rows, version=48)
    assert flag.message == (
        "The lead time acme quotes for dgx-b200 grew from 60 to 90 days (+50 %) between its "
        "quote of 2026-09-01 (source acme-quote-2026-09-01) and its quote of 2026-11-01 "
        "(source acme-quote-2026-11-01).")
    assert (flag.kind, flag.subject, flag.observation_ids) == (
        "lead_time_grew", "dgx-b200 / acme", (7, 9))


def test_market_flags_gathers_every_family_most_severe_first():
    index = index_of(offer(41, "lambda", 2.0), offer(41, "vast", 2.1),
                     offer(48, "lambda", 2.05), offer(48, "vast", 1.5))
    rows = quotes(quote("acme", date(2026, 9, 1), lead_time=60),
                  quote("acme", date(2026, 11, 1), lead_time=90,
                        valid_until=date(2026, 11, 20)))
    found = market_flags(index, rows, previous_version=41, current_version=48, today=TODAY)
    assert [(f.kind, f.severity) for f in found] == [
        ("quote_expiring", "warning"), ("price_move", "info"), ("new_cheapest", "info"),
        ("lead_time_grew", "info")]
    assert found == by_severity(found)
    first = market_flags(index, rows, previous_version=None, current_version=48,
                         today=TODAY, params=MarketParams(expiring_within_days=0))
    assert {f.kind for f in first} == {"quote_expiring", "lead_time_grew"}
    assert market_flags(index, None, previous_version=41, current_version=48, today=TODAY,
                        params=MarketParams(move_threshold=0.5)) == [found[2]]


def test_a_missing_quote_column_is_named():
    with pytest.raises(ValueError, match="missing column.*lead_time_days"):
        lead_time_flags(quotes(quote("acme", date(2026, 9, 1))).drop(
            columns=["lead_time_days"]), version=48)
