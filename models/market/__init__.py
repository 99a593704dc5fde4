"""Market analytics over cloud GPU-hour prices and vendor quotes: the price index per
dataset version, GPU and term; its week-over-week and 90-day changes; spot and reserved
discounts against on-demand; the halving time of $/GPU-hour per GPU generation; and the
market flags. Pure functions (no I/O, no clock): pandas frames in, frames, dataclasses and
flags out."""

from models.market.changes import HORIZONS, index_changes, reference_versions
from models.market.flags import (
    MarketParams,
    lead_time_flags,
    market_flags,
    new_cheapest_flags,
    price_move_flags,
    quote_expiry_flags,
)
from models.market.frames import (
    OFFER_COLUMNS,
    PRICE_LIST_TERMS,
    QUOTE_COLUMNS,
    checked_offers,
    checked_quotes,
)
from models.market.halving import HalvingTime, halving_times
from models.market.index import INDEX_COLUMNS, price_index
from models.market.spreads import SPREAD_TERMS, term_spreads

__all__ = [
    "HORIZONS",
    "INDEX_COLUMNS",
    "OFFER_COLUMNS",
    "PRICE_LIST_TERMS",
    "QUOTE_COLUMNS",
    "SPREAD_TERMS",
    "HalvingTime",
    "MarketParams",
    "checked_offers",
    "checked_quotes",
    "halving_times",
    "index_changes",
    "lead_time_flags",
    "market_flags",
    "new_cheapest_flags",
    "price_index",
    "price_move_flags",
    "quote_expiry_flags",
    "reference_versions",
    "term_spreads",
]
