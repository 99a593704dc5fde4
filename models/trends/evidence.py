"""How well each resolved value is supported: one source, only unconfirmed sources, stale,
sources in conflict, vendor bandwidth claims with nothing measured beside them; and whether
every density or performance figure the briefing prints carries a date."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import date, datetime, timedelta
from typing import NamedTuple

import pandas as pd

from models.observations import UNDATED
from models.resolve import CONFLICT_TOLERANCE, Candidate, disagree
from models.trends import text
from models.trends.live import KEY, columns, normalise, resolved, view
from models.trends.types import Flag

CLAIM_METRICS = ("scaleup_bw_per_gpu_bidir", "port_rate")
# Only a figure the market moves can go stale: a price or cost, an availability, a lead time.
# A datasheet constant (an A100's HBM capacity) is as true in ten years as on its first day.
MOVING_WORDS = ("price", "cost", "availability", "lead_time")
# A price or cost ages as the market does: stale past the market's age limit.
PRICE_WORDS = ("price", "cost")
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


Readers = Mapping[tuple[str, str], tuple[str, ...]]   # (item, metric) -> scenarios reading it


def evidence_flags(obs: pd.DataFrame, *, on: date, cutoff: datetime,
                   stale_after_days: int = 730, price_stale_after_days: int | None = None,
                   tolerance: float = CONFLICT_TOLERANCE, metrics: set[str] | None = None,
                   read_by: Readers | None = None) -> list[Flag]:
    """Evidence flags over every (item, metric) live at `cutoff` and valid on `on`
    (only `metrics`, when given). A price or cost goes stale after `price_stale_after_days`
    (the market's age limit; `stale_after_days` when not given), another moving figure
    (availability, lead time) after `stale_after_days`, a datasheet constant never.

    Market offers (rows with offer terms) are not flagged here: each is one provider's price
    on one date, so one source and a series moving over time are what an offer is; the
    market's own flags summarise them per offer group (models.market). With `read_by` (the
    scenarios whose stored results read each pair), single_source, stale and
    claim_without_measurement are raised only on pairs some scenario reads, and every flag
    on such a pair names its scenarios."""
    seen = view(normalise(obs), on=on, cutoff=cutoff)
    if "offer_provider" in seen:
        seen = seen[seen["offer_provider"].isna()]
    measured = set(seen.loc[seen["metric"].isin(MEASURED_METRICS), "item"])
    if metrics is not None:
        seen = seen[seen["metric"].isin(list(metrics))]
    ordered = seen.sort_values([*KEY, "observation_id"])
    records = _records(ordered)
    horizons = Horizons(on - timedelta(days=stale_after_days),
                        on - timedelta(days=price_stale_after_days or stale_after_days))
    flags: list[Flag] = []
    # resolved() sorts the same way, so its rows and the group bounds line up one to one.
    for winner, (start, end) in zip(_winners(resolved(ordered)), _bounds(ordered),
                                    strict=True):
        rows = records[start:end]
        readers = None if read_by is None else read_by.get((winner.item, winner.metric), ())
        found = _pair_flags(winner, rows, horizons, on, tolerance, readers)
        if winner.metric in CLAIM_METRICS and winner.item not in measured and readers != ():
            found += _claim(winner, rows)
        flags += [_read_by(f, readers) for f in found]
    return flags


class Horizons(NamedTuple):
    """The dates before which a moving figure (`moving`) and a price or cost (`prices`)
    are stale."""

    moving: date
    prices: date

    def of(self, metric: str) -> date:
        return self.prices if any(w in metric for w in PRICE_WORDS) else self.moving


def _read_by(flag: Flag, readers: tuple[str, ...] | None) -> Flag:
    """The flag naming the scenarios whose results read its pair (at most three, then how
    many more), so a reader knows which verdicts it threatens."""
    if not readers:
        return flag
    named = ", ".join(readers[:3]) + (f" and {len(readers) - 3} more" if len(readers) > 3
                                      else "")
    return replace(flag, message=f"{flag.message} Read by {named}.")


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


def _pair_flags(winner: Winner, rows: Sequence[Seen], horizons: Horizons, on: date,
                tolerance: float, readers: tuple[str, ...] | None) -> list[Flag]:
    """The pair's evidence flags; single_source and stale only on a pair some scenario reads
    (`readers` non-empty) when readers are known (not None)."""
    ids = [r.observation_id for r in rows]
    value = text.quantity(winner.low, winner.high, winner.unit)
    read = readers is None or bool(readers)
    flags = []
    if read and len({r.source for r in rows}) == 1:
        flags.append(_flag("single_source", "info", winner, ids,
                           f"{value} rests on one source, {winner.source} "
                           f"({winner.source_kind}, "
                           f"{text.day(winner.as_of, winner.as_of_precision)})."))
    if all(r.status == "U" for r in rows):
        flags.append(_flag("unconfirmed", "warning", winner, ids,
                           f"{value} has only unconfirmed (U) sources: "
                           f"{'; '.join(r.cited() for r in rows)}."))
    if read and expected_to_move(winner.metric):
        flags += _stale(winner, rows, ids, horizons.of(winner.metric), on)
    conflict = _conflict(winner, {r.observation_id: r for r in rows}, tolerance)
    return [*flags, *([conflict] if conflict else [])]


def _stale(winner: Winner, rows: Sequence[Seen], ids: list[int], before: date,
           on: date) -> list[Flag]:
    """A stale flag when no dated observation is newer than `before` (an undated figure's
    age is unknown: it never makes a pair current)."""
    dated = [r.as_of for r in rows if r.precision != UNDATED]
    newest = max(dated, default=None)
    if newest is None:
        return [_flag("stale", "info", winner, ids,
                      "no dated observation: every source gives no date, so its age is "
                      f"unknown; {'; '.join(r.cited() for r in rows)}.")]
    if newest >= before:
        return []
    latest = "; ".join(r.cited() for r in rows if r.as_of == newest and r.precision != UNDATED)
    return [_flag("stale", "info", winner, ids,
                  f"no observation newer than {before.isoformat()} "
                  f"({(on - before).days} days before {on.isoformat()}); newest: {latest}.")]


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
    date is missing; `claims` are (subject, as_of, as_of_precision). A figure whose source
    gives no date (precision UNDATED) raises none: it prints as "undated" beside its source,
    which says what a flag would."""
    flags: dict[str, Flag] = {}
    for subject, as_of, _precision in claims:
        if as_of is None and subject not in flags:
            flags[subject] = Flag("undated", "critical", subject,
                                  f"{subject} is printed without a date; every density or "
                                  "performance figure must carry the date of its source.")
    return list(flags.values())
