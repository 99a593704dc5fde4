"""A gpuhunt catalog (dstack's GPU price catalogs, github.com/dstackai/gpuhunt) as GPU-hour
prices: one offer per GPU instance, location and term (on-demand or spot), per instance-hour.

gpuhunt publishes each provider's catalog at `{GPUHUNT_CATALOG_URL}/{provider}/{version}/
catalog.zip`, a zip holding `{provider}.csv` (gpuhunt's v2 columns: instance_name, location,
price, cpu, memory, gpu_count, gpu_name, gpu_memory, spot, ...). The weekly fetch keeps it as
`gpuhunt-{provider}-{YYYY-MM-DD}.zip`, dated by the catalog's publication (its version when
that is a date, else the archive's Last-Modified), never by the fetch; a bare
`gpuhunt-{provider}-{date}.csv` reads the same. Rows are parsed by gpuhunt's own reader
(`item_from_row`), so its format's history (TPU prefixes, columns added later) is its to know.

Which GPU an instance carries: a listed instance (data/instances.yaml `instances:`) must agree
on the GPU count; an unlisted one is priced by its gpuhunt GPU name (`gpuhunt_gpus:`) when that
means one ledger item and the row carries the whole GPU's memory (less is a fraction: a MIG
slice or a shared card, skipped); a name that covers two items (H100 80 GB: SXM5 or PCIe), or
one nobody listed, is rejected for review; an untracked GPU is skipped. GCP's DWS calendar-mode
rows are a fixed-window reservation, not on-demand: skipped. The same offer listed twice (two
disk sizes, two zones of one location) keeps its lowest price.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import PurePosixPath

from gpuhunt._internal.storage import CATALOG_V2_FIELDS, item_from_row

from pipelines.inputs.adapters.base import (
    AdapterError,
    AdapterOptions,
    Parsed,
    date_in_name,
    decode,
    header_columns,
)
from pipelines.inputs.adapters.instances import InstanceSpec, InstanceTable
from pipelines.inputs.adapters.offers import (
    Offer,
    OfferSink,
    check_size,
    instance_table,
    positive_price,
)
from pipelines.inputs.csv_records import CsvDamage, Record, csv_records
from pipelines.inputs.packs import Pack, SourceDecl

FORMAT = "gpuhunt-catalog"
SOURCE_URL = "https://github.com/dstackai/gpuhunt"
REQUIRED = ("instance_name", "location", "price", "gpu_count", "gpu_name", "spot")
_NAME = re.compile(r"gpuhunt[-_]([a-z][a-z0-9]*)[-_]\d{4}-\d{2}-\d{2}\.(zip|csv)",
                   re.IGNORECASE)
_ZIP_MAGIC = b"PK\x03\x04"
# gpuhunt's provider names where data/instances.yaml uses another.
_TABLE_PROVIDER = {"lambdalabs": "lambda"}
# A row with less memory per GPU than this share of the whole GPU's is a fraction of it.
_WHOLE_GPU_SHARE = 0.9
_DWS_FLAG = "gcp-dws-calendar-mode"


def detect(name: str, data: bytes) -> str | None:
    """"gpuhunt-catalog" for a zip named gpuhunt-<provider>-<date>.zip, or a CSV whose header
    is gpuhunt's (instance_name, location, price, ..., gpu_name, spot)."""
    if data[:4] == _ZIP_MAGIC:
        return FORMAT if _NAME.fullmatch(PurePosixPath(name).name) else None
    first = data[:4096].decode("utf-8-sig", errors="replace").split("\n", 1)[0].rstrip("\r")
    columns = {c.strip() for c in first.split(",")}
    return FORMAT if columns.issuperset(REQUIRED) else None


def provider_of(name: str) -> str | None:
    match = _NAME.fullmatch(PurePosixPath(name.replace("\\", "/")).name)
    return match.group(1).lower() if match else None


def parse(name: str, data: bytes, options: AdapterOptions) -> Parsed:
    """Read one provider's gpuhunt catalog into on-demand and spot GPU instance offers; an
    empty or broken catalog is refused whole, with its reason."""
    provider = provider_of(name)
    if provider is None:
        raise AdapterError(None, f"cannot tell the provider of {name!r}: name a gpuhunt "
                                 "catalog gpuhunt-<provider>-<YYYY-MM-DD>.zip (or .csv)")
    as_of = options.as_of or date_in_name(name)
    if as_of is None:  # unreachable by the name rule; kept for a caller giving another name
        raise AdapterError(None, "as_of needed: the catalog's publication date")
    check_size(data, options.limits)
    text = _catalog_text(provider, data, options.limits.max_file_bytes)
    sink = OfferSink(Parsed(FORMAT, Pack()), options.limits)
    catalog = _Catalog(provider, _TABLE_PROVIDER.get(provider, provider),
                       instance_table(options), sink)
    records = csv_records(text)
    header = _header(records)
    for number, raw_text, values in records:
        if isinstance(values, CsvDamage):
            sink.reject(number, "row", values.reason, raw_text)
        elif len(values) != len(header):
            sink.reject(number, "row", f"expected {len(header)} fields as in the header, got "
                                       f"{len(values)}", raw_text)
        elif any(v.strip() for v in values):
            _read_row(catalog, number, raw_text, dict(zip(header, values, strict=True)))
    if not catalog.best and not sink.parsed.rejected and not sink.parsed.skipped_lines:
        raise AdapterError(None, f"empty catalog: {provider}.csv has a header and no offers")
    if catalog.best:
        sink.use_source(_source(provider, as_of))
    for (number, raw_text, offer) in catalog.best.values():
        sink.add(offer, line=number, raw_text=raw_text, column="price", as_of=as_of)
    return sink.finish("row(s)")


def _catalog_text(provider: str, data: bytes, max_bytes: int) -> str:
    """The CSV's text: the zip's `<provider>.csv` (its inflated size checked against
    `max_bytes` before it is inflated), or the file itself."""
    if not data:
        raise AdapterError(None, "empty catalog: the file has no bytes")
    if data[:4] != _ZIP_MAGIC:
        return decode(data)
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            member = f"{provider}.csv"
            names = archive.namelist()
            if member not in names:
                raise AdapterError(None, f"broken catalog: the archive holds "
                                         f"{', '.join(names) or 'nothing'}, not {member}")
            size = archive.getinfo(member).file_size
            if size > max_bytes:
                raise AdapterError(None, f"{member} inflates to {size:,} bytes, beyond "
                                         f"SPECLEDGER_MAX_FILE_BYTES ({max_bytes:,}): refused")
            inflated = archive.read(member)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError) as exc:
        raise AdapterError(None, f"broken catalog: not a readable zip archive "
                                 f"({len(data):,} bytes): {exc}") from exc
    return decode(inflated)


def _header(records: Iterator[Record]) -> list[str]:
    columns = header_columns(records, "empty catalog: the CSV has no header")
    missing = [c for c in REQUIRED if c not in columns]
    if missing:
        raise AdapterError(1, f"not a gpuhunt catalog: the header lacks {', '.join(missing)} "
                              f"(gpuhunt's columns: {', '.join(CATALOG_V2_FIELDS)})")
    return columns


@dataclass
class _Catalog:
    """One pass over a catalog: its provider, the table and sink, and each offer's lowest
    row so far (line, text, offer) by item key."""

    provider: str          # as gpuhunt names it (the offer's provider)
    table_provider: str    # as data/instances.yaml names it
    table: InstanceTable
    sink: OfferSink
    best: dict[str, tuple[int, str, Offer]] = field(default_factory=dict)


_FIELD = re.compile(r"field '([a-z_]+)'")


def _read_row(catalog: _Catalog, number: int, raw_text: str, row: dict[str, str]) -> None:
    sink = catalog.sink
    try:
        item = item_from_row(row, provider=catalog.provider)
    except (ValueError, TypeError) as exc:  # gpuhunt names the field in its message
        found = _FIELD.search(str(exc))
        sink.reject(number, found.group(1) if found else "row", str(exc), raw_text)
        return
    if not item.gpu_count or not item.gpu_name:
        sink.skip("not a GPU instance (no GPUs)")
        return
    if _DWS_FLAG in item.flags:
        sink.skip("GCP DWS calendar-mode price (a fixed-window reservation, not on-demand)")
        return
    spec = _instance(catalog, number, raw_text, item.instance_name, item.gpu_name,
                     item.gpu_count, item.gpu_memory)
    if spec is None:
        return
    price = positive_price(row["price"])
    if price is None:
        sink.reject(number, "price", f"price {row['price']!r} is not a finite positive number",
                    raw_text)
        return
    offer = Offer(provider=catalog.provider, region=item.location,
                  term="spot" if item.spot else "on_demand", instance=spec, price=price,
                  price_written=row["price"].strip(), currency="USD", unit_written="hour")
    kept = catalog.best.get(offer.item_key)
    if kept is not None:
        sink.skip("the same offer listed again (its lowest price is kept)")
        if kept[2].price <= price:
            return
    catalog.best[offer.item_key] = (number, raw_text, offer)


def _instance(catalog: _Catalog, number: int, raw_text: str, instance: str, gpu_name: str,
              count: int, memory: float | None) -> InstanceSpec | None:
    """The instance's GPU item and count, or None (skipped or rejected, said to the sink)."""
    table, sink = catalog.table, catalog.sink
    listed = table.instance(catalog.table_provider, instance)
    if listed is not None:
        if listed.gpus != count:
            sink.reject(number, "gpu_count", (
                f"{instance} has {count} GPUs here but data/instances.yaml says "
                f"{listed.gpus}: check the table"), raw_text)
            return None
        return listed
    untracked = table.untracked(catalog.table_provider, instance)
    if untracked is not None:
        sink.skip(f"untracked GPU instance ({untracked})")
        return None
    known = table.gpuhunt_gpus.get(gpu_name)
    if known is None:
        why = table.untracked_accelerator(gpu_name)
        if why is not None:
            sink.skip(f"GPU the ledger does not track ({gpu_name}: {why})")
        else:
            sink.reject(number, "gpu_name", (
                f"unknown GPU {gpu_name!r} on {instance}: add the name to data/instances.yaml "
                "(gpuhunt_gpus) or the instance (instances) with its source"), raw_text)
        return None
    if known.untracked is not None:
        sink.skip(f"GPU the ledger does not track ({gpu_name}: {known.untracked})")
        return None
    if known.ambiguous is not None:
        sink.reject(number, "gpu_name", (
            f"{instance}: {known.ambiguous}; list the instance in data/instances.yaml "
            "(instances) with the page that says which"), raw_text)
        return None
    assert known.gpu is not None and known.memory_gb is not None
    if memory is not None and memory < _WHOLE_GPU_SHARE * known.memory_gb:
        sink.skip(f"a fraction of a GPU ({gpu_name} with {memory:g} GB of "
                  f"{known.memory_gb:g})")
        return None
    return InstanceSpec(provider=catalog.table_provider, instance_type=instance,
                        gpu=known.gpu, gpus=count, source=known.source, accelerator=gpu_name)


def _source(provider: str, as_of: date) -> SourceDecl:
    return SourceDecl(
        key=f"gpuhunt-{provider}-{as_of.isoformat()}", kind="dataset",
        publisher="dstack (gpuhunt catalog)", url=SOURCE_URL,
        title=f"gpuhunt catalog, {provider} (published {as_of.isoformat()})",
        published_on=as_of)

