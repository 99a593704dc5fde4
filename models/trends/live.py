"""The view a dataset version sees of the observation history, resolved one value per
(item, metric) by the product's rule (models.resolve).

`obs` is the ledger's full history in the columns of db.queries.observations_frame. Dates may
arrive as datetime.date objects or Timestamps; `normalise` makes them Timestamps once so the
clock filters are vectorised comparisons.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from datetime import date, datetime
from typing import Any

import numpy as np
import pandas as pd

from models.frame_dates import day_stamps
from models.observations import UNDATED
from models.resolve import Candidate, resolve
from models.trends.types import TrendPoint

KEY = ["item", "metric"]
_DATES = ("as_of", "valid_to", "source_published_on")
_CLOCKS = ("recorded_at", "superseded_at")


def normalise(obs: pd.DataFrame) -> pd.DataFrame:
    """Dates as naive day Timestamps, clocks as UTC Timestamps (NaT for none); a frame that
    is already normalised is returned as is."""
    if all(pd.api.types.is_datetime64_any_dtype(obs[c]) for c in (*_DATES, *_CLOCKS)):
        return obs
    out = obs.copy()
    for column in _DATES:
        out[column] = day_stamps(out[column])
    for column in _CLOCKS:
        out[column] = pd.to_datetime(out[column], utc=True).astype("datetime64[ns, UTC]")
    return out


def utc(moment: datetime) -> pd.Timestamp:
    """A knowledge-time instant as a UTC Timestamp (a naive one is taken to be UTC)."""
    stamp = pd.Timestamp(moment)
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


def live(obs: pd.DataFrame, cutoff: datetime) -> pd.DataFrame:
    """Observations the ledger held at `cutoff`: recorded by then and not yet superseded."""
    obs, moment = normalise(obs), utc(cutoff)
    superseded = obs["superseded_at"]
    return obs[(obs["recorded_at"] <= moment) & (superseded.isna() | (superseded > moment))]


def valid(obs: pd.DataFrame, day: date) -> pd.DataFrame:
    """Observations that hold in the world on `day`: as_of by then, valid_to after it."""
    obs, stamp = normalise(obs), pd.Timestamp(day)
    valid_to = obs["valid_to"]
    return obs[(obs["as_of"] <= stamp) & (valid_to.isna() | (valid_to > stamp))]


def view(obs: pd.DataFrame, *, on: date, cutoff: datetime) -> pd.DataFrame:
    """Live at `cutoff` and valid on `on`: what one dataset version sees on its date."""
    return valid(live(obs, cutoff), on)


def columns(*series: pd.Series) -> Iterator[tuple[Any, ...]]:
    """Row tuples over the given columns (as Python lists: iterating pandas arrays element by
    element is many times slower)."""
    return zip(*(s.tolist() for s in series), strict=True)


def candidates(frame: pd.DataFrame) -> list[Candidate]:
    """The resolution rule's candidates, one per row, in row order."""
    published = [None if pd.isna(p) else p for p in frame["source_published_on"].dt.date.tolist()]
    publishers = ([None if pd.isna(p) or not str(p).strip() else str(p)
                   for p in frame["source_publisher"].tolist()]
                  if "source_publisher" in frame else [None] * len(frame))
    dated = ([p != UNDATED for p in frame["as_of_precision"].tolist()]
             if "as_of_precision" in frame else [True] * len(frame))
    return [Candidate(int(i), s, k, p, a, r, float(v), float(lo), float(hi), who, d)
            for (i, s, k, a, r, v, lo, hi), p, who, d in zip(columns(
                frame["observation_id"], frame["source"], frame["source_kind"],
                frame["as_of"].dt.date, frame["recorded_at"].dt.to_pydatetime(),
                frame["value"], frame["low"], frame["high"]), published, publishers, dated,
                strict=True)]


def resolved(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (item, metric): the winner's row plus `winner` (Candidate), `alternatives`
    (tuple of Candidate), `alternative_ids` and `reason`. `frame` is already a view."""
    ordered = normalise(frame).sort_values([*KEY, "observation_id"])
    if ordered.empty:
        return ordered.assign(winner=[], alternatives=[], alternative_ids=[], reason=[])
    codes = ordered.groupby(KEY, sort=True).ngroup().to_numpy()
    starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
    ends = np.r_[starts[1:], len(codes)]
    rows = candidates(ordered)
    picks, winners, alternatives, reasons = [], [], [], []
    for start, end in zip(starts, ends, strict=True):
        resolution = resolve(rows[start:end])
        assert resolution is not None  # every group has at least one row
        ids = [c.observation_id for c in rows[start:end]]
        picks.append(start + ids.index(resolution.winner.observation_id))
        winners.append(resolution.winner)
        alternatives.append(resolution.alternatives)
        reasons.append(resolution.reason)
    return ordered.iloc[picks].assign(
        winner=winners, alternatives=alternatives, reason=reasons,
        alternative_ids=[tuple(c.observation_id for c in alts) for alts in alternatives])


def resolved_frame(obs: pd.DataFrame, metric: str, *, on: date, cutoff: datetime,
                   kinds: Collection[str] | None = None) -> pd.DataFrame:
    """`resolved` for one metric, optionally only items of the given kinds."""
    subset = obs[obs["metric"] == metric]
    if kinds is not None:
        subset = subset[subset["item_kind"].isin(list(kinds))]
    return resolved(view(subset, on=on, cutoff=cutoff))


def to_points(frame: pd.DataFrame, group: str | Sequence[str] = "") -> list[TrendPoint]:
    """TrendPoints from `resolved` rows, in as_of then item order; `group` labels them (one
    label, or one per row in row order)."""
    groups = [group] * len(frame) if isinstance(group, str) else list(group)
    points = [
        TrendPoint(item=row.item, label=row.item_name, metric=row.metric, value=float(row.value),
                   low=float(row.low), high=float(row.high), unit=row.unit,
                   as_of=row.as_of.date(), source=row.source, status=row.status,
                   observation_ids=(int(row.observation_id), *row.alternative_ids),
                   group=label, as_of_precision=row.as_of_precision)
        for label, row in zip(groups, frame.itertuples(index=False), strict=True)]
    return sorted(points, key=lambda p: (p.as_of, p.item))


def dated(points: Sequence[TrendPoint]) -> list[TrendPoint]:
    """The points a trend over time can place: an undated figure has no date (its as_of is
    only where its valid time starts), so it is no point of a fit or a chart over time."""
    return [p for p in points if p.as_of_precision != UNDATED]


def resolved_points(obs: pd.DataFrame, metric: str, *, on: date, cutoff: datetime,
                    kinds: Collection[str] | None = None) -> list[TrendPoint]:
    """One TrendPoint per item: the resolved value of `metric` valid on `on` as known at
    `cutoff`; its observation_ids are the winner's then the alternatives'."""
    return to_points(resolved_frame(obs, metric, on=on, cutoff=cutoff, kinds=kinds))
