"""Bulk validation of plain rows: the rows a price list gives (100,000 offers of one source,
one metric, one unit, one date) checked column by column.

The fields every row of a file shares (source, metric, unit, as_of, status, value_kind) are
validated once per distinct combination; each row's own fields (item, value, quote, offer)
are checked with the cheap tests a plain row passes. A row of any other shape, or one that
fails a test here, is not judged here: `plain_row` returns None and the caller validates it
with models.observations.validate_row, which finds and words the error. So a row accepted
here is exactly the CleanObservation validate_row would give, and no error is ever worded
twice. Pure, like the validator.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

from models.observations import (
    _CURRENCY,
    _OFFER_KEYS,
    COLUMN_FIELD,
    OFFER_TERMS,
    STATUSES,
    VALUE_KINDS,
    CleanObservation,
    MetricDef,
    OfferTerms,
    RowError,
    _as_the_file_wrote,
    _choice,
    _Invalid,
    _required_key,
    _text_field,
    parse_partial_date,
    validate_row,
)
from models.units import UnitError, conversion_factor

# The fields of a plain row; a row with any other (low/high, valid_to, ...) is validated
# row by row.
PLAIN_KEYS = frozenset({"source", "item", "metric", "value", "unit", "as_of", "status",
                        "value_kind", "quote", "offer", COLUMN_FIELD})
_SHARED = ("source", "metric", "unit", "as_of", "status", "value_kind")
_MAX_UNITS = 2**31 - 1
_FAIL = object()  # a field this module does not judge: the row goes to validate_row


@dataclass(frozen=True)
class _Shared:
    """The validated fields a row shares with the rest of its file."""

    source: str
    metric: MetricDef
    unit_written: str
    factor: float
    as_of: date
    precision: str
    value_kind: str
    status: str


class CommonFields:
    """The shared fields of one validation pass, each distinct combination validated once."""

    def __init__(self, metrics: Mapping[str, MetricDef], sources: set[str],
                 today: date) -> None:
        self.metrics, self.sources, self.today = metrics, sources, today
        self._known: dict[tuple[Any, ...], _Shared | None] = {}
        # An offer's terms but its region (plain_offer), by their values.
        self.offers: dict[tuple[Any, ...], Any] = {}

    def of(self, key: tuple[Any, ...]) -> _Shared | None:
        """The shared fields of a row whose shared values are `key`; None when they are not
        valid as a plain row's (validate_row then says why)."""
        try:
            return self._known[key]
        except KeyError:
            shared = self._known[key] = self._resolve(key)
            return shared

    def _resolve(self, key: tuple[Any, ...]) -> _Shared | None:
        if any(value.__class__ is not str for value in key[:4]) or any(
                value is not None and value.__class__ is not str for value in key[4:]):
            return None
        if any(value is not None and "\x00" in value for value in key):
            return None
        row = dict(zip(_SHARED, key, strict=True))
        try:
            source = _required_key(row, "source", self.sources)
            metric = self.metrics[_required_key(row, "metric", self.metrics)]
            unit_written = _text_field(row, "unit") or ""
            if not unit_written and metric.unit != "dimensionless":
                return None
            factor = conversion_factor(unit_written, metric.unit, metric.counts)
            as_of, precision = parse_partial_date(row["as_of"], "as_of")
            if as_of > self.today:
                return None
            value_kind = _choice(row, "value_kind", VALUE_KINDS, "reported")
            status = _choice(row, "status", STATUSES, None)
        except (_Invalid, UnitError, KeyError):
            return None
        return _Shared(source, metric, unit_written, factor, as_of, precision, value_kind,
                       status)


def plain_row(row: Mapping[str, Any], line: int | None, items: set[str],
              common: CommonFields) -> CleanObservation | None:
    """The row's CleanObservation when it is a plain, valid row; else None (not judged)."""
    try:
        return _plain_row(row, line, items, common)
    except Exception:  # noqa: BLE001 - anything unforeseen is validate_row's to word
        return None


def _plain_row(row: Mapping[str, Any], line: int | None, items: set[str],
               common: CommonFields) -> CleanObservation | None:
    if row.__class__ is not dict or not PLAIN_KEYS.issuperset(row):
        return None
    get = row.get
    key = (get("source"), get("metric"), get("unit"), get("as_of"), get("status"),
           get("value_kind"))
    shared = common.of(key)
    if shared is None:
        return None
    item = get("item")
    if item.__class__ is not str or "\x00" in item:
        return None
    item = item.strip()
    if not item or item not in items:
        return None
    raw = get("value")
    if raw.__class__ is not float and raw.__class__ is not int:
        return None
    low = high = float(raw) * shared.factor
    metric = shared.metric
    if not math.isfinite(low) or low < 0 or (
            metric.min_value is not None and low < metric.min_value) or (
            metric.max_value is not None and high > metric.max_value):
        return None
    quote = _text(get("quote"))
    column = get(COLUMN_FIELD)
    if quote is _FAIL or (quote is not None and "\x00" in quote) or (
            column.__class__ is str and "\x00" in column):
        return None
    raw_offer = get("offer")
    offer = None if raw_offer is None else plain_offer(raw_offer, common.offers)
    if offer is _FAIL:
        return None
    value_written, unit_written = _as_the_file_wrote(raw_offer, str(raw).strip(),
                                                     shared.unit_written)
    return CleanObservation(
        source=shared.source, item=item, metric=metric.key, value=(low + high) / 2, low=low,
        high=high, value_written=value_written, unit_written=unit_written,
        value_kind=shared.value_kind, status=shared.status, quote=quote, as_of=shared.as_of,
        as_of_precision=shared.precision, valid_to=None, line=line, offer=offer)


def plain_offer(raw: Any, known: dict[tuple[Any, ...], Any] | None = None) -> Any:
    """The OfferTerms of a plain offer mapping (text fields as text, a whole number of GPUs,
    no validity date), or _FAIL. `known`: the terms but the region already judged, by their
    values (a price list's offers share a few dozen)."""
    if raw.__class__ is not dict or not _OFFER_KEYS.issuperset(raw):
        return _FAIL
    if raw.get("valid_until") is not None:
        return _FAIL
    if known is None:
        return _with_region(_terms(raw), raw)
    get = raw.get
    units, gpus, quantity = get("units"), get("gpus_per_instance"), get("quantity")
    # With the numbers' classes: 1, 1.0 and True are equal keys but not equally valid. Text
    # fields need none: any value that is not text fails alike.
    key = (get("provider"), get("term"), units, gpus, quantity, get("currency"), get("gpu"),
           get("instance_type"), units.__class__, gpus.__class__, quantity.__class__)
    try:
        terms = known[key]
    except KeyError:
        terms = known[key] = _terms(raw)
    except TypeError:  # an unhashable value: judged alone
        terms = _terms(raw)
    return _with_region(terms, raw)


def _with_region(terms: Any, raw: dict[str, Any]) -> Any:
    """The OfferTerms of `terms` (from _terms) and the offer's region, or _FAIL."""
    if terms is _FAIL:
        return _FAIL
    region = _text(raw.get("region"))
    if region is _FAIL:
        return _FAIL
    provider, term, gpu, units, instance, currency = terms
    return OfferTerms(provider=provider, term=term, region=region, gpu=gpu, units=units,
                      instance=instance, currency=currency, valid_until=None)


def _terms(raw: dict[str, Any]) -> Any:
    """(provider, term, gpu, units, instance, currency) of a plain offer mapping, or _FAIL."""
    provider, term = _text(raw.get("provider")), _text(raw.get("term"))
    if provider is None or provider is _FAIL or term not in OFFER_TERMS:
        return _FAIL
    units = None
    for name in ("units", "gpus_per_instance", "quantity"):
        candidate = raw.get(name)
        if candidate is None or (candidate.__class__ is str and not candidate.strip()):
            continue
        if candidate.__class__ is not int or not 1 <= candidate <= _MAX_UNITS:
            return _FAIL
        units = candidate
        break
    currency = _text(raw.get("currency"))
    gpu, instance = _text(raw.get("gpu")), _text(raw.get("instance_type"))
    if _FAIL in (currency, gpu, instance):
        return _FAIL
    if currency is not None:
        currency = currency.upper()
        if not _CURRENCY.match(currency):
            return _FAIL
    return provider, term, gpu, units, instance, currency


def _text(raw: Any) -> Any:
    """A text field as validate_row reads it (stripped, None when blank), or _FAIL when it is
    not text."""
    if raw is None:
        return None
    if raw.__class__ is not str:
        return _FAIL
    return raw.strip() or None


def validate_rows(
    rows: list[tuple[int | None, Mapping[str, Any]]],
    *,
    metrics: Mapping[str, MetricDef],
    items: set[str],
    sources: set[str],
    today: date,
    seen: dict[tuple[str, str, str, date], int | None] | None = None,
    bulk: bool = True,
) -> tuple[list[CleanObservation], list[RowError]]:
    """Validate every (line, row); a second row for the same fact is rejected as a duplicate.

    `seen` (fact -> first line) carries the facts of earlier chunks of the same file.
    `bulk`: rows of the plain shape a price list gives (plain_row) are checked column
    by column, the fields they share once per distinct value; any other row, and any row
    that fails there, goes through validate_row, so results and errors are the same either
    way (False: every row through validate_row)."""
    clean: list[CleanObservation] = []
    errors: list[RowError] = []
    first_line = {} if seen is None else seen
    common = CommonFields(metrics, sources, today) if bulk else None
    for line, row in rows:
        result = None if common is None else plain_row(row, line, items, common)
        if result is None:
            result = validate_row(row, line=line, metrics=metrics, items=items,
                                  sources=sources, today=today)
        if isinstance(result, RowError):
            errors.append(result)
        elif result.identity in first_line:
            errors.append(RowError(line, "item", (
                f"duplicate row: line {first_line[result.identity]} already gives "
                f"{result.item} {result.metric} as of {result.as_of} for source {result.source}")))
        else:
            first_line[result.identity] = line
            clean.append(result)
    return clean, errors
