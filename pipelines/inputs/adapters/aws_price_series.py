"""A daily series of one AWS on-demand price (github.com/amorton45/aws-gpu-price-tracker,
`gpu_prices.csv`) as GPU-hour prices: one observation per day of ONE offer, the p5.48xlarge
(8 x H100 SXM) on demand in us-east-1.

The tracker is a GitHub Action that asks the AWS Price List API (`pricing.get_products`,
location "US East (N. Virginia)", Linux, Shared tenancy, no pre-installed software,
capacitystatus Used) once a day and appends `timestamp,instance,price_usd`: USD per
instance-hour, first price dimension of the first OnDemand term. The region is not in the file;
it is the tracker's filter, so every row is region "us-east-1", term "on_demand". That is the
same offer the AWS Price List reader (aws_offer.py) and the SkyPilot reader give: the series is
that one item (`aws-p5-48xlarge-us-east-1-on-demand`) with its history, each row dated by its
own `timestamp` (UTC; `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM:SS`). The GPUs of an instance come
from data/instances.yaml (`instances.aws`), as for the other AWS readers.

Accounting, by row (every line after the header is one of these):
- a priced row is an observation, dated by its own day;
- an empty price is a counted skip: the tracker writes placeholder rows (dated 2024-05-01 to
  2025-04-01, no time) and failed runs with no price; they are neither prices nor zero;
- a day read more than once (2025-04-23 has two priced readings) keeps its last reading, by
  time of day then by line, since the ledger holds one fact per item and day; the earlier
  readings are counted skips;
- a price that is not a finite positive number, a timestamp that is not a date, an instance
  the table does not list, or a damaged CSV record is a rejection naming its line and column;
  an instance the table marks untracked is a counted skip; blank lines are counted skips.

Consecutive days at the same price are kept, each an observation: every reading says the price
was still in force that day, so the series shows which days were checked (a day the tracker
did not run is a gap, not a hidden change); the ledger stores each (item, day) once and leaves
an unchanged value unchanged when the file is read again.

The source is the tracker (`aws-gpu-price-tracker`, one key for every version of the file:
the file is append-only, so a newer copy adds days and leaves the earlier ones unchanged),
published on its newest priced row's day. `--as-of` is not used: every row has its own date.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, replace
from datetime import date, time

from pipelines.inputs.adapters.base import (
    AdapterError,
    AdapterOptions,
    Parsed,
    decode,
    header_columns,
)
from pipelines.inputs.adapters.instances import InstanceTable
from pipelines.inputs.adapters.offers import (
    Offer,
    OfferSink,
    check_size,
    instance_table,
    positive_price,
)
from pipelines.inputs.csv_records import CsvDamage, csv_records
from pipelines.inputs.packs import Pack, SourceDecl

FORMAT = "aws-price-series"
PROVIDER = "aws"
REGION = "us-east-1"  # the tracker's filter, location "US East (N. Virginia)"; not in the file
TERM = "on_demand"
SOURCE_KEY = "aws-gpu-price-tracker"
SOURCE_URL = "https://github.com/amorton45/aws-gpu-price-tracker"
REQUIRED = ("timestamp", "instance", "price_usd")
UNIT_WRITTEN = "hour"  # USD per instance-hour; the file writes no unit
_SNIFF_BYTES = 4096
# A source pack's columns: such a CSV is never this series, whatever else it has.
_PACK_COLUMNS = frozenset({"source", "item", "metric", "unit", "as_of"})
# 2025-04-23 or 2025-04-23T18:52:57 (fractions of a second and a UTC zone allowed).
_TIMESTAMP = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2}):(\d{2})(?:\.\d{1,6})?(?:Z|[+-]00:?00)?)?")

_NO_PRICE = ("no price (a placeholder row or a failed run of the tracker: not a price, not "
             "zero)")
_EARLIER = "an earlier reading of the same day (the day's last reading is kept)"


def detect(name: str, data: bytes) -> str | None:
    """"aws-price-series" when the first line is a CSV header naming timestamp, instance and
    price_usd (and not a source pack's columns)."""
    head = data[:_SNIFF_BYTES].decode("utf-8-sig", errors="replace")
    first_line = head.split("\n", 1)[0].rstrip("\r")
    try:
        header = {column.strip() for column in next(csv.reader([first_line]))}
    except (csv.Error, StopIteration):
        return None
    if not header.issuperset(REQUIRED) or header & _PACK_COLUMNS:
        return None
    return FORMAT


@dataclass(frozen=True)
class _Reading:
    """One priced row, before the day's readings are compared."""

    line: int
    raw_text: str
    day: date
    at: time  # midnight for a row with a date only
    offer: Offer


def parse(name: str, data: bytes, options: AdapterOptions) -> Parsed:
    """Read the tracker's CSV into one dated observation per day of its offer."""
    check_size(data, options.limits)
    records = csv_records(decode(data))
    columns = header_columns(records)
    missing = [column for column in REQUIRED if column not in columns]
    if missing:
        raise AdapterError(1, f"not an aws-gpu-price-tracker gpu_prices.csv: the header lacks "
                              f"{', '.join(missing)} (expected timestamp,instance,price_usd)")
    sink = OfferSink(Parsed(FORMAT, Pack()), options.limits)
    table = instance_table(options)
    readings: list[_Reading] = []
    rows = 0
    for number, raw_text, values in records:
        rows += 1
        if isinstance(values, CsvDamage):
            sink.reject(number, "row", values.reason, raw_text)
        elif not any(value.strip() for value in values):
            sink.skip("blank lines")
        elif len(values) != len(columns):
            sink.reject(number, "row", f"expected {len(columns)} fields as in the header, got "
                                       f"{len(values)}", raw_text)
        else:
            reading = _read_row(number, raw_text, dict(zip(columns, values, strict=True)),
                                table, sink)
            if reading is not None:
                readings.append(reading)
    if not rows:
        raise AdapterError(None, "no rows: the file has a header and nothing else")
    if options.as_of is not None:
        sink.parsed.notes.append("--as-of not used: every row is dated by its own timestamp")
    _emit(readings, sink)
    return sink.finish("row(s)")


def _read_row(number: int, raw_text: str, row: dict[str, str], table: InstanceTable,
              sink: OfferSink) -> _Reading | None:
    """The row's reading, or None (rejected or skipped, said to the sink)."""
    price_text = row["price_usd"].strip()
    if not price_text:
        sink.skip(_NO_PRICE)
        return None
    stamp = row["timestamp"].strip()
    when = _timestamp(stamp)
    if when is None:
        sink.reject(number, "timestamp", f"timestamp {stamp!r} is not a date (YYYY-MM-DD or "
                                         "YYYY-MM-DDTHH:MM:SS, UTC)", raw_text)
        return None
    instance = row["instance"].strip()
    spec = table.instance(PROVIDER, instance)
    if spec is None:
        untracked = table.untracked(PROVIDER, instance)
        if untracked is not None:
            sink.skip(f"untracked GPU instance ({untracked})")
        elif not instance:
            sink.reject(number, "instance", "instance is blank: the price cannot be tied to "
                                            "an instance type", raw_text)
        else:
            sink.reject(number, "instance", (
                f"unknown instance {instance!r}: add it to data/instances.yaml (instances.aws) "
                "with its source"), raw_text)
        return None
    price = positive_price(price_text)
    if price is None:
        sink.reject(number, "price_usd",
                    f"price_usd {price_text!r} is not a finite positive number", raw_text)
        return None
    offer = Offer(provider=PROVIDER, region=REGION, term=TERM, instance=spec, price=price,
                  price_written=price_text, currency="USD", unit_written=UNIT_WRITTEN)
    return _Reading(number, raw_text, when[0], when[1], offer)


def _timestamp(text: str) -> tuple[date, time] | None:
    """(day, time of day) of a tracker timestamp; None when it is not a real date and time."""
    match = _TIMESTAMP.fullmatch(text)
    if match is None:
        return None
    year, month, day, hour, minute, second = match.groups()
    try:
        moment = (time(int(hour), int(minute), int(second)) if hour is not None
                  else time(0, 0, 0))
        return date(int(year), int(month), int(day)), moment
    except ValueError:
        return None


def _emit(readings: list[_Reading], sink: OfferSink) -> None:
    """One row per offer and day: its last reading; the others are counted skips."""
    last: dict[tuple[str, date], _Reading] = {}
    prices: dict[tuple[str, date], set[str]] = {}
    for reading in readings:
        key = (reading.offer.item_key, reading.day)
        prices.setdefault(key, set()).add(reading.offer.price_written)
        kept = last.get(key)
        if kept is not None:
            sink.skip(_EARLIER)
        if kept is None or (reading.at, reading.line) >= (kept.at, kept.line):
            last[key] = reading
    if not last:
        return
    newest = max(day for _, day in last)
    sink.use_source(_source(newest))
    for key, reading in sorted(last.items(), key=lambda entry: (entry[0][1], entry[1].line)):
        offer = reading.offer
        if len(prices[key]) > 1:
            offer = replace(offer, note=(
                f"; the day's last of its readings ({', '.join(sorted(prices[key]))} USD per "
                "hour that day)"))
        sink.add(offer, line=reading.line, raw_text=reading.raw_text, column="price_usd",
                 as_of=reading.day)


def _source(newest: date) -> SourceDecl:
    return SourceDecl(
        key=SOURCE_KEY, kind="dataset", publisher="aws-gpu-price-tracker (amorton45, GitHub)",
        url=SOURCE_URL,
        title=(f"AWS p5.48xlarge on-demand price, us-east-1, daily (AWS Price List API, "
               f"gpu_prices.csv to {newest.isoformat()})"),
        published_on=newest)
