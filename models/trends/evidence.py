"""How well each resolved value is supported: one source, only unconfirmed sources, stale,
sources in conflict, vendor bandwidth claims with nothing measured beside them; and whether
every density or performance figure the briefing prints carries a date."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date, datetime, timedelta
from typing import NamedTuple

import pandas as pd

from models.resolve import CONFLICT_TOLERANCE, Candidate, disagree
from models.trends import text
from models.trends.live import KEY, columns, normalise, resolved, view
from models.trends.types import Flag

CLAIM_METRICS = ("scaleup_bw_per_gpu_bidir", "port_rate")
# Only a figure the market moves can go stale: a price or cost, an availability, a lead time.
# A datasheet constant (an A100's HBM capacity) is as true in ten years as on its first day.
MOVING_WORDS = ("price", "cost", "availability", "lead_time")
MEASURED_METRICS = ("busbw_measured", "nic_busbw_measured")
VENDOR_KIND_PREFIX = "vendor_"


class Seen(NamedTuple):
    """One live observation of a pair, as a flag message cites it."""

    observation_id: int
    source: str
    source_kind: str
    status: str
    low: float
    high: float
    unit: str
    as_of: date
    precision: str

    def cited(self) -> str:
        return (f"{text.quantity(self.low, self.high, self.unit)} from {self.source} "
                f"({text.day(self.as_of, self.precision)})")


def evidence_flags(obs: pd.DataFrame, *, on: date, cutoff: datetime,
                   stale_after_days: int = 730, tolerance: float = CONFLICT_TOLERANCE,
                   metrics: set[str] | None = None) -> list[Flag]:
    """Evidence flags over every (item, metric) live at `cutoff` and valid on `on`
    (only `metrics`, when given)."""
    seen = view(normalise(obs), on=on, cutoff=cutoff)
    measured = set(seen.loc[seen["metric"].isin(MEASURED_METRICS), "item"])
    if metrics is not None:
        seen = seen[seen["metric"].isin(list(metrics))]
    ordered = seen.sort_values([*KEY, "observation_id"])
    records = _records(ordered)
    stale_before = on - timedelta(days=stale_after_days)
    flags: list[Flag] = []
    # resolved() sorts the same way, so its rows and the group bounds line up one to one.
    for winner, (start, end) in zip(_winners(resolved(ordered)), _bounds(ordered),
                                    strict=True):
        rows = records[start:end]
        flags += _pair_flags(winner, rows, stale_before, on, tolerance)
        if winner.metric in CLAIM_METRICS and winner.item not in measured:
            flags += _claim(winner, rows)
    return flags


class Winner(NamedTuple):
    """The resolved value of a pair, with the resolution behind it."""

    item: str
    metric: str
    low: float
    high: float
    unit: str
    source: str
    source_kind: str
    as_of: date
    as_of_precision: str
    winner: Candidate
    alternatives: tuple[Candidate, ...]
    reason: str


def _winners(frame: pd.DataFrame) -> list[Winner]:
    return [Winner(*row) for row in columns(
        frame["item"], frame["metric"], frame["low"], frame["high"], frame["unit"],
        frame["source"], frame["source_kind"], frame["as_of"].dt.date,
        frame["as_of_precision"], frame["winner"], frame["alternatives"], frame["reason"])]


def _records(ordered: pd.DataFrame) -> list[Seen]:
    return [Seen(*row) for row in columns(
        ordered["observation_id"], ordered["source"], ordered["source_kind"], ordered["status"],
        ordered["low"].astype(float), ordered["high"].astype(float), ordered["unit"],
        ordered["as_of"].dt.date, ordered["as_of_precision"])]


def _bounds(ordered: pd.DataFrame) -> list[tuple[int, int]]:
    """(start, end) row positions of each (item, metric) in a frame sorted by it."""
    sizes = ordered.groupby(KEY, sort=True).size().to_numpy()
    ends = sizes.cumsum()
    return [(int(e - s), int(e)) for s, e in zip(sizes, ends, strict=True)]


def _pair_flags(winner: Winner, rows: Sequence[Seen], stale_before: date, on: date,
                tolerance: float) -> list[Flag]:
    ids = [r.observation_id for r in rows]
    value = text.quantity(winner.low, winner.high, winner.unit)
    flags = []
    if len({r.source for r in rows}) == 1:
        flags.append(_flag("single_source", "info", winner, ids,
                           f"{value} rests on one source, {winner.source} "
                           f"({winner.source_kind}, "
                           f"{text.day(winner.as_of, winner.as_of_precision)})."))
    if all(r.status == "U" for r in rows):
        flags.append(_flag("unconfirmed", "warning", winner, ids,
                           f"{value} has only unconfirmed (U) sources: "
                           f"{'; '.join(r.cited() for r in rows)}."))
    newest = max(r.as_of for r in rows)
    if newest < stale_before and expected_to_move(winner.metric):
        latest = "; ".join(r.cited() for r in rows if r.as_of == newest)
        flags.append(_flag("stale", "info", winner, ids,
                           f"no observation newer than {stale_before.isoformat()} "
                           f"({(on - stale_before).days} days before {on.isoformat()}); "
                           f"newest: {latest}."))
    conflict = _conflict(winner, {r.observation_id: r for r in rows}, tolerance)
    return [*flags, *([conflict] if conflict else [])]


def expected_to_move(metric: str) -> bool:
    """Whether a metric's value is expected to change over time (MOVING_WORDS)."""
    return any(word in metric for word in MOVING_WORDS)


def _when(row: Seen) -> str:
    return text.day(row.as_of, row.precision)


def _flag(kind: str, severity: str, winner: Winner, ids: Iterable[int], message: str) -> Flag:
    subject = f"{winner.item} / {winner.metric}"
    return Flag(kind, severity, subject, f"{subject}: {message}", tuple(sorted(ids)),
                item=winner.item, metric=winner.metric)


def _conflict(winner: Winner, rows: dict[int, Seen], tolerance: float) -> Flag | None:
    """A conflicting flag when an alternative disagrees with the winner beyond tolerance."""
    chosen: Candidate = winner.winner
    against = [a for a in winner.alternatives if disagree(a, chosen, tolerance)]
    if not against:
        return None
    others = "; ".join(rows[a.observation_id].cited() for a in against)
    message = (f"sources disagree by more than {tolerance:.0%}: "
               f"{rows[chosen.observation_id].cited()} is used ({winner.reason}); "
               f"against {others}.")
    return _flag("conflicting", "warning", winner,
                 [chosen.observation_id, *(a.observation_id for a in against)], message)


def _claim(winner: Winner, rows: Sequence[Seen]) -> list[Flag]:
    """claim_without_measurement: a vendor's bandwidth claim on an item nothing measured."""
    vendor = [r for r in rows if r.source_kind.startswith(VENDOR_KIND_PREFIX)]
    if not vendor:
        return []
    said = "; ".join(f"{r.source} ({r.source_kind}, {_when(r)}) claims "
                     f"{text.quantity(r.low, r.high, r.unit)}" for r in vendor)
    return [_flag("claim_without_measurement", "info", winner,
                  [r.observation_id for r in vendor],
                  f"{said}; the ledger has no measured bus bandwidth "
                  f"({' or '.join(MEASURED_METRICS)}) for {winner.item}.")]


def undated_claims(claims: Iterable[tuple[str, date | None, str]]) -> list[Flag]:
    """An `undated` flag (critical) for each printed density or performance figure whose
    date is missing; `claims` are (subject, as_of, as_of_precision)."""
    flags: dict[str, Flag] = {}
    for subject, as_of, _precision in claims:
        if as_of is None and subject not in flags:
            flags[subject] = Flag("undated", "critical", subject,
                                  f"{subject} is printed without a date; every density or "
                                  "performance figure must carry the date of its source.")
    return list(flags.values())
