"""Read-only questions only the CLI asks: the items and metrics with live values and how many
(counted by the database: `list` needs no pandas); a version's flags filtered by severity and
kind, most severe first; the newest version that has flags; the scenario names the ledger knows.

Flags are keyed like db.outputs.flags_of, with the dataset version they belong to.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from datetime import datetime
from typing import Any

from sqlalchemy import Select, case, distinct, func, select
from sqlalchemy.orm import Session

from db.queries import known_at
from db.schema import FLAG_SEVERITIES, Flag, Item, Metric, Observation, Scenario


def item_counts(session: Session, known: datetime, item: str | None = None
                ) -> list[dict[str, Any]]:
    """Each item with a value live at `known` (only `item`, when given), by key: its name,
    kind, and how many metrics and values it has."""
    query = (select(Item.key.label("item"), Item.name, Item.kind,
                    func.count(distinct(Observation.metric_id)).label("metrics"),
                    func.count().label("values"))
             .join(Item, Observation.item_id == Item.id)
             .group_by(Item.id, Item.key, Item.name, Item.kind))
    return _rows(session, _of_item(known_at(query, known), item), Item.key)


def metric_counts(session: Session, known: datetime, item: str | None = None
                  ) -> list[dict[str, Any]]:
    """Each metric with a value live at `known` (of `item`, when given), by key: its unit,
    and how many items and values have it."""
    query = (select(Metric.key.label("metric"), Metric.unit,
                    func.count(distinct(Observation.item_id)).label("items"),
                    func.count().label("values"))
             .join(Metric, Observation.metric_id == Metric.id)
             .group_by(Metric.id, Metric.key, Metric.unit))
    if item is not None:
        query = query.join(Item, Observation.item_id == Item.id)
    return _rows(session, _of_item(known_at(query, known), item), Metric.key)


def _of_item(query: Select[Any], item: str | None) -> Select[Any]:
    return query if item is None else query.where(Item.key == item)


def _rows(session: Session, query: Select[Any], key: Any) -> list[dict[str, Any]]:
    """The rows by `key` in code-point order on both dialects (PostgreSQL's default collation
    is the locale's)."""
    order = key.collate("C") if session.get_bind().dialect.name == "postgresql" else key
    return [dict(row._mapping) for row in session.execute(query.order_by(order))]


def version_flags(session: Session, dataset_version: int, *,
                  severities: Collection[str] | None = None,
                  kinds: Collection[str] | None = None) -> list[dict[str, Any]]:
    """The flags of `dataset_version` (of `severities` and `kinds` when given), most severe
    first, then in the order they were stored (a scenario's inputs first within a severity)."""
    rank = case({s: n for n, s in enumerate(FLAG_SEVERITIES)}, value=Flag.severity,
                else_=len(FLAG_SEVERITIES))
    query = select(Flag).where(Flag.dataset_version_id == dataset_version)
    if severities is not None:
        query = query.where(Flag.severity.in_(sorted(severities)))
    if kinds is not None:
        query = query.where(Flag.kind.in_(sorted(kinds)))
    return [{"dataset_version": r.dataset_version_id, "severity": r.severity, "kind": r.kind,
             "subject": r.subject, "item": r.item_key, "metric": r.metric_key,
             "scenario": r.scenario_name, "message": r.message,
             "observation_ids": json.loads(r.observation_ids)}
            for r in session.scalars(query.order_by(rank, Flag.id))]


def newest_flagged_version(session: Session) -> int | None:
    """The newest dataset version with flags stored (None: no version has any)."""
    return session.scalar(select(func.max(Flag.dataset_version_id)))


def scenario_names(session: Session) -> list[str]:
    """Every scenario name the ledger has a definition of, by name."""
    return list(session.scalars(select(Scenario.name).distinct().order_by(Scenario.name)))
