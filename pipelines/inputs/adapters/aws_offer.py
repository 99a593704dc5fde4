"""The AWS Price List Bulk API offer file for Amazon EC2 (`.../offers/v1.0/aws/AmazonEC2/current/
<region>/index.json`) as GPU-hour prices: one `gpu_hour_price` row per GPU instance and term.

A region's file is hundreds of megabytes, so it is streamed (ijson, the yajl2 C backend), never
loaded whole: a first pass over `products` keeps only the SKUs in scope, a second and a third
pass over `terms.OnDemand` and `terms.Reserved` read the prices of those SKUs alone. Memory is
the file's bytes plus the few hundred products kept; before ijson sees the bytes, a cheap scan
refuses nesting deeper than SPECLEDGER_JSON_MAX_DEPTH and numbers of 1,000+ digits (either
would make the C parser exhaust memory or crash the process, not raise).

Accounting, by product and by term:
- a product is in scope when it is a Compute Instance on Linux, Shared tenancy, no
  pre-installed software, capacitystatus Used (not a capacity reservation's row) and, when the
  file says, marketoption OnDemand. Of those, an instance type in data/instances.yaml is kept;
  one whose `gpu` attribute is above 0 but which the table neither lists nor marks untracked is
  a rejected row (a new GPU instance: add it with its source). Every other product is a
  skipped line, counted with its reason in the notes;
- each term of a kept product is a row, a rejected row, or a skipped line: the on-demand term,
  and of the reserved terms only the standard "No Upfront" ones, whose price is hourly (a
  Partial or All Upfront term splits its price between a fee and an hourly rate; convertible
  terms buy flexibility, not capacity: both are skipped). Terms of other products are not read.

The value is USD per GPU-hour: the instance's hourly price divided by its GPUs. Dated by
--as-of, else the file's publicationDate; the source is the file (`aws-price-list-ec2-<region>-
<publication date>`). Rows carry no line (the stream parser does not report positions); their
rejections name the JSON path, `products.<sku>...` or `terms.OnDemand.<sku>...`.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from typing import Any

import ijson
import numpy as np

from pipelines.inputs.adapters.base import AdapterError, AdapterOptions, Parsed
from pipelines.inputs.adapters.guards import whole
from pipelines.inputs.adapters.instances import InstanceSpec, InstanceTable
from pipelines.inputs.adapters.offers import (
    Offer,
    OfferSink,
    check_size,
    instance_table,
    positive_price,
    written,
)
from pipelines.inputs.limits import InputLimits
from pipelines.inputs.packs import Pack, SourceDecl

FORMAT = "aws-price-list"
PROVIDER = "aws"
OFFER_CODE = "AmazonEC2"
OFFERS_URL = "https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current"
_SNIFF_BYTES = 64 * 1024
_BOM = b"\xef\xbb\xbf"
_FORMAT_VERSION = re.compile(r'^\{\s*"formatVersion"\s*:|"formatVersion"\s*:\s*"v')
_OFFER_CODE = re.compile(r'"offerCode"\s*:\s*"')
_HOURLY_UNITS = {"hrs", "hours", "hour", "hr"}
_RESERVED_LENGTHS = {"1yr": "reserved_1y", "3yr": "reserved_3y"}
_CHUNK = 8 << 20  # bytes scanned at a time by the guard
_LONG_NUMBER = 1000  # digits: yajl2_c crashes on integers beyond Python's 4,300-digit limit
_DIGITS_AS_ONES = bytes.maketrans(b"0123456789", b"1" * 10)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_HEADER_KEYS = ("formatVersion", "offerCode", "version", "publicationDate")


def detect(name: str, data: bytes) -> str | None:
    """"aws-price-list" when the head of a JSON object has a `formatVersion` and an
    `offerCode`: the Price List Bulk API's offer file (read only for AmazonEC2)."""
    head = data[:_SNIFF_BYTES].decode("utf-8-sig", errors="replace").lstrip()
    if not head.startswith("{"):
        return None
    return FORMAT if _FORMAT_VERSION.search(head) and _OFFER_CODE.search(head) else None


@dataclass(frozen=True)
class _Kept:
    """A product in scope: the instance it is, where, and the product as the file wrote it."""

    spec: InstanceSpec
    region: str
    product: dict[str, Any]


def parse(name: str, data: bytes, options: AdapterOptions) -> Parsed:
    """Stream one EC2 offer file into Linux GPU instance offers."""
    limits = options.limits
    check_size(data, limits)
    if not data or data.isspace():  # not data.strip(): that copies the whole file
        raise AdapterError(None, "empty file")
    start = len(_BOM) if data.startswith(_BOM) else 0
    _guard(data, limits)
    header = _header(data, start)
    if header.get("offerCode") != OFFER_CODE:
        raise AdapterError(None, f"offer {header.get('offerCode')!r}: only the {OFFER_CODE} "
                                 "offer file is read")
    published = _day(header.get("publicationDate"))
    as_of = options.as_of or published
    if as_of is None:
        raise AdapterError(None, "no publicationDate in the offer file; give --as-of")
    sink = OfferSink(Parsed(FORMAT, Pack()), limits)
    kept, regions = _products(data, start, instance_table(options), sink)
    if kept:
        region = next(iter(regions)) if len(regions) == 1 else "multi-region"
        sink.use_source(_source(region, published or as_of, header))
    priced: set[str] = set()
    for kind in ("OnDemand", "Reserved"):
        for sku, codes in _stream(data, start, f"terms.{kind}"):
            product = kept.get(sku)
            if product is not None and _read_terms(kind, sku, codes, product, as_of, sink):
                priced.add(sku)
    unpriced = len(kept) - len(priced)
    if unpriced:
        sink.parsed.notes.append(f"{unpriced} GPU instance product(s) have no on-demand or "
                                 "standard No Upfront reserved price in the file")
    return sink.finish("product(s) or term(s)")


def _guard(data: bytes, limits: InputLimits) -> None:
    """Refuse what the C parser cannot survive, scanning the bytes in chunks: nesting deeper
    than the limit (its memory grows with the square of the depth) and a number of 1,000+
    digits (an integer past 4,300 digits crashes it). Brackets inside strings count too: a
    price list has none, and a file needs dozens of unbalanced ones to be refused."""
    view = memoryview(data)
    needle = b"1" * _LONG_NUMBER
    depth = deepest = 0
    for at in range(0, len(data), _CHUNK):
        overlap = bytes(view[max(at - _LONG_NUMBER, 0) : at + _CHUNK])
        if overlap.translate(_DIGITS_AS_ONES).find(needle) != -1:
            raise AdapterError(None, f"a number of {_LONG_NUMBER:,}+ digits: refused unread")
        brackets = np.frombuffer(bytes(view[at : at + _CHUNK]).translate(None, _NOT_BRACKETS),
                                 dtype=np.uint8)
        if not len(brackets):
            continue
        opening = (brackets == ord("[")) | (brackets == ord("{"))
        levels = np.cumsum(np.where(opening, 1, -1).astype(np.int32)) + depth
        deepest, depth = max(deepest, int(levels.max())), int(levels[-1])
        if deepest > limits.json_max_depth:
            raise AdapterError(None, f"JSON nested deeper than {limits.json_max_depth} levels "
                                     "(SPECLEDGER_JSON_MAX_DEPTH): refused unread")


def _stream(data: bytes, start: int, prefix: str) -> Iterator[tuple[str, Any]]:
    """(key, value) of the object at `prefix`, built one at a time; AdapterError when the
    JSON is damaged (a truncated file is one: its prices are in the part that is missing)."""
    source = io.BytesIO(data)
    source.seek(start)
    try:
        yield from ijson.kvitems(source, prefix)
    except ijson.JSONError as exc:
        raise _damaged(exc, source.tell(), len(data)) from exc
    except (ValueError, OverflowError, RecursionError, MemoryError) as exc:
        raise AdapterError(None, f"the offer file cannot be read: {exc}") from exc


def _damaged(exc: Exception, position: int, size: int) -> AdapterError:
    reason = " ".join(str(exc).split("\n")[0].split())
    if "premature EOF" in reason or position >= size:
        return AdapterError(None, f"truncated JSON at byte {size:,}: the offer file ends "
                                  "before its end (download it again)")
    return AdapterError(None, f"malformed JSON near byte {position:,}: {reason}")


def _header(data: bytes, start: int) -> dict[str, Any]:
    """The top-level scalars before `products` (formatVersion, offerCode, publicationDate):
    read from the first events only, never by a pass over the whole file."""
    source = io.BytesIO(data)
    source.seek(start)
    header: dict[str, Any] = {}
    try:
        for prefix, event, value in ijson.parse(source):
            if prefix == "" and event == "map_key" and value in ("products", "terms"):
                break
            if prefix in _HEADER_KEYS and event in ("string", "number"):
                header[prefix] = value
            if prefix == "" and event == "end_map":
                break
    except ijson.JSONError as exc:
        raise _damaged(exc, source.tell(), len(data)) from exc
    if "publicationDate" not in header:  # written after the products: one more pass to find it
        header.update(_stream_scalar(data, start, "publicationDate"))
    if not header.get("formatVersion"):
        raise AdapterError(None, "not an AWS Price List offer file: no formatVersion")
    return header


def _stream_scalar(data: bytes, start: int, key: str) -> dict[str, Any]:
    source = io.BytesIO(data)
    source.seek(start)
    try:
        found = next(ijson.items(source, key), None)
    except ijson.JSONError as exc:
        raise _damaged(exc, source.tell(), len(data)) from exc
    return {key: found} if isinstance(found, str) else {}


def _products(data: bytes, start: int, table: InstanceTable,
              sink: OfferSink) -> tuple[dict[str, _Kept], set[str]]:
    """The first pass: products in scope (by SKU) and the regions of the file's instances."""
    kept: dict[str, _Kept] = {}
    regions: set[str] = set()
    for sku, product in _stream(data, start, "products"):
        path = f"products.{sku}"
        attributes = product.get("attributes") if isinstance(product, dict) else None
        if not isinstance(attributes, dict):
            sink.reject(None, path, "not a product with attributes", _json(product))
            continue
        skipped = _out_of_scope(product, attributes)
        if skipped is not None:
            sink.skip(skipped)
            continue
        region = _text(attributes, "regionCode") or _text(attributes, "location")
        if len(regions) < 1000:
            regions.add(region)
        instance_type = _text(attributes, "instanceType")
        spec = table.instance(PROVIDER, instance_type)
        if spec is None:
            why = table.untracked(PROVIDER, instance_type)
            if why is not None:
                sink.skip(f"untracked GPU instance ({why})")
            elif (whole(_text(attributes, "gpu")) or 0) > 0:
                sink.reject(None, f"{path}.attributes.instanceType",
                            f"unknown GPU instance {instance_type}: add it to "
                            "data/instances.yaml with its source", _json(product))
            else:
                sink.skip("not a GPU instance")
            continue
        if not region:
            sink.reject(None, f"{path}.attributes.regionCode",
                        "no regionCode or location: the price cannot be tied to a region",
                        _json(product))
            continue
        kept[sku] = _Kept(spec, region, product)
    return kept, regions


def _out_of_scope(product: dict[str, Any], attributes: dict[str, Any]) -> str | None:
    """Why a product is deliberately not read, or None."""
    family = product.get("productFamily")
    if not isinstance(family, str) or not family.startswith("Compute Instance"):
        return "not a Compute Instance (storage, data transfer, IPs...)"
    checks = (("operatingSystem", "Linux", "not Linux"),
              ("tenancy", "Shared", "not Shared tenancy (Dedicated, Host)"),
              ("preInstalledSw", "NA", "pre-installed software (SQL Server...)"),
              ("capacitystatus", "Used", "a capacity reservation's row (capacitystatus not "
                                         "Used)"))
    for key, wanted, reason in checks:
        if _text(attributes, key) != wanted:
            return reason
    market = _text(attributes, "marketoption")
    if market and market != "OnDemand":
        return f"marketoption {market} (capacity blocks are not read)"
    return None


def _read_terms(kind: str, sku: str, codes: Any, product: _Kept, as_of: date,
                sink: OfferSink) -> bool:
    """Rows for one kept SKU's terms of one kind; True when at least one became a row."""
    path = f"terms.{kind}.{sku}"
    if not isinstance(codes, dict):
        sink.reject(None, path, "not a mapping of offer terms", _json(codes))
        return False
    added = False
    for code, term in codes.items():
        where = f"{path}.{code}"
        text = _json({"term": term, "product": product.product})
        if not isinstance(term, dict):
            sink.reject(None, where, "not an offer term", text)
            continue
        term_name = _term(kind, term, where, text, sink)
        if term_name is None:
            continue
        offer, column = _priced(term, term_name, product, where, text, sink)
        if offer is not None:
            sink.add(offer, line=None, raw_text=text, column=column, as_of=as_of)
            added = True
    return added


def _term(kind: str, term: dict[str, Any], where: str, text: str,
          sink: OfferSink) -> str | None:
    """on_demand / reserved_1y / reserved_3y; None when skipped or rejected."""
    if kind == "OnDemand":
        return "on_demand"
    attributes = term.get("termAttributes")
    attributes = attributes if isinstance(attributes, dict) else {}
    if (_text(attributes, "OfferingClass") != "standard"
            or _text(attributes, "PurchaseOption") != "No Upfront"):
        sink.skip("reserved terms other than standard No Upfront (convertible, partial or "
                  "all upfront)")
        return None
    length = _text(attributes, "LeaseContractLength")
    if length not in _RESERVED_LENGTHS:
        sink.reject(None, f"{where}.termAttributes.LeaseContractLength",
                    f"lease {length or '(none)'!r} is not 1yr or 3yr", text)
        return None
    return _RESERVED_LENGTHS[length]


def _priced(term: dict[str, Any], term_name: str, product: _Kept, where: str, text: str,
            sink: OfferSink) -> tuple[Offer | None, str]:
    """The term's hourly offer, or (None, path) when it is rejected."""
    dimensions = term.get("priceDimensions")
    dimensions = dimensions if isinstance(dimensions, dict) else {}
    hourly = [(rate, d) for rate, d in dimensions.items()
              if isinstance(d, dict) and _text(d, "unit").casefold() in _HOURLY_UNITS]
    if not hourly:
        units = sorted({_text(d, "unit") for d in dimensions.values() if isinstance(d, dict)})
        sink.reject(None, f"{where}.priceDimensions", "no hourly price dimension (units: "
                                                      f"{', '.join(units) or 'none'})", text)
        return None, where
    rate, dimension = hourly[0]
    column = f"{where}.priceDimensions.{rate}.pricePerUnit.USD"
    prices = dimension.get("pricePerUnit")
    prices = prices if isinstance(prices, dict) else {}
    if "USD" not in prices:
        currencies = ", ".join(sorted(str(c) for c in prices)) or "no currency"
        sink.reject(None, column, f"price in {currencies}: the ledger stores USD", text)
        return None, column
    price = positive_price(prices["USD"])
    if price is None:
        sink.reject(None, column, f"price {written(prices['USD'])!r} is not a finite positive "
                                  "number", text)
        return None, column
    return Offer(provider=PROVIDER, region=product.region, term=term_name,
                 instance=product.spec, price=price, price_written=written(prices["USD"]),
                 currency="USD", unit_written=_text(dimension, "unit")), column


def _source(region: str, published: date, header: dict[str, Any]) -> SourceDecl:
    url = f"{OFFERS_URL}/{region}/index.json" if region != "multi-region" else \
        f"{OFFERS_URL}/index.json"
    version = header.get("version")
    return SourceDecl(
        key=f"aws-price-list-ec2-{region}-{published.isoformat()}", kind="vendor_datasheet",
        publisher="Amazon Web Services", url=url,
        title=(f"AWS Price List, Amazon EC2 offer file ({region}"
               f"{f', version {version}' if version else ''}, published "
               f"{published.isoformat()})"),
        published_on=published)


def _text(mapping: dict[str, Any], key: str) -> str:
    raw = mapping.get(key)
    return raw.strip() if isinstance(raw, str) else ""


def _day(raw: Any) -> date | None:
    if not isinstance(raw, str) or len(raw) < 10:
        return None
    try:
        return date.fromisoformat(raw[:10])
    except ValueError:
        return None


def _json(value: Any) -> str:
    return json.dumps(value, default=str, ensure_ascii=False)
