"""The price-index stage of the recompute graph: each dataset version's GPU-hour price index,
computed once from the offers that version knew and stored (db.price_index). Every later
stage (TCO, serving, flags), the briefing and the warehouse read the stored rows.

Dates are price dates (models.market.valid_time): a version's index is its market on its
date, without the offers priced more than `max_age_days` before it (stale); its
week-over-week and 90-day changes compare that market with the same version's knowledge of
the market 7 and 90 days earlier, over the offers priced on both dates."""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta

import pandas as pd

from db import price_index as stored
from db import queries
from db.engine import Session
from models.market import HORIZONS, price_index
from models.market.frames import GPU, OBSERVATION_ID, PRICE, TERM, VERSION, VERSION_DATE
from models.market.snapshots import VersionCut, offers_at_versions
from models.market.valid_time import (
    CHANGE,
    COMPOSITION,
    fresh_offers,
    matched_changes,
    price_dates,
)

STAGE = stored.PRICE_INDEX_STAGE


def store_price_index(session: Session, dataset_version: int, *, code_version: str,
                      now: datetime, max_age_days: int | None = None) -> list[int]:
    """Give every version up to `dataset_version` that lacks one its stored price index
    (versions recorded before the stage existed are caught up, oldest first); the versions
    computed. `max_age_days`: offers priced longer ago than this on a version's date leave
    its index (models.market.valid_time.MAX_OFFER_AGE_DAYS is the documented default; None,
    no limit)."""
    missing = stored.versions_without(session, STAGE, dataset_version)
    if not missing:
        return []
    cuts = [VersionCut(v, cutoff, cutoff.date()) for v, cutoff in missing]
    earlier = {prefix: [VersionCut(c.version, c.cutoff_at, c.on - timedelta(days=days))
                        for c in cuts] for prefix, days in HORIZONS}
    # One pass over the history for every date read (the version's own and its changes').
    read = offers_at_versions(queries.offer_history(session),
                              cuts + [cut for group in earlier.values() for cut in group])
    # The dates of the rows read, as timestamps once (each cut's offers are taken by them).
    dated = read.assign(_on=pd.to_datetime(read[VERSION_DATE]))
    current = fresh_offers(_on(dated, cuts), max_age_days)
    index = price_index(current)
    index = index.merge(price_dates(current), on=[VERSION, GPU, TERM], how="left")
    for prefix, _ in HORIZONS:
        back = fresh_offers(_on(dated, earlier[prefix]), max_age_days)
        moved = matched_changes(current, back)
        index = index.merge(moved[[VERSION, GPU, TERM, CHANGE, COMPOSITION]].rename(
            columns={CHANGE: f"{prefix}_change", COMPOSITION: f"{prefix}_composition"}),
            on=[VERSION, GPU, TERM], how="left")
    for version, _ in missing:
        rows = index[index[VERSION] == version]
        count = stored.add_index_rows(session, rows.to_dict("records"))
        stored.record_stage(session, dataset_version=version, stage=STAGE,
                            inputs_sha256=offers_digest(read[read[VERSION] == version],
                                                        max_age_days),
                            code_version=code_version, computed_at=now, rows=count,
                            max_age_days=max_age_days)
    return [version for version, _ in missing]


def _on(dated: pd.DataFrame, cuts: list[VersionCut]) -> pd.DataFrame:
    """The offers of each cut's version on that cut's date (`dated`: the offers with their
    VERSION_DATE as a timestamp in `_on`)."""
    wanted = pd.DataFrame({VERSION: [c.version for c in cuts],
                           "_on": pd.to_datetime([c.on for c in cuts])})
    return dated.merge(wanted, on=[VERSION, "_on"]).drop(columns="_on")


def offers_digest(offers: pd.DataFrame, max_age_days: int | None = None) -> str:
    """What a version's index read: its offers' observation ids and prices (on its date and
    the dates its changes compare with), in order, and the age limit."""
    # As Python numbers (what iterating the columns gives), converted a column at a time.
    pairs = sorted(set(zip(offers[OBSERVATION_ID].astype(int).tolist(),
                           offers[PRICE].astype(float).tolist(), strict=True)))
    return hashlib.sha256(repr((pairs, max_age_days)).encode()).hexdigest()
