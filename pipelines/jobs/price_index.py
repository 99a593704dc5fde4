"""The price-index stage of the recompute graph: each dataset version's GPU-hour price index,
computed once from the offers that version knew and stored (db.price_index). Every later
stage (TCO, serving, flags), the briefing and the warehouse read the stored rows."""

from __future__ import annotations

import hashlib
from datetime import datetime

import pandas as pd

from db import price_index as stored
from db import queries
from db.engine import Session
from models.market import index_changes, price_index
from models.market.frames import OBSERVATION_ID, PRICE, VERSION
from models.market.index import INDEX_COLUMNS
from models.market.snapshots import VersionCut, offers_at_versions

STAGE = "price_index"
_CHANGES = ("wow_change", "d90_change")


def store_price_index(session: Session, dataset_version: int, *, code_version: str,
                      now: datetime) -> list[int]:
    """Give every version up to `dataset_version` that lacks one its stored price index
    (versions recorded before the stage existed are caught up, oldest first); the versions
    computed. The changes of a new version compare with the stored index of earlier ones."""
    missing = stored.versions_without(session, STAGE, dataset_version)
    if not missing:
        return []
    cuts = [VersionCut(v, cutoff, cutoff.date()) for v, cutoff in missing]
    offers = offers_at_versions(queries.offer_history(session), cuts)
    fresh = price_index(offers)
    earlier = stored.stored_index(session, up_to=dataset_version)
    with_changes = _with_changes(fresh, earlier)
    for version, _ in missing:
        rows = with_changes[with_changes[VERSION] == version]
        count = stored.add_index_rows(session, rows.to_dict("records"))
        stored.record_stage(session, dataset_version=version, stage=STAGE,
                            inputs_sha256=offers_digest(offers[offers[VERSION] == version]),
                            code_version=code_version, computed_at=now, rows=count)
    return [version for version, _ in missing]


def _with_changes(fresh: pd.DataFrame, earlier: pd.DataFrame) -> pd.DataFrame:
    """The fresh rows with their week-over-week and 90-day changes, against the fresh and
    the earlier (stored) versions alike."""
    if fresh.empty:
        return fresh.assign(**{c: pd.Series(dtype=float) for c in _CHANGES})
    base = list(INDEX_COLUMNS)
    parts = [earlier[base], fresh[base]] if not earlier.empty else [fresh[base]]
    combined = pd.concat(parts, ignore_index=True)
    changes = index_changes(combined)
    keys = [VERSION, "gpu", "term"]
    return fresh.merge(changes[keys + list(_CHANGES)], on=keys, how="left")


def offers_digest(offers: pd.DataFrame) -> str:
    """What a version's index read: its offers' observation ids and prices, in order."""
    pairs = sorted(zip(offers[OBSERVATION_ID].astype(int), offers[PRICE].astype(float),
                       strict=True))
    return hashlib.sha256(repr(pairs).encode()).hexdigest()
