"""Epoch AI's `ml_hardware.csv` ("Data on Machine Learning Hardware") as ledger observations.

One record per chip, one column per figure, the unit written in the header. Each non-empty
figure cell of a column the ledger has a metric for becomes one PackRow, dated by the chip's
`Release date` (Epoch's release or availability date: the valid time of its figures), so a later
snapshot that changes a figure supersedes it instead of adding a second fact.

Columns are read by name, never by position: the order and some names changed between snapshots
(`Memory size per board (Byte)` became `Memory (bytes)`). Only header names seen in real
snapshots are mapped; any other column is reported in `Parsed.notes` and ignored, so a new
Epoch column is noticed rather than guessed at.

Provenance: one source per file, dated by the snapshot (--as-of, else the newest `Last
modified`). A figure is an estimate when Epoch's Notes (or, for a price, `Source for the price`)
say it was worked out; status is C with a `Link to datasheet`, else S, and S for every estimate
and price. The quote is the Notes plus the first datasheet URL, never `Last modified`, so a
bumped timestamp does not look like a changed value.

Rejections: a record with the wrong number of fields is one Rejected(field="row"); a figure cell
that is not a plain number (`~300`, `n/a`, `inf`) is a Rejected naming its column, made here
rather than left to the validator; the other figures of that record are kept.
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date

from pipelines.inputs.adapters.base import (
    AdapterError,
    AdapterOptions,
    Parsed,
    Rejected,
    decode,
    slug,
)
from pipelines.inputs.packs import ItemDecl, Pack, PackRow, SourceDecl

FORMAT = "epoch-ml-hardware"
SOURCE_KEY = "epoch-ml-hardware-csv"
SOURCE_URL = "https://epoch.ai/data/machine-learning-hardware"
QUOTE_LIMIT = 1000
KEY_MAX = 150  # characters of an item key made from a chip name (the name itself is kept whole)
_SNIFF_BYTES = 64 * 1024


@dataclass(frozen=True)
class Figure:
    """A column the ledger has a metric for: the metric, its unit as Epoch writes it, and the
    family Epoch's Notes use for it ("the TDP", "the price"), to spot estimates."""

    metric: str
    unit: str
    family: str


FIGURES: dict[str, Figure] = {
    "bf16": Figure("peak_dense_bf16", "FLOP/s", "performance"),
    "fp8": Figure("peak_dense_fp8", "FLOP/s", "performance"),
    "fp4": Figure("peak_dense_fp4", "FLOP/s", "performance"),
    "fp64": Figure("peak_fp64", "FLOP/s", "performance"),
    "fp32": Figure("peak_fp32", "FLOP/s", "performance"),
    "tf32": Figure("peak_tf32", "FLOP/s", "performance"),
    "fp16": Figure("peak_fp16", "FLOP/s", "performance"),
    "int16": Figure("peak_int16", "OP/s", "performance"),
    "int8": Figure("peak_int8", "OP/s", "performance"),
    "int4": Figure("peak_int4", "OP/s", "performance"),
    "memory": Figure("hbm_capacity", "byte", "memory"),
    "memory_bw": Figure("hbm_bandwidth", "byte/s", "bandwidth"),
    # Epoch's intranode figure is the chip's total bidirectional NVLink-class bandwidth
    # (H100 SXM5: 900e9 byte/s); internode is the NIC rate in bits.
    "intranode_bw": Figure("scaleup_bw_per_gpu_bidir", "byte/s", "bandwidth"),
    "internode_bw": Figure("scaleout_bw_per_gpu", "bit/s", "bandwidth"),
    "tdp": Figure("tdp", "W", "power"),
    "price": Figure("gpu_price", "USD", "price"),
}

# Header names seen in real snapshots, by canonical field. The long names are the December 2025
# snapshot's; `Memory size per board (Byte)` an earlier one's; the short ones are those of a
# published sample of the joshyou/clod snapshot (fixture formats_md_sample.csv).
COLUMN_NAMES: dict[str, tuple[str, ...]] = {
    "name": ("Hardware name",),
    "manufacturer": ("Manufacturer",),
    "type": ("Type",),
    "notes": ("Notes",),
    "release_date": ("Release date",),
    "last_modified": ("Last modified",),
    "datasheet": ("Link to datasheet",),
    "price_source": ("Source for the price",),
    "price": ("Release price (USD)",),
    "bf16": ("Tensor-FP16/BF16 performance (FLOP/s)", "Tensor-FP16/BF16 (FLOP/s)"),
    "fp8": ("FP8 performance (FLOP/s)", "FP8 (FLOP/s)"),
    "fp4": ("FP4 performance (FLOP/s)",),
    "fp64": ("FP64 (double precision) performance (FLOP/s)",),
    "fp32": ("FP32 (single precision) performance (FLOP/s)",),
    "tf32": ("TF32 (TensorFloat-32) performance (FLOP/s)",),
    "fp16": ("FP16 (half precision) performance (FLOP/s)",),
    "int16": ("INT16 performance (OP/s)",),
    "int8": ("INT8 performance (OP/s)",),
    "int4": ("INT4 performance (OP/s)",),
    "memory": ("Memory (bytes)", "Memory size per board (Byte)"),
    "memory_bw": ("Memory bandwidth (byte/s)", "Memory bw (byte/s)"),
    "intranode_bw": ("Intranode bandwidth (byte/s)", "Intranode bw (byte/s)"),
    "internode_bw": ("Internode bandwidth (bit/s)", "Internode bw (bit/s)"),
    "tdp": ("TDP (W)",),
}
# Known columns that are not ledger metrics: multi-valued text, chip details and Epoch's own
# derived figures (Price-performance and Energy efficiency hold `inf` when a divisor is blank).
_IGNORED_COLUMNS = (
    "Foundry", "Die Size (mm^2)", "Base clock (MHz)", "Boost clock (MHz)", "Memory clock (MHz)",
    "Memory bus (bit)", "Tensor cores", "Process size (nm)", "Transistors (millions)",
    "ML models", "Max performance", "Energy efficiency",
    "Total processing performance (bit-OP/s)", "Price-performance", "ML OP/s",
)


def _norm(header: str) -> str:
    return " ".join(header.replace("\ufeff", "").split()).casefold()


_FIELD_BY_HEADER: dict[str, str] = {
    **{_norm(column): _norm(column) for column in _IGNORED_COLUMNS},
    **{_norm(name): field for field, names in COLUMN_NAMES.items() for name in names},
}

_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_NON_FINITE = re.compile(r"[+-]?(?:inf(?:inity)?|nan)", re.IGNORECASE)
_ISO_DAY = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?:[ T][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?")
_URL = re.compile(r"(?:https?://|www\.)\S+", re.IGNORECASE)
_FIRST_LINK = re.compile(r"[^\s;,]+")  # a link written without a scheme
_SENTENCE_BREAK = re.compile(r"\n+|(?<=[.!?])\s+")

# Words by which Epoch's Notes say a figure was worked out rather than copied from a datasheet.
_ESTIMATE_MARK = re.compile(
    r"estimat|deriv|assum|approximat|calculat|\binfer|extrapolat|based on"
    r"|≈|~\s*\$?\d|\s=\s*(?:~\s*)?\$?\d|\bround(?:ed)?(?: it)? to\b"
    r"|does not (?:officially )?(?:state|disclose|publish|list)|\bno official\b",
    re.IGNORECASE)
# The quantity such a sentence arrives at ("= ~342 W", "round to 340 W", "estimates 300W"):
# its unit says which figure was estimated when the sentence names several.
_RESULT = re.compile(
    r"(?:=|≈|~|\bround(?:ed)?(?: it)? to|\bestimat\w*(?: (?:to be|at|as|of))?|\bapproximately)"
    r"\s*(?:~\s*)?(?:(\$|€)\s*)?\d[\d,.]*\s*(?:k\b\s*)?([A-Za-z€$/]+)?")
# "we use ... ratio" is an estimate too; searched apart, since `we use.*ratio` in one regex
# rescans the sentence from every "we use" (a hostile cell of them takes minutes).
_WE_USE = re.compile(r"\bwe use\b", re.IGNORECASE)
_RATIO = re.compile(r"\bratio", re.IGNORECASE)
_UNIT_FAMILIES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^k?W$|^watts?$", re.IGNORECASE), "power"),
    (re.compile(r"flop|^t?ops$|op/s", re.IGNORECASE), "performance"),
    (re.compile(r"^[kmgtp]i?(?:b/s|bps|byte/s|bit/s)$", re.IGNORECASE), "bandwidth"),
    (re.compile(r"^[kmgtp]i?B$"), "memory"),
    (re.compile(r"^(?:usd|dollars?|eur|€|yuan|rmb|\$)$", re.IGNORECASE), "price"),
)
_FAMILY_WORDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\btdp\b|\bpower\b|\bwatts?\b|(?-i:\d\s*k?W\b)", re.IGNORECASE), "power"),
    (re.compile(r"\bpric|\$|\bcost|\busd\b|\bmsrp\b|\beur\b|€|yuan|dollar", re.IGNORECASE),
     "price"),
    (re.compile(r"flop|\btops\b|op/s|performance|\b(?:bf|fp|tf)\d+|\bint\d+\b", re.IGNORECASE),
     "performance"),
    (re.compile(r"bandwidth|\bbw\b|[kmgt]b/s|[kmgt]bps|nvlink|interconnect|intranode|internode",
                re.IGNORECASE), "bandwidth"),
    (re.compile(r"\bmemory\b(?!\s*(?:bandwidth|bw|clock|bus))|\bhbm\w*\b(?!\s*(?:bandwidth|bw))"
                r"|capacity|(?-i:\d\s*Gi?B\b)(?!/s)", re.IGNORECASE), "memory"),
)
# What `Source for the price` says when the price is not a list price.
_PRICE_ESTIMATE = re.compile(
    r"\bno (?:official )?msrp\b|estimat|reportedly|approximat|assum|calculat|deriv|based on"
    r"|≈|~\s*\$?\d|\s=\s*(?:~\s*)?\$?\d|\bper (?:gpu|card|chip)\b|bill of materials"
    r"|\brate of\b",
    re.IGNORECASE)


@dataclass(frozen=True)
class _Layout:
    """Where each canonical field sits in this file's header."""

    header: list[str]
    index: dict[str, int]  # canonical field -> first column holding it
    figures: list[tuple[int, str, Figure]]  # (column, header as written, figure)
    notes: list[str]

    def cell(self, values: list[str], field: str) -> str:
        position = self.index.get(field)
        return values[position].strip() if position is not None else ""

    def column(self, field: str) -> str:
        """The header of a field as this file writes it."""
        return self.header[self.index[field]].strip()


@dataclass(frozen=True)
class _Record:
    line: int
    end_line: int
    raw_text: str
    values: list[str] | None  # None when the csv module could not read the record
    error: str | None = None


def detect(name: str, data: bytes) -> str | None:
    """"epoch-ml-hardware" when the first line is a CSV header naming `Hardware name` and at
    least two other Epoch columns; a source-pack CSV (source,item,metric,...) is not Epoch's."""
    head = data[:_SNIFF_BYTES].decode("utf-8-sig", errors="replace")
    first_line = head.split("\n", 1)[0].rstrip("\r")
    try:
        header = next(csv.reader([first_line]))
    except (csv.Error, StopIteration):
        return None
    fields = {_FIELD_BY_HEADER.get(_norm(column)) for column in header}
    known_others = fields - {"name", None}
    return FORMAT if "name" in fields and len(known_others) >= 2 else None


def parse(name: str, data: bytes, options: AdapterOptions) -> Parsed:
    """Read one ml_hardware.csv snapshot into the Epoch source, its chips and their figures."""
    header, records = _read_csv(decode(data))
    layout = _layout(header)
    snapshot, snapshot_note = _snapshot_date(records, layout, options)
    parsed = Parsed(FORMAT, Pack(sources=[_source(snapshot)]), notes=[*layout.notes, snapshot_note])
    aliases = _alias_lookup(options.aliases)
    first_line_of: dict[str, int] = {}
    for record in records:
        _read_record(record, layout, snapshot, aliases, parsed, first_line_of)
    return parsed


def _layout(header: list[str]) -> _Layout:
    """Map the header by name; a column seen twice or unknown is noted, never fatal."""
    index: dict[str, int] = {}
    figures: list[tuple[int, str, Figure]] = []
    notes: list[str] = []
    for position, written in enumerate(header):
        column = written.strip().lstrip("\ufeff")
        field = _FIELD_BY_HEADER.get(_norm(column))
        if field is None:
            if column:
                notes.append(f"unknown column {column!r} ignored")
            continue
        if field in index:
            first = header[index[field]].strip()
            notes.append(f"column {column!r} repeats {first!r}: the first one is read")
            continue
        index[field] = position
        if field in FIGURES:
            figures.append((position, column, FIGURES[field]))
    if "name" not in index:
        raise AdapterError(1, "the header lacks `Hardware name`: not an Epoch AI "
                              "ml_hardware.csv (or its first line is not the header)")
    return _Layout(header, index, figures, notes)


def _read_csv(text: str) -> tuple[list[str], list[_Record]]:
    """The header and every record with the physical lines it spans (quoted cells hold
    newlines). A record the csv module cannot read is kept with its error."""
    lines = list(io.StringIO(text, newline=""))  # physical lines, endings kept
    reader = csv.reader(lines)
    try:
        header = next(reader)
    except (csv.Error, StopIteration) as exc:
        raise AdapterError(1, f"malformed CSV header: {exc}") from exc
    records: list[_Record] = []
    end = reader.line_num
    while True:
        start = end + 1
        try:
            values: list[str] | None = next(reader)
            error = None
        except StopIteration:
            return header, records
        except csv.Error as exc:  # the reader resumes on the line after the error
            values, error = None, f"malformed CSV: {exc}"
        end = max(reader.line_num, start)
        raw_text = "".join(lines[start - 1 : end]).rstrip("\r\n")
        records.append(_Record(start, end, raw_text, values, error))


def _snapshot_date(records: list[_Record], layout: _Layout,
                   options: AdapterOptions) -> tuple[date, str]:
    """The snapshot's date: --as-of, else the newest `Last modified` of a well-formed record."""
    if options.as_of is not None:
        return options.as_of, f"snapshot date {options.as_of.isoformat()} (given with --as-of)"
    width = len(layout.header)
    stamps = [_iso_day(layout.cell(r.values, "last_modified"))
              for r in records if r.values is not None and len(r.values) == width]
    newest = max((stamp for stamp in stamps if stamp is not None), default=None)
    if newest is None:
        raise AdapterError(None, "no snapshot date: the file has no `Last modified` dates; "
                                 "give --as-of with the date the file was downloaded")
    return newest, f"snapshot date {newest.isoformat()} (the newest `Last modified`)"


def _source(snapshot: date) -> SourceDecl:
    return SourceDecl(
        key=SOURCE_KEY, kind="dataset", publisher="Epoch AI", url=SOURCE_URL,
        title=("Epoch AI, 'Data on Machine Learning Hardware' "
               f"(ml_hardware.csv, snapshot {snapshot.isoformat()})"),
        published_on=snapshot)


def _alias_lookup(aliases: Mapping[str, str]) -> dict[str, str]:
    """Aliases by normalised name, so "NVIDIA  B200" finds "NVIDIA B200"."""
    return {_norm(name): key for name, key in aliases.items()}


def _read_record(record: _Record, layout: _Layout, snapshot: date, aliases: dict[str, str],
                 parsed: Parsed, first_line_of: dict[str, int]) -> None:
    """Add one record's item, figure rows and rejections to `parsed`."""
    values = record.values
    if values is None:  # the csv module could not read it
        parsed.rejected.append(Rejected(record.line, "row", str(record.error), record.raw_text))
        return
    if not any(value.strip() for value in values):
        parsed.skipped_lines += record.end_line - record.line + 1
        return
    problem = _record_problem(record, values, layout)
    if problem is not None:
        field, reason = problem
        parsed.rejected.append(Rejected(record.line, field, reason, record.raw_text))
        return
    chip = layout.cell(values, "name")
    released = _iso_day(layout.cell(values, "release_date"))
    key = aliases.get(_norm(chip)) or _slug(chip)
    _declare_item(parsed, key, chip, layout, values, released, record.line, first_line_of)
    as_of = released or _iso_day(layout.cell(values, "last_modified")) or snapshot
    context = _RowContext.of(layout, values, as_of, key)
    for position, column, figure in layout.figures:
        text = values[position].strip()
        if text:
            _add_figure(parsed, record, column, figure, text, context)


def _record_problem(record: _Record, values: list[str],
                    layout: _Layout) -> tuple[str, str] | None:
    """(field, reason) when a record cannot be used as a whole, else None."""
    if len(values) != len(layout.header):
        reason = f"expected {len(layout.header)} fields as in the header, got {len(values)}"
        if record.end_line > record.line:
            reason += (f" (the record spans lines {record.line}-{record.end_line}: "
                       "check for a stray or unclosed quote)")
        return "row", reason
    if not layout.cell(values, "name"):
        return (layout.column("name"),
                "Hardware name is blank: the record's figures cannot be tied to a chip")
    released = layout.cell(values, "release_date")
    if released and _iso_day(released) is None:
        # Not guessed from Last modified: a wrong date would stop a later snapshot superseding.
        return (layout.column("release_date"),
                f"Release date {released!r} is not a date (expected YYYY-MM-DD)")
    return None


def _declare_item(parsed: Parsed, key: str, chip: str, layout: _Layout, values: list[str],
                  released: date | None, line: int, first_line_of: dict[str, int]) -> None:
    if key in first_line_of:
        parsed.notes.append(f"line {line}: {chip!r} is item {key!r} again (first on line "
                            f"{first_line_of[key]}); figures with the same date are duplicates")
        return
    first_line_of[key] = line
    kind = layout.cell(values, "type").casefold() or "accelerator"
    parsed.pack.items.append(ItemDecl(
        key=key, name=chip, kind=kind, vendor=layout.cell(values, "manufacturer") or None,
        family=None, released_on=released))


@dataclass(frozen=True)
class _RowContext:
    """What every figure of one record shares: item, date, provenance text, estimate flags."""

    item: str
    as_of: str
    has_datasheet: bool
    quote: str | None
    price_quote: str | None
    estimated: frozenset[str]  # figure families the Notes say were estimated
    price_estimated: bool

    @classmethod
    def of(cls, layout: _Layout, values: list[str], as_of: date, item: str) -> _RowContext:
        notes = _collapse(layout.cell(values, "notes"))
        datasheet = layout.cell(values, "datasheet")
        price_source = layout.cell(values, "price_source")
        link = _first_link(datasheet)
        quote = " ".join(part for part in (notes, f"Datasheet: {link}" if link else "") if part)
        estimated = estimated_families(layout.cell(values, "notes"))
        return cls(
            item=item, as_of=as_of.isoformat(), has_datasheet=bool(datasheet),
            quote=_truncate(quote) or None,
            price_quote=_truncate(_collapse(price_source)) or _truncate(quote) or None,
            estimated=estimated,
            price_estimated="price" in estimated or price_is_estimate(price_source))


def _add_figure(parsed: Parsed, record: _Record, column: str, figure: Figure, text: str,
                context: _RowContext) -> None:
    """One figure cell -> a PackRow, or a Rejected naming the column when it is not a number."""
    if _NON_FINITE.fullmatch(text):
        parsed.rejected.append(Rejected(record.line, column, (
            f"{text!r} is not a finite number (Epoch writes inf only in its derived columns)"),
            record.raw_text))
        return
    if not _NUMBER.fullmatch(text):
        parsed.rejected.append(Rejected(record.line, column, (
            f"{text!r} is not a number (expected a plain number of {figure.unit}, "
            "e.g. 700.0 or 1.5e+16)"), record.raw_text))
        return
    is_price = figure.metric == "gpu_price"
    estimate = context.price_estimated if is_price else figure.family in context.estimated
    status = "S" if estimate or is_price or not context.has_datasheet else "C"
    parsed.pack.rows.append(PackRow(
        line=record.line, raw_text=record.raw_text, column=column,
        fields={"source": SOURCE_KEY, "item": context.item, "metric": figure.metric,
                "value": text, "unit": figure.unit, "as_of": context.as_of, "status": status,
                "value_kind": "estimate" if estimate else "reported",
                "quote": context.price_quote if is_price else context.quote}))


def estimated_families(notes: str) -> frozenset[str]:
    """The figure families ("power", "price", "performance", "bandwidth", "memory") that Epoch's
    Notes say were estimated or derived.

    A sentence counts when it has an estimate marker ("estimate", "derived", "≈", "= ~342 W",
    "we round to", "does not officially state"); it flags the family of the quantity it arrives
    at ("= ~342 W" -> power) or, failing that, every family it names ("the TDP").
    """
    families: set[str] = set()
    for sentence in _SENTENCE_BREAK.split(_URL.sub(" ", notes)):
        if not _marks_estimate(sentence):
            continue
        named = {family for pattern, family in _FAMILY_WORDS if pattern.search(sentence)}
        families.update(_result_families(sentence) or named)
    return frozenset(families)


def _marks_estimate(sentence: str) -> bool:
    if _ESTIMATE_MARK.search(sentence):
        return True
    we_use = _WE_USE.search(sentence)
    return we_use is not None and _RATIO.search(sentence, we_use.end()) is not None


def _result_families(sentence: str) -> set[str]:
    """Families of the quantities a sentence arrives at: "= ~342 W" -> {"power"}."""
    families = set()
    for match in _RESULT.finditer(sentence):
        family = _unit_family(match.group(1) or match.group(2) or "")
        if family is not None:
            families.add(family)
    return families


def price_is_estimate(price_source: str) -> bool:
    """Whether `Source for the price` says the price is not a list price ("No official MSRP",
    "reportedly", a per-GPU share of a server price, a currency conversion)."""
    return bool(_PRICE_ESTIMATE.search(_URL.sub(" ", price_source)))


def _unit_family(unit: str) -> str | None:
    for pattern, family in _UNIT_FAMILIES:
        if pattern.search(unit):
            return family
    return None


def _iso_day(text: str) -> date | None:
    """The day of `YYYY-MM-DD` or of an Airtable timestamp `YYYY-MM-DD HH:MM:SS+00:00`."""
    match = _ISO_DAY.fullmatch(text.strip())
    if match is None:
        return None
    try:
        return date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        return None


def _slug(name: str) -> str:
    """A ledger key for a chip no alias names: "NVIDIA L2 PCle" -> "nvidia-l2-pcle"."""
    key = slug(name)
    digest = hashlib.sha1(name.encode("utf-8")).hexdigest()[:12]
    if len(key) > KEY_MAX:  # a key is indexed: PostgreSQL's index entries hold ~2700 bytes
        return f"{key[:KEY_MAX - 13].rstrip('-')}-{digest}"
    # A name with no ASCII letter or digit still needs a stable key.
    return key or "epoch-" + digest


def _first_link(datasheet: str) -> str | None:
    """The first URL of `Link to datasheet` (several are separated by newlines or "; ")."""
    match = _URL.search(datasheet) or _FIRST_LINK.search(datasheet)
    return match.group(0).rstrip(".,;)") if match else None


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _truncate(text: str) -> str:
    return text if len(text) <= QUOTE_LIMIT else text[: QUOTE_LIMIT - 1] + "…"
