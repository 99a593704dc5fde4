"""Observation changes between two dataset versions, counted and ranked by the database.

The same classification as models.trends.changes.observation_changes, over the knowledge-time
window (previous cut-off, cut-off]: a new live observation is `added` when its source had no
earlier-dated figure for the item and metric at the previous cut-off, `changed` when that
figure's range differs (a restatement is neither); an observation live at the previous cut-off
and superseded in the window with no such successor is `superseded`. A change of 200,000 rows
stays in the database: callers get counts per kind and the few rows that matter most.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Float,
    Select,
    and_,
    case,
    cast,
    distinct,
    exists,
    func,
    literal,
    null,
    or_,
    select,
    tuple_,
    union_all,
)
from sqlalchemy.orm import Session, aliased

from db.schema import Flag, Item, Metric, Observation, Source

CHANGE_KINDS = ("added", "changed", "superseded")
# Which kind leads among equals in the ranking: a moved figure, a withdrawn one, a new one.
_KIND_RANK = {"changed": 0, "superseded": 1, "added": 2}


def _live_at(row: Any, moment: datetime) -> ColumnElement[bool]:
    return and_(row.recorded_at <= moment,
                or_(row.superseded_at.is_(None), row.superseded_at > moment))


def _window(previous: datetime, cutoff: datetime) -> Select[Any]:
    """Every change of the window: kind, ids, item/metric/source ids, before and after."""
    earlier = aliased(Observation)
    # The same source's latest earlier-dated figure live at the previous cut-off (merge_asof
    # backward on as_of, ties to the latest recorded, then the highest id).
    before_id = (select(earlier.id)
                 .where(earlier.item_id == Observation.item_id,
                        earlier.metric_id == Observation.metric_id,
                        earlier.source_id == Observation.source_id,
                        earlier.as_of <= Observation.as_of, _live_at(earlier, previous))
                 .order_by(earlier.as_of.desc(), earlier.recorded_at.desc(), earlier.id.desc())
                 .limit(1).correlate(Observation).scalar_subquery())
    new = (select(Observation.id, Observation.item_id, Observation.metric_id,
                  Observation.source_id, Observation.as_of, Observation.low, Observation.high,
                  Observation.value, before_id.label("before_id"))
           .where(Observation.recorded_at > previous, _live_at(Observation, cutoff))
           .cte("window_new"))
    before = aliased(Observation)
    moved = (select(case((new.c.before_id.is_(None), literal("added")), else_=literal("changed"))
                    .label("kind"), new.c.id.label("observation_id"), new.c.before_id,
                    new.c.item_id, new.c.metric_id, new.c.source_id, new.c.as_of,
                    cast(before.value, Float).label("before_value"),
                    cast(new.c.value, Float).label("after_value"))
             .select_from(new).outerjoin(before, before.id == new.c.before_id)
             .where(or_(new.c.before_id.is_(None), before.low != new.c.low,
                        before.high != new.c.high)))
    gone = (select(literal("superseded").label("kind"), Observation.id.label("observation_id"),
                   cast(null(), Observation.id.type).label("before_id"), Observation.item_id,
                   Observation.metric_id, Observation.source_id, Observation.as_of,
                   cast(Observation.value, Float).label("before_value"),
                   cast(null(), Float).label("after_value"))
            .where(_live_at(Observation, previous), Observation.superseded_at <= cutoff,
                   ~exists(select(new.c.id).where(new.c.before_id == Observation.id))))
    return union_all(moved, gone).subquery("window_change")


def change_counts(session: Session, *, previous: datetime,
                  cutoff: datetime) -> dict[str, tuple[int, int, int]]:
    """Per kind (every kind, zeros included): (observations, items, metrics)."""
    window = _window(previous, cutoff)
    rows = session.execute(select(window.c.kind, func.count(),
                                  func.count(distinct(window.c.item_id)),
                                  func.count(distinct(window.c.metric_id)))
                           .group_by(window.c.kind))
    counts = {kind: (int(n), int(items), int(metrics)) for kind, n, items, metrics in rows}
    return {kind: counts.get(kind, (0, 0, 0)) for kind in CHANGE_KINDS}


def top_changes(session: Session, *, previous: datetime, cutoff: datetime, version_id: int,
                decisive: Collection[tuple[str, str]], limit: int) -> list[dict[str, Any]]:
    """The `limit` changes that matter most, most first: changes of the (item, metric) pairs
    in `decisive` (what the version's results and comparison read), then those whose resolved
    value moved (a warning change flag of `version_id`), then changed before superseded before
    added, then the larger relative move; ties by item, metric, source, as_of and id."""
    window = _window(previous, cutoff)
    warned = (select(Flag.kind, Flag.item_key, Flag.metric_key)
              .where(Flag.dataset_version_id == version_id, Flag.severity == "warning",
                     Flag.kind.in_(CHANGE_KINDS), Flag.item_key.is_not(None))
              .distinct().subquery("warned"))
    item_key, metric_key, source_key = (_binary(session, c)
                                        for c in (Item.key, Metric.key, Source.key))
    feeds = (tuple_(Item.key, Metric.key).in_(sorted(decisive)) if decisive
             else literal(False))
    size = case((and_(window.c.before_value != 0, window.c.after_value.is_not(None)),
                 func.abs(window.c.after_value - window.c.before_value)
                 / func.abs(window.c.before_value)), else_=literal(-1.0))
    query = (select(window.c.kind, Item.key.label("item"), Metric.key.label("metric"),
                    Source.key.label("source"), Metric.unit, window.c.before_value,
                    window.c.after_value, window.c.as_of, window.c.before_id,
                    window.c.observation_id)
             .join(Item, Item.id == window.c.item_id)
             .join(Metric, Metric.id == window.c.metric_id)
             .join(Source, Source.id == window.c.source_id)
             .outerjoin(warned, and_(warned.c.kind == window.c.kind,
                                     warned.c.item_key == Item.key,
                                     warned.c.metric_key == Metric.key))
             .order_by(case((feeds, 0), else_=1), case((warned.c.kind.is_not(None), 0), else_=1),
                       case(_KIND_RANK, value=window.c.kind), size.desc(), item_key, metric_key,
                       source_key, window.c.as_of, window.c.observation_id)
             .limit(limit))
    return [dict(row._mapping) for row in session.execute(query)]


def _binary(session: Session, column: Any) -> Any:
    """Order text by code point on both dialects (PostgreSQL's default collation is the
    locale's, which sorts `a-b` and `ab` differently from SQLite)."""
    bind = session.get_bind()
    return column.collate("C") if bind.dialect.name == "postgresql" else column
