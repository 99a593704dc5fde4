"""The "azure-pricing-radar" tracker's per-region VM price files
(github.com/andy-diericks/azure-pricing-radar, `data/latest/vm-<region>.json`) as GPU-hour
prices: one `gpu_hour_price` row per GPU virtual machine size, region and term.

The tracker polls the Azure Retail Prices API (`serviceName eq 'Virtual Machines' and
armRegionName eq '<region>' and priceType eq 'Consumption'`) and writes one JSON object per
region, keyed `"<skuId>|<meterId>|<type>|<reservationTerm>"`, each value a subset of a Retail
Prices item: armRegionName, meterName, productName, retailPrice, skuName, unitOfMeasure,
unitPrice, and `savingsPlanPrice` on some pay-as-you-go meters. It is not the API's format
(azure_prices.py reads that): no armSkuName, no type field, no effectiveStartDate, no currency.

- The VM size is the skuName as Azure writes it for the meter ("ND96isrH100v5",
  "Standard_ND96amsr_A100_v4", "NC8as T4 v3"), turned into the armSkuName the raw API gives
  (`arm_sku_name`: "Standard_ND96isr_H100_v5"), so that the same offer read here and from the
  raw API is one identity (provider "azure", instance, region, term). The region is the
  meter's armRegionName (`westeurope`; the tracker's file is named `vm-eu-west`).
- Terms: a meter is on-demand, or spot when skuName ends in " Spot". Out of scope, skipped and
  counted with their reason: Windows (productName ends in " Windows", or " Win" as the
  NCCadsv5 series writes it), Cloud Services and Dedicated Host meters, Low Priority (retired;
  not spot), DevTestConsumption keys, VM sizes not named after a GPU the ledger tracks, GPU
  sizes data/instances.yaml marks untracked. A size named after a tracked GPU (H100, A100,
  MI300X...) that the table does not list is rejected, so that it is added with its source.
- A Spot meter at or above its size's pay-as-you-go price in the same file is not a spot
  discount (the H200 "Spot" meters carry the full price): skipped, counted.
- savingsPlanPrice: the tracker keeps the `retailPrice` of the API's "1 Year" savings-plan
  entry (scripts/fetch_prices.py). Skipped, counted: a savings plan is an hourly spend
  commitment across sizes and regions, not a reservation of this VM, and as `reserved_1y` it
  would take the identity of the raw API's real 1-year reservation price (a different price).
- unitPrice repeats retailPrice (the API's list price per unit): retailPrice is the price read.
- Prices are USD: the tracker queries the API without a currencyCode, whose default is USD.

Accounting is by price: every meter's retailPrice and every savingsPlanPrice is an accepted
row, a rejected row or a counted skip.

Dated by --as-of, else by the date in the file's name (`vm-eu-west_2026-08-15.json`: the day
the tracker had verified the file's prices; it rewrites a file only when a price changes). The
file holds no date of its own. Meters carry their JSON path (`["<key>"]`) and the line they
start on.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from datetime import date
from pathlib import PurePosixPath
from typing import Any, NamedTuple, NoReturn

from pipelines.inputs.adapters.azure_prices import (
    _GPU_NAME,
    _HOURLY,
    PROVIDER,
    _JsonPages,
    _text,
)
from pipelines.inputs.adapters.base import (
    AdapterError,
    AdapterOptions,
    Parsed,
    date_in_name,
    decode,
    slug,
)
from pipelines.inputs.adapters.guards import json_depth_problem
from pipelines.inputs.adapters.instances import InstanceSpec, InstanceTable
from pipelines.inputs.adapters.offers import (
    Offer,
    OfferSink,
    check_size,
    instance_table,
    positive_price,
    written,
)
from pipelines.inputs.packs import Pack, SourceDecl

FORMAT = "azure-pricing-radar"
SOURCE_URL = "https://github.com/andy-diericks/azure-pricing-radar"
CURRENCY = "USD"
_SNIFF_BYTES = 4096
# The head of a tracker file: `{` then a key "<skuId>|<meterId>|<type>|<reservationTerm>"
# whose value is an object (json.dumps(indent=0, sort_keys=True) writes one field a line).
_FIRST_KEY = re.compile(r'\{\s*"[^"|\\]+\|[^"|\\]+\|[A-Za-z]*\|[^"|\\]*"\s*:\s*\{')
_METER_FIELDS = re.compile(r'"(?:armRegionName|meterName|retailPrice|skuName)"\s*:')
# The tracker's scopes are named after the region, two of them not by its armRegionName.
_SCOPE_REGIONS = {"eu-west": "westeurope", "belgium": "belgiumcentral"}
_SCOPE = re.compile(r"vm-([a-z][a-z0-9]*(?:-[a-z][a-z0-9]*)*)")
# A GPU named in a compact meter name ("ND96isrH100v5"), before a version, "_" or the end;
# matched left to right, so GB200 is one token, never G + B200.
_NAME_GPU = re.compile(r"(?:GB[23]00|[HB][12]00|B300|A100|A10|MI3\d\dX|T4|V100|M60|L40S|L40|L4"
                       r"|P40|P100|K80)(?=v\d|_|$)")
_NAME_VERSION = re.compile(r"(?<=[A-Z0-9])(?=v\d+(?:_|$))")  # "H100v5" -> "H100_v5"
# Meter names whose VM size the raw API names otherwise: the meter "ND96asr_A100_v4" is the
# VM Standard_ND96asr_v4 (SkyPilot's Azure catalog, built from the API's armSkuName, lists
# Standard_ND96asr_v4 in westeurope at this meter's 35.357 on-demand and 7.77854 spot).
_SIZE_ALIASES = {"Standard_ND96asr_A100_v4": "Standard_ND96asr_v4"}
_WINDOWS = re.compile(r"\sWin(?:dows)?$", re.IGNORECASE)
_CLOUD_SERVICES = re.compile(r"Cloud\s?Services", re.IGNORECASE)
_DEDICATED_HOST = re.compile(r"Dedicated\s?Host", re.IGNORECASE)

SAVINGS_PLAN = ("savingsPlanPrice: the 1-year savings plan's hourly price (the tracker's "
                "fetch_prices.py), a spend commitment, not a reservation of the VM")
LOW_PRIORITY = "Low Priority: retired, and not the spot price"
NOT_GPU = "not a GPU instance the ledger tracks (its size names no tracked GPU)"
SPOT_AT_FULL_PRICE = ("a Spot meter at or above its size's pay-as-you-go price in the file: "
                      "not a spot discount")


def detect(name: str, data: bytes) -> str | None:
    """"azure-pricing-radar" when the head of the file is a JSON object whose first key is
    "<skuId>|<meterId>|<type>|<reservationTerm>" and a meter field (retailPrice...) follows."""
    head = data[:_SNIFF_BYTES].decode("utf-8-sig", errors="replace").lstrip()
    if not head.startswith("{"):
        return None
    first = _FIRST_KEY.match(head)
    if first is None or _METER_FIELDS.search(head, first.end()) is None:
        return None
    return FORMAT


def arm_sku_name(meter_size: str) -> str:
    """The armSkuName of the VM size a meter's skuName names (its " Spot" or " Low Priority"
    cut off): "ND96isrH100v5" -> "Standard_ND96isr_H100_v5", "NC8as T4 v3" ->
    "Standard_NC8as_T4_v3"; a name that already is one ("Standard_ND96amsr_A100_v4") stays."""
    name = meter_size.strip()
    if not name.startswith("Standard_"):
        name = "_".join(name.split())
        name = _NAME_GPU.sub(lambda m: ("_" if m.start() and name[m.start() - 1].isalpha()
                                        else "") + m.group(), name)
        name = "Standard_" + _NAME_VERSION.sub("_", name)
    return _SIZE_ALIASES.get(name, name)


def _named_gpu(sku: str) -> bool:
    """Whether a size is named after a GPU the ledger tracks: a part after the size
    ("Standard_ND96isr_H100_v5"), so that a storage size such as Standard_L40s_v3 is not."""
    return any(_GPU_NAME.fullmatch(part) for part in sku.split("_")[2:])


class _Meter(NamedTuple):
    key: str
    path: str  # '["<key>"]'
    line: int
    text: str  # the key and its value as the file wrote them
    value: Any


class _Candidate(NamedTuple):
    meter: _Meter
    offer: Offer


class _Meters(_JsonPages):
    """The top-level object's meters, each decoded alone so that it keeps its own text, JSON
    path and line; azure_prices' walker words the errors (truncated, malformed, extra data)."""

    def meters(self) -> Iterator[_Meter]:
        self._ws()
        if not self.text.startswith("{", self.pos):
            raise AdapterError(1, "not an azure-pricing-radar file: expected a JSON object of "
                                  'meters ({"<skuId>|<meterId>|<type>|<term>": {...}})')
        self.pos += 1
        if self._next_is("}"):
            self.pos += 1
        else:
            while True:
                start, key = self.object_key("a meter's key")
                path = f"[{json.dumps(key, ensure_ascii=False)}]"
                _, value = self._value(path)
                yield _Meter(key, path, self._line_at(start), self.text[start : self.pos], value)
                if self._separator("}", f"',' or '}}' after {path}"):
                    break
        self._ws()
        if self.pos < len(self.text):
            raise AdapterError(self._line_at(self.pos), "extra data after the JSON document")

    def _truncated(self, where: str) -> NoReturn:
        raise AdapterError(None, f"truncated JSON at byte {self.size:,}: the file ends inside "
                                 f"{where} (save the whole file)")


def parse(name: str, data: bytes, options: AdapterOptions) -> Parsed:
    """Read one region's file into Linux GPU VM offers."""
    check_size(data, options.limits)
    text = decode(data)
    problem = json_depth_problem(text, options.limits.json_max_depth)
    if problem is not None:
        raise AdapterError(problem[0], f"the azure-pricing-radar file: {problem[1]}")
    sink = OfferSink(Parsed(FORMAT, Pack()), options.limits)
    reader = _MeterReader(instance_table(options), sink)
    meters = 0
    for meter in _Meters(text, len(data)).meters():
        meters += 1
        reader.read(meter)
    if not meters:
        raise AdapterError(1, "an empty price list: the file's object holds no meter")
    scope = _scope(name)
    region = _file_region(scope, reader.regions, sink.parsed)
    candidates = _in_region(reader.candidates, region, sink)
    offers = _distinct(candidates, sink)
    offers = _discounted_spot(offers, sink)
    if offers:
        as_of = options.as_of or date_in_name(name)
        if as_of is None:
            raise AdapterError(None, "no date: the file holds none; name it with the day the "
                                     "tracker verified it (vm-<region>_YYYY-MM-DD.json) or "
                                     "give --as-of")
        sink.use_source(_source(region, scope, as_of, options.as_of is not None))
        for meter, offer in offers:
            sink.add(offer, line=meter.line, raw_text=meter.text,
                     column=f"{meter.path}.retailPrice", as_of=as_of)
    return sink.finish("price(s)")


class _MeterReader:
    """Judges each meter: its savingsPlanPrice skipped, its retailPrice an offer (kept as a
    candidate until the file's region is known), a rejection or a skip."""

    def __init__(self, table: InstanceTable, sink: OfferSink) -> None:
        self.table, self.sink = table, sink
        self.candidates: list[_Candidate] = []
        self.regions: Counter[str] = Counter()
        self._sizes: dict[str, tuple[str, InstanceSpec | None, str | None]] = {}

    def read(self, meter: _Meter) -> None:
        value, sink = meter.value, self.sink
        if value.__class__ is not dict:
            sink.reject(meter.line, meter.path, f"{meter.path} is not an object of price "
                                                "fields", meter.text)
            return
        if "savingsPlanPrice" in value:
            sink.skip(SAVINGS_PLAN)
        region = _text(value, "armRegionName")
        if region:
            self.regions[region] += 1
        offer = self._offer(meter, value, region)
        if offer is not None:
            self.candidates.append(_Candidate(meter, offer))

    def _offer(self, meter: _Meter, value: dict[str, Any], region: str) -> Offer | None:
        sink, path = self.sink, meter.path
        parts = meter.key.split("|")
        if len(parts) != 4:
            sink.reject(meter.line, path, "the key is not <skuId>|<meterId>|<type>|"
                                          "<reservationTerm>: the price type is not known",
                        meter.text)
            return None
        price_type = parts[2].strip()
        if price_type == "DevTestConsumption":
            sink.skip("DevTestConsumption: not a public price")
            return None
        if price_type != "Consumption":
            sink.reject(meter.line, path, (
                f"price type {price_type or '(none)'!r} in the key: the tracker's files hold "
                "Consumption meters only (pay-as-you-go and Spot)"), meter.text)
            return None
        product = _text(value, "productName")
        if _WINDOWS.search(product):
            sink.skip("Windows (productName ends in ' Windows' or ' Win'): only Linux prices "
                      "are read")
            return None
        if _CLOUD_SERVICES.search(product):
            sink.skip("Cloud Services: a role price, not a virtual machine size")
            return None
        if _DEDICATED_HOST.search(product):
            sink.skip("Dedicated Host: priced per physical host, not per virtual machine")
            return None
        field = "skuName" if _text(value, "skuName") else "meterName"
        size = _text(value, field)
        if not size:
            sink.reject(meter.line, f"{path}.skuName", "no skuName nor meterName: the VM size "
                                                       "is not known", meter.text)
            return None
        if size.endswith(" Low Priority"):
            sink.skip(LOW_PRIORITY)
            return None
        term = "spot" if size.endswith(" Spot") else "on_demand"
        sku, spec, why = self._size(size.removesuffix(" Spot"))
        if spec is None:
            if why is not None:
                sink.skip(why)
            elif _named_gpu(sku):
                sink.reject(meter.line, f"{path}.{field}", (
                    f"unknown GPU instance {sku} ({field} {size!r}): add it to "
                    "data/instances.yaml with its source"), meter.text)
            else:
                sink.skip(NOT_GPU)
            return None
        if not region:
            sink.reject(meter.line, f"{path}.armRegionName",
                        "armRegionName is missing: the price cannot be tied to a region",
                        meter.text)
            return None
        unit = _text(value, "unitOfMeasure")
        hourly = _HOURLY.fullmatch(unit)
        if hourly is None or int(hourly.group(1)) < 1:
            sink.reject(meter.line, f"{path}.unitOfMeasure", (
                f"unit {unit!r} is not per hour (a VM price is per '1 Hour')"), meter.text)
            return None
        raw = value.get("retailPrice")
        price = positive_price(raw)
        if price is None:
            sink.reject(meter.line, f"{path}.retailPrice",
                        f"retailPrice {written(raw)!r} is not a finite positive number",
                        meter.text)
            return None
        return Offer(provider=PROVIDER, region=region, term=term, instance=spec, price=price,
                     price_written=written(raw), currency=CURRENCY, unit_written=unit,
                     hours=int(hourly.group(1)))

    def _size(self, size: str) -> tuple[str, InstanceSpec | None, str | None]:
        """(armSkuName, its spec, why it is untracked), once per size."""
        known = self._sizes.get(size)
        if known is None:
            sku = arm_sku_name(size)
            spec = self.table.instance(PROVIDER, sku)
            why = self.table.untracked(PROVIDER, sku) if spec is None else None
            known = self._sizes[size] = (sku, spec, f"untracked GPU instance ({why})"
                                         if why is not None else None)
        return known


def _scope(name: str) -> str | None:
    """The tracker's scope a file's name keeps ("vm-eu-west_2026-08-15.json" -> "eu-west")."""
    found = _SCOPE.match(PurePosixPath(name.replace("\\", "/")).name)
    return found.group(1) if found else None


def _file_region(scope: str | None, regions: Counter[str], parsed: Parsed) -> str:
    """The region the file is the price list of: the armRegionName most of its meters give
    (the tracker queries one region a file); a note when the name says another."""
    region = regions.most_common(1)[0][0] if regions else ""
    named = _SCOPE_REGIONS.get(scope, scope) if scope else None
    if named and region and named != region:
        parsed.notes.append(f"the file's name says vm-{scope} ({named}) but its meters are "
                            f"{region}'s: read as {region}")
    return region


def _in_region(candidates: list[_Candidate], region: str,
               sink: OfferSink) -> list[_Candidate]:
    """The offers of the file's region; a meter of another region is rejected (a file is one
    region's price list, and its source is named after it)."""
    kept = []
    for candidate in candidates:
        meter, offer = candidate
        if offer.region == region:
            kept.append(candidate)
            continue
        sink.reject(meter.line, f"{meter.path}.armRegionName", (
            f"armRegionName {offer.region!r} in the price list of {region} (the region of the "
            "file's other meters): a file holds one region's prices"), meter.text)
    return kept


def _distinct(candidates: list[_Candidate], sink: OfferSink) -> list[_Candidate]:
    """One price per offer: the same offer under a second meter is skipped at the same price,
    rejected at another."""
    first: dict[str, _Candidate] = {}
    kept = []
    for candidate in candidates:
        meter, offer = candidate
        seen = first.get(offer.item_key)
        if seen is None:
            first[offer.item_key] = candidate
            kept.append(candidate)
        elif seen.offer.price == offer.price:
            sink.skip("the same offer under another meter, at the same price")
        else:
            sink.reject(meter.line, f"{meter.path}.retailPrice", (
                f"a second price for {offer.instance.instance_type} {offer.region} "
                f"{offer.term}: {offer.price_written} here, {seen.offer.price_written} at line "
                f"{seen.meter.line}"), meter.text)
    return kept


def _discounted_spot(candidates: list[_Candidate], sink: OfferSink) -> list[_Candidate]:
    """The offers without a Spot meter priced at or above its size's pay-as-you-go price."""
    on_demand = {(c.offer.instance.instance_type, c.offer.region): c.offer.price
                 for c in candidates if c.offer.term == "on_demand"}
    kept = []
    for candidate in candidates:
        offer = candidate.offer
        full = on_demand.get((offer.instance.instance_type, offer.region))
        if offer.term == "spot" and full is not None and offer.price >= full:
            sink.skip(SPOT_AT_FULL_PRICE)
            continue
        kept.append(candidate)
    return kept


def _source(region: str, scope: str | None, as_of: date, given: bool) -> SourceDecl:
    how = "as of" if given else "verified by the tracker on"
    path = f", data/latest/vm-{scope}.json" if scope else ""
    return SourceDecl(
        key=f"azure-pricing-radar-{slug(region)}-{as_of.isoformat()}", kind="dataset",
        publisher="azure-pricing-radar (Azure Retail Prices API, re-keyed)", url=SOURCE_URL,
        title=f"azure-pricing-radar, Azure VM retail prices in {region}{path} ({how} "
              f"{as_of.isoformat()})",
        published_on=as_of)
