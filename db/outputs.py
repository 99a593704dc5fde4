"""What a dataset version led to besides model results: its flags, its rendered briefings and
their deliveries.

All are append-only. Flags are computed once per dataset version (a later computation for the
same version is refused by the unique constraint, so re-rendering reads the stored ones); every
rendering of a briefing is recorded with the sha256 of its bytes (once: the same bytes again
are the same row), and every delivery of it (an e-mail, a folder copy) with how it went.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import UTC, date, datetime
from typing import Any, Protocol

from sqlalchemy import ColumnElement, case, func, select
from sqlalchemy.orm import Session, aliased

from db.schema import Briefing, BriefingDelivery, DatasetVersion, Flag


class FlagLike(Protocol):
    """What a flag carries (models.trends.types.Flag has these; db/ may not import it)."""

    kind: str
    severity: str
    subject: str
    message: str
    observation_ids: tuple[int, ...]
    item: str | None
    metric: str | None
    scenario: str | None


def has_flags(session: Session, dataset_version: int) -> bool:
    return bool(session.scalar(select(func.count()).select_from(Flag)
                               .where(Flag.dataset_version_id == dataset_version)))


def record_flags(session: Session, dataset_version: int, flags: Iterable[FlagLike], *,
                 code_version: str, computed_at: datetime) -> int:
    """Store a version's flags; returns how many were stored."""
    rows = [Flag(dataset_version_id=dataset_version, kind=f.kind, severity=f.severity,
                 subject=f.subject, item_key=f.item, metric_key=f.metric,
                 scenario_name=f.scenario, message=f.message,
                 observation_ids=json.dumps(sorted(f.observation_ids)),
                 code_version=code_version, computed_at=computed_at) for f in flags]
    session.add_all(rows)
    session.flush()
    return len(rows)


def flags_of(session: Session, dataset_version: int) -> list[dict[str, Any]]:
    """A version's flags in the order they were stored, keyed by FlagLike's field names."""
    rows = session.scalars(select(Flag).where(Flag.dataset_version_id == dataset_version)
                           .order_by(Flag.id))
    return [{"kind": r.kind, "severity": r.severity, "subject": r.subject,
             "message": r.message, "observation_ids": tuple(json.loads(r.observation_ids)),
             "item": r.item_key, "metric": r.metric_key, "scenario": r.scenario_name}
            for r in rows]


def record_briefing(session: Session, *, dataset_version: int, as_of: date, path: str,
                    sha256: str, size_bytes: int, pages: int | None, code_version: str,
                    rendered_at: datetime) -> Briefing:
    """Record a rendering; a re-render giving the same bytes at the same place from the same
    version and code is the row recorded already (returned as it is): the table holds what
    was made, not how often."""
    same = session.scalar(select(Briefing).where(
        Briefing.dataset_version_id == dataset_version, Briefing.as_of == as_of,
        Briefing.path == path, Briefing.sha256 == sha256,
        Briefing.code_version == code_version).order_by(Briefing.id).limit(1))
    if same is not None:
        return same
    row = Briefing(dataset_version_id=dataset_version, as_of=as_of, path=path, sha256=sha256,
                   size_bytes=size_bytes, pages=pages, code_version=code_version,
                   rendered_at=rendered_at)
    session.add(row)
    session.flush()
    return row


def briefings(session: Session) -> list[Briefing]:
    return list(session.scalars(select(Briefing).order_by(Briefing.id)))


def briefing_at(session: Session, path: str) -> Briefing | None:
    """The latest briefing recorded as written to `path` (a re-render records another row)."""
    return session.scalar(select(Briefing).where(Briefing.path == path)
                          .order_by(Briefing.id.desc()).limit(1))


def is_briefed(session: Session, dataset_version: int) -> bool:
    """Whether a briefing of the dataset version was ever rendered: then the version is what
    that briefing read, and nothing is added to it (a new scenario belongs to the next)."""
    return session.scalar(select(Briefing.id).where(
        Briefing.dataset_version_id == dataset_version).limit(1)) is not None


def first_briefing_for(session: Session, as_of: date) -> Briefing | None:
    """The first briefing rendered for `as_of`: the one a re-render must reproduce."""
    return session.scalar(select(Briefing).where(Briefing.as_of == as_of)
                          .order_by(Briefing.id).limit(1))


def briefings_for(session: Session, as_of: date) -> list[Briefing]:
    """Every briefing rendered for `as_of`, first first."""
    return list(session.scalars(select(Briefing).where(Briefing.as_of == as_of)
                                .order_by(Briefing.id)))


def version_known_on(session: Session, day: date) -> DatasetVersion | None:
    """The newest dataset version whose cut-off falls on or before the end of `day` (UTC)."""
    end = datetime.combine(day, datetime.max.time()).replace(tzinfo=UTC)
    return session.scalar(select(DatasetVersion).where(DatasetVersion.cutoff_at <= end)
                          .order_by(DatasetVersion.cutoff_at.desc(), DatasetVersion.id.desc())
                          .limit(1))


def last_briefing_before(session: Session, version: DatasetVersion) -> Briefing | None:
    """The newest briefing rendered of a dataset version older than `version`: what a
    briefing of `version` compares with."""
    return _newest_briefing_before(session, version)


def last_delivered_briefing_before(session: Session, version: DatasetVersion
                                   ) -> Briefing | None:
    """The newest briefing of a dataset version older than `version` that reached a reader
    (a 'delivered' delivery on any channel): what the readers last received."""
    delivered = select(BriefingDelivery.id).where(
        BriefingDelivery.briefing_id == Briefing.id, BriefingDelivery.status == "delivered")
    return _newest_briefing_before(session, version, delivered.exists())


def _newest_briefing_before(session: Session, version: DatasetVersion,
                            *conditions: ColumnElement[bool]) -> Briefing | None:
    """The newest briefing of a version older than `version` that meets `conditions`."""
    return session.scalar(select(Briefing).join(
        DatasetVersion, DatasetVersion.id == Briefing.dataset_version_id)
        .where(DatasetVersion.cutoff_at < version.cutoff_at, *conditions)
        .order_by(DatasetVersion.cutoff_at.desc(), Briefing.id.desc()).limit(1))


def record_delivery(session: Session, *, briefing_id: int, channel: str, target: str,
                    status: str, attempts: int, message_id: str | None, error: str | None,
                    delivered_at: datetime) -> BriefingDelivery:
    """Record how one delivery of a briefing on one channel went (all its attempts)."""
    row = BriefingDelivery(briefing_id=briefing_id, channel=channel, target=target,
                           status=status, attempts=attempts, message_id=message_id,
                           error=error, delivered_at=delivered_at)
    session.add(row)
    session.flush()
    return row


def emailed_readers(session: Session, briefing_id: int) -> dict[str, str | None]:
    """The readers e-mailed the dataset version of `briefing_id` (by any rendering of it, on
    record as delivered), each with the Message-ID they got it under: who must not get the
    same version again."""
    version = select(Briefing.dataset_version_id).where(Briefing.id == briefing_id)
    rows = session.execute(
        select(BriefingDelivery.target, BriefingDelivery.message_id)
        .join(Briefing, Briefing.id == BriefingDelivery.briefing_id)
        .where(Briefing.dataset_version_id == version.scalar_subquery(),
               BriefingDelivery.channel == "email", BriefingDelivery.status == "delivered")
        .order_by(BriefingDelivery.id))
    readers: dict[str, str | None] = {}
    for target, message_id in rows:
        for reader in target.split(","):
            if reader.strip():
                readers.setdefault(reader.strip(), message_id)
    return readers


def deliveries_of(session: Session, briefing_id: int) -> list[BriefingDelivery]:
    """Every delivery recorded for a briefing, first first."""
    return list(session.scalars(select(BriefingDelivery)
                                .where(BriefingDelivery.briefing_id == briefing_id)
                                .order_by(BriefingDelivery.id)))


def compared_version(session: Session, version: DatasetVersion
                     ) -> tuple[DatasetVersion | None, Briefing | None]:
    """The version a briefing of `version` compares with: that of the last briefing before
    it that reached its readers (a delivery on record), else of the last briefing rendered
    before it (whatever versions were recorded between, a standalone ingest's included),
    else the dataset version before it; and that briefing, when there is one."""
    # What the readers last received, when a delivery is on record; else the last rendered.
    briefing = (last_delivered_briefing_before(session, version)
                or last_briefing_before(session, version))
    if briefing is not None:
        return session.get(DatasetVersion, briefing.dataset_version_id), briefing
    return previous_version(session, version), None


def previous_version(session: Session, version: DatasetVersion) -> DatasetVersion | None:
    """The dataset version before `version` (by cut-off), if any."""
    return session.scalar(select(DatasetVersion)
                          .where(DatasetVersion.cutoff_at < version.cutoff_at)
                          .order_by(DatasetVersion.cutoff_at.desc(), DatasetVersion.id.desc())
                          .limit(1))



def flag_counts(session: Session, dataset_version: int) -> dict[str, dict[str, int]]:
    """A version's flags counted per kind and severity: {kind: {severity: count}}."""
    rows = session.execute(select(Flag.kind, Flag.severity, func.count())
                           .where(Flag.dataset_version_id == dataset_version)
                           .group_by(Flag.kind, Flag.severity))
    counts: dict[str, dict[str, int]] = {}
    for kind, severity, count in rows:
        counts.setdefault(kind, {})[severity] = int(count)
    return counts


def first_flags_per_kind(session: Session, dataset_version: int, per_kind: int,
                         severities: Sequence[str]) -> list[dict[str, Any]]:
    """At most `per_kind` flags of each kind, most severe first (in `severities` order), then
    in the order they were stored; keyed like flags_of. The database numbers the rows, so a
    version with 200,000 flags costs a few hundred rows here."""
    rank = case({s: n for n, s in enumerate(severities)}, value=Flag.severity,
                else_=len(severities))
    numbered = (select(Flag, func.row_number().over(partition_by=Flag.kind,
                                                    order_by=(rank, Flag.id)).label("n"))
                .where(Flag.dataset_version_id == dataset_version).subquery())
    flag = aliased(Flag, numbered)
    rows = session.scalars(select(flag).where(numbered.c.n <= per_kind).order_by(flag.id))
    return [{"kind": r.kind, "severity": r.severity, "subject": r.subject,
             "message": r.message, "observation_ids": tuple(json.loads(r.observation_ids)),
             "item": r.item_key, "metric": r.metric_key, "scenario": r.scenario_name}
            for r in rows]
