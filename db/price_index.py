"""The stored price index and the graph's stage records: written once per dataset version by
the price-index stage, read by every later stage, the briefing and the warehouse."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date, datetime
from typing import Any

import pandas as pd
from sqlalchemy import select
from sqlalchemy.orm import Session

from db.schema import DatasetVersion, PriceIndexEntry, StageRun

# The stored columns, named as the models' price-index frame names them.
INDEX_FIELDS: dict[str, str] = {
    "dataset_version": "dataset_version_id", "version_date": "version_date", "gpu": "gpu",
    "term": "term", "median": "median", "min": "min_price", "p25": "p25", "p75": "p75",
    "n_offers": "n_offers", "n_providers": "n_providers",
    "cheapest_provider": "cheapest_provider", "cheapest_region": "cheapest_region",
    "cheapest_price": "cheapest_price", "cheapest_source": "cheapest_source",
    "cheapest_as_of": "cheapest_as_of", "cheapest_observation_id": "cheapest_observation_id",
    "cheapest_gpus_per_instance": "cheapest_gpus_per_instance",
    "wow_change": "wow_change", "d90_change": "d90_change", "price_from": "price_from",
    "price_to": "price_to", "wow_composition": "wow_composition",
    "d90_composition": "d90_composition"}


def versions_without(session: Session, stage: str,
                     up_to: int) -> list[tuple[int, datetime]]:
    """(id, cut-off) of the dataset versions up to `up_to` that have no record of `stage`,
    oldest first."""
    done = select(StageRun.dataset_version_id).where(StageRun.stage == stage)
    query = (select(DatasetVersion.id, DatasetVersion.cutoff_at)
             .where(DatasetVersion.id <= up_to, DatasetVersion.id.not_in(done))
             .order_by(DatasetVersion.id))
    return [(int(row.id), row.cutoff_at) for row in session.execute(query)]


# The recompute graph's stage that stores each version's price index (db.schema.GRAPH_STAGES).
PRICE_INDEX_STAGE = "price_index"


def record_stage(session: Session, *, dataset_version: int, stage: str, inputs_sha256: str,
                 code_version: str, computed_at: datetime, rows: int,
                 max_age_days: int | None = None) -> None:
    session.add(StageRun(dataset_version_id=dataset_version, stage=stage,
                         inputs_sha256=inputs_sha256, code_version=code_version,
                         computed_at=computed_at, rows=rows, max_age_days=max_age_days))
    session.flush()


def stage_limit(session: Session, dataset_version: int, stage: str) -> int | None:
    """The age limit `stage` ran with on `dataset_version` (None: no record, no limit, or a
    record from before the limit was kept)."""
    return session.scalar(select(StageRun.max_age_days).where(
        StageRun.dataset_version_id == dataset_version, StageRun.stage == stage))


def add_index_rows(session: Session, rows: Iterable[Mapping[str, Any]]) -> int:
    """Store price-index rows (keyed as INDEX_FIELDS' keys); how many."""
    entries = [PriceIndexEntry(**{column: _plain(row[key])
                                  for key, column in INDEX_FIELDS.items()}) for row in rows]
    session.add_all(entries)
    session.flush()
    return len(entries)


def stored_index(session: Session, up_to: int | None = None, only: int | None = None,
                 gpu: str | None = None, term: str | None = None) -> pd.DataFrame:
    """The stored index of every version up to `up_to` (or of version `only`; of one `gpu`
    and `term` when given), in the models' column names, ordered by version, GPU and term."""
    query = select(PriceIndexEntry).order_by(PriceIndexEntry.dataset_version_id,
                                             PriceIndexEntry.gpu, PriceIndexEntry.term)
    if up_to is not None:
        query = query.where(PriceIndexEntry.dataset_version_id <= up_to)
    if only is not None:
        query = query.where(PriceIndexEntry.dataset_version_id == only)
    if gpu is not None:
        query = query.where(PriceIndexEntry.gpu == gpu)
    if term is not None:
        query = query.where(PriceIndexEntry.term == term)
    rows = [{key: getattr(entry, column) for key, column in INDEX_FIELDS.items()}
            for entry in session.scalars(query)]
    frame = pd.DataFrame(rows, columns=list(INDEX_FIELDS))
    for column in ("version_date", "cheapest_as_of", "price_from", "price_to"):
        frame[column] = pd.to_datetime(frame[column]).astype("datetime64[ns]")
    for column in ("wow_change", "d90_change"):
        frame[column] = frame[column].astype(float)
    return frame


def _plain(value: Any) -> Any:
    """A frame cell as the database takes it: None for NaN/NaT, dates as dates."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, pd.Timestamp):
        return value.date()
    if isinstance(value, date):
        return value
    return value.item() if hasattr(value, "item") else value
