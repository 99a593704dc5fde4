"""The daily history of "gpu-price-feed" (github.com/toolshedlabs-hash/gpu-price-feed,
`data/history/v2/<YYYY-MM>.jsonl`) as GPU-hour prices: the cheapest on-demand USD per GPU-hour
of each GPU model at each of 8 neoclouds (DataCrunch/Verda, DigitalOcean, Lambda, RunPod,
Scaleway, Vast.ai, Vultr, Akamai), one JSON line per collection.

Each line is `{"cheapest": {<provider>: {<GPU name>: <USD per GPU-hour>}}, "collected_at":
<ISO time>, "schema_version": 2}`. A price is NOT one instance's: it is the minimum the
collector found that day over the provider's on-demand listings of that GPU (any region, any
instance size; Vast.ai's is a single host's ask; Scaleway's is its EUR price converted by the
collector at the ECB rate of the day). So each (provider, GPU) is read as one offer whose
"instance" is the provider's cheapest listing of the GPU: instance type `cheapest-<GPU item>`,
1 GPU per instance, region "any", term "on_demand", price per GPU-hour as written; its series
of days is that offer's history, each dated by its line's `collected_at` (its UTC day).

GPU names are the collector's own (family, memory, form: "H100 80GB SXM", "B200 180GB (form
unstated)"), mapped by the explicit tables below: a name for one ledger GPU item is priced; a
name that could be two (the SXM module or the PCIe/NVL card) is rejected, with the reason, for
review; a GPU the ledger does not track (RTX, L4, L40S, A10, H100 NVL, a MIG slice ...) is a
counted skip; any other name is rejected, so that someone adds it to a table. Providers are
named as the ledger's other price readers name them (datacrunch -> verda, lambdalabs -> lambda,
vastai -> vast).

Accounting: every price of a readable line is a row, a rejection or a counted skip; a line
that cannot be read (broken JSON, not a version-2 object, no collected_at) is one rejection
naming its line, and the other lines stay. Two names of one GPU item at one provider on one
line (B200 SXM and B200 form unstated) are one offer: the lower price is kept. A day collected
twice keeps its last collection. A file of which no line can be read is refused whole.

The source is the feed's month (`gpu-price-feed-<YYYY-MM>`, the month of the newest line: the
monthly file grows by a line a day), published on its newest line's day.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from decimal import Decimal
from fnmatch import fnmatchcase
from typing import Any

from pipelines.inputs.adapters.base import AdapterError, AdapterOptions, Parsed, decode
from pipelines.inputs.adapters.guards import json_depth_problem
from pipelines.inputs.adapters.instances import InstanceSpec
from pipelines.inputs.adapters.offers import Offer, OfferSink, check_size, positive_price
from pipelines.inputs.packs import Pack, SourceDecl

FORMAT = "neocloud-cheapest"
SOURCE_URL = "https://github.com/toolshedlabs-hash/gpu-price-feed"
# InstanceSpec.source of the offers built here: the feed itself (the field is informational,
# not checked against data/instances.yaml `sources:`; no entry of that table is used).
TABLE_SOURCE = "toolshedlabs-gpu-price-feed"
SCHEMA_VERSION = 2
REGION = "any"  # the feed's minimum is over all of a provider's regions
TERM = "on_demand"
UNIT_WRITTEN = "GPU-hour"
_SNIFF_BYTES = 64 * 1024
_COLLECTED_AT = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ][0-9:.+\-Z]+)?")
_DETECT = re.compile(r'\{\s*"(?:cheapest|collected_at|schema_version)"\s*:')

# The collector's GPU name -> the ledger's GPU item: names seen in the feed whose family, memory
# and form leave one item. A B200 or B300 is made only as the SXM module (the Grace boards are
# named GB200/GB300 by the collector), so "form unstated" changes nothing for them. No GB200 or
# MI355X name has been seen: one that comes is rejected as unknown until it is added here.
GPU_ITEMS: dict[str, str] = {
    "H100 80GB SXM": "h100-sxm5",
    "H100 80GB PCIe": "h100-pcie",
    "H200 141GB SXM": "h200-sxm",
    "B200 180GB SXM": "b200",
    "B200 180GB (form unstated)": "b200",
    "B300 288GB SXM": "b300",
    "B300 288GB (form unstated)": "b300",
    "GB300 288GB SXM": "gb300",
    "A100 40GB SXM": "a100-sxm4-40gb",
    "A100 80GB SXM": "a100-sxm4-80gb",
    "V100 16GB SXM": "tesla-v100-sxm2",  # the ledger's V100 item is the 16 GB SXM2
    "MI300X 192GB": "amd-mi300x",
    "MI325X 256GB": "amd-mi325x",
    "MI350X 294GB": "amd-mi350x",  # AMD says 288 GB; the collector writes 294
}
# Names that cover two GPUs, one a ledger item: rejected with why, never priced as either.
AMBIGUOUS: dict[str, str] = {
    "H100": "H100 without memory and form is the SXM5 module or the PCIe card",
    "H100 80GB (form unstated)": "H100 80 GB is the SXM5 module or the PCIe card",
    "H200 141GB (form unstated)": "H200 141 GB is the SXM module or the NVL card (no ledger item)",
    "A100": "A100 without memory and form is the SXM4 or the PCIe card, 40 or 80 GB",
    "A100 40GB (form unstated)": "A100 40 GB is the SXM4 module or the PCIe card",
    "A100 80GB (form unstated)": "A100 80 GB is the SXM4 module or the PCIe card",
    "V100 16GB (form unstated)": "V100 16 GB is the SXM2 module (the ledger's item) or the PCIe "
                                 "card",
    "P100 16GB (form unstated)": "P100 16 GB is the SXM2 module (the ledger's item) or the PCIe "
                                 "card",
}
# Patterns (`*` any characters) of GPUs the ledger has no item for: counted skips. Read after
# the two tables above, so a pattern never hides a tracked or ambiguous name.
UNTRACKED: dict[str, str] = {
    "* MIG": "a MIG slice: a fraction of a GPU",
    "H100 * NVL": "NVIDIA H100 NVL: no ledger item",
    "H200 * NVL": "NVIDIA H200 NVL: no ledger item",
    "A100 * PCIe": "NVIDIA A100 PCIe: no ledger item",
    "A800 *": "NVIDIA A800: no ledger item",
    "GH200 *": "NVIDIA GH200 (Grace Hopper): no ledger item",
    "V100 * PCIe": "V100 PCIe: the ledger's V100 item is the 16 GB SXM2",
    "V100 32GB*": "V100 32 GB: the ledger's V100 item is the 16 GB SXM2",
    "P100 * PCIe": "P100 PCIe: the ledger's P100 item is the SXM2",
    "P40 *": "NVIDIA P40: no ledger item",
    "T4 *": "NVIDIA T4: no ledger item",
    "L4 *": "NVIDIA L4: no ledger item",
    "L40 *": "NVIDIA L40: no ledger item",
    "L40S *": "NVIDIA L40S: no ledger item",
    "A10 *": "NVIDIA A10: no ledger item",
    "A16 *": "NVIDIA A16: no ledger item",
    "A30 *": "NVIDIA A30: no ledger item",
    "A40 *": "NVIDIA A40: no ledger item",
    "RTX *": "workstation or consumer GPU: no ledger item",
    "GTX *": "consumer GPU: no ledger item",
    "Quadro *": "workstation GPU: no ledger item",
    "Q RTX *": "workstation GPU: no ledger item",
    "Titan *": "consumer GPU: no ledger item",
    "CMP *": "mining card: no ledger item",
}
# The collector's provider names -> the names the ledger's other price readers use.
PROVIDERS: dict[str, str] = {"datacrunch": "verda", "lambdalabs": "lambda", "vastai": "vast"}
_PROVIDER = re.compile(r"[a-z0-9][a-z0-9_-]{0,62}")
_NOTES: dict[str, str] = {
    "scaleway": "; EUR converted to USD by the collector at the ECB rate of the day",
    "vast": "; a single host's ask",
}


def detect(name: str, data: bytes) -> str | None:
    """"neocloud-cheapest" when the first line is a JSON object whose first key is one of the
    feed's (cheapest, collected_at, schema_version) and that names `cheapest`."""
    head = data[:_SNIFF_BYTES].decode("utf-8-sig", errors="replace").lstrip()
    first = head.split("\n", 1)[0]
    if not _DETECT.match(first) or '"cheapest"' not in first:
        return None
    return FORMAT


class _Object(list):  # type: ignore[type-arg]
    """A JSON object as its (key, value) pairs in order (a JSON array stays a plain list). A
    key written twice raises _TwiceWritten: json.loads would keep the last one silently."""

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _TwiceWritten(key)
            seen.add(key)


class _TwiceWritten(ValueError):
    """A JSON object writes a key twice: which value holds is not said."""


@dataclass(frozen=True)
class _Price:
    line: int
    raw_text: str
    column: str
    collected_at: datetime
    offer: Offer


@dataclass
class _Read:
    sink: OfferSink
    # (item key, day) -> the day's price kept so far
    kept: dict[tuple[str, date], _Price] = field(default_factory=dict)
    readable_lines: int = 0
    first_broken: tuple[int, str] | None = None


def parse(name: str, data: bytes, options: AdapterOptions) -> Parsed:
    """Read the feed's JSON lines into one dated observation per provider, GPU and day."""
    check_size(data, options.limits)
    text = decode(data)
    read = _Read(OfferSink(Parsed(FORMAT, Pack()), options.limits))
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the newline ending the last line
    for number, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r")
        if not line.strip():
            read.sink.skip("blank lines")
            continue
        _read_line(number, line, read, options)
    if not read.readable_lines:
        line, reason = read.first_broken or (None, "no line holds a collection")
        raise AdapterError(line, f"not a gpu-price-feed history: no line can be read ({reason})")
    if options.as_of is not None:
        read.sink.parsed.notes.append("--as-of not used: every line is dated by its "
                                      "collected_at")
    _emit(read)
    return read.sink.finish("price(s)")


def _reject_line(read: _Read, number: int, field_name: str, reason: str, line: str) -> None:
    if read.first_broken is None:
        read.first_broken = (number, reason)
    read.sink.reject(number, field_name, reason, line)


def _read_line(number: int, line: str, read: _Read, options: AdapterOptions) -> None:
    document = _load(number, line, read, options.limits.json_max_depth)
    if document is None:
        return
    collected = _collected_at(document.get("collected_at"))
    if collected is None:
        _reject_line(read, number, "collected_at", (
            f"collected_at {_shown(document.get('collected_at'))} is not an ISO date and "
            "time: the line's prices cannot be dated"), line)
        return
    version = document.get("schema_version")
    if version is None or isinstance(version, bool) or version != SCHEMA_VERSION:
        _reject_line(read, number, "schema_version", (
            f"schema_version {_shown(version)}: this reader knows version {SCHEMA_VERSION} "
            "(data/history/v2)"), line)
        return
    cheapest = document.get("cheapest")
    if not isinstance(cheapest, _Object):
        _reject_line(read, number, "cheapest", "cheapest is not an object of providers",
                     line)
        return
    read.readable_lines += 1
    if not any(not isinstance(prices, _Object) or prices for _, prices in cheapest):
        read.sink.skip("lines with no prices (no provider lists a GPU)")
        return
    best: dict[str, _Price] = {}  # this line's offers by item key
    for provider_written, prices in cheapest:
        _read_provider(number, collected, provider_written, prices, best, read)
    for key, price in best.items():
        day_key = (key, collected.date())
        earlier = read.kept.get(day_key)
        if earlier is not None:
            read.sink.skip("an earlier collection of the same day (the day's last is kept)")
            if earlier.collected_at > collected:
                continue
        read.kept[day_key] = price


def _load(number: int, line: str, read: _Read, max_depth: int) -> dict[str, Any] | None:
    """The line's top-level object, its `cheapest` and each provider's prices as _Object
    pairs, or None (rejected: broken JSON, too deep, a key written twice, not an object)."""
    problem = json_depth_problem(line, max_depth)
    if problem is not None:
        _reject_line(read, number, "line", problem[1], line)
        return None
    try:
        # Numbers as Decimal (their digits kept); NaN and Infinity as text (never a price).
        pairs = json.loads(line, object_pairs_hook=_Object, parse_float=Decimal,
                           parse_int=Decimal, parse_constant=str)
    except _TwiceWritten as exc:
        _reject_line(read, number, "line", f"{json.dumps(str(exc))} is written twice in one "
                                           "object: which value holds is not said", line)
        return None
    except json.JSONDecodeError as exc:
        _reject_line(read, number, "line", f"malformed JSON: {exc.msg} (column {exc.colno})",
                     line)
        return None
    except (ValueError, RecursionError) as exc:
        _reject_line(read, number, "line", f"cannot be read as JSON: {exc}", line)
        return None
    if not isinstance(pairs, _Object):
        _reject_line(read, number, "line", "not a JSON object (a collection is "
                                           '{"cheapest": ..., "collected_at": ...})', line)
        return None
    return dict(pairs)


def _read_provider(number: int, collected: datetime, provider_written: str, prices: Any,
                   best: dict[str, _Price], read: _Read) -> None:
    sink = read.sink
    where = f"cheapest.{provider_written}"
    if not isinstance(prices, _Object):
        sink.reject(number, where, f"{where} is not an object of GPU prices",
                    _excerpt(provider_written, prices))
        return
    provider = PROVIDERS.get(provider_written, provider_written)
    if not _PROVIDER.fullmatch(provider):
        for gpu_name, raw in prices:
            sink.reject(number, where, f"provider {provider_written!r} is not a lower-case "
                                       "name", _excerpt(provider_written, raw, gpu_name))
        return
    for gpu_name, raw in prices:
        excerpt = _excerpt(provider_written, raw, gpu_name)
        column = f"{where}.{gpu_name}"
        gpu = _gpu(number, gpu_name, column, excerpt, sink)
        if gpu is None:
            continue
        price = None if isinstance(raw, str | bool) else positive_price(raw)
        if price is None:
            sink.reject(number, column, f"price {_shown(raw)} is not a finite positive number "
                                        "(USD per GPU-hour)", excerpt)
            continue
        spec = InstanceSpec(provider=provider, instance_type=f"cheapest-{gpu}", gpu=gpu, gpus=1,
                            source=TABLE_SOURCE, accelerator=gpu_name)
        offer = Offer(provider=provider, region=REGION, term=TERM, instance=spec, price=price,
                      price_written=format(price, "f"), currency="USD",
                      unit_written=UNIT_WRITTEN,
                      note=f"; the provider's cheapest listing ({gpu_name})"
                           f"{_NOTES.get(provider, '')}")
        kept = best.get(offer.item_key)
        if kept is not None:
            sink.skip("another name of the same GPU at the same provider (the lower price is "
                      "kept)")
            if kept.offer.price <= price:
                continue
        best[offer.item_key] = _Price(number, excerpt, column, collected, offer)


def _gpu(number: int, name: str, column: str, excerpt: str, sink: OfferSink) -> str | None:
    """The ledger item of a GPU name, or None (skipped or rejected, said to the sink)."""
    gpu = GPU_ITEMS.get(name)
    if gpu is not None:
        return gpu
    ambiguous = AMBIGUOUS.get(name)
    if ambiguous is not None:
        sink.reject(number, column, f"GPU {name!r} is ambiguous: {ambiguous}", excerpt)
        return None
    why = next((why for pattern, why in UNTRACKED.items() if fnmatchcase(name, pattern)), None)
    if why is not None:
        sink.skip(f"GPU the ledger does not track ({why})")
        return None
    sink.reject(number, column, f"unknown GPU name {name!r}: add it to neocloud_cheapest's "
                                "GPU_ITEMS, AMBIGUOUS or UNTRACKED with what it is", excerpt)
    return None


def _collected_at(raw: Any) -> datetime | None:
    """The collection's time in UTC (a time without a zone is UTC, a date alone is its
    midnight), or None."""
    if not isinstance(raw, str) or not _COLLECTED_AT.fullmatch(raw):
        return None
    try:
        moment = datetime.fromisoformat(raw)
    except ValueError:
        return None
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def _excerpt(provider: str, value: Any, gpu_name: str | None = None) -> str:
    """The price's text as the line writes it, `"runpod": {"H100 80GB SXM": 2.69}` (the
    whole line is a day of every provider), or a provider's value that is not prices."""
    if gpu_name is not None:
        return f"{json.dumps(provider)}: {{{json.dumps(gpu_name)}: {_shown(value)}}}"
    return f"{json.dumps(provider)}: {_shown(value)}"


def _shown(raw: Any) -> str:
    if isinstance(raw, Decimal):
        return str(raw)
    if raw is None:
        return "null"
    if isinstance(raw, bool):
        return "true" if raw else "false"
    if isinstance(raw, str):
        return json.dumps(raw)
    if isinstance(raw, _Object):
        return "{" + ", ".join(f"{json.dumps(k)}: {_shown(v)}" for k, v in raw) + "}"
    if isinstance(raw, list):
        return "[" + ", ".join(_shown(v) for v in raw) + "]"
    return json.dumps(raw, default=str)


def _emit(read: _Read) -> None:
    sink = read.sink
    if not read.kept:
        return
    newest = max(price.collected_at for price in read.kept.values())
    sink.use_source(_source(newest.date()))
    for (_, day), price in sorted(read.kept.items(),
                                  key=lambda entry: (entry[0][1], entry[1].line, entry[0][0])):
        sink.add(price.offer, line=price.line, raw_text=price.raw_text, column=price.column,
                 as_of=day)


def _source(newest: date) -> SourceDecl:
    month = f"{newest.year:04d}-{newest.month:02d}"
    return SourceDecl(
        key=f"gpu-price-feed-{month}", kind="dataset",
        publisher="gpu-price-feed (toolshedlabs-hash, GitHub)", url=SOURCE_URL,
        title=(f"gpu-price-feed, cheapest on-demand USD per GPU-hour per provider, "
               f"data/history/v2/{month}.jsonl (to {newest.isoformat()})"),
        published_on=newest)
