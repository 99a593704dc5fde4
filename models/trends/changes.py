"""What changed between two dataset versions: observations added, changed or superseded in
the knowledge-time window (previous cut-off, cut-off], and the scenario results that moved."""

from __future__ import annotations

import math
from datetime import date, datetime

import pandas as pd

from models.resolve import CONFLICT_TOLERANCE, disagree
from models.trends import text
from models.trends.live import KEY, columns, live, normalise, resolved, utc, valid
from models.trends.types import Changes, Flag, ObservationChange

SOURCE_KEY = [*KEY, "source"]
KINDS = ("added", "changed", "superseded")
_TABLE = ["kind", "item", "metric", "source", "unit", "before_value", "before_low",
          "before_high", "value", "low", "high", "as_of", "as_of_precision", "ids"]


def observation_changes(obs: pd.DataFrame, *, previous_cutoff: datetime | None,
                        cutoff: datetime, on: date | None = None,
                        tolerance: float = CONFLICT_TOLERANCE) -> Changes:
    """Observations recorded in the window are `added` (the source had no earlier figure for
    the item and metric) or `changed` (its figure moved); a restatement of the same figure
    is neither. Observations superseded in the window without such a successor are
    `superseded`. Without a previous version everything live is added, under one flag.

    Args:
        on: the valid-time date for "did the resolved value move" (default: the cut-off's).
        tolerance: relative margin beyond which a resolved value moved (a warning).
    """
    obs = normalise(obs)
    now = live(obs, cutoff)
    if previous_cutoff is None:
        table = _table(now.assign(kind="added", before_value=math.nan, before_low=math.nan,
                                  before_high=math.nan))
        return Changes(_observation_changes(table), (_first_version_flag(now, cutoff),))
    before = live(obs, previous_cutoff)
    table = _window_table(now, before, utc(previous_cutoff), utc(cutoff))
    moved = _moved(table, before, now, on or utc(cutoff).date(), tolerance)
    return Changes(_observation_changes(table), tuple(_change_flags(table, moved, tolerance)))


def _window_table(now: pd.DataFrame, before: pd.DataFrame, start: pd.Timestamp,
                  end: pd.Timestamp) -> pd.DataFrame:
    new = now[now["recorded_at"] > start]
    matched = _previous_figure(new, before)
    has_previous = matched["before_id"].notna()
    differs = ((matched["low"] != matched["before_low"])
               | (matched["high"] != matched["before_high"]))
    added = matched[~has_previous].assign(kind="added")
    changed = matched[has_previous & differs].assign(kind="changed")
    followed = set(matched.loc[has_previous, "before_id"].astype(int))
    gone = before[before["superseded_at"].notna() & (before["superseded_at"] <= end)
                  & ~before["observation_id"].isin(followed)]
    superseded = gone.assign(kind="superseded", before_value=gone["value"],
                             before_low=gone["low"], before_high=gone["high"], value=math.nan,
                             low=math.nan, high=math.nan)
    return _table(pd.concat([added, changed, superseded], ignore_index=True))


def _previous_figure(new: pd.DataFrame, before: pd.DataFrame) -> pd.DataFrame:
    """Each new row with the same source's latest earlier-dated live figure for its item and
    metric at the previous cut-off (before_id NaN when there is none)."""
    previous = before.sort_values(["as_of", "recorded_at", "observation_id"]).rename(
        columns={"observation_id": "before_id", "value": "before_value", "low": "before_low",
                 "high": "before_high"})
    previous = previous[[*SOURCE_KEY, "as_of", "before_id", "before_value", "before_low",
                         "before_high"]]
    return pd.merge_asof(new.sort_values("as_of"), previous, on="as_of", by=SOURCE_KEY,
                         direction="backward")


def _table(frame: pd.DataFrame) -> pd.DataFrame:
    """The changes in one shape, ordered by kind, item, metric, source and date."""
    before = frame.get("before_id", pd.Series(math.nan, index=frame.index, dtype=float))
    ids = [(int(o),) if math.isnan(b) else (int(b), int(o))
           for b, o in columns(before.astype(float), frame["observation_id"])]
    table = frame.assign(ids=ids, kind_order=frame["kind"].map(KINDS.index))
    return table.sort_values(["kind_order", *SOURCE_KEY, "as_of"])[_TABLE].reset_index(drop=True)


def _observation_changes(table: pd.DataFrame) -> tuple[ObservationChange, ...]:
    def number(value: float) -> float | None:
        return None if math.isnan(value) else value

    return tuple(
        ObservationChange(kind=kind, item=item, metric=metric, source=source, unit=unit,
                          before=number(before), after=number(after), as_of=as_of,
                          observation_ids=ids)
        for kind, item, metric, source, unit, before, after, as_of, ids in columns(
            table["kind"], table["item"], table["metric"], table["source"], table["unit"],
            table["before_value"].astype(float), table["value"].astype(float),
            table["as_of"].dt.date, table["ids"]))


def _moved(table: pd.DataFrame, before: pd.DataFrame, now: pd.DataFrame, on: date,
           tolerance: float) -> dict[tuple[str, str], str]:
    """The touched pairs whose resolved value moved beyond tolerance: pair -> `from a to b`."""
    touched = pd.MultiIndex.from_frame(table[KEY].drop_duplicates())

    def winners(frame: pd.DataFrame) -> pd.DataFrame:
        seen = valid(frame[pd.MultiIndex.from_frame(frame[KEY]).isin(touched)], on)
        return resolved(seen).assign(cited=lambda f: _cited(f))[[*KEY, "winner", "cited"]]

    both = winners(before).merge(winners(now), on=KEY, suffixes=("_old", "_new"))
    return {(item, metric): f"from {old} to {new}"
            for item, metric, a, b, old, new in columns(
                both["item"], both["metric"], both["winner_old"], both["winner_new"],
                both["cited_old"], both["cited_new"])
            if disagree(a, b, tolerance)}


def _cited(frame: pd.DataFrame) -> list[str]:
    return [f"{text.quantity(low, high, unit)} ({source}, {text.day(as_of, precision)})"
            for low, high, unit, source, as_of, precision in columns(
                frame["low"], frame["high"], frame["unit"], frame["source"],
                frame["as_of"].dt.date, frame["as_of_precision"])]


def _change_flags(table: pd.DataFrame, moved: dict[tuple[str, str], str],
                  tolerance: float) -> list[Flag]:
    """A warning per (kind, pair) whose resolved value moved; the rest one info per
    (kind, source), so a new snapshot of a dataset is one line, not hundreds."""
    groups: dict[tuple[str, ...], list[int]] = {}
    for n, (kind, item, metric, source) in enumerate(columns(
            table["kind"], table["item"], table["metric"], table["source"])):
        key = ("pair", kind, item, metric) if (item, metric) in moved else ("source", kind, source)
        groups.setdefault(key, []).append(n)
    lines, ids = _lines(table), list(table["ids"])
    flags = []
    for key in sorted(groups):
        rows = groups[key]
        cited = tuple(sorted({i for n in rows for i in ids[n]}))
        if key[0] == "pair":
            _, kind, item, metric = key
            subject = f"{item} / {metric}"
            said = text.listing([f"{lines[n][1]} {lines[n][2]}" for n in rows])
            message = (f"{subject}: {kind}: {said}; the resolved value moved "
                       f"{moved[(item, metric)]}, beyond {tolerance:.0%}.")
            flags.append(Flag(kind, "warning", subject, message, cited, item=item,
                              metric=metric))
        else:
            _, kind, source = key
            said = text.listing([f"{lines[n][0]} {lines[n][2]}" for n in rows])
            flags.append(Flag(kind, "info", f"source {source}",
                              f"source {source}: {len(rows)} value(s) {kind}: {said}.", cited))
    return flags


def _lines(table: pd.DataFrame) -> list[tuple[str, str, str]]:
    """Per change: (`item / metric`, `source`, `120 kW → 132 kW (2025)`)."""
    lines = []
    for row in columns(table["item"], table["metric"], table["source"], table["unit"],
                       table["before_low"], table["before_high"], table["low"], table["high"],
                       table["as_of"].dt.date, table["as_of_precision"]):
        item, metric, source, unit, was_low, was_high, low, high, as_of, precision = row
        was = None if math.isnan(was_low) else text.quantity(was_low, was_high, unit)
        now = None if math.isnan(low) else text.quantity(low, high, unit)
        change = f"{was} → {now}" if was and now else now or f"{was} withdrawn"
        lines.append((f"{item} / {metric}", source,
                      f"{change} ({text.day(as_of, precision)})"))
    return lines


def _first_version_flag(now: pd.DataFrame, cutoff: datetime) -> Flag:
    message = (f"First dataset version: {len(now):,} observations of "
               f"{now['item'].nunique():,} items and {now['metric'].nunique():,} metrics from "
               f"{now['source'].nunique():,} sources, as known at "
               f"{utc(cutoff).isoformat()}; there is no previous version to compare with.")
    return Flag("added", "info", "first dataset version", message)


# The scenario results whose movement is reported, in the order they are listed.
RESULT_FIELDS = ("c2c_class", "recommended_fabric", "break_even_speedup")
_RESULT_NAMES = {"c2c_class": "C2C class", "recommended_fabric": "recommended fabric",
                 "break_even_speedup": "break-even speed-up"}


def result_moves(previous: pd.DataFrame, current: pd.DataFrame, *,
                 tolerance: float = 0.05) -> pd.DataFrame:
    """Scenarios in both versions whose class or fabric changed, or whose break-even
    speed-up moved by more than `tolerance` (relative): scenario, field, before, after.
    A field missing on either side (NaN, None) is not a move."""
    both = previous.merge(current, on="scenario", suffixes=("_before", "_after"))
    rows = []
    for row in both.sort_values("scenario").to_dict("records"):
        for field in RESULT_FIELDS:
            before, after = row[f"{field}_before"], row[f"{field}_after"]
            if _moved_value(before, after, tolerance if field == "break_even_speedup" else 0):
                rows.append({"scenario": row["scenario"], "field": field, "before": before,
                             "after": after})
    return pd.DataFrame(rows, columns=["scenario", "field", "before", "after"])


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _moved_value(before: object, after: object, tolerance: float) -> bool:
    # A result that exists on one side only (a new scenario or a new TCO mode) did not move.
    if _missing(before) or _missing(after):
        return False
    if isinstance(before, int | float) and isinstance(after, int | float):
        return abs(after - before) > tolerance * abs(before)
    return before != after


def result_changes(previous: pd.DataFrame, current: pd.DataFrame, *,
                   tolerance: float = 0.05) -> list[Flag]:
    """A result_moved flag (warning) per scenario whose class, fabric or break-even
    speed-up moved (see result_moves)."""
    moves = result_moves(previous, current, tolerance=tolerance)
    flags = []
    for scenario, rows in moves.groupby("scenario", sort=True):
        parts = [_describe_move(r.field, r.before, r.after) for r in rows.itertuples()]
        flags.append(Flag("result_moved", "warning", scenario,
                          f"{scenario}: {'; '.join(parts)}.", scenario=scenario))
    return flags


def _describe_move(field: str, before: object, after: object) -> str:
    name = _RESULT_NAMES[field]
    if isinstance(before, float) and isinstance(after, float):
        change = f" ({text.percent(after / before - 1)})" if before else ""
        return f"{name} {text.number(round(before, 2))} → {text.number(round(after, 2))}{change}"
    return f"{name} {before} → {after}"
