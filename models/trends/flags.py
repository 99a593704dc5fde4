"""Every flag of a dataset version, in one call: density, interconnect, evidence, changes
since the previous version and the scenario results that moved."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

import pandas as pd

from models.resolve import CONFLICT_TOLERANCE
from models.trends.changes import observation_changes, result_changes
from models.trends.density import density_flags, density_trend
from models.trends.evidence import Readers, evidence_flags
from models.trends.interconnect import interconnect_trend
from models.trends.interconnect_flags import interconnect_flags
from models.trends.live import normalise
from models.trends.types import SEVERITIES, Flag, by_severity


@dataclass(frozen=True)
class TrendParams:
    """The knobs of the flags (the methodology section prints them).

    Attributes:
        stale_after_days: a moving figure (availability, lead time) whose newest observation
            is older than this is stale.
        price_stale_after_days: the same for a price or cost: the market's age limit (None:
            stale_after_days).
        tolerance: relative margin beyond which sources conflict or a resolved value moved.
        nics_per_gpu: scale-out NICs per GPU, for per-GPU scale-out bandwidth.
        result_tolerance: relative move of a break-even speed-up that is reported.
        evidence_metrics: restrict evidence flags to these metrics (None: every metric).
    """

    stale_after_days: int = 730
    price_stale_after_days: int | None = None
    tolerance: float = CONFLICT_TOLERANCE
    nics_per_gpu: float = 1.0
    result_tolerance: float = 0.05
    evidence_metrics: frozenset[str] | None = None


def all_flags(obs: pd.DataFrame, *, on: date, cutoff: datetime,
              previous_cutoff: datetime | None, params: TrendParams,
              previous_results: pd.DataFrame | None = None,
              current_results: pd.DataFrame | None = None,
              read_by: Readers | None = None) -> list[Flag]:
    """The flags of the dataset version cut off at `cutoff`, dated `on`, most severe first;
    one per (kind, subject), as the ledger stores them. `read_by`: the scenarios whose stored
    results read each (item, metric) (models.trends.evidence)."""
    obs = normalise(obs)
    trend = density_trend(obs, on=on, cutoff=cutoff)
    interconnect = interconnect_trend(obs, on=on, cutoff=cutoff, nics_per_gpu=params.nics_per_gpu)
    metrics = set(params.evidence_metrics) if params.evidence_metrics is not None else None
    flags = [
        *density_flags(trend, on=on),
        *interconnect_flags(interconnect),
        *evidence_flags(obs, on=on, cutoff=cutoff, stale_after_days=params.stale_after_days,
                        price_stale_after_days=params.price_stale_after_days,
                        tolerance=params.tolerance, metrics=metrics, read_by=read_by),
        *observation_changes(obs, previous_cutoff=previous_cutoff, cutoff=cutoff, on=on,
                             tolerance=params.tolerance).flags,
    ]
    if previous_results is not None and current_results is not None:
        flags += result_changes(previous_results, current_results,
                                tolerance=params.result_tolerance)
    return by_severity(deduplicate(flags))


def deduplicate(flags: list[Flag]) -> list[Flag]:
    """One flag per (kind, subject): the most severe, the first of equals."""
    kept: dict[tuple[str, str], Flag] = {}
    for flag in flags:
        key = (flag.kind, flag.subject)
        held = kept.get(key)
        if held is None or SEVERITIES.index(flag.severity) < SEVERITIES.index(held.severity):
            kept[key] = flag
    return list(kept.values())
