"""Read-only questions only the CLI asks: a version's flags filtered by severity and kind,
most severe first; the newest version that has flags; the scenario names the ledger knows.

Flags are keyed like db.outputs.flags_of, with the dataset version they belong to.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from sqlalchemy import case, func, select
from sqlalchemy.orm import Session

from db.schema import FLAG_SEVERITIES, Flag, Scenario


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
