"""A procurement quote sheet (what vendors and resellers quoted), CSV or YAML, as ledger rows.

Columns (CSV header, or keys of each entry of a YAML `quotes:` list): item, vendor, quantity,
unit_price, currency, lead_time_weeks or lead_time_days, quoted_on, valid_until, incoterms,
notes, source; optional `metric` (system_price, the default, or gpu_price: a quote is for a
server or a system unless it says it prices a GPU), `usd_rate` and `source_kind`.

Each quote gives up to three rows, dated by `quoted_on`, of the quote's `item` (a ledger item
key) and `source` (a source key, declared here: kind vendor_datasheet unless `source_kind`
says otherwise, since a written quote is the vendor's own record of the price):
- the unit price (metric `system_price` or `gpu_price`, in USD);
- `lead_time`, in weeks or days as written;
- `quote_validity`: days from quoted_on to valid_until (the ledger stores numbers, not dates).
Rows of a quote with a valid_until hold until then: their valid_to is the day after it (a
figure holds while valid_to is later than the day).

The ledger stores USD: a price in another currency needs `usd_rate`, USD per unit of the
currency as the quote used it (1.08 for EUR), and is stored converted; the price as written,
its currency and the rate stay in the row's `offer`. A quote is read whole or rejected whole,
the rejection naming the column.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from pathlib import PurePath

from models.dates import out_of_range
from pipelines.inputs.adapters.base import (
    AdapterError,
    AdapterOptions,
    Parsed,
    Rejected,
    decode,
    header_columns,
)
from pipelines.inputs.adapters.offers import check_rows, check_size, positive_price, trimmed
from pipelines.inputs.csv_records import CsvDamage, csv_records
from pipelines.inputs.limits import MAX_KEY_LENGTH
from pipelines.inputs.packs import SOURCE_KINDS, Pack, PackRow, SourceDecl
from pipelines.inputs.yaml_lines import YamlError, YamlList, YamlMap, load_yaml

FORMAT = "quote-sheet"
COLUMNS = ("item", "vendor", "quantity", "unit_price", "currency", "lead_time_weeks",
           "lead_time_days", "quoted_on", "valid_until", "incoterms", "notes", "source",
           "metric", "usd_rate", "source_kind")
REQUIRED = ("item", "vendor", "unit_price", "currency", "quoted_on", "source")
DETECT_COLUMNS = {"vendor", "unit_price", "quoted_on", "valid_until"}
PRICE_METRICS = ("system_price", "gpu_price")
DEFAULT_KIND = "vendor_datasheet"
_SNIFF_BYTES = 64 * 1024
_QUOTES_KEY = re.compile(r"^quotes\s*:", re.MULTILINE)
_CURRENCY = re.compile(r"[A-Z]{3}")
_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_GROUPED = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")


def detect(name: str, data: bytes) -> str | None:
    """"quote-sheet" for a CSV whose header has vendor, unit_price, quoted_on and valid_until,
    or a YAML document with a top-level `quotes:` list: its first key, or any top-level key of
    a `.yaml` file (a line of another file that happens to start with "quotes:" is not one)."""
    head = data[:_SNIFF_BYTES].decode("utf-8-sig", errors="replace")
    if _csv_header(head):
        return FORMAT
    if PurePath(name).suffix.lower() in (".yaml", ".yml"):
        return FORMAT if _QUOTES_KEY.search(head) else None
    first = next((line for line in head.splitlines()
                  if line.strip() and not line.startswith(("#", "---", "%"))), "")
    return FORMAT if _QUOTES_KEY.match(first) else None


@dataclass(frozen=True)
class _Quote:
    line: int
    raw_text: str
    cells: dict[str, str]  # column -> text as written, stripped ("" when blank)


class _Problem(Exception):
    def __init__(self, column: str, reason: str) -> None:
        super().__init__(reason)
        self.column, self.reason = column, reason


def parse(name: str, data: bytes, options: AdapterOptions) -> Parsed:
    """Read a quote sheet into price, lead-time and validity rows."""
    check_size(data, options.limits)
    text = decode(data)
    is_yaml = PurePath(name).suffix.lower() in (".yaml", ".yml") or (
        not _csv_header(text) and detect(name, data) == FORMAT)
    parsed = Parsed(FORMAT, Pack())
    quotes = _yaml_quotes(text, options) if is_yaml else _csv_quotes(text, parsed)
    declared: dict[str, str] = {}
    for quote in quotes:
        if isinstance(quote, Rejected):
            parsed.rejected.append(quote)
        else:
            try:
                _read_quote(quote, parsed, declared)
            except _Problem as problem:
                parsed.rejected.append(Rejected(quote.line, problem.column, problem.reason,
                                                trimmed(quote.raw_text)))
        check_rows(parsed, options.limits)
    return parsed


def _csv_header(text: str) -> bool:
    """Whether the first line is a quote sheet's CSV header."""
    first_line = text[:_SNIFF_BYTES].split("\n", 1)[0].rstrip("\r")
    try:
        header = {column.strip() for column in next(csv.reader([first_line]))}
    except (csv.Error, StopIteration):
        return False
    return header >= DETECT_COLUMNS


def _csv_quotes(text: str, parsed: Parsed) -> Iterator[_Quote | Rejected]:
    records = csv_records(text)
    columns = header_columns(records)
    _check_columns(columns, parsed)
    for line, raw_text, values in records:
        if isinstance(values, CsvDamage):
            yield Rejected(line, "row", values.reason, trimmed(raw_text))
        elif not any(value.strip() for value in values):
            parsed.skipped_lines += 1
        elif len(values) != len(columns):
            yield Rejected(line, "row", f"expected {len(columns)} fields as in the header, got "
                                        f"{len(values)}", trimmed(raw_text))
        else:
            cells = {c: v.strip() for c, v in zip(columns, values, strict=True) if c in COLUMNS}
            yield _Quote(line, raw_text, cells)


def _check_columns(columns: list[str], parsed: Parsed) -> None:
    repeated = sorted({c for c in columns if columns.count(c) > 1 and c})
    if repeated:
        raise AdapterError(1, f"the header names {', '.join(repeated)} twice")
    missing = [c for c in REQUIRED if c not in columns]
    if missing:
        raise AdapterError(1, f"the quote sheet's header lacks {', '.join(missing)}")
    parsed.notes.extend(f"unknown column {c!r} ignored" for c in columns
                        if c and c not in COLUMNS)


def _yaml_quotes(text: str, options: AdapterOptions) -> Iterator[_Quote | Rejected]:
    try:
        document = load_yaml(text, options.limits)
    except YamlError as exc:
        raise AdapterError(exc.line, exc.reason) from exc
    if not isinstance(document, YamlMap) or not isinstance(document.get("quotes"), YamlList):
        raise AdapterError(1, "a YAML quote sheet is a mapping with a `quotes:` list")
    quotes: YamlList = document["quotes"]
    for entry, line in zip(quotes, quotes.item_lines, strict=True):
        raw_text = json.dumps(entry, default=str, ensure_ascii=False)
        if not isinstance(entry, YamlMap):
            yield Rejected(line, "row", "a quote must be a mapping of columns", trimmed(raw_text))
            continue
        nested = next((str(k) for k, v in entry.items() if isinstance(v, dict | list)), None)
        if nested is not None:
            yield Rejected(line, nested, f"{nested} must be a single value", trimmed(raw_text))
            continue
        if entry.duplicates:
            key, again = entry.duplicates[0]
            yield Rejected(again, str(key), f"{key} is written twice", trimmed(raw_text))
            continue
        cells = {str(k): "" if v is None else str(v).strip() for k, v in entry.items()
                 if str(k) in COLUMNS}
        yield _Quote(line, raw_text, cells)


def _read_quote(quote: _Quote, parsed: Parsed, declared: dict[str, str]) -> None:
    """Add one quote's rows (and its source, the first time); _Problem when it is unusable."""
    cells = quote.cells
    for column in REQUIRED:
        if not cells.get(column):
            raise _Problem(column, f"{column} is missing")
    source, vendor, item = cells["source"], cells["vendor"], cells["item"]
    if len(source) > MAX_KEY_LENGTH:
        raise _Problem("source", f"source key is {len(source):,} characters; at most "
                                 f"{MAX_KEY_LENGTH}")
    metric = cells.get("metric") or PRICE_METRICS[0]
    if metric not in PRICE_METRICS:
        raise _Problem("metric", f"metric {metric!r} is not {' or '.join(PRICE_METRICS)}")
    kind = cells.get("source_kind") or DEFAULT_KIND
    if kind not in SOURCE_KINDS:
        raise _Problem("source_kind", f"source_kind {kind!r} is not one of "
                                      f"{', '.join(SOURCE_KINDS)}")
    quoted_on = _day(cells, "quoted_on")
    valid_until = _day(cells, "valid_until") if cells.get("valid_until") else None
    if valid_until is not None and valid_until < quoted_on:
        raise _Problem("valid_until", f"valid_until {valid_until} is before quoted_on "
                                      f"{quoted_on}")
    price_text = cells["unit_price"]
    price = _number(price_text, "unit_price")
    currency = cells["currency"].upper()
    if not _CURRENCY.fullmatch(currency):
        raise _Problem("currency", f"currency {cells['currency']!r} is not an ISO 4217 code "
                                   "(USD, EUR, ...)")
    rate_text = cells.get("usd_rate", "")
    rate = _number(rate_text, "usd_rate") if rate_text else None
    if currency != "USD" and rate is None:
        raise _Problem("currency", f"{currency} without usd_rate: the ledger stores USD; give "
                                   "the rate the quote used")
    quantity = _quantity(cells.get("quantity", ""))
    lead = _lead_time(cells)
    # As written when in USD (the ledger keeps the text); else converted at the quote's rate.
    usd: str | float = price_text if rate is None or currency == "USD" else float(price * rate)
    offer = {k: v for k, v in {
        "vendor": vendor, "term": "quote", "gpu": item if metric == "gpu_price" else None,
        "quantity": quantity, "price_written": price_text, "currency": currency,
        "usd_rate": rate_text or None, "incoterms": cells.get("incoterms") or None,
        "valid_until": valid_until and valid_until.isoformat(),
        "lead_time_written": lead and f"{lead[0]} {lead[1]}s",
        "notes": cells.get("notes") or None}.items() if v is not None}
    if source not in declared:
        declared[source] = vendor
        parsed.pack.sources.append(SourceDecl(
            key=source, kind=kind, publisher=vendor, published_on=quoted_on,
            title=f"Quote from {vendor}, {quoted_on.isoformat()} ({source})"))
    elif declared[source] != vendor:
        parsed.notes.append(f"line {quote.line}: source {source!r} was declared with vendor "
                            f"{declared[source]!r}; this quote names {vendor!r}")
    shared = {"source": source, "item": item, "as_of": quoted_on.isoformat(), "status": "C",
              "value_kind": "reported", "quote": _quote_text(cells, currency, quantity, lead),
              "offer": offer}
    if valid_until is not None:
        shared["valid_to"] = (valid_until + timedelta(days=1)).isoformat()
    rows = [({"metric": metric, "value": usd, "unit": "USD"}, "unit_price")]
    if lead is not None:
        rows.append(({"metric": "lead_time", "value": lead[0], "unit": lead[1]}, lead[2]))
    if valid_until is not None:
        rows.append(({"metric": "quote_validity", "value": (valid_until - quoted_on).days,
                      "unit": "day"}, "valid_until"))
    for fields, column in rows:
        parsed.pack.rows.append(PackRow(line=quote.line, raw_text=trimmed(quote.raw_text),
                                        column=column, fields={**shared, **fields},
                                        whole_line=True))


def _quote_text(cells: dict[str, str], currency: str, quantity: int | None,
                lead: tuple[str, str, str] | None) -> str:
    """"Acme Systems: 4 x hgx-h100-8gpu at 250,000 USD each, valid until 2026-12-31, lead
    time 12 weeks, FOB. Notes" (the rate too when the currency is not USD)."""
    amount = f"{cells['unit_price']} {currency}"
    if currency != "USD":
        amount += f" (x {cells['usd_rate']} USD/{currency})"
    parts = [f"{cells['vendor']}: {f'{quantity} x ' if quantity else ''}{cells['item']} at "
             f"{amount} each"]
    if cells.get("valid_until"):
        parts.append(f"valid until {cells['valid_until']}")
    if lead is not None:
        parts.append(f"lead time {lead[0]} {lead[1]}s")
    if cells.get("incoterms"):
        parts.append(cells["incoterms"])
    text = ", ".join(parts) + "."
    return trimmed(f"{text} {cells['notes']}" if cells.get("notes") else text)


def _number(text: str, column: str) -> Decimal:
    cleaned = text.replace(",", "") if _GROUPED.fullmatch(text) else text
    if "_" in cleaned:  # Decimal reads "7_00" as 700: a typo, not a number
        raise _Problem(column, f"{column} {text!r} is not a finite positive number")
    number = positive_price(cleaned)
    if number is None:
        raise _Problem(column, f"{column} {text!r} is not a finite positive number")
    return number


def _quantity(text: str) -> int | None:
    if not text:
        return None
    try:
        number = Decimal(text)
    except ArithmeticError:
        number = Decimal(0)
    if not (number.is_finite() and number == number.to_integral_value()
            and 1 <= number <= 2**31 - 1):
        raise _Problem("quantity", f"quantity {text!r} is not a whole number of at least 1")
    return int(number)


def _lead_time(cells: dict[str, str]) -> tuple[str, str, str] | None:
    """(number as written, unit, column) of the lead time, or None."""
    weeks, days = cells.get("lead_time_weeks", ""), cells.get("lead_time_days", "")
    if weeks and days:
        raise _Problem("lead_time_days", "give lead_time_weeks or lead_time_days, not both")
    if not weeks and not days:
        return None
    column, text, unit = ("lead_time_weeks", weeks, "week") if weeks else \
        ("lead_time_days", days, "day")
    _number(text, column)
    return text, unit, column


def _day(cells: dict[str, str], column: str) -> date:
    text = cells.get(column, "")
    if not _ISO_DAY.fullmatch(text):
        raise _Problem(column, f"{column} {text!r} is not a date (YYYY-MM-DD)")
    try:
        day = date.fromisoformat(text)
    except ValueError as exc:
        raise _Problem(column, f"{column} {text!r} is not a calendar date") from exc
    problem = out_of_range(day, column)
    if problem:
        raise _Problem(column, problem)
    return day
