"""The Azure Retail Prices API response (`https://prices.azure.com/api/retail/prices`) as GPU-hour
prices: one `gpu_hour_price` row per GPU virtual machine, region and term.

A file is one response page, `{"BillingCurrency", "Items": [...], "NextPageLink", "Count"}`, a
JSON list of pages (pages followed by NextPageLink, saved together), or a bare JSON list of
items (what a collector that joins the pages' Items keeps; items' paths are then `[17]`).
Every element of Items is read once: it becomes a row, a rejected row, or a skipped line
counted with its reason in the notes. Out of scope, skipped:
- Windows: Linux and Windows prices share armSkuName, meterName and skuName; only productName
  tells them apart ("Virtual Machines NDisrH100v5 Series Windows"), so an item whose
  productName ends in " Windows" is a Windows price and is skipped;
- DevTestConsumption (a subscription offer, not a public price), Low Priority (retired; not
  spot), non-primary meter regions, services other than Virtual Machines, non-GPU SKUs and GPU
  SKUs whose GPU the ledger has no item for (data/instances.yaml `untracked_instances`).
A SKU named after a GPU (H100, A100, B200, MI300X...) that the instance table does not list is
rejected, so that a new instance type is added with its source rather than missed.

Terms: Consumption is on-demand, or spot when skuName ends in " Spot"; a Reservation's
`retailPrice` is the price of the WHOLE term although unitOfMeasure says "1 Hour": it is spread
over 8,760 hours (1 Year) or 26,280 hours (3 Years). The value is USD per GPU-hour: the
instance's hourly price divided by its GPUs (data/instances.yaml).

Dated by --as-of, else by the newest effectiveStartDate in the file that is in force on the day
it is read (the response carries no retrieval date; every price it lists holds from its
effectiveStartDate on). An item whose effectiveStartDate is after the file's date (a price Azure
has scheduled) is rejected on its own: the file gives the prices in force on its date. Items
carry their JSON path (`Items[17]`, or `[1].Items[17]` in a list of pages) and the line they
start on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any, NamedTuple, NoReturn

from pipelines.inputs.adapters.base import AdapterError, AdapterOptions, Parsed, decode
from pipelines.inputs.adapters.guards import json_depth_problem
from pipelines.inputs.adapters.instances import InstanceSpec, InstanceTable
from pipelines.inputs.adapters.offers import (
    TERM_HOURS,
    Offer,
    OfferSink,
    check_size,
    instance_table,
    positive_price,
    written,
)
from pipelines.inputs.packs import Pack, SourceDecl

FORMAT = "azure-retail-prices"
PROVIDER = "azure"
SOURCE_URL = "https://prices.azure.com/api/retail/prices"
_SNIFF_BYTES = 64 * 1024
_ITEMS = re.compile(r'"Items"\s*:\s*\[')
_RESPONSE_KEYS = re.compile(r'"(?:BillingCurrency|CustomerEntityType|NextPageLink)"\s*:'
                            r'|"(?:armSkuName|retailPrice|armRegionName)"\s*:')
# A bare list of items names these keys in its first item.
_BARE_ITEM = tuple(re.compile(rf'"{key}"\s*:') for key in ("armSkuName", "retailPrice",
                                                          "meterName"))
_WS = re.compile(r"[ \t\n\r]*")
_ITEM_END = re.compile(r"[ \t\n\r]*([,\]])")  # what follows an item of a well-formed list
# A SKU named after a GPU the ledger tracks: "Standard_ND96isr_H100_v5", "..._MI300X_v5".
_GPU_NAME = re.compile(r"GB[23]00|[HB][12]00|B300|A100|L40S?|MI3\d\dX?", re.IGNORECASE)
_HOURLY = re.compile(r"(\d+)\s*(?:/\s*)?hours?", re.IGNORECASE)  # "1 Hour", "1/Hour", "10 Hours"
_RESERVATION_TERMS = {"1 Year": "reserved_1y", "3 Years": "reserved_3y"}
# Exact digits: a price's text is kept as written; NaN and Infinity stay text (not a price).
_DECODER = json.JSONDecoder(parse_float=Decimal, parse_constant=str)


def detect(name: str, data: bytes) -> str | None:
    """"azure-retail-prices" when the head of a JSON object or list has an `Items` list and a
    key of the Retail Prices response or of its items (BillingCurrency, armSkuName...), or is
    a bare list of items (keys armSkuName, retailPrice and meterName)."""
    head = data[:_SNIFF_BYTES].decode("utf-8-sig", errors="replace").lstrip()
    if not head.startswith(("{", "[")):
        return None
    if head.startswith("[") and all(_BARE_ITEM_KEYS.search(head) for _BARE_ITEM_KEYS in
                                    _BARE_ITEM):
        return FORMAT
    return FORMAT if _ITEMS.search(head) and _RESPONSE_KEYS.search(head) else None


class _Item(NamedTuple):
    path: str  # "Items[3]" or "[1].Items[3]"
    line: int
    text: str  # the item as the file wrote it
    value: Any


@dataclass(frozen=True)
class _Page:
    index: int
    fields: dict[str, Any]  # the page's keys other than Items (scalars only)
    items: int


def parse(name: str, data: bytes, options: AdapterOptions) -> Parsed:
    """Read one response (or a list of pages) into Linux GPU VM offers."""
    check_size(data, options.limits)
    text = decode(data)
    limit = options.limits.json_max_depth
    walker = _JsonPages(text, len(data))
    try:
        parsed = _read(walker, options)
    except AdapterError:
        _refuse_deep(text, limit)  # a file too deep is refused as that, whatever else broke
        raise
    if walker.depth > limit:
        _refuse_deep(text, limit)
    return parsed


def _refuse_deep(text: str, limit: int) -> None:
    """AdapterError when the text nests deeper than `limit` (guards.json_depth_problem).

    The whole-text walk, which words the refusal and finds its line, runs only when it can
    find something: when the walk over the pages stopped on an error (a value nested beyond
    Python's recursion among them), or when what it read nests deeper than the limit (the
    depth of the values it decoded is the depth of their text: brackets in strings are not
    structure). A price list within the limit skips a walk of its 40 MB; the verdict is the
    same either way."""
    problem = json_depth_problem(text, limit)
    if problem is not None:
        raise AdapterError(problem[0], f"the Azure price list: {problem[1]}")


def _read(walker: _JsonPages, options: AdapterOptions) -> Parsed:
    sink = OfferSink(Parsed(FORMAT, Pack()), options.limits)
    table = instance_table(options)
    pending: list[tuple[_Item, Offer, date | None]] = []
    # The file is dated by its data: the newest effectiveStartDate in force on the day it is
    # read (a price Azure schedules for a later day does not date the file).
    in_force_on = options.as_of or options.today or date.today()
    newest: date | None = None
    pages: list[_Page] = []
    reader = _ItemReader(table, sink)
    days: dict[Any, date | None] = {}
    for event in walker.events():
        if event.__class__ is _Page:
            pages.append(event)
            continue
        value = event.value
        if value.__class__ is dict:
            raw_day = value.get("effectiveStartDate")
            try:
                started = days[raw_day]
            except KeyError:
                started = days[raw_day] = _day(raw_day)
            except TypeError:  # unhashable: never a day
                started = None
        else:
            started = None
        if started is not None and started <= in_force_on and (newest is None
                                                               or started > newest):
            newest = started
        offer = reader.read(event)
        if offer is not None:
            pending.append((event, offer, started))
    if not pages:
        raise AdapterError(None, "no price list page in the file")
    as_of = _as_of(options, newest, bool(pending))
    _page_notes(pages, sink.parsed)
    in_force = _newest_per_offer([(item, offer, started) for item, offer, started in pending
                                  if not _scheduled(item, started, as_of, sink)], sink)
    if in_force:
        sink.use_source(_source(as_of, options.as_of is not None))
    for item, offer in in_force:
        sink.add(offer, line=item.line, raw_text=item.text, column=f"{item.path}.retailPrice",
                 as_of=as_of)
    return sink.finish("item(s)")


def _newest_per_offer(items: list[tuple[_Item, Offer, date | None]], sink: OfferSink
                      ) -> list[tuple[_Item, Offer]]:
    """One price per offer: a file that lists an offer's old and new price (a reservation
    repriced inside the window, each with its effectiveStartDate) keeps the newest; the older
    ones are skipped, counted."""
    newest: dict[str, tuple[_Item, Offer, date | None]] = {}
    for entry in items:
        key = entry[1].item_key
        kept = newest.get(key)
        if kept is not None:
            sink.skip("an older price of an offer the file also lists at a later "
                      "effectiveStartDate")
            if (entry[2] or date.min) <= (kept[2] or date.min):
                continue
        newest[key] = entry
    return [(item, offer) for item, offer, _ in newest.values()]


def _scheduled(item: _Item, started: date | None, as_of: date, sink: OfferSink) -> bool:
    """Whether the item is a price scheduled after the file's date (rejected: the file gives
    the prices in force on its date, and this one is not yet)."""
    if started is None or started <= as_of:
        return False
    sink.reject(item.line, f"{item.path}.effectiveStartDate", (
        f"a scheduled price: in force from {started.isoformat()}, after the file's date "
        f"{as_of.isoformat()}; the file's prices are those in force on its date (give "
        f"--as-of {started.isoformat()} or later to read it)"), item.text)
    return True


class _ItemReader:
    """_read_item with the verdict on an item's shared fields (service, SKU, term, currency,
    unit: a price list's 100,000 items have a few dozen distinct sets) worked out once per
    distinct set; the region and the price are read per item."""

    def __init__(self, table: InstanceTable, sink: OfferSink) -> None:
        self.table, self.sink = table, sink
        self._known: dict[tuple[Any, ...], _Verdict] = {}

    def read(self, item: _Item) -> Offer | None:
        value = item.value
        if value.__class__ is not dict:
            return _read_item(item, self.table, self.sink)
        get = value.get
        key = (get("serviceName"), get("type"), get("armSkuName"), get("skuName"),
               get("productName"), get("isPrimaryMeterRegion") is False,
               get("reservationTerm"), get("currencyCode"), get("unitOfMeasure"))
        try:
            verdict = self._known[key]
        except KeyError:
            verdict = _verdict(value, self.table)
            # Only text (or absent) fields are remembered: 1, 1.0 and True are equal keys
            # that _text reads alike, but a text never equals a non-text.
            if all(part is None or part.__class__ is str or part is True or part is False
                   for part in key):
                self._known[key] = verdict
        except TypeError:  # an unhashable field (a list, an object): judged alone
            verdict = _verdict(value, self.table)
        return _apply(item, verdict, self.sink)


@dataclass(frozen=True)
class _Verdict:
    """What an item's fields other than its region and price decide, in _read_item's order:
    `refused` (skipped or rejected before the region is read), else the region is read, then
    `late` (a rejection after it), else the price."""

    refused: tuple[str, str, str] | None  # ("skip", "", reason) | ("reject", field, reason)
    spec: InstanceSpec | None = None
    term: str = ""
    late: tuple[str, str] | None = None  # (field, reason)
    currency: str = ""
    unit_written: str = ""
    hours: int = 1


def _read_item(item: _Item, table: InstanceTable, sink: OfferSink) -> Offer | None:
    """The item's offer; or None when it is rejected or skipped (recorded in `sink`)."""
    if not isinstance(item.value, dict):
        sink.reject(item.line, item.path, f"{item.path} is not an object of price fields",
                    item.text)
        return None
    return _apply(item, _verdict(item.value, table), sink)


def _verdict(value: dict[str, Any], table: InstanceTable) -> _Verdict:
    service, price_type = _text(value, "serviceName"), _text(value, "type")
    sku, sku_name = _text(value, "armSkuName"), _text(value, "skuName")
    skipped = _out_of_scope(value, service, price_type, sku, sku_name)
    if skipped is not None:
        return _Verdict(("skip", "", skipped))
    spec = table.instance(PROVIDER, sku)
    if spec is None:
        why = table.untracked(PROVIDER, sku)
        if why is not None:
            return _Verdict(("skip", "", f"untracked GPU instance ({why})"))
        if _GPU_NAME.search(sku):
            return _Verdict(("reject", "armSkuName", (
                f"unknown GPU instance {sku}: add it to data/instances.yaml with its source")))
        return _Verdict(("skip", "", "not a GPU instance"))
    term = _term(value, price_type, sku_name)
    if term is None or term.startswith("?"):
        field = "reservationTerm" if price_type == "Reservation" else "type"
        shown = _text(value, field) or "(none)"
        return _Verdict(("reject", field, (
            f"{field} {shown!r} is not a term the ledger knows (Consumption, Reservation of "
            "1 Year or 3 Years)")))
    currency, unit = _text(value, "currencyCode"), _text(value, "unitOfMeasure")
    if currency != "USD":
        return _Verdict(None, spec, term, ("currencyCode", (
            f"prices in {currency or '(no currency)'}: the ledger stores USD; query the API "
            "with currencyCode='USD'")))
    hourly = _HOURLY.fullmatch(unit)
    if hourly is None or int(hourly.group(1)) < 1:
        return _Verdict(None, spec, term, ("unitOfMeasure", (
            f"unit {unit!r} is not per hour (a VM price is per '1 Hour')")))
    reserved = term in TERM_HOURS
    return _Verdict(None, spec, term, None, currency,
                    _text(value, "reservationTerm") if reserved else unit,
                    TERM_HOURS[term] if reserved else int(hourly.group(1)))


def _apply(item: _Item, verdict: _Verdict, sink: OfferSink) -> Offer | None:
    """The offer of an item (an object) judged `verdict`: the region and price read here."""
    value, path = item.value, item.path
    refused = verdict.refused
    if refused is not None:
        if refused[0] == "skip":
            sink.skip(refused[2])
        else:
            sink.reject(item.line, f"{path}.{refused[1]}", refused[2], item.text)
        return None
    region = _text(value, "armRegionName")
    if not region:
        sink.reject(item.line, f"{path}.armRegionName",
                    "armRegionName is missing: the price cannot be tied to a region", item.text)
        return None
    if verdict.late is not None:
        sink.reject(item.line, f"{path}.{verdict.late[0]}", verdict.late[1], item.text)
        return None
    raw = value.get("retailPrice")
    price = positive_price(raw)
    if price is None:
        sink.reject(item.line, f"{path}.retailPrice",
                    f"retailPrice {written(raw)!r} is not a finite positive number", item.text)
        return None
    assert verdict.spec is not None
    return Offer(provider=PROVIDER, region=region, term=verdict.term, instance=verdict.spec,
                 price=price, price_written=written(raw), currency=verdict.currency,
                 unit_written=verdict.unit_written, hours=verdict.hours)


def _out_of_scope(value: dict[str, Any], service: str, price_type: str, sku: str,
                  sku_name: str) -> str | None:
    """Why an item is deliberately not read, or None."""
    if service and service != "Virtual Machines":
        return f"service {service!r}: only Virtual Machines are read"
    if price_type == "DevTestConsumption":
        return "DevTestConsumption: not a public price"
    if _text(value, "productName").endswith(" Windows"):
        return "Windows (productName ends in ' Windows'): only Linux prices are read"
    if sku_name.endswith(" Low Priority"):
        return "Low Priority: retired, and not the spot price"
    if value.get("isPrimaryMeterRegion") is False:
        return "isPrimaryMeterRegion false: the meter's primary region item is read instead"
    if not sku:
        return "no armSkuName: not a virtual machine size"
    return None


def _term(value: dict[str, Any], price_type: str, sku_name: str) -> str | None:
    if price_type == "Consumption":
        return "spot" if sku_name.endswith(" Spot") else "on_demand"
    if price_type == "Reservation":
        return _RESERVATION_TERMS.get(_text(value, "reservationTerm"), "?")
    return None


def _as_of(options: AdapterOptions, newest: date | None, needed: bool) -> date:
    if options.as_of is not None:
        return options.as_of
    if newest is None and needed:
        raise AdapterError(None, "no date: no item has an effectiveStartDate; give --as-of "
                                 "with the day the prices were retrieved")
    return newest or date.min


def _source(as_of: date, given: bool) -> SourceDecl:
    how = "as of" if given else "newest effectiveStartDate"
    return SourceDecl(
        key=f"azure-retail-prices-{as_of.isoformat()}", kind="vendor_datasheet",
        publisher="Microsoft", url=SOURCE_URL,
        title=f"Azure Retail Prices API, Virtual Machines ({how} {as_of.isoformat()})",
        published_on=as_of)


def _page_notes(pages: list[_Page], parsed: Parsed) -> None:
    for page in pages:
        where = f"page {page.index + 1}" if len(pages) > 1 else "the page"
        count = page.fields.get("Count")
        if isinstance(count, int) and not isinstance(count, bool) and count != page.items:
            parsed.notes.append(f"{where} says Count {count} but holds {page.items} items")
        currency = page.fields.get("BillingCurrency")
        if isinstance(currency, str) and currency != "USD":
            parsed.notes.append(f"{where} is billed in {currency}")
    last = pages[-1].fields.get("NextPageLink")
    if isinstance(last, str) and last:
        parsed.notes.append(f"the price list continues (the last page's NextPageLink is set): "
                            f"this file holds {len(pages)} page(s)")


def _text(value: dict[str, Any], key: str) -> str:
    raw = value.get(key)
    return raw.strip() if isinstance(raw, str) else ""


def _day(raw: Any) -> date | None:
    if not isinstance(raw, str) or len(raw) < 10:
        return None
    try:
        return date.fromisoformat(raw[:10])
    except ValueError:
        return None


def _depth(value: Any) -> int:
    """How deep a decoded JSON value nests (a scalar 0, {} 1, {"a": [1]} 2), level by level
    rather than by recursion."""
    depth, level = 0, [value]
    while True:
        containers = [v for v in level if isinstance(v, dict | list)]
        if not containers:
            return depth
        depth += 1
        level = [child for c in containers for child in (c.values() if isinstance(c, dict)
                                                         else c)]


class _JsonPages:
    """Walks the response text: each item of each page's `Items` is decoded alone, so that it
    keeps its own text, JSON path and line (json.loads of the whole would lose all three)."""

    def __init__(self, text: str, size: int) -> None:
        self.text, self.size = text, size
        self.pos = 0
        self._line, self._counted = 1, 0
        # The deepest nesting read: the file's structure (pages, Items) and its values.
        self.depth = 0

    def events(self) -> Iterator[_Item | _Page]:
        self._ws()
        first = self.text[self.pos : self.pos + 1]
        if first == "{":
            yield from self._page(0, "", 1)
        elif first == "[" and self._bare_items():
            items = 0   # a bare list of items (what a collector that joins pages keeps)
            for item in self._items("", 1):
                items += 1
                yield item
            yield _Page(0, {}, items)
        elif first == "[":
            yield from self._pages()
        else:
            raise AdapterError(1, 'not an Azure Retail Prices response: expected a JSON object '
                                  '({"Items": [...]}) or a list of them')
        self._ws()
        if self.pos < len(self.text):
            raise AdapterError(self._line_at(self.pos), "extra data after the JSON document")

    def object_key(self, what: str) -> tuple[int, str]:
        """The key at the cursor of an object and where it starts; the cursor moves past its
        ':'. AdapterError naming `what` when there is no string key and colon."""
        self._ws()
        start, key = self._value(what)
        if not isinstance(key, str):
            self._fail("a key (a string)")
        if not self._next_is(":"):
            self._fail("':' after a key")
        self.pos += 1
        return start, key

    def _bare_items(self) -> bool:
        """Whether the list at the cursor holds price items themselves ([{"retailPrice":
        ...}, ...]) rather than pages ([{"Items": [...]}, ...]): its first element says."""
        start = _WS.match(self.text, self.pos + 1).end()  # type: ignore[union-attr]
        try:
            first, _ = _DECODER.raw_decode(self.text, start)
        except (ValueError, RecursionError):
            return False
        return isinstance(first, dict) and "Items" not in first and bool(
            {"retailPrice", "armSkuName"} & set(first))

    def _pages(self) -> Iterator[_Item | _Page]:
        self.pos += 1
        index = 0
        if self._next_is("]"):
            return
        while True:
            if not self._next_is("{"):
                self._fail(f"page {index + 1} to be an object")
            yield from self._page(index, f"[{index}].", 2)
            index += 1
            if self._separator("]", f"',' or ']' after page {index}"):
                return

    def _page(self, index: int, prefix: str, depth: int) -> Iterator[_Item | _Page]:
        self.pos += 1  # "{"
        self.depth = max(self.depth, depth)
        fields: dict[str, Any] = {}
        items = 0
        if self._next_is("}"):
            yield _Page(index, fields, items)
            return
        while True:
            _, key = self.object_key("a key")
            if key == "Items" and self._next_is("["):
                for item in self._items(f"{prefix}Items", depth + 1):
                    items += 1
                    yield item
            else:
                _, value = self._value(f"the value of {key!r}")
                if not isinstance(value, dict | list):
                    fields[key] = value
                else:
                    self.depth = max(self.depth, depth + _depth(value))
            if self._separator("}", f"',' or '}}' in page {index + 1}"):
                yield _Page(index, fields, items)
                return

    def _items(self, path: str, depth: int) -> Iterator[_Item]:
        self.pos += 1  # "["
        self.depth = max(self.depth, depth)
        if self._next_is("]"):
            self.pos += 1
            return
        text, decode, find = self.text, _DECODER.raw_decode, self.text.find
        index = 0
        while True:
            # The well-formed case inline (100,000 items); anything else through _value and
            # _separator, which word the error.
            start = _WS.match(text, self.pos).end()  # type: ignore[union-attr]
            try:
                value, self.pos = decode(text, start)
            except (ValueError, RecursionError):
                start, value = self._value(f"{path}[{index}]")
            # A flat item (no bracket after its own) is one level deep without a look at it.
            if find("[", start, self.pos) >= 0 or find("{", start + 1, self.pos) >= 0:
                self.depth = max(self.depth, depth + _depth(value))
            elif self.depth <= depth:
                self.depth = depth + 1
            yield _Item(f"{path}[{index}]", self._line_at(start), text[start : self.pos], value)
            index += 1
            end = _ITEM_END.match(text, self.pos)
            if end is not None:
                self.pos = end.end()
                closing = end.group(1) == "]"
            else:
                closing = self._separator("]", f"',' or ']' after {path}[{index - 1}]")
            if closing:
                return

    def _value(self, what: str) -> tuple[int, Any]:
        self._ws()
        start = self.pos
        try:
            value, self.pos = _DECODER.raw_decode(self.text, start)
        except json.JSONDecodeError as exc:
            if exc.pos >= len(self.text.rstrip()) or exc.msg.startswith("Unterminated string"):
                self._truncated(what)
            raise AdapterError(exc.lineno, f"malformed JSON in {what}: {exc.msg} (line "
                                           f"{exc.lineno}, column {exc.colno})") from exc
        except (ValueError, RecursionError) as exc:  # a number of 4,300+ digits
            raise AdapterError(self._line_at(start), f"{what} cannot be read: {exc}") from exc
        return start, value

    def _separator(self, closing: str, expected: str) -> bool:
        """Past a ',' (False) or the closing bracket (True)."""
        self._ws()
        char = self.text[self.pos : self.pos + 1]
        if char not in (",", closing) or not char:
            self._fail(expected)
        self.pos += 1
        return char == closing

    def _next_is(self, char: str) -> bool:
        self._ws()
        return self.text.startswith(char, self.pos)

    def _ws(self) -> None:
        match = _WS.match(self.text, self.pos)
        self.pos = match.end() if match else self.pos

    def _fail(self, expected: str) -> NoReturn:
        if self.pos >= len(self.text):
            self._truncated(expected)
        found = self.text[self.pos : self.pos + 20]
        raise AdapterError(self._line_at(self.pos), f"malformed JSON: expected {expected}, "
                                                    f"found {found!r}")

    def _truncated(self, where: str) -> NoReturn:
        raise AdapterError(None, f"truncated JSON at byte {self.size:,}: the file ends inside "
                                 f"{where} (save the whole response)")

    def _line_at(self, pos: int) -> int:
        """The line of a position; positions only move forward, so lines are counted once."""
        if pos >= self._counted:
            self._line += self.text.count("\n", self._counted, pos)
            self._counted = pos
            return self._line
        return self.text.count("\n", 0, pos) + 1
