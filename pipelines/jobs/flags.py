"""Compute and store a dataset version's flags (models.trends over the ledger's history).

A version's flags are computed once, on the day of its cut-off, against the version before it,
and stored; briefings of that version (and their re-renders) read the stored flags.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from db import outputs, queries
from db.engine import Engine, Session, writing
from db.results import results_frame, stored_results
from db.schema import C2CResult, ServingResult, TcoResult
from models.market import market_flags
from models.market.stale import stale_offer_flags, stale_summary
from models.trends import TrendParams, all_flags
from models.trends.types import SEVERITIES, Flag, by_severity
from pipelines.briefing.results import ledger_pairs
from pipelines.ledger.market import market_index, market_quotes
from pipelines.ledger.market_tiers import known_offers


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
    flags = _market_flags(session, version.id, previous.id if previous is not None else None,
                          version.cutoff_at.date(), params) + all_flags(
        queries.observations_frame(session), on=version.cutoff_at.date(),
        cutoff=version.cutoff_at,
        previous_cutoff=previous.cutoff_at if previous is not None else None, params=params,
        previous_results=results_frame(session, previous.id) if previous is not None else None,
        current_results=results_frame(session, dataset_version),
        read_by=read_by(session, dataset_version))
    # Most severe first; within a severity, the flags on figures a scenario reads (the ones
    # that can move a verdict) before the rest.
    return sorted(by_severity(flags), key=lambda f: (SEVERITIES.index(f.severity),
                                                     " Read by " not in f.message))


def read_by(session: Session,
            dataset_version: int) -> dict[tuple[str, str], tuple[str, ...]] | None:
    """The scenarios whose stored results of the version read each ledger (item, metric): a
    C2C estimate's hardware figures, a TCO comparison's inputs, a serving scenario's. None
    when the version has no stored result (an ingest before any recompute): then every pair
    is flagged, none named."""
    readers: dict[tuple[str, str], set[str]] = defaultdict(set)
    results = 0
    for table in (C2CResult, TcoResult, ServingResult):
        for name, stored in stored_results(session, table, dataset_version).items():
            results += 1
            for pair in ledger_pairs(_figures(stored.result)):
                readers[pair].add(name)
    if not results:
        return None
    return {pair: tuple(sorted(names)) for pair, names in readers.items()}


def _figures(result: Mapping[str, Any]) -> list[Any]:
    """The figures a stored result read: a C2C estimate's `specs`, a TCO result's `inputs`,
    each serving option's `hardware` (ledger_pairs keeps the ledger's among them)."""
    found = [*(result.get("specs") or ()), *(result.get("inputs") or ())]
    for option in result.get("options") or ():
        if isinstance(option, Mapping):
            found += option.get("hardware") or ()
    return found


def _market_flags(session: Session, current: int, previous: int | None, today: date,
                  params: TrendParams) -> list[Flag]:
    """Price moves and new cheapest providers in the GPU-hour price index since the version
    before; vendor quotes about to expire (or expired) and lead times that grew; one stale
    flag per GPU and term whose offers are all past the market's age limit."""
    index = market_index(session, up_to=current)
    quotes = market_quotes(session, current)
    flags = market_flags(index, quotes if not quotes.empty else None,
                         previous_version=previous if not index.empty else None,
                         current_version=current, today=today)
    if params.price_stale_after_days is not None:
        limit = params.price_stale_after_days
        flags += stale_offer_flags(stale_summary(known_offers(session, current), limit), limit)
    return flags
