"""Validate one row of a source pack into a clean observation, or say precisely why not.

Pure: the caller passes the metric catalogue, the known items and "today" (no clock here).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Final

from models.dates import out_of_range
from models.units import Counts, UnitError, conversion_factor

VALUE_KINDS = ("reported", "estimate", "derived", "measured")
# A row from an adapter may say which column of its file the value came from; an error in
# the value or its unit is then reported under that column's name, as the user wrote it.
COLUMN_FIELD = "__column__"
_VALUE_FIELDS = ("value", "unit", "low", "high")
STATUSES = ("C", "S", "U")
_DATE = re.compile(r"^(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?$")
_GROUPED_NUMBER = re.compile(r"^-?\d{1,3}(,\d{3})+(\.\d+)?$")


@dataclass(frozen=True)
class MetricDef:
    """A metric's definition: the canonical unit and what one value describes."""

    key: str
    unit: str
    scope: str
    direction: str
    description: str
    counts: Counts | None = None
    min_value: float | None = None
    max_value: float | None = None


@dataclass(frozen=True)
class RowError:
    line: int | None
    field: str
    reason: str


# A market price's term: what the offer commits to (a cloud price list's on-demand, spot,
# 1- or 3-year reservation, capacity block; a contract; a vendor's quote).
OFFER_TERMS = ("on_demand", "spot", "reserved_1y", "reserved_3y", "capacity_block", "contract",
               "quote")
# Keys an offer may carry that are kept in the raw row only (as written, for review).
_OFFER_NOTES = {"price_written", "unit_written", "usd_rate", "incoterms", "lead_time_written",
                "notes", "quantity", "vendor", "gpus_per_instance"}
_CURRENCY = re.compile(r"^[A-Z]{3}$")


@dataclass(frozen=True)
class OfferTerms:
    """The terms of a market price (a price list's row, a quote): structured, so that the
    price index can group by GPU and term across providers and regions."""

    provider: str
    term: str
    region: str | None = None
    gpu: str | None = None  # the GPU item the price is for
    units: int | None = None  # GPUs an instance holds, or a quote's quantity
    instance: str | None = None
    currency: str | None = None  # as written; the value is in the metric's unit (USD)
    valid_until: date | None = None  # a quote's validity

    def as_tuple(self) -> tuple[Any, ...]:
        return (self.provider, self.term, self.region, self.gpu, self.units, self.instance,
                self.currency, self.valid_until)


@dataclass(frozen=True)
class CleanObservation:
    """An observation in the metric's canonical unit, with what the source wrote kept beside."""

    source: str
    item: str
    metric: str
    value: float
    low: float
    high: float
    value_written: str
    unit_written: str
    value_kind: str
    status: str
    quote: str | None
    as_of: date
    as_of_precision: str
    valid_to: date | None
    line: int | None
    offer: OfferTerms | None = None

    @property
    def identity(self) -> tuple[str, str, str, date]:
        """Within one source, (item, metric, as_of) names one fact; a new value supersedes."""
        return (self.source, self.item, self.metric, self.as_of)


class _Invalid(Exception):
    def __init__(self, field: str, reason: str) -> None:
        super().__init__(reason)
        self.field, self.reason = field, reason


# The as_of precision of a figure its source gives no date for (`as_of: undated`): its stored
# as_of is only where its valid time starts (`valid_from`), never the figure's date. It never
# wins a conflict on recency (models/resolve.py) and prints as "undated".
UNDATED: Final = "none"
AS_OF_PRECISIONS: Final = ("day", "month", "year", UNDATED)


def observation_date(row: Mapping[str, Any]) -> tuple[date, str]:
    """(as_of, precision) of a row: its as_of as written (YYYY, YYYY-MM, YYYY-MM-DD), or for
    `as_of: undated` its `valid_from` (the earliest date the figure can hold, e.g. the
    product's launch) with precision UNDATED."""
    written = row.get("as_of")
    undated = isinstance(written, str) and written.strip().lower() == "undated"
    if undated:
        if _blank(row.get("valid_from")):
            raise _Invalid("valid_from", "an undated figure (as_of: undated) needs valid_from: "
                           "the earliest date it can hold, e.g. the product's launch")
        start, _ = parse_partial_date(row["valid_from"], "valid_from")
        return start, UNDATED
    if not _blank(row.get("valid_from")):
        raise _Invalid("valid_from", "valid_from is for an undated figure (as_of: undated); "
                       "a dated figure holds from its as_of")
    return parse_partial_date(written, "as_of")


def parse_partial_date(text: Any, field: str) -> tuple[date, str]:
    """Parse YYYY, YYYY-MM or YYYY-MM-DD into (first day, precision)."""
    if isinstance(text, date) and not isinstance(text, datetime):
        return _in_range(text, field), "day"
    match = _DATE.match(str(text).strip()) if text is not None else None
    if not match:
        raise _Invalid(field, f"{field} {_shown(text)} is not a date (YYYY-MM-DD, YYYY-MM or YYYY)")
    year, month, day = match.groups()
    try:
        parsed = date(int(year), int(month or 1), int(day or 1))
    except ValueError as exc:
        raise _Invalid(field, f"{field} {_shown(text)} is not a calendar date") from exc
    return _in_range(parsed, field), "day" if day else "month" if month else "year"


def _in_range(day: date, field: str) -> date:
    problem = out_of_range(day, field)
    if problem:
        raise _Invalid(field, problem)
    return day


def _number(raw: Any, field: str) -> float:
    if isinstance(raw, bool):
        raise _Invalid(field, f"{field} {raw!r} is not a number")
    if isinstance(raw, dict | list | tuple):
        raise _Invalid(field, f"{field} must be a number, got {_kind(raw)}")
    try:
        if isinstance(raw, int | float):
            number = float(raw)
        else:
            text = str(raw).strip()
            if _GROUPED_NUMBER.match(text):
                text = text.replace(",", "")
            if "_" in text:  # float() reads "7_00" as 700: a typo, not a number
                raise ValueError(text)
            number = float(text)
    except OverflowError:
        number = float("inf")  # an integer beyond any float: reported as not finite below
    except ValueError as exc:
        raise _Invalid(field, f"{field} {_shown(raw)} is not a number") from exc
    if number != number or number in (float("inf"), float("-inf")):
        raise _Invalid(field, f"{field} {_shown(raw)} is not a finite number")
    return number


def _kind(raw: Any) -> str:
    return "a mapping" if isinstance(raw, dict) else "a list"


def _shown(raw: Any, limit: int = 60) -> str:
    """A value as the source wrote it, cut short: an error message must stay one line."""
    text = repr(raw) if isinstance(raw, str) else str(raw)
    return text if len(text) <= limit else f"{text[: limit - 1]}… ({len(text):,} characters)"


def identity(name: str) -> str:
    """A provider, region or GPU key as one spelling: lower case, inner runs of space one."""
    return " ".join(name.split()).lower()


def _text_field(row: Mapping[str, Any], field: str) -> str | None:
    """A text field's stripped value, or None when blank; a mapping or list is an error."""
    raw = row.get(field)
    if raw.__class__ is str:  # the common case first: a million calls in a 100k-row file
        return raw.strip() or None
    if isinstance(raw, dict | list | tuple):
        raise _Invalid(field, f"{field} must be text, got {_kind(raw)}")
    return None if _blank(raw) else str(raw).strip()


def _check_no_nul(row: Mapping[str, Any]) -> None:
    """No text may hold U+0000: PostgreSQL cannot store it, and no real source means it."""
    for field, raw in row.items():
        if isinstance(raw, str) and "\x00" in raw:
            raise _Invalid(str(field), f"{field} contains a NUL character (U+0000)")


def _as_the_file_wrote(offer: Any, value_written: str, unit_written: str) -> tuple[str, str]:
    """A price list's row gives its per-GPU-hour value in `value`/`unit` and what the file
    wrote (per instance, per term: "98.32" a "1 Hour", "12.266 + 2.933908" an "hour") in its
    offer's price_written/unit_written: those are the value and unit as written (issue 27)."""
    if not isinstance(offer, Mapping):
        return value_written, unit_written
    price, unit = offer.get("price_written"), offer.get("unit_written")
    if isinstance(price, str) and price.strip() and isinstance(unit, str) and unit.strip():
        return price.strip(), unit.strip()
    return value_written, unit_written


def _written_value(row: Mapping[str, Any]) -> tuple[float, float, str]:
    """(low, high, as written) from `value` (number or [low, high]) or `low`/`high`."""
    raw = row.get("value")
    if _blank(raw) and not _blank(row.get("low")) and not _blank(row.get("high")):
        raw = [row["low"], row["high"]]
    if _blank(raw):
        raise _Invalid("value", "value is missing")
    if isinstance(raw, str) and raw.strip().startswith("["):
        raw = [part for part in raw.strip().strip("[]").split(",") if part.strip()]
    if isinstance(raw, list | tuple):
        if len(raw) != 2:
            raise _Invalid("value", f"a range must be [low, high], got {_shown(list(raw))}")
        low, high = _number(raw[0], "value"), _number(raw[1], "value")
        if low > high:
            raise _Invalid("value", f"range low {low:g} is above high {high:g}")
        return low, high, f"[{raw[0]}, {raw[1]}]"
    number = _number(raw, "value")
    return number, number, str(raw).strip()


def _blank(raw: Any) -> bool:
    return raw is None or (isinstance(raw, str) and not raw.strip())


def _choice(
    row: Mapping[str, Any], field: str, allowed: tuple[str, ...], default: str | None
) -> str:
    raw = row.get(field)
    if _blank(raw):
        if default is None:
            raise _Invalid(field, f"{field} is missing (one of {', '.join(allowed)})")
        return default
    if isinstance(raw, dict | list) or str(raw).strip() not in allowed:
        raise _Invalid(field, f"{field} {_shown(raw)} is not one of {', '.join(allowed)}")
    return str(raw).strip()


def _required_key(row: Mapping[str, Any], field: str, known: set[str] | Mapping[str, Any]) -> str:
    key = _text_field(row, field)
    if key is None:
        raise _Invalid(field, f"{field} is missing")
    if key not in known:
        raise _Invalid(field, f"unknown {field} {_shown(key)}")
    return key


def _check_bounds(metric: MetricDef, low: float, high: float) -> None:
    if low < 0:
        raise _Invalid("value", f"negative value {low:g} {metric.unit} for {metric.key}")
    if metric.min_value is not None and low < metric.min_value:
        raise _Invalid("value", f"{low:g} {metric.unit} is below the plausible minimum "
                                f"{metric.min_value:g} {metric.unit} for {metric.key}")
    if metric.max_value is not None and high > metric.max_value:
        raise _Invalid("value", f"{high:g} {metric.unit} is above the plausible maximum "
                                f"{metric.max_value:g} {metric.unit} for {metric.key}")


def validate_row(
    row: Mapping[str, Any],
    *,
    line: int | None,
    metrics: Mapping[str, MetricDef],
    items: set[str],
    sources: set[str],
    today: date,
) -> CleanObservation | RowError:
    """Turn one raw row into a CleanObservation, or the first RowError found in it."""
    try:
        _check_no_nul(row)
        return _validate(row, line, metrics, items, sources, today)
    except _Invalid as invalid:
        column = row.get(COLUMN_FIELD)
        field = column if column and invalid.field in _VALUE_FIELDS else invalid.field
        return RowError(line, field, invalid.reason)
    except Exception as exc:  # noqa: BLE001 - the validator is pure: any failure is the row's
        # A value no rule above foresaw: rejected with its row, never the whole ingest.
        return RowError(line, "row", f"cannot read this row: {type(exc).__name__}: {exc}")


def _validate(
    row: Mapping[str, Any],
    line: int | None,
    metrics: Mapping[str, MetricDef],
    items: set[str],
    sources: set[str],
    today: date,
) -> CleanObservation:
    source = _required_key(row, "source", sources)
    item = _required_key(row, "item", items)
    metric = metrics[_required_key(row, "metric", metrics)]
    low, high, value_written = _written_value(row)
    unit_written = _text_field(row, "unit") or ""
    if not unit_written and metric.unit != "dimensionless":
        raise _Invalid("unit", f"unit is missing (the metric is in {metric.unit})")
    try:
        factor = conversion_factor(unit_written, metric.unit, metric.counts)
    except UnitError as exc:
        raise _Invalid("unit", str(exc)) from exc
    low, high = low * factor, high * factor
    _check_bounds(metric, low, high)
    as_of, precision = observation_date(row)
    if as_of > today:
        field = "valid_from" if precision == UNDATED else "as_of"
        raise _Invalid(field, f"{field} {as_of.isoformat()} is in the future (today is {today})")
    valid_to = None
    if not _blank(row.get("valid_to")):
        valid_to, _ = parse_partial_date(row["valid_to"], "valid_to")
        if valid_to <= as_of:
            raise _Invalid("valid_to", f"valid_to {valid_to} is not after as_of {as_of}")
    quote = _text_field(row, "quote")
    offer = _offer(row.get("offer")) if not _blank(row.get("offer")) else None
    value_written, unit_written = _as_the_file_wrote(row.get("offer"), value_written,
                                                     unit_written)
    return CleanObservation(
        source=source, item=item, metric=metric.key,
        value=(low + high) / 2, low=low, high=high,
        value_written=value_written, unit_written=unit_written,
        value_kind=_choice(row, "value_kind", VALUE_KINDS, "reported"),
        status=_choice(row, "status", STATUSES, None),
        quote=quote, as_of=as_of, as_of_precision=precision, valid_to=valid_to, line=line,
        offer=offer,
    )


_OFFER_KEYS = frozenset({"provider", "term", "region", "gpu", "units", "instance_type",
                         "currency", "valid_until"}) | _OFFER_NOTES


def _offer(raw: Any) -> OfferTerms:
    """A market price's terms from the row's `offer` mapping (adapters and YAML packs):
    provider (or vendor) and term required."""
    if not isinstance(raw, dict):
        raise _Invalid("offer", f"offer must be a mapping, got {_shown(raw)}")
    known = _OFFER_KEYS
    unknown = [] if known.issuperset(raw) else sorted(str(k) for k in raw if k not in known)
    if unknown:
        raise _Invalid(f"offer.{unknown[0]}", f"unknown offer key {unknown[0]!r} (known: "
                                              f"{', '.join(sorted(known - _OFFER_NOTES))})")
    provider = _text_field(raw, "provider") or _text_field(raw, "vendor")
    if provider is None:
        raise _Invalid("offer.provider", "offer.provider is missing (who offers this price)")
    try:
        term = _choice(raw, "term", OFFER_TERMS, None)
    except _Invalid as invalid:
        raise _Invalid("offer.term", f"offer.{invalid.reason}") from invalid
    # The GPU is an item key, kept as written: the pack that declares it may come later in the
    # same ingest (the warehouse check offer_gpu_known lists any that never does).
    gpu = _text_field(raw, "gpu")
    units_raw = None
    for name in ("units", "gpus_per_instance", "quantity"):  # a loop: 100,000 rows a list
        if not _blank(candidate := raw.get(name)):
            units_raw = candidate
            break
    units = None
    if units_raw is not None:
        number = _number(units_raw, "offer.units")
        if number < 1 or number != int(number) or number > 2**31 - 1:
            raise _Invalid("offer.units", f"offer units {_shown(units_raw)} is not a count "
                                          "of at least 1")
        units = int(number)
    currency = _text_field(raw, "currency")
    if currency is not None and not _CURRENCY.match(currency.upper()):
        raise _Invalid("offer.currency", f"currency {_shown(currency)} is not an ISO 4217 "
                                         "code (USD, EUR, ...)")
    valid_until = None
    if not _blank(raw.get("valid_until")):
        valid_until, _ = parse_partial_date(raw["valid_until"], "offer.valid_until")
    region = _text_field(raw, "region")
    # An offer's identity is normalised here, once: "Lambda" and "lambda" are one provider
    # in the market's median, "US-East-1" one region, "B200" the GPU item b200.
    return OfferTerms(provider=identity(provider), term=term,
                      region=None if region is None else identity(region),
                      gpu=None if gpu is None else identity(gpu), units=units,
                      instance=_text_field(raw, "instance_type"),
                      currency=None if currency is None else currency.upper(),
                      valid_until=valid_until)
