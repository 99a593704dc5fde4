"""A SkyPilot catalog `vms.csv` (github.com/skypilot-org/skypilot-catalog, catalogs/v7/<cloud>/
vms.csv) as GPU-hour prices: up to two offers per GPU instance and region, on-demand (`Price`)
and spot (`SpotPrice`), both per instance-hour.

Columns are read by name (the clouds' files order them differently); `AvailabilityZone` is
optional. The catalog repeats an instance for each zone of a region: the region's offer is the
lowest price among its zones (on-demand prices are the same in every zone; spot prices are not,
and the quote gives the range); the other zones' lines are skipped lines.

Which GPU an instance carries comes from data/instances.yaml: a listed instance's row must
agree with it (AcceleratorName and AcceleratorCount, else the row is rejected); an unlisted one
is priced only when its AcceleratorName means one GPU item (`accelerators:`), skipped when the
GPU is untracked, rejected otherwise (`H100` alone could be SXM, PCIe or NVL). Lines without an
accelerator are skipped, with one exception: GCP lists an A2/A3/A4 VM's host price on the
instance's line and its GPUs' price on an accelerator-only line (no InstanceType) of the same
zone; a listed instance's offer is the sum of the two (`price_written` shows both numbers). A
host line priced 0.0 (GCP's A4: the whole VM's price is on its B200 line) is priced by its
accelerator line alone; a 0 is never an offer's price. Accelerator-only lines are otherwise
skipped: they are parts of a price, not offers. Only GCP splits prices so: elsewhere (Azure's ND
GB200 v6 and ND MI300X v5 rows leave AcceleratorName blank) a listed instance's line is its
whole price.

The provider is not in the file: it is the folder of `<provider>/vms.csv`, or the file is named
`<provider>-vms.csv` (or `vms-<provider>.csv`). The date is not in the file either: --as-of, the
date of the catalog commit (its git history holds the past snapshots).
"""

from __future__ import annotations

import csv
import re
from collections import defaultdict
from dataclasses import dataclass, field, replace
from datetime import date
from decimal import Decimal
from pathlib import PurePosixPath

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
from pipelines.inputs.csv_records import CsvDamage, csv_records
from pipelines.inputs.packs import Pack, SourceDecl

FORMAT = "skypilot-catalog"
SOURCE_URL = "https://github.com/skypilot-org/skypilot-catalog"
REQUIRED = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "Region")
UNIT_WRITTEN = "hour"  # the catalog's prices are per instance-hour; it writes no unit
_SNIFF_BYTES = 64 * 1024
_PROVIDER = re.compile(r"[a-z][a-z0-9]*")
# Optionally dated: aws-vms-2026-11-23.csv (what a weekly fetch keeps).
_DATED = r"(?:[-_]\d{4}-\d{2}-\d{2})?"
_NAMED = (re.compile(rf"([a-z][a-z0-9]*)[-_]vms{_DATED}\.csv", re.IGNORECASE),
          re.compile(rf"vms[-_]([a-z][a-z0-9]*){_DATED}\.csv", re.IGNORECASE))
_TERMS = (("on_demand", "Price"), ("spot", "SpotPrice"))
# Clouds whose catalog prices a GPU VM's host and its GPUs on separate lines.
_SPLIT_PRICE_PROVIDERS = frozenset({"gcp"})
# Azure's last column, Generation, holds "V1,V2" unquoted on about half its lines.
_LAST_FREE_COLUMN = "Generation"
# From GCP's Dynamic Workload Scheduler (announced November 2023), the GPU lines of SkyPilot's
# GCP catalogs carry the DWS flex-start GPU price, not on-demand: the anycloud catalog of
# 2026-04-28 prices H100 at 4.20076 per GPU-hour, GCP's DWS flex-start SKU (4.200761), where
# its on-demand SKU is 9.796550569 and its price table puts a3-highgpu-8g us-central1 at
# 88.49/h, not the 43.07/h host + GPU line sum. A split GCP price of a catalog dated from
# then on is not an on-demand offer; GCP's own price table is read for it instead.
_GCP_GPU_LINES_FLEX_START_FROM = date(2024, 1, 1)
_ZERO = Decimal(0)


def detect(name: str, data: bytes) -> str | None:
    """"skypilot-catalog" when the first line is a header naming InstanceType,
    AcceleratorName, AcceleratorCount, Price and Region."""
    head = data[:_SNIFF_BYTES].decode("utf-8-sig", errors="replace")
    first_line = head.split("\n", 1)[0].rstrip("\r")
    try:
        header = {column.strip() for column in next(csv.reader([first_line]))}
    except (csv.Error, StopIteration):
        return None
    return FORMAT if header.issuperset(REQUIRED) else None


def provider_of(name: str) -> str | None:
    """`aws` from `catalogs/v7/aws/vms.csv`, `aws-vms.csv` or `vms_aws.csv`; else None."""
    path = PurePosixPath(name.replace("\\", "/"))
    if path.name.lower() == "vms.csv":
        folder = path.parent.name.lower()
        return folder if _PROVIDER.fullmatch(folder) else None
    for pattern in _NAMED:
        match = pattern.fullmatch(path.name)
        if match:
            return match.group(1).lower()
    return None


@dataclass(frozen=True)
class _Line:
    number: int
    text: str
    cells: dict[str, str]

    def cell(self, column: str) -> str:
        return self.cells.get(column, "").strip()


@dataclass
class _Candidate:
    """One zone's price for an offer."""

    line: _Line
    offer: Offer
    raw_text: str


@dataclass
class _Catalog:
    """What one pass over the lines gathers before the offers are chosen."""

    provider: str
    table: InstanceTable
    sink: OfferSink
    gpu_parts: dict[tuple[str, int, str, str], _Line] = field(default_factory=dict)
    offers: dict[tuple[str, str, str], list[_Candidate]] = field(
        default_factory=lambda: defaultdict(list))
    rejected_lines: set[int] = field(default_factory=set)
    flex_start_gpu_lines: bool = False   # GCP's GPU lines are DWS flex-start prices
    spot_as_on_demand: int = 0           # spot prices equal to on-demand: no spot market


def parse(name: str, data: bytes, options: AdapterOptions) -> Parsed:
    """Read one vms.csv into on-demand and spot GPU instance offers."""
    check_size(data, options.limits)
    provider = provider_of(name)
    if provider is None:
        raise AdapterError(None, f"cannot tell the cloud of {name!r}: keep the catalog's "
                                 "<provider>/vms.csv path or name the file <provider>-vms.csv "
                                 "(aws-vms.csv, gcp-vms.csv)")
    as_of = options.as_of or date_in_name(name)
    if as_of is None:
        raise AdapterError(None, "as_of needed (--as-of, or a YYYY-MM-DD in the file name "
                                 "such as aws-vms-2026-11-23.csv): a SkyPilot catalog has no "
                                 "date inside; give the date of the catalog commit")
    lines = _read_lines(decode(data))
    catalog = _Catalog(provider, instance_table(options),
                       OfferSink(Parsed(FORMAT, Pack()), options.limits),
                       flex_start_gpu_lines=(provider in _SPLIT_PRICE_PROVIDERS and
                                             as_of >= _GCP_GPU_LINES_FLEX_START_FROM))
    body = []
    for line in lines:  # accelerator-only lines first: a host line may come before its GPUs
        if line.cell("InstanceType") or not line.cell("AcceleratorName"):
            body.append(line)
            continue
        count = _count(line.cell("AcceleratorCount"))
        key = (line.cell("AcceleratorName"), count or 0, line.cell("Region"),
               line.cell("AvailabilityZone"))
        catalog.gpu_parts.setdefault(key, line)
        catalog.sink.skip("accelerator-only lines (a GPU's part of a VM's price, not an offer)")
    for line in body:
        _read_line(line, catalog)
    _emit(catalog, as_of)
    if catalog.spot_as_on_demand:
        catalog.sink.parsed.notes.append(
            f"{catalog.spot_as_on_demand:,} spot price(s) equal to the on-demand price: no "
            "spot market there, so no spot offer")
    return catalog.sink.finish("line(s)")


def _read_lines(text: str) -> list[_Line]:
    """Lines with their cells by column name; AdapterError when the header is unusable."""
    records = csv_records(text)
    columns = header_columns(records)
    missing = [column for column in REQUIRED if column not in columns]
    if missing:
        raise AdapterError(1, f"not a SkyPilot vms.csv: the header lacks {', '.join(missing)}")
    lines = []
    for number, raw_text, values in records:
        if isinstance(values, CsvDamage):
            lines.append(_Line(number, raw_text, {"__damage__": values.reason}))
        elif len(values) > len(columns) and columns[-1] == _LAST_FREE_COLUMN:
            # Azure writes Generation "V1,V2" unquoted: the extra fields are its own.
            cells = dict(zip(columns[:-1], values, strict=False))
            cells[columns[-1]] = ",".join(values[len(columns) - 1:])
            lines.append(_Line(number, raw_text, cells))
        elif len(values) != len(columns):
            reason = f"expected {len(columns)} fields as in the header, got {len(values)}"
            lines.append(_Line(number, raw_text, {"__damage__": reason}))
        elif any(value.strip() for value in values):
            lines.append(_Line(number, raw_text, dict(zip(columns, values, strict=True))))
    return lines


def _read_line(line: _Line, catalog: _Catalog) -> None:
    """The line's offers (as zone candidates), or its rejection, or a skip."""
    if "__damage__" in line.cells:
        _reject(catalog, line, "row", line.cells["__damage__"])
        return
    instance_type, accelerator = line.cell("InstanceType"), line.cell("AcceleratorName")
    region, zone = line.cell("Region"), line.cell("AvailabilityZone")
    listed = catalog.table.instance(catalog.provider, instance_type)
    spec = listed or _unlisted(line, catalog)
    if spec is None:
        return  # skipped or rejected
    problem = _disagreement(line, listed) if listed is not None else None
    if problem is not None:
        _reject(catalog, line, *problem)
        return
    if not region:
        _reject(catalog, line, "Region", "Region is blank: the price cannot be tied to a region")
        return
    gpu_part: _Line | None = None
    if (listed is not None and not accelerator and catalog.flex_start_gpu_lines):
        catalog.sink.skip("GCP GPU VMs priced by their GPU line, which is the DWS flex-start "
                          "price, not on-demand (GCP's own price table prices them)")
        return
    if (listed is not None and not accelerator
            and catalog.provider in _SPLIT_PRICE_PROVIDERS):  # the host's price; GPUs' elsewhere
        gpu_part = catalog.gpu_parts.get((spec.accelerator or "", spec.gpus, region, zone))
        if gpu_part is None:
            _reject(catalog, line, "AcceleratorName", (
                f"{instance_type} has no accelerator on its line and no "
                f"{spec.accelerator or '(name unknown)'} x {spec.gpus} line prices its GPUs in "
                f"{zone or region}"))
            return
    added = [_add_candidate(line, gpu_part, spec, term, column, catalog)
             for term, column in _TERMS]
    if not any(added) and line.number not in catalog.rejected_lines:
        catalog.sink.skip("GPU instance lines with no price")


def _disagreement(line: _Line, spec: InstanceSpec) -> tuple[str, str] | None:
    """(column, reason) when the catalog's accelerator contradicts data/instances.yaml."""
    accelerator = line.cell("AcceleratorName")
    if not accelerator:
        return None
    if spec.accelerator is not None and accelerator != spec.accelerator:
        return "AcceleratorName", (
            f"{spec.instance_type} has {accelerator} here but data/instances.yaml says "
            f"{spec.gpu} (SkyPilot name {spec.accelerator}): check the table")
    count = _count(line.cell("AcceleratorCount"))
    if count != spec.gpus:
        return "AcceleratorCount", (
            f"{spec.instance_type} has {line.cell('AcceleratorCount') or '(blank)'} GPUs here "
            f"but data/instances.yaml says {spec.gpus}: check the table")
    return None


def _unlisted(line: _Line, catalog: _Catalog) -> InstanceSpec | None:
    """An instance the table does not list: priced by its accelerator's name when that means
    one GPU item; else skipped (no accelerator, untracked) or rejected (unknown GPU)."""
    instance_type, accelerator = line.cell("InstanceType"), line.cell("AcceleratorName")
    table, sink = catalog.table, catalog.sink
    untracked = table.untracked(catalog.provider, instance_type)
    if untracked is not None:
        sink.skip(f"untracked GPU instance ({untracked})")
        return None
    if not accelerator:
        sink.skip("not a GPU instance (no AcceleratorName)")
        return None
    gpu = table.accelerator(accelerator)
    if gpu is None:
        why = table.untracked_accelerator(accelerator)
        if why is not None:
            sink.skip(f"accelerator the ledger does not track ({accelerator}: {why})")
        else:
            _reject(catalog, line, "InstanceType", (
                f"unknown GPU instance {instance_type} ({accelerator}): add it to "
                "data/instances.yaml with its source"))
        return None
    count = _count(line.cell("AcceleratorCount"))
    if count is None:
        _reject(catalog, line, "AcceleratorCount", (
            f"AcceleratorCount {line.cell('AcceleratorCount')!r} is not a whole number of "
            "GPUs"))
        return None
    return InstanceSpec(provider=catalog.provider, instance_type=instance_type, gpu=gpu,
                        gpus=count, source="skypilot-catalog", accelerator=accelerator)


def _add_candidate(line: _Line, gpu_part: _Line | None, spec: InstanceSpec, term: str,
                   column: str, catalog: _Catalog) -> bool:
    """Whether the line priced the offer of `term` in its zone (False: no price, rejected)."""
    text = line.cell(column)
    part_text = gpu_part.cell(column) if gpu_part is not None else ""
    if not text or (gpu_part is not None and not part_text):
        return False  # no spot market for this instance (or zone): no offer, nothing wrong
    if term == "spot" and gpu_part is None and _is_zero(text):
        return False  # Vast writes 0.00 for "no spot price": no offer, nothing wrong
    if term == "spot" and gpu_part is None and _same_price(text, line.cell("Price")):
        catalog.spot_as_on_demand += 1  # Azure's H200 and GB200: the on-demand price again
        return False
    host_free = gpu_part is not None and _is_zero(text)  # GCP A4: all on the GPU line
    price = _ZERO if host_free else positive_price(text)
    if price is None:
        _reject(catalog, line, column, f"{column} {text!r} is not a finite positive number")
        return False
    written = text
    raw_text = line.text
    if gpu_part is not None:
        part = positive_price(part_text)
        if part is None:
            _reject(catalog, line, column, (
                f"{column} {part_text!r} of its GPUs (line {gpu_part.number}) is not a finite "
                "positive number"))
            return False
        price, written = price + part, f"{text} + {part_text}"
        raw_text = f"{line.text}\n{gpu_part.text}"
    region = line.cell("Region")
    offer = Offer(provider=catalog.provider, region=region, term=term, instance=spec,
                  price=price, price_written=written, currency="USD", unit_written=UNIT_WRITTEN)
    catalog.offers[(spec.instance_type, region, term)].append(
        _Candidate(line, offer, raw_text))
    return True


def _emit(catalog: _Catalog, as_of: date) -> None:
    """One row per offer: the lowest price among the region's zones. A line that gave no row
    (another zone's was lower or equal) and was not rejected is a skipped line."""
    sink = catalog.sink
    used: set[int] = set()
    if catalog.offers:
        sink.use_source(_source(catalog.provider, as_of))
    for candidates in catalog.offers.values():
        best = min(candidates, key=lambda c: (c.offer.price, c.line.number))
        used.add(best.line.number)
        offer = best.offer
        prices = sorted({c.offer.price for c in candidates})
        if len(prices) > 1:
            note = (f"; lowest of {len(candidates)} zones ({_plain(prices[0])} to "
                    f"{_plain(prices[-1])} USD per hour)")
            offer = replace(offer, note=note)
        sink.add(offer, line=best.line.number, raw_text=best.raw_text,
                 column=_column(offer.term), as_of=as_of)
    others = {c.line.number for candidates in catalog.offers.values() for c in candidates}
    repeated = len(others - used - catalog.rejected_lines)
    if repeated:
        sink.skip("the same offer in another availability zone (the region's lowest price is "
                  "kept)", repeated)


def _column(term: str) -> str:
    return dict(_TERMS)[term]


def _reject(catalog: _Catalog, line: _Line, column: str, reason: str) -> None:
    catalog.rejected_lines.add(line.number)
    catalog.sink.reject(line.number, column, reason, line.text)


def _is_zero(text: str) -> bool:
    """Whether a price cell is exactly zero ("0", "0.0")."""
    try:
        return Decimal(text.strip()) == _ZERO
    except ArithmeticError:
        return False


def _same_price(a: str, b: str) -> bool:
    try:
        return Decimal(a.strip()) == Decimal(b.strip())
    except ArithmeticError:
        return False


def _count(text: str) -> int | None:
    """A whole number of GPUs from "8" or "8.0"; None for "0.5", "", "many"."""
    try:
        number = Decimal(text.strip())
    except ArithmeticError:
        return None
    if not number.is_finite() or number != number.to_integral_value() or not 1 <= number <= 4096:
        return None
    return int(number)


def _plain(price: Decimal) -> str:
    return format(price.normalize(), "f")


def _source(provider: str, as_of: date) -> SourceDecl:
    return SourceDecl(
        key=f"skypilot-catalog-{provider}-{as_of.isoformat()}", kind="dataset",
        publisher="SkyPilot", url=SOURCE_URL,
        title=f"SkyPilot catalog, {provider} vms.csv (as of {as_of.isoformat()})",
        published_on=as_of)
