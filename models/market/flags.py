"""Market flags: the index median moved, another provider became the cheapest, a vendor quote
is about to expire (or has), a vendor's lead time grew.

Price flags compare two dataset versions of the price index (the previous briefing's and the
current one, both passed in); quote flags read the quotes as known at one version and a
`today` passed in (models/ reads no clock).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date

import pandas as pd

from models.market.frames import (
    ITEM,
    LEAD_TIME,
    OBSERVATION_ID,
    QUOTED_ON,
    SOURCE,
    UNIT_PRICE,
    VALID_UNTIL,
    VENDOR,
    VERSION,
    VERSION_DATE,
    checked_quotes,
    gpu_label,
    term_label,
)
from models.market.index import (
    CHEAPEST_AS_OF,
    CHEAPEST_ID,
    CHEAPEST_PRICE,
    CHEAPEST_PROVIDER,
    CHEAPEST_REGION,
    CHEAPEST_SOURCE,
    MEDIAN,
    N_OFFERS,
    N_PROVIDERS,
    index_rows,
)
from models.trends.types import Flag, by_severity

PRICE_METRIC = "gpu_hour_price"    # the catalogue's metric of a GPU-hour price
UNIT = "USD/GPU-hour"
WOW_CHANGE = "wow_change"  # the stored index's week-over-week change over matched offers
MOVE_THRESHOLD = 0.10
EXPIRING_WITHIN_DAYS = 14
# Slack on "beyond the threshold", relative to the price: 2.00 -> 2.10 USD is 5 % exactly,
# although 2.1 - 2.0 is 0.10000000000000009 in floating point.
_SLACK = 1e-9


@dataclass(frozen=True)
class MarketParams:
    """The knobs of the market flags (the methodology section prints them).

    Attributes:
        move_threshold: a median that moved by more than this fraction is flagged (info;
            a warning beyond twice it).
        expiring_within_days: a quote valid until at most this many days after `today` is
            flagged (info; a warning once expired).
    """

    move_threshold: float = MOVE_THRESHOLD
    expiring_within_days: int = EXPIRING_WITHIN_DAYS


def price_move_flags(index: pd.DataFrame, *, previous_version: int, current_version: int,
                     threshold: float = MOVE_THRESHOLD,
                     labels: Mapping[str, str] | None = None) -> list[Flag]:
    """A `price_move` flag per (GPU, term) priced at both versions whose price moved by more
    than `threshold` (exactly the threshold is not a move): info, or a warning beyond twice
    the threshold. It cites the cheapest offer of each version. `labels` maps GPU keys to
    printed names (default: the key in capitals).

    The move is the current version's week-over-week change (`wow_change`, the stored
    index's: over the offers priced on both dates, models.market.valid_time), so offers
    added or dropped never make one; an index without that column (a frame straight from
    price_index) is compared median to median."""
    before, now = index_rows(index, previous_version), index_rows(index, current_version)
    both = _pair(now, before)
    matched = WOW_CHANGE in index.columns
    flags = []
    for (gpu, term), row in both.sort_index().iterrows():
        old, new = row[f"{MEDIAN}_before"], row[MEDIAN]
        if matched:  # the change over the offers priced a week apart, composition aside
            change = row[WOW_CHANGE]
            if change != change or not _beyond(1.0, 1.0 + change, threshold):
                continue
            severity = "warning" if _beyond(1.0, 1.0 + change, 2 * threshold) else "info"
            moved = (f"median {'rose' if change > 0 else 'fell'} {abs(change) * 100:.1f} % "
                     f"(beyond {threshold * 100:.0f} %) over the offers priced a week apart "
                     "(same provider, region, instance and term); the index median went "
                     f"from {old:.2f} to {new:.2f} {UNIT} between")
        else:
            if not _beyond(old, new, threshold):
                continue
            change = new / old - 1
            severity = "warning" if _beyond(old, new, 2 * threshold) else "info"
            moved = (f"median {'rose' if change > 0 else 'fell'} {abs(change) * 100:.1f} % "
                     f"(beyond {threshold * 100:.0f} %) from {old:.2f} to {new:.2f} {UNIT} "
                     "between")
        message = (
            f"{gpu_label(gpu, labels)} {term_label(term)} {moved} "
            f"{_day(row[f'{VERSION_DATE}_before'])} (version {previous_version}, "
            f"{_count(row[f'{N_OFFERS}_before'], row[f'{N_PROVIDERS}_before'])}) and "
            f"{_day(row[VERSION_DATE])} (version {current_version}, "
            f"{_count(row[N_OFFERS], row[N_PROVIDERS])}); cheapest now "
            f"{_cheapest(row)}, was {_cheapest(row, '_before')}.")
        flags.append(Flag("price_move", severity, f"{gpu} / {term}", message,
                          _ids(row[CHEAPEST_ID], row[f"{CHEAPEST_ID}_before"]), item=gpu,
                          metric=PRICE_METRIC))
    return flags


def new_cheapest_flags(index: pd.DataFrame, *, previous_version: int, current_version: int,
                       labels: Mapping[str, str] | None = None) -> list[Flag]:
    """A `new_cheapest` flag (info) per (GPU, term) priced at both versions whose cheapest
    offer is from another provider than at the previous version (a cheaper region of the
    same provider is not a new cheapest provider)."""
    before, now = index_rows(index, previous_version), index_rows(index, current_version)
    both = _pair(now, before)
    changed = both[both[CHEAPEST_PROVIDER] != both[f"{CHEAPEST_PROVIDER}_before"]]
    flags = []
    for (gpu, term), row in changed.sort_index().iterrows():
        message = (
            f"{gpu_label(gpu, labels)} {term_label(term)}: the cheapest offer at "
            f"{_day(row[VERSION_DATE])} (version {current_version}) is {_cheapest(row)}, "
            f"where at {_day(row[f'{VERSION_DATE}_before'])} (version {previous_version}) "
            f"it was {_cheapest(row, '_before')}.")
        flags.append(Flag("new_cheapest", "info", f"{gpu} / {term}", message,
                          _ids(row[CHEAPEST_ID], row[f"{CHEAPEST_ID}_before"]), item=gpu,
                          metric=PRICE_METRIC))
    return flags


def quote_expiry_flags(quotes: pd.DataFrame, *, version: int, today: date,
                       within_days: int = EXPIRING_WITHIN_DAYS) -> list[Flag]:
    """A `quote_expiring` flag per (item, vendor) whose latest quote known at `version`
    (latest quoted_on, then highest observation id) is valid until at most `within_days`
    days after `today` (on the last day included: info) or was valid only until before
    `today` (expired: a warning). A quote without a valid-until date is not flagged; an
    older quote of the same vendor for the same item is not either (the latest one
    replaces it)."""
    latest = _latest_quotes(checked_quotes(quotes), version, 1)
    latest = latest[latest[VALID_UNTIL].notna()]
    days_left = (latest[VALID_UNTIL] - pd.Timestamp(today)).dt.days
    due = latest.assign(_days=days_left)[days_left <= within_days]
    flags = []
    for row in due.to_dict("records"):
        item, vendor, days = row[ITEM], row[VENDOR], int(row["_days"])
        quoted = (f"The quote for {item} from {vendor} ({row[UNIT_PRICE]:,.0f} USD a unit, "
                  f"quoted {_day(row[QUOTED_ON])}, source {row[SOURCE]})")
        if days < 0:
            severity = "warning"
            message = (f"{quoted} expired on {_day(row[VALID_UNTIL])}, {-days} day(s) before "
                       f"{today.isoformat()}, and the vendor has no newer quote in version "
                       f"{version}.")
        else:
            severity = "info"
            when = "today" if days == 0 else f"in {days} day(s)"
            message = (f"{quoted} is valid until {_day(row[VALID_UNTIL])}: it expires "
                       f"{when}, within the {within_days}-day notice from "
                       f"{today.isoformat()}.")
        flags.append(Flag("quote_expiring", severity, f"{item} / {vendor}", message,
                          (int(row[OBSERVATION_ID]),), item=item))
    return flags


def lead_time_flags(quotes: pd.DataFrame, *, version: int) -> list[Flag]:
    """A `lead_time_grew` flag per (item, vendor) whose latest quote known at `version` has a
    longer lead time than the vendor's quote before it for the same item (quotes ordered by
    quoted_on, then observation id): info, a warning when it at least doubled. Nothing when
    either of the two has no lead time."""
    last_two = _latest_quotes(checked_quotes(quotes), version, 2)
    pairs = last_two.groupby([ITEM, VENDOR], sort=True)
    latest = pairs.nth(-1).set_index([ITEM, VENDOR])
    previous = pairs.nth(-2).set_index([ITEM, VENDOR])
    both = _pair(latest, previous)
    grew = both[both[LEAD_TIME] > both[f"{LEAD_TIME}_before"]]
    flags = []
    for (item, vendor), row in grew.sort_index().iterrows():
        old, new = row[f"{LEAD_TIME}_before"], row[LEAD_TIME]
        severity = "warning" if new >= 2 * old else "info"
        growth = f" (+{(new / old - 1) * 100:.0f} %)" if old > 0 else ""
        message = (f"The lead time {vendor} quotes for {item} grew from {old:,.0f} to "
                   f"{new:,.0f} days{growth} between its quote of "
                   f"{_day(row[f'{QUOTED_ON}_before'])} (source {row[f'{SOURCE}_before']}) "
                   f"and its quote of {_day(row[QUOTED_ON])} (source {row[SOURCE]}).")
        flags.append(Flag("lead_time_grew", severity, f"{item} / {vendor}", message,
                          _ids(row[OBSERVATION_ID], row[f"{OBSERVATION_ID}_before"]),
                          item=item))
    return flags


def market_flags(index: pd.DataFrame, quotes: pd.DataFrame | None, *,
                 previous_version: int | None, current_version: int, today: date,
                 params: MarketParams | None = None,
                 labels: Mapping[str, str] | None = None) -> list[Flag]:
    """Every market flag of `current_version`, most severe first: price moves and new
    cheapest providers since `previous_version` (none without one: a first briefing), and
    quote expiry and lead times of the quotes known at `current_version` (none without
    quotes). `params` default: MarketParams()."""
    params = params or MarketParams()
    flags: list[Flag] = []
    if previous_version is not None:
        flags += price_move_flags(index, previous_version=previous_version,
                                  current_version=current_version,
                                  threshold=params.move_threshold, labels=labels)
        flags += new_cheapest_flags(index, previous_version=previous_version,
                                    current_version=current_version, labels=labels)
    if quotes is not None:
        flags += quote_expiry_flags(quotes, version=current_version, today=today,
                                    within_days=params.expiring_within_days)
        flags += lead_time_flags(quotes, version=current_version)
    return by_severity(flags)


def _latest_quotes(quotes: pd.DataFrame, version: int, n: int) -> pd.DataFrame:
    """The last `n` quotes per (item, vendor) known at `version`, oldest first."""
    known = quotes[quotes[VERSION] == version].sort_values(
        [ITEM, VENDOR, QUOTED_ON, OBSERVATION_ID])
    return known.groupby([ITEM, VENDOR], sort=False).tail(n)


def _beyond(old: float, new: float, fraction: float) -> bool:
    """Whether new is further from old than `fraction` of old (exactly that is not)."""
    return abs(new - old) > (fraction + _SLACK) * old


def _pair(now: pd.DataFrame, before: pd.DataFrame) -> pd.DataFrame:
    """The rows whose key (the index) is in both, `before`'s columns suffixed `_before`."""
    return now.merge(before, how="inner", left_index=True, right_index=True,
                     suffixes=("", "_before"))


def _day(value: pd.Timestamp) -> str:
    return value.date().isoformat()


def _count(offers: int, providers: int) -> str:
    return f"{offers} offer(s) from {providers} provider(s)"


def _cheapest(row: pd.Series, suffix: str = "") -> str:
    """`lambda us-east at 2.49 USD/GPU-hour (source lambda-prices, 2026-11-23)`."""
    region = row[f"{CHEAPEST_REGION}{suffix}"]
    where = row[f"{CHEAPEST_PROVIDER}{suffix}"] + ("" if _missing(region) else f" {region}")
    return (f"{where} at {row[f'{CHEAPEST_PRICE}{suffix}']:.2f} {UNIT} (source "
            f"{row[f'{CHEAPEST_SOURCE}{suffix}']}, {_day(row[f'{CHEAPEST_AS_OF}{suffix}'])})")


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and value != value)


def _ids(*ids: object) -> tuple[int, ...]:
    return tuple(sorted({int(i) for i in ids}))
