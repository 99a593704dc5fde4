"""Offers older than the market's age limit: summarised per GPU and term, for the briefing to
say what the ledger holds when no offer is current."""

from __future__ import annotations

from datetime import date

import pandas as pd

from models.market.stale import stale_offer_flags, stale_summary

ON = date(2026, 11, 27)


def offers(*rows: tuple[str, str, str, float, date]) -> pd.DataFrame:
    return pd.DataFrame([{"provider": p, "gpu": g, "term": t, "usd_per_gpu_hour": usd,
                          "as_of": on, "version_date": ON} for p, g, t, usd, on in rows])


def test_a_gpu_and_term_with_only_old_offers_is_summarised_with_its_newest_price_date():
    market = offers(("aws", "h100", "on_demand", 12.0, date(2025, 3, 1)),
                    ("aws", "h100", "on_demand", 12.0, date(2025, 3, 1)),
                    ("lambda", "h100", "on_demand", 3.29, date(2025, 3, 1)),
                    ("gcp", "h100", "on_demand", 11.0, date(2024, 6, 1)),
                    ("lambda", "b200", "on_demand", 4.99, date(2026, 11, 1)))   # current
    [row] = stale_summary(market, 120).to_dict("records")
    assert row == {"gpu": "h100", "term": "on_demand", "offers": 4, "providers": 3,
                   "median": 11.0, "newest": date(2025, 3, 1), "age_days": 636}


def test_a_gpu_and_term_with_one_current_offer_is_not_stale():
    market = offers(("aws", "h100", "on_demand", 12.0, date(2025, 3, 1)),
                    ("lambda", "h100", "on_demand", 2.99, date(2026, 10, 1)))
    assert stale_summary(market, 120).empty
    assert stale_summary(market.iloc[0:0], 120).empty


def test_each_old_offer_group_is_one_stale_flag_however_many_rows_it_holds():
    """A catalog's 40 rows of one GPU and term past the age limit are one finding."""
    rows = [("aws", "h100", "on_demand", 12.0, date(2023, 12, 13))] * 40
    rows += [("gcp", "a100", "spot", 1.2, date(2023, 12, 4)),
             ("lambda", "b200", "on_demand", 4.99, date(2026, 11, 1))]   # current: no flag
    found = stale_offer_flags(stale_summary(offers(*rows), 120), 120)
    assert [(f.kind, f.subject) for f in found] == [("stale", "market: a100 spot"),
                                                    ("stale", "market: h100 on demand")]
    assert ("market: h100 on demand: 40 offer(s) from 1 provider(s), the newest priced "
            "2023-12-13 (1,080 days old, past the market's 120-day age limit)") \
        in found[1].message
