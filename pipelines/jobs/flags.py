"""Compute and store a dataset version's flags (models.trends over the ledger's history).

A version's flags are computed once, on the day of its cut-off, against the version before it,
and stored; briefings of that version (and their re-renders) read the stored flags.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from db import outputs, queries
from db.engine import Engine, Session, writing
from db.results import results_frame
from models.market import market_flags
from models.trends import TrendParams, all_flags
from models.trends.types import Flag
from pipelines.ledger.market import market_index, market_quotes


@dataclass(frozen=True)
class FlagReport:
    dataset_version: int
    stored: int            # 0 when the version already had its flags
    already_stored: bool


def compute_flags(target: Engine | Session, dataset_version: int, *, params: TrendParams,
                  code_version: str, now: datetime,
                  lock_timeout_seconds: float = 60.0) -> FlagReport:
    """Store `dataset_version`'s flags unless it has them already (`target`: an engine, or a
    caller's open write session)."""
    with writing(target, lock_timeout_seconds) as session:
        if outputs.has_flags(session, dataset_version):
            return FlagReport(dataset_version, 0, True)
        flags = flags_for_version(session, dataset_version, params)
        stored = outputs.record_flags(session, dataset_version, flags,
                                      code_version=code_version, computed_at=now)
    return FlagReport(dataset_version, stored, False)


def flags_for_version(session: Session, dataset_version: int,
                      params: TrendParams) -> list[Flag]:
    """The flags of a version, computed from the ledger's full history (nothing stored)."""
    version = queries.dataset_version(session, dataset_version)
    previous = outputs.previous_version(session, version)
    return _market_flags(session, version.id, previous.id if previous is not None else None,
                         version.cutoff_at.date()) + all_flags(
        queries.observations_frame(session), on=version.cutoff_at.date(),
        cutoff=version.cutoff_at,
        previous_cutoff=previous.cutoff_at if previous is not None else None, params=params,
        previous_results=results_frame(session, previous.id) if previous is not None else None,
        current_results=results_frame(session, dataset_version))


def _market_flags(session: Session, current: int, previous: int | None, today: date) -> list[Flag]:
    """Price moves and new cheapest providers in the GPU-hour price index since the version
    before; vendor quotes about to expire (or expired) and lead times that grew."""
    index = market_index(session, up_to=current)
    quotes = market_quotes(session, current)
    return market_flags(index, quotes if not quotes.empty else None,
                        previous_version=previous if not index.empty else None,
                        current_version=current, today=today)
