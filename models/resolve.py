"""Resolve conflicting live values for one (item, metric) by a documented rule.

First, each series speaks once: a source's figure with the newest as_of (valid on the date
asked) replaces its own earlier figures for the same (item, metric) — an electricity price
for 2025 follows the same series' 2024 price, it does not contradict it — and so do one
publisher's successive publications (CBRE's colocation report of H2-2023, H2-2024 and 2025:
the newest stands, the others are its history, not a disagreement). Then, across series:
the better source kind (SOURCE_KIND_RANK), then the newest as_of, then the newest
publication date of the source, then the latest recorded observation. A figure its source
gives no date for (`as_of: undated`) is older than every dated one on recency: its stored
as_of is only where its valid time starts, never a date it can win on. Other series' values
are kept as alternatives; nothing is discarded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

# Lower is better. A standard or a vendor's own datasheet is the primary record of a spec;
# a measurement outranks press and secondary reporting but not the spec itself (it measures
# achieved, not rated, performance and is usually filed under its own metric).
SOURCE_KIND_RANK: dict[str, int] = {
    "standard_body": 1,
    "vendor_datasheet": 2,
    "measurement": 3,
    "dataset": 4,
    "vendor_press": 5,
    "analyst": 6,
    "secondary_press": 7,
    # One person's own notes page or blog: nobody but its author stands behind the figure.
    "personal_notes": 8,
    "derived": 9,
}


@dataclass(frozen=True)
class Candidate:
    observation_id: int
    source_key: str
    source_kind: str
    source_published_on: date | None
    as_of: date
    recorded_at: datetime
    value: float
    low: float
    high: float
    source_publisher: str | None = None  # who published it: one publisher's sources are a series
    # False when the source gives no date: as_of is then only where its valid time starts
    # (models.observations.UNDATED), and the figure is older than any dated one on recency.
    dated: bool = True

    @property
    def recency(self) -> date:
        """The date recency compares: the as_of, or the earliest date for an undated figure."""
        return self.as_of if self.dated else date.min

    @property
    def series(self) -> str:
        """Figures of one series follow each other: a publisher's, else a source's own."""
        return self.source_publisher or f"source:{self.source_key}"


@dataclass(frozen=True)
class Resolution:
    winner: Candidate
    alternatives: tuple[Candidate, ...]
    reason: str


def _sort_key(candidate: Candidate) -> tuple[int, int, int, float, int]:
    published = candidate.source_published_on or date.min
    return (SOURCE_KIND_RANK.get(candidate.source_kind, 99), -candidate.recency.toordinal(),
            -published.toordinal(), -candidate.recorded_at.timestamp(), -candidate.observation_id)


def latest_per_source(candidates: Sequence[Candidate]) -> list[Candidate]:
    """Each series' newest figure (by as_of, then publication, then recording): a source's
    or a publisher's earlier figures are its history."""
    latest: dict[str, Candidate] = {}
    for candidate in candidates:
        current = latest.get(candidate.series)
        if current is None or _recency(candidate) > _recency(current):
            latest[candidate.series] = candidate
    return list(latest.values())


def _recency(candidate: Candidate) -> tuple[date, date, datetime, int]:
    return (candidate.recency, candidate.source_published_on or date.min, candidate.recorded_at,
            candidate.observation_id)


def resolve(candidates: Sequence[Candidate]) -> Resolution | None:
    """Pick the winner among live candidates and say which step of the rule decided."""
    if not candidates:
        return None
    ranked = sorted(latest_per_source(candidates), key=_sort_key)
    winner, rest = ranked[0], tuple(ranked[1:])
    return Resolution(winner, rest, _reason(winner, rest))


# Two figures "disagree" when their ranges, each widened by this relative margin, do not
# overlap: 1 % absorbs rounding (989.4 vs 989.5 TFLOP/s, 80 GB vs 81559 MiB = 85.5 GB does
# not) without hiding a real difference. `specledger review --tolerance` overrides it.
CONFLICT_TOLERANCE = 0.01


def disagree(a: Candidate, b: Candidate, tolerance: float = CONFLICT_TOLERANCE) -> bool:
    """Whether two figures differ by more than `tolerance` (relative), ranges overlapping."""
    return (a.high * (1 + tolerance) < b.low * (1 - tolerance)
            or b.high * (1 + tolerance) < a.low * (1 - tolerance))


def _dated(candidate: Candidate) -> str:
    return candidate.as_of.isoformat() if candidate.dated else "undated"


def _reason(winner: Candidate, rest: tuple[Candidate, ...]) -> str:
    if not rest:
        return f"only live value (source {winner.source_key})"
    runner_up = rest[0]
    steps = _sort_key(winner), _sort_key(runner_up)
    same = all((c.low, c.high) == (winner.low, winner.high) for c in rest)
    agree = "" if same else "; values differ"
    if steps[0][0] != steps[1][0]:
        why = f"source kind {winner.source_kind} outranks {runner_up.source_kind}"
    elif steps[0][1] != steps[1][1]:
        why = (f"same source kind; newest as_of ({_dated(winner)} over {_dated(runner_up)}, "
               "an undated figure older than any dated one)" if not runner_up.dated else
               f"same source kind; newest as_of ({winner.as_of} over {runner_up.as_of})")
    elif steps[0][2] != steps[1][2]:
        why = (f"same kind and as_of; newest publication ({winner.source_published_on} "
               f"over {runner_up.source_published_on})")
    else:
        why = "same kind, as_of and publication; latest recorded"
    return f"{why}; {len(rest)} alternative(s) kept{agree}"
