"""Page 1's market line per GPU: its price dates (valid time) and a change over matched offers,
with offers that came or went said apart."""

from __future__ import annotations

from datetime import date

import pandas as pd

from db.price_index import INDEX_FIELDS
from pipelines.briefing.decisions import market_lines


def index(rows: list[dict]) -> pd.DataFrame:
    """A stored price index (db.price_index.stored_index's columns) of H100 on demand."""
    base = {"gpu": "h100-sxm5", "term": "on_demand", "min": 2.0, "p25": 2.0, "p75": 3.0,
            "n_offers": 3, "n_providers": 2, "cheapest_provider": "lambda",
            "cheapest_region": "us-east-1", "cheapest_price": 2.0, "cheapest_source": "s",
            "cheapest_observation_id": 1, "cheapest_gpus_per_instance": 8, "d90_change": None,
            "d90_composition": None}
    frame = pd.DataFrame([{**base, **row} for row in rows], columns=list(INDEX_FIELDS))
    for column in ("version_date", "cheapest_as_of", "price_from", "price_to"):
        frame[column] = pd.to_datetime(frame[column])
    return frame


def test_the_line_is_dated_by_its_offers_prices_and_moves_by_matched_offers_only():
    stored = index([
        {"dataset_version": 1, "version_date": "2026-11-01", "median": 3.0,
         "cheapest_as_of": "2026-10-25", "price_from": "2026-10-25", "price_to": "2026-10-25",
         "wow_change": None, "wow_composition": None},
        # A week later: one matched offer 10 % cheaper, and a cheaper provider joined (the
        # median fell by a third, most of it composition).
        {"dataset_version": 2, "version_date": "2026-11-08", "median": 2.0,
         "cheapest_as_of": "2026-11-01", "price_from": "2026-10-25", "price_to": "2026-11-01",
         "wow_change": -0.10, "wow_composition": "newcloud added 1 region"}])
    [line] = market_lines(stored, 2)
    assert (line.price_from, line.price_to) == (date(2026, 10, 25), date(2026, 11, 1))
    assert line.cheapest_as_of == date(2026, 11, 1)
    assert line.as_of == date(2026, 11, 8)  # the version's date, kept apart
    assert line.change == -0.10 and line.composition == "newcloud added 1 region"


def test_without_an_offer_priced_on_both_dates_there_is_no_change_to_show():
    """Offers that came or went are composition, not a price move: a median over other
    offers is not compared with the earlier one."""
    stored = index([
        {"dataset_version": 1, "version_date": "2026-11-01", "median": 4.0,
         "cheapest_as_of": "2026-11-01", "price_from": "2026-11-01", "price_to": "2026-11-01",
         "wow_change": None, "wow_composition": None},
        {"dataset_version": 2, "version_date": "2026-12-20", "median": 3.0,
         "cheapest_as_of": "2026-12-20", "price_from": "2026-12-20", "price_to": "2026-12-20",
         "wow_change": None, "wow_composition": "newcloud added 3 offers"}])
    [line] = market_lines(stored, 2)
    assert line.change is None and line.composition == "newcloud added 3 offers"

