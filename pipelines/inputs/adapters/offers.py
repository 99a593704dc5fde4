"""What the price-list adapters share: one offer -> one `gpu_hour_price` row, its offer item and
its terms, and the per-hour arithmetic.

An offer is one instance type, in one region, on one term (on-demand, spot, a 1- or 3-year
reservation), at one price. Its item key is `<provider>-<instance type>-<region>-<term>`
slugged, an item of kind `cloud_offer` whose family is the GPU item; its row's value is USD per
GPU-hour: the instance price per hour divided by the instance's GPUs. What the file wrote (the
price, its currency and unit) is kept in the row's `offer` mapping, exactly as written.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, InvalidOperation
from functools import cached_property, lru_cache
from typing import Any

from pipelines.inputs.adapters.base import AdapterError, AdapterOptions, Parsed, Rejected, slug
from pipelines.inputs.adapters.instances import InstanceSpec, InstanceTable, default_instances
from pipelines.inputs.limits import InputLimits
from pipelines.inputs.packs import ItemDecl, PackRow, SourceDecl

METRIC = "gpu_hour_price"
UNIT = "USD/hour"
RAW_TEXT_LIMIT = 1000
# A reservation's price for the whole term, spread over the term's hours (365-day years, as
# both AWS and Azure price a year of hours).
TERM_HOURS = {"reserved_1y": 8760, "reserved_3y": 26280}
_TERM_LABELS = {"on_demand": "on-demand", "spot": "spot", "reserved_1y": "reserved 1 year",
                "reserved_3y": "reserved 3 years"}


def instance_table(options: AdapterOptions) -> InstanceTable:
    """The table the user gave, else the packaged data/instances.yaml."""
    return options.instances if options.instances is not None else default_instances()


def positive_price(raw: Any) -> Decimal | None:
    """A finite price above zero, or None (text such as "98.32" is read exactly)."""
    if isinstance(raw, bool) or raw is None or isinstance(raw, dict | list):
        return None
    try:
        number = raw if isinstance(raw, Decimal) else Decimal(str(raw).strip())
    except (InvalidOperation, ValueError):
        return None
    # Also finite and above zero as a float: 1E+999 is a finite Decimal but an infinite float.
    if not number.is_finite() or not 0 < float(number) < math.inf:
        return None
    return number


def written(raw: Any) -> str:
    """A price as the file wrote it (JSON numbers are read as Decimal, so their digits stay)."""
    return str(raw).strip() if raw is not None else ""


def trimmed(text: str, limit: int = RAW_TEXT_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class Offer:
    """One priced offer, before it becomes a row."""

    provider: str
    region: str
    term: str  # on_demand | spot | reserved_1y | reserved_3y
    instance: InstanceSpec
    price: Decimal  # as written, in `currency` per `hours` hours of the instance
    price_written: str
    currency: str
    unit_written: str
    hours: int = 1
    note: str = ""  # appended to the quote ("; lowest of 3 zones ...")

    @cached_property  # asked for more than once per offer (a file's newest price, its row)
    def item_key(self) -> str:
        return offer_item_key(self.provider, self.instance.instance_type, self.region,
                              self.term)

    @property
    def per_gpu_hour(self) -> float:
        return float(self.price) / self.hours / self.instance.gpus

    def quote(self) -> str:
        """"p5.48xlarge us-east-1 on-demand: 98.32 USD per Hrs = 12.29 USD/GPU-hour over 8
        GPUs"; a reservation says its term's hours."""
        return self._quote(self.per_gpu_hour)

    def _quote(self, per_gpu_hour: float) -> str:
        label = _TERM_LABELS.get(self.term, self.term)
        per = f"{self.unit_written} ({self.hours:,} h)" if self.hours != 1 else self.unit_written
        gpus = self.instance.gpus
        return (f"{self.instance.instance_type} {self.region} {label}: {self.price_written} "
                f"{self.currency} per {per} = {_short(per_gpu_hour)} USD/GPU-hour over "
                f"{gpus} GPU{'s' if gpus != 1 else ''}{self.note}")

    def terms(self) -> dict[str, Any]:
        """The row's `offer` mapping."""
        return {"provider": self.provider, "region": self.region, "term": self.term,
                "instance_type": self.instance.instance_type, "gpu": self.instance.gpu,
                "gpus_per_instance": self.instance.gpus, "price_written": self.price_written,
                "currency": self.currency, "unit_written": self.unit_written}


_slug_part = lru_cache(maxsize=1 << 14)(slug)


def offer_item_key(provider: str, instance_type: str | None, region: str | None,
                   term: str) -> str:
    """An offer's one identity, whatever file or pack it comes from:
    slug(f"{provider}-{instance type}-{region}-{term}"), e.g.
    `aws-p5-48xlarge-us-east-1-on-demand`; a price without a region has none in its key.
    Built from its parts' slugs: a gap never spans two parts, so the slug of the whole is its
    non-empty parts' slugs joined by "-"; and a price list's 100,000 offers have a few
    thousand distinct parts."""
    parts = filter(None, (provider, instance_type, region, term))
    return "-".join(filter(None, map(_slug_part, parts)))


def _short(value: float) -> str:
    return f"{value:,.2f}" if value >= 1 else f"{value:.4f}"


@dataclass
class OfferSink:
    """Collects one file's offers into a Parsed: one source, one item per offer item, one row
    per offer; counts what is skipped, by reason, for the notes."""

    parsed: Parsed
    limits: InputLimits
    source: SourceDecl | None = None
    skipped: Counter[str] = field(default_factory=Counter)
    _items: set[str] = field(default_factory=set)
    _gpus: set[str] = field(default_factory=set)
    _days: dict[date, str] = field(default_factory=dict)  # as_of -> its ISO text

    def __post_init__(self) -> None:
        self._max_rows = self.limits.max_rows_per_file

    def use_source(self, source: SourceDecl) -> None:
        if self.source is None:
            self.source = source
            self.parsed.pack.sources.append(source)

    def add(self, offer: Offer, *, line: int | None, raw_text: str, column: str,
            as_of: date) -> None:
        # Called once per offer (100,000 times for a price list): what repeats is looked up.
        assert self.source is not None, "use_source() before add()"
        key = offer.item_key
        pack = self.parsed.pack
        if key not in self._items:
            self._items.add(key)
            spec = offer.instance
            if spec.gpu not in self._gpus:
                # The GPU an offer's family names is an item too, so that a price list
                # ingested into a ledger without the source packs still resolves its offers'
                # GPU; the ledger's own item, where it has one, is never renamed by it.
                self._gpus.add(spec.gpu)
                pack.items.append(ItemDecl(key=spec.gpu, name=spec.gpu, kind="gpu"))
            pack.items.append(ItemDecl(
                key=key, name=f"{spec.instance_type} {offer.region} {offer.term} "
                              f"({offer.provider})",
                kind="cloud_offer", vendor=offer.provider, family=spec.gpu))
        day = self._days.get(as_of)
        if day is None:
            day = self._days[as_of] = as_of.isoformat()
        value = offer.per_gpu_hour
        pack.rows.append(PackRow(
            line=line, raw_text=raw_text if len(raw_text) <= RAW_TEXT_LIMIT else trimmed(raw_text),
            column=column,
            fields={"source": self.source.key, "item": key, "metric": METRIC,
                    "value": value, "unit": UNIT, "as_of": day,
                    "status": "C", "value_kind": "reported", "quote": offer._quote(value),
                    "offer": offer.terms()}))
        if len(pack.rows) + len(self.parsed.rejected) > self._max_rows:
            check_rows(self.parsed, self.limits)

    def reject(self, line: int | None, field_name: str, reason: str, raw_text: str) -> None:
        self.parsed.rejected.append(Rejected(line, field_name, reason, trimmed(raw_text)))
        self._check_size()

    def skip(self, reason: str, count: int = 1) -> None:
        self.skipped[reason] += count
        self.parsed.skipped_lines += count

    def finish(self, what: str) -> Parsed:
        """Notes saying what was skipped and why, most frequent first."""
        for reason, count in self.skipped.most_common():
            self.parsed.notes.append(f"{count:,} {what} skipped: {reason}")
        return self.parsed

    def _check_size(self) -> None:
        # The cheap comparison first: a price list adds 100,000 rows one by one.
        if len(self.parsed.pack.rows) + len(self.parsed.rejected) > self._max_rows:
            check_rows(self.parsed, self.limits)


def check_rows(parsed: Parsed, limits: InputLimits) -> None:
    """AdapterError once a file has given more rows than SPECLEDGER_MAX_ROWS_PER_FILE."""
    read = len(parsed.pack.rows) + len(parsed.rejected)
    if read > limits.max_rows_per_file:
        raise AdapterError(None, f"more than {limits.max_rows_per_file:,} rows ({read:,} read "
                                 "so far; SPECLEDGER_MAX_ROWS_PER_FILE): split the file")


def check_size(data: bytes, limits: InputLimits) -> None:
    """Refuse a file beyond max_file_bytes before reading it (the ingest checks it too)."""
    if len(data) > limits.max_file_bytes:
        raise AdapterError(None, f"{len(data):,} bytes is beyond SPECLEDGER_MAX_FILE_BYTES "
                                 f"({limits.max_file_bytes:,}): refused unread")
