"""A rented option's price on page 1: where it comes from and its date, and how old it is
when it is older than the market lets an offer be."""

from __future__ import annotations

from datetime import date

from models.records import Rent
from pipelines.briefing.decisions import past_limit, rent_basis

CONTRACT = {"origin": "ledger", "value": 2.35, "item": "h100-1yr-contract-index",
            "source": "semianalysis-gpu-shortage-2026-04-02", "as_of": "2026-03-01"}


def test_a_rent_price_names_its_item_source_and_date():
    assert rent_basis(CONTRACT) == ("rented at $2.35/GPU-hour: h100-1yr-contract-index "
                                    "(semianalysis-gpu-shortage-2026-04-02), price of 2026-03-01")


def test_a_rent_price_older_than_the_market_limit_says_how_old_it_is():
    text = rent_basis(CONTRACT, date(2026, 11, 27), 120)
    assert text.endswith("price of 2026-03-01 (271 days old, past the market's 120-day limit)")


def test_a_recent_or_undated_rent_price_carries_no_age():
    assert rent_basis(CONTRACT, date(2026, 3, 31), 120).endswith("price of 2026-03-01")
    undated = {**CONTRACT, "as_of": None}
    assert rent_basis(undated, date(2026, 11, 27), 120).endswith(
        "(semianalysis-gpu-shortage-2026-04-02)")
    garbled = {**CONTRACT, "as_of": "sometime"}
    assert rent_basis(garbled, date(2026, 11, 27), 120).endswith("price of sometime")


def test_an_old_rent_price_names_what_the_markets_current_contract_offers_charge():
    current = Rent("contract", 2.72, 2.72, 2.72, 1, 2.72, "hyperstack", "2026-08-26",
                   "2026-08-26")
    text = rent_basis(CONTRACT, date(2026, 11, 27), 120, committed=current)
    assert text.endswith("past the market's 120-day limit); the market's current contract "
                         "offers for it: $2.72 median of 1 (hyperstack), priced 2026-08-26")
    several = Rent("reserved_1y", 2.5, 2.2, 2.9, 4, 2.1, "aws", "2026-11-01", "2026-09-01")
    assert rent_basis(CONTRACT, date(2026, 11, 27), 120, committed=several).endswith(
        "1-year reserved offers for it: $2.50 median of 4, priced 2026-09-01 to 2026-11-01")
    # A price within the limit needs no comparison.
    assert rent_basis(CONTRACT, date(2026, 3, 31), 120, committed=current).endswith(
        "price of 2026-03-01")


def test_a_rent_is_past_the_limit_only_when_dated_and_older_than_it():
    """What makes page 1 refuse a verdict (reports.decisions.verdict): a dated rent older
    than the market's age limit; an undated or unparsable one is said as it is instead."""
    assert past_limit(CONTRACT, date(2026, 11, 27), 120)
    assert not past_limit(CONTRACT, date(2026, 3, 31), 120)
    assert not past_limit({**CONTRACT, "as_of": None}, date(2026, 11, 27), 120)
    assert not past_limit(CONTRACT, date(2026, 11, 27), None)
    assert not past_limit(None, date(2026, 11, 27), 120)
