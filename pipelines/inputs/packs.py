"""Read source packs (YAML or CSV) into sources, items and numbered rows.

Parsing only: rows come out as raw mappings with their line numbers; models.observations
validates them. A file that cannot be read at all raises PackError with the line it broke at.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import PurePath
from typing import Any

from models.item_text import normal, text_problem
from models.observations import RowError, parse_partial_date
from models.resolve import SOURCE_KIND_RANK
from pipelines.inputs.csv_records import CsvDamage, csv_records
from pipelines.inputs.errors import InputError
from pipelines.inputs.limits import DEFAULT_LIMITS, MAX_KEY_LENGTH, InputLimits
from pipelines.inputs.yaml_lines import YamlError, YamlList, YamlMap, load_yaml

SOURCE_KINDS = tuple(SOURCE_KIND_RANK)  # in rank order, strongest first
CSV_REQUIRED = ("source", "item", "metric", "unit", "as_of")
MALFORMED = "__malformed__"  # a row that is not a row: its fields hold only the reason


class PackError(InputError):
    """The file cannot be parsed at all; it is rejected whole (its file is named by the
    ingest's report, so the message says only where in it: `line 3: ...`)."""

    def __init__(self, line: int | None, reason: str) -> None:
        super().__init__(None, line, "file", reason)
        self.args = (reason if line is None else f"line {line}: {reason}",)


@dataclass(frozen=True)
class SourceDecl:
    key: str
    title: str
    kind: str
    publisher: str | None = None
    url: str | None = None
    published_on: date | None = None
    retrieved_on: date | None = None


@dataclass(frozen=True)
class ItemDecl:
    key: str
    name: str
    kind: str
    vendor: str | None = None
    family: str | None = None
    released_on: date | None = None  # release or availability date, when a source gives it


@dataclass(frozen=True)
class PackRow:
    line: int | None
    fields: dict[str, Any]
    raw_text: str  # "" when the row's text is its fields (YAML): shown() builds it on demand
    column: str | None = None  # the file's column a value came from (adapters): names errors
    # The rows of this line stand or fall together: a quote's price, lead time and validity
    # are one offer, never stored in part.
    whole_line: bool = False

    def shown(self) -> str:
        """The row as the file wrote it, for a rejected row's review."""
        return self.raw_text or _json({k: v for k, v in self.fields.items() if k != MALFORMED})


@dataclass
class Pack:
    sources: list[SourceDecl] = field(default_factory=list)
    items: list[ItemDecl] = field(default_factory=list)
    rows: list[PackRow] = field(default_factory=list)
    # A source declared wrongly: its rows are rejected with this error instead of "unknown".
    invalid_sources: dict[str, RowError] = field(default_factory=dict)


def parse_pack(name: str, data: bytes, limits: InputLimits = DEFAULT_LIMITS) -> Pack:
    """Parse a pack's bytes; `name` picks the format by its suffix."""
    text = decode_text(data)
    suffix = PurePath(name).suffix.lower()
    if suffix in (".yaml", ".yml"):
        pack = _parse_yaml(text, limits)
    elif suffix == ".csv":
        pack = _parse_csv(text, limits)
    else:
        raise PackError(None, f"unsupported file type {suffix or '(none)'!r}: "
                              "expected .yaml or .csv")
    return guard_items(pack)


def guard_items(pack: Pack) -> Pack:
    """`pack` with its item keys and names NFC-normalised, and text that does not print as
    itself refused (models/item_text.py): an item declared with such a key or name is
    dropped, and every row naming it, or naming any key holding such characters, becomes a
    rejected row saying why. One bad declaration never creates a second item that prints as
    the first, and never refuses the whole file. In place; returned for chaining."""
    refused: dict[str, str] = {}
    kept = []
    for item in pack.items:
        if _plain(item.key) and _plain(item.name):
            kept.append(item)  # ASCII that prints: its own NFC form, no hidden character
            continue
        key, name = normal(item.key), normal(item.name)
        why = text_problem(key, "item key") or text_problem(name, "item name")
        if why is not None:
            refused[key] = why
            continue
        kept.append(item if (key, name) == (item.key, item.name)
                    else replace(item, key=key, name=name))
    pack.items[:] = kept
    seen: dict[str, tuple[str, str | None]] = {}  # a key's form and problem, once per key
    rows = pack.rows
    for index, row in enumerate(rows):
        item = row.fields.get("item")
        if item.__class__ is str and _plain(item) and item not in refused:
            continue  # the price lists' 100,000 rows: kept as they are, without a call
        rows[index] = _guarded_row(row, refused, seen)
    return pack


def _plain(text: Any) -> bool:
    """Whether `text` is ASCII that prints (NFC already, nothing hidden: no Unicode lookup)."""
    return text.__class__ is str and text.isascii() and text.isprintable()


def _guarded_row(row: PackRow, refused: dict[str, str],
                 seen: dict[str, tuple[str, str | None]]) -> PackRow:
    item = row.fields.get("item")
    if not isinstance(item, str) or MALFORMED in row.fields:
        return row
    if item.isascii() and item.isprintable() and item not in refused:
        return row  # the price lists' 100,000 rows: no Unicode lookups
    if item not in seen:
        key = normal(item)
        seen[item] = (key, refused.get(key) or text_problem(key, "item"))
    key, why = seen[item]
    if why is not None:
        return PackRow(row.line, {MALFORMED: why}, row.shown(), row.column, row.whole_line)
    return row if key == item else replace(row, fields={**row.fields, "item": key})


def decode_text(data: bytes, error: type[PackError] = PackError) -> str:
    """The file's text (UTF-8, a BOM dropped), or `error` naming the line of the first bad byte."""
    if not data.strip():
        raise error(None, "empty file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise error(line, f"not UTF-8 text: byte 0x{data[exc.start]:02x} at line {line} "
                          "(save the file as UTF-8)") from exc


def too_many_rows(count: int, limits: InputLimits) -> PackError:
    return PackError(None, f"more than {limits.max_rows_per_file:,} rows ({count:,} read so far;"
                           " SPECLEDGER_MAX_ROWS_PER_FILE): split the file")


def _parse_yaml(text: str, limits: InputLimits) -> Pack:
    try:
        document = load_yaml(text, limits)
    except YamlError as exc:
        raise PackError(exc.line, exc.reason) from exc
    if document is None:
        raise PackError(None, "empty file")
    if not isinstance(document, YamlMap):
        raise PackError(1, "expected a mapping with `source` + `observations` or `sources`")
    pack = Pack()
    for entry in _source_entries(document):
        if not isinstance(entry, YamlMap):
            raise PackError(document.line, "every entry of `sources` must be a mapping")
        source_key = _add_source(pack, entry.get("source"), entry.key_line("source"))
        rows = _as_list(entry.get("observations"), "observations", entry.key_line("observations"))
        for row, line in zip(rows, rows.item_lines, strict=True):
            pack.rows.append(_yaml_row(row, line, source_key))
        if len(pack.rows) > limits.max_rows_per_file:
            raise too_many_rows(len(pack.rows), limits)
    items = _as_list(document.get("items"), "items", document.key_line("items"))
    for raw_item, line in zip(items, items.item_lines, strict=True):
        pack.items.append(_item_decl(raw_item, line))
    return pack


def _source_entries(document: YamlMap) -> YamlList:
    if "sources" in document:
        return _as_list(document["sources"], "sources", document.key_line("sources"))
    if "source" in document or "observations" in document:
        entries = YamlList([document])
        entries.item_lines = [document.line]
        return entries
    if "items" in document:
        return _as_list(None, "sources", None)
    raise PackError(1, "no `source`/`observations` or `sources` section")


def _as_list(value: Any, name: str, line: int | None) -> YamlList:
    if value is None:
        empty = YamlList()
        empty.item_lines = []
        return empty
    if not isinstance(value, YamlList):
        raise PackError(line, f"`{name}` must be a list")
    return value


def _yaml_row(row: Any, line: int, source_key: str | None) -> PackRow:
    if not isinstance(row, YamlMap):
        shown = _json(row)
        return PackRow(line, {MALFORMED: f"expected a mapping of fields, got {shown}"}, shown)
    fields = {str(key): value for key, value in row.items()}
    fields.setdefault("source", source_key)
    if row.duplicates:
        key, again = row.duplicates[0]
        reason = (f"field `{key}` is written twice (lines {row.key_line(key)} and {again}); "
                  "keep one")
        return PackRow(row.line, {MALFORMED: reason}, _json(fields))
    return PackRow(row.line, fields, "")  # its text is built only if it is rejected


def _json(value: Any) -> str:
    return json.dumps(value, default=str, ensure_ascii=False)


def _add_source(pack: Pack, raw: Any, line: int | None) -> str | None:
    """Register a source declaration; return its key (None when there is none)."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise PackError(line, "`source` must be a mapping")
    line = getattr(raw, "line", line)
    key = _text(raw.get("key"))
    try:
        pack.sources.append(_source_decl(raw, line))
    except ValueError as exc:
        if key is None:
            raise PackError(line, str(exc)) from exc
        pack.invalid_sources[key] = RowError(line, "source", str(exc))
    return key


def _source_decl(raw: dict[str, Any], line: int | None) -> SourceDecl:
    where = f"source at line {line}" if line else "source"
    for required in ("key", "title", "kind"):
        if _text(raw.get(required)) is None:
            raise ValueError(f"{where}: `{required}` is missing")
    kind = str(raw["kind"]).strip()
    if kind not in SOURCE_KINDS:
        raise ValueError(f"{where}: kind {kind!r} is not one of {', '.join(SOURCE_KINDS)}")
    for name in ("key", "title", "publisher", "url"):
        if _has_nul(raw.get(name)):
            raise ValueError(f"{where}: `{name}` contains a NUL character")
    if len(str(raw["key"]).strip()) > MAX_KEY_LENGTH:
        raise ValueError(f"{where}: `key` is {len(str(raw['key']).strip()):,} characters; "
                         f"a key has at most {MAX_KEY_LENGTH}")
    return SourceDecl(
        key=str(raw["key"]).strip(), title=str(raw["title"]).strip(), kind=kind,
        publisher=_text(raw.get("publisher")), url=_text(raw.get("url")),
        published_on=_optional_date(raw.get("published_on"), where, "published_on"),
        retrieved_on=_optional_date(raw.get("retrieved_on"), where, "retrieved_on"),
    )


def _has_nul(raw: Any) -> bool:
    return isinstance(raw, str) and "\x00" in raw


def _optional_date(raw: Any, where: str, name: str) -> date | None:
    if raw is None or str(raw).strip() == "":
        return None
    try:
        return parse_partial_date(raw, name)[0]
    except Exception as exc:  # the validator's own exception type is private
        raise ValueError(f"{where}: {exc}") from exc


def _item_decl(raw: Any, line: int | None) -> ItemDecl:
    if not isinstance(raw, dict) or _text(raw.get("key")) is None:
        raise PackError(line, "every entry of `items` needs a `key`")
    if any(_has_nul(raw.get(name)) for name in ("key", "name", "kind", "vendor", "family")):
        raise PackError(line, "an item's text contains a NUL character")
    key = str(raw["key"]).strip()
    if len(key) > MAX_KEY_LENGTH:
        raise PackError(line, f"an item's key is {len(key):,} characters; a key has at most "
                              f"{MAX_KEY_LENGTH}")
    return ItemDecl(key=key, name=_text(raw.get("name")) or key,
                    kind=_text(raw.get("kind")) or "other",
                    vendor=_text(raw.get("vendor")), family=_text(raw.get("family")))


def _text(raw: Any) -> str | None:
    if raw is None or isinstance(raw, dict | list):
        return None
    return str(raw).strip() or None


def _parse_csv(text: str, limits: InputLimits) -> Pack:
    records = csv_records(text)
    try:
        header_line, header_text, header = next(records)
    except StopIteration as exc:
        raise PackError(1, "empty file") from exc
    if isinstance(header, CsvDamage):
        raise PackError(header_line, f"malformed CSV header: {header.reason}")
    header = [column.strip() for column in header]
    _check_header(header, header_line)
    pack, seen_sources, seen_items = Pack(), set[str](), set[str]()
    for line, raw_text, values in records:
        if isinstance(values, CsvDamage):
            pack.rows.append(PackRow(line, {MALFORMED: values.reason}, raw_text))
        elif not any(v.strip() for v in values):
            continue
        elif len(values) != len(header):
            reason = f"expected {len(header)} fields, got {len(values)}"
            pack.rows.append(PackRow(line, {MALFORMED: reason}, raw_text))
        else:
            fields = {k: (v if v.strip() else None) for k, v in zip(header, values, strict=True)}
            _csv_declarations(pack, fields, line, seen_sources, seen_items)
            pack.rows.append(PackRow(line, fields, raw_text))
        if len(pack.rows) > limits.max_rows_per_file:
            raise too_many_rows(len(pack.rows), limits)
    return pack


def _check_header(header: list[str], line: int) -> None:
    repeated = sorted({c for c in header if header.count(c) > 1 and c})
    if repeated:
        raise PackError(line, f"CSV header names column(s) twice: {', '.join(repeated)}; "
                              "a value would silently win over the other")
    missing = [c for c in CSV_REQUIRED if c not in header]
    if missing or ("value" not in header and not {"low", "high"} <= set(header)):
        need = ", ".join(missing) or "value (or low and high)"
        raise PackError(line, f"CSV header lacks required column(s): {need}")


def _csv_declarations(pack: Pack, fields: dict[str, Any], line: int,
                      seen_sources: set[str], seen_items: set[str]) -> None:
    """The first row naming a source or item with `source_*` / `item_*` columns declares it."""
    source = fields.get("source")
    if source and source not in seen_sources and fields.get("source_kind"):
        seen_sources.add(source)
        raw = {k.removeprefix("source_"): v for k, v in fields.items() if k.startswith("source_")}
        _add_source(pack, {**raw, "key": source}, line)
    item = fields.get("item")
    if item and item not in seen_items and fields.get("item_kind"):
        seen_items.add(item)
        raw = {k.removeprefix("item_"): v for k, v in fields.items() if k.startswith("item_")}
        pack.items.append(_item_decl({**raw, "key": item}, line))
