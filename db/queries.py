"""Reads from the ledger on its two clocks: valid at date D, as known at time T."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Select, and_, func, or_, select
from sqlalchemy.orm import Session

if TYPE_CHECKING:  # pandas costs most of a second to import: only the frames pay it
    import pandas as pd

from db.schema import (
    DatasetVersion,
    InferencePoint,
    IngestFile,
    IngestRun,
    Item,
    MeasurementRun,
    Metric,
    NcclPoint,
    Observation,
    RawFile,
    RejectedRow,
    Source,
)

# Everything a reader needs to show and trace one observation.
_COLUMNS = (
    Observation.id.label("observation_id"), Item.key.label("item"), Item.name.label("item_name"),
    Item.kind.label("item_kind"), Item.family.label("item_family"),
    Metric.key.label("metric"), Metric.unit.label("unit"), Observation.value, Observation.low,
    Observation.high, Observation.value_written, Observation.unit_written,
    Observation.value_kind, Observation.status, Observation.quote, Observation.as_of,
    Observation.as_of_precision, Observation.valid_to, Observation.recorded_at,
    Observation.superseded_at, Source.key.label("source"), Source.title.label("source_title"),
    Source.kind.label("source_kind"), Source.url.label("source_url"),
    Source.published_on.label("source_published_on"),
    Source.publisher.label("source_publisher"),
    Observation.offer_provider, Observation.offer_region, Observation.offer_term,
    Observation.offer_gpu, Observation.offer_units, Observation.offer_instance,
    Observation.offer_currency, Observation.offer_valid_until,
)


def _joined() -> Select[Any]:
    return (select(*_COLUMNS).join(Item, Observation.item_id == Item.id)
            .join(Metric, Observation.metric_id == Metric.id)
            .join(Source, Observation.source_id == Source.id))


def known_at(query: Select[Any], moment: datetime) -> Select[Any]:
    """Restrict to observations the ledger held at `moment` (knowledge time)."""
    return query.where(Observation.recorded_at <= moment,
                       or_(Observation.superseded_at.is_(None),
                           Observation.superseded_at > moment))


def valid_at(query: Select[Any], day: date) -> Select[Any]:
    """Restrict to observations that hold in the world on `day` (valid time)."""
    return query.where(Observation.as_of <= day,
                       or_(Observation.valid_to.is_(None), Observation.valid_to > day))


def candidates(session: Session, item: str, metric: str, *, on: date,
               known: datetime) -> list[dict[str, Any]]:
    query = valid_at(known_at(_joined(), known), on).where(and_(Item.key == item,
                                                                Metric.key == metric))
    return [dict(row._mapping) for row in session.execute(query)]


def observations_frame(session: Session, *, known: datetime | None = None,
                       on: date | None = None, item: str | None = None) -> pd.DataFrame:
    """Observations with their keys; filtered by the clocks that are given."""
    query = _joined()
    if known is not None:
        query = known_at(query, known)
    if on is not None:
        query = valid_at(query, on)
    if item is not None:
        query = query.where(Item.key == item)
    query = query.order_by(Item.key, Metric.key, Observation.as_of, Observation.recorded_at,
                           Observation.id)
    rows = [dict(row._mapping) for row in session.execute(query)]
    import pandas as pd

    return pd.DataFrame(rows, columns=[c.key for c in _COLUMNS])


def live_digests(session: Session, known: datetime) -> list[str]:
    """The content digests of the observations live at `known` (knowledge time)."""
    return list(session.scalars(known_at(select(Observation.content_sha256), known)))


def rejected_rows(session: Session) -> list[dict[str, Any]]:
    query = (select(RejectedRow.ingest_run_id, IngestFile.path, RawFile.sha256, RejectedRow.line,
                    RejectedRow.field, RejectedRow.reason, RejectedRow.raw_text)
             .join(IngestFile, RejectedRow.ingest_file_id == IngestFile.id)
             .join(RawFile, RejectedRow.raw_file_id == RawFile.id)
             .order_by(RejectedRow.id))
    return [dict(row._mapping) for row in session.execute(query)]


def sources_frame(session: Session) -> pd.DataFrame:
    rows = session.execute(select(Source.key, Source.title, Source.publisher, Source.url,
                                  Source.kind, Source.published_on, Source.retrieved_on)
                           .order_by(Source.key))
    import pandas as pd

    return pd.DataFrame([dict(r._mapping) for r in rows],
                        columns=["key", "title", "publisher", "url", "kind", "published_on",
                                 "retrieved_on"])


def items_by_key(session: Session) -> dict[str, Item]:
    return {item.key: item for item in session.scalars(select(Item))}


def metrics_by_key(session: Session) -> dict[str, Metric]:
    return {metric.key: metric for metric in session.scalars(select(Metric))}


def dataset_version(session: Session, version_id: int) -> DatasetVersion:
    found = session.get(DatasetVersion, version_id)
    if found is None:
        raise LookupError(f"dataset version {version_id} does not exist")
    return found


def item_family(session: Session, key: str) -> str | None:
    """The family the ledger gives an item (Hopper, Blackwell, ...), None if it has none."""
    return session.scalar(select(Item.family).where(Item.key == key))


def measured_run_shape(session: Session, observation_id: int) -> tuple[int, int] | None:
    """(nodes, GPUs per node) of the nccl-tests run an observation summarises: the run in the
    same raw file with a size point on the observation's line. None if it is not one."""
    row = session.execute(
        select(MeasurementRun.nodes, MeasurementRun.gpus_per_node)
        .join(NcclPoint, NcclPoint.measurement_run_id == MeasurementRun.id)
        .join(Observation, and_(Observation.raw_file_id == MeasurementRun.raw_file_id,
                                Observation.line == NcclPoint.line))
        .where(Observation.id == observation_id).limit(1)).first()
    if row is None or row.nodes is None or row.gpus_per_node is None:
        return None
    return int(row.nodes), int(row.gpus_per_node)


def trend_frame(session: Session, metrics: Sequence[str]) -> pd.DataFrame:
    """The full history (both clocks) of `metrics` only, in observations_frame's columns: what
    the trends read, without every other observation of a big ledger."""
    query = (_joined().where(Metric.key.in_(sorted(set(metrics))))
             .order_by(Item.key, Metric.key, Observation.as_of, Observation.recorded_at,
                       Observation.id))
    rows = [dict(row._mapping) for row in session.execute(query)]
    import pandas as pd

    return pd.DataFrame(rows, columns=[c.key for c in _COLUMNS])


def rejected_row_count(session: Session) -> int:
    """How many rows the ledger's ingests refused (counted by the database)."""
    return int(session.scalar(select(func.count()).select_from(RejectedRow)) or 0)


def sources_by_keys(session: Session, keys: Collection[str]) -> list[dict[str, Any]]:
    """The sources with these keys, by key, in sources_frame's columns."""
    wanted = sorted(set(keys))
    found: list[dict[str, Any]] = []
    for start in range(0, len(wanted), _IN_BATCH):   # keep each IN list small
        rows = session.execute(select(Source.key, Source.title, Source.publisher, Source.url,
                                      Source.kind, Source.published_on, Source.retrieved_on)
                               .where(Source.key.in_(wanted[start:start + _IN_BATCH])))
        found += [dict(r._mapping) for r in rows]
    return sorted(found, key=lambda r: r["key"])


_IN_BATCH = 500


def offer_history(session: Session) -> pd.DataFrame:
    """Every market price with offer terms, on both clocks (models.market.snapshots reads it):
    the full history, so each dataset version's offers can be cut from it."""
    query = (select(Observation.id.label("observation_id"), Item.key.label("item"),
                    Source.key.label("source"), Observation.value, Observation.as_of,
                    Observation.valid_to, Observation.recorded_at, Observation.superseded_at,
                    Observation.offer_provider, Observation.offer_region,
                    Observation.offer_term, Observation.offer_gpu, Observation.offer_units)
             .join(Item, Observation.item_id == Item.id)
             .join(Source, Observation.source_id == Source.id)
             .where(Observation.offer_gpu.is_not(None))
             .order_by(Observation.id))
    # Plain tuples through the connection, not ORM rows as dicts: a 100k-offer price list's
    # history is read at its ingest.
    # As tuples: pandas asks every Row for `keys` (a miss, with its own cost per row).
    rows = list(map(tuple, session.connection().execute(query).fetchall()))
    import pandas as pd

    return pd.DataFrame.from_records(rows, columns=[
        "observation_id", "item", "source", "value", "as_of", "valid_to", "recorded_at",
        "superseded_at", "offer_provider", "offer_region", "offer_term", "offer_gpu",
        "offer_units"])


def dataset_versions(session: Session, up_to: int | None = None) -> list[tuple[int, datetime]]:
    """(id, cut-off) of every dataset version, oldest first (up to `up_to` when given)."""
    query = select(DatasetVersion.id, DatasetVersion.cutoff_at).order_by(DatasetVersion.id)
    if up_to is not None:
        query = query.where(DatasetVersion.id <= up_to)
    return [(int(row.id), row.cutoff_at) for row in session.execute(query)]


def quote_history(session: Session) -> pd.DataFrame:
    """Every figure of a vendor quote (offer term 'quote': its unit price, lead time and
    validity), on both clocks (models.market.snapshots.quotes_at_version reads it)."""
    query = (select(Observation.id.label("observation_id"), Item.key.label("item"),
                    Metric.key.label("metric"), Source.key.label("source"), Observation.value,
                    Observation.as_of, Observation.recorded_at, Observation.superseded_at,
                    Observation.offer_provider, Observation.offer_valid_until)
             .join(Item, Observation.item_id == Item.id)
             .join(Metric, Observation.metric_id == Metric.id)
             .join(Source, Observation.source_id == Source.id)
             .where(Observation.offer_term == "quote")
             .order_by(Observation.id))
    rows = [dict(row._mapping) for row in session.execute(query)]
    import pandas as pd

    return pd.DataFrame(rows, columns=["observation_id", "item", "metric", "source", "value",
                                       "as_of", "recorded_at", "superseded_at",
                                       "offer_provider", "offer_valid_until"])


def inference_points(session: Session, known_at: datetime | None = None) -> pd.DataFrame:
    """Every measured inference serving point (InferenceX, MLPerf Inference) with the columns
    of inference_point and `recorded_at`, when the ledger learned it (its ingest run's start);
    with `known_at`, only the points recorded at or before it. Oldest first."""
    columns = [*InferencePoint.__table__.columns, IngestRun.started_at.label("recorded_at")]
    query = (select(*columns)
             .join(MeasurementRun, MeasurementRun.id == InferencePoint.measurement_run_id)
             .join(IngestRun, IngestRun.id == MeasurementRun.ingest_run_id)
             .order_by(InferencePoint.id))
    if known_at is not None:
        query = query.where(IngestRun.started_at <= known_at)
    rows = [dict(row._mapping) for row in session.execute(query)]
    import pandas as pd

    return pd.DataFrame(rows, columns=[c.key for c in columns])
