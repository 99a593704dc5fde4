"""Read source packs (YAML or CSV) into sources, items and numbered rows.

Parsing only: rows come out as raw mappings with their line numbers; models.observations
validates them. A file that cannot be read at all raises PackError with the line it broke at.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from datetime import date
from pathlib import PurePath
from typing import Any

import yaml

from models.observations import RowError, parse_partial_date
from models.resolve import SOURCE_KIND_RANK

SOURCE_KINDS = tuple(SOURCE_KIND_RANK)  # in rank order, strongest first
CSV_REQUIRED = ("source", "item", "metric", "unit", "as_of")
_LINE = "__line__"


class PackError(ValueError):
    """The file cannot be parsed at all; it is rejected whole."""

    def __init__(self, line: int | None, reason: str) -> None:
        super().__init__(reason if line is None else f"line {line}: {reason}")
        self.line, self.reason = line, reason


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
    raw_text: str
    column: str | None = None  # the file's column a value came from (adapters): names errors


@dataclass
class Pack:
    sources: list[SourceDecl] = field(default_factory=list)
    items: list[ItemDecl] = field(default_factory=list)
    rows: list[PackRow] = field(default_factory=list)
    # A source declared wrongly: its rows are rejected with this error instead of "unknown".
    invalid_sources: dict[str, RowError] = field(default_factory=dict)


class _LineLoader(yaml.SafeLoader):
    """A YAML loader that records the line of every mapping under `__line__`."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        mapping = super().construct_mapping(node, deep=deep)
        mapping[_LINE] = node.start_mark.line + 1
        return mapping


def parse_pack(name: str, data: bytes) -> Pack:
    """Parse a pack's bytes; `name` picks the format by its suffix."""
    text = decode_text(data)
    suffix = PurePath(name).suffix.lower()
    if suffix in (".yaml", ".yml"):
        return _parse_yaml(text)
    if suffix == ".csv":
        return _parse_csv(text)
    raise PackError(None, f"unsupported file type {suffix or '(none)'!r}: expected .yaml or .csv")


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


def _parse_yaml(text: str) -> Pack:
    try:
        document = yaml.load(text, Loader=_LineLoader)  # noqa: S506 - SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise PackError(line, f"malformed YAML: {getattr(exc, 'problem', None) or exc}") from exc
    if document is None:
        raise PackError(None, "empty file")
    if not isinstance(document, dict):
        raise PackError(1, "expected a mapping with `source` + `observations` or `sources`")
    pack = Pack()
    for entry in _source_entries(document):
        source_key = _add_source(pack, entry.get("source"), entry.get(_LINE))
        for row in _as_list(entry.get("observations"), "observations", entry.get(_LINE)):
            pack.rows.append(_yaml_row(row, source_key))
    for raw_item in _as_list(document.get("items"), "items", document.get(_LINE)):
        pack.items.append(_item_decl(raw_item))
    return pack


def _source_entries(document: dict[str, Any]) -> list[dict[str, Any]]:
    if "sources" in document:
        return _as_list(document["sources"], "sources", document.get(_LINE))
    if "source" in document or "observations" in document:
        return [document]
    if "items" in document:
        return []
    raise PackError(1, "no `source`/`observations` or `sources` section")


def _as_list(value: Any, name: str, line: int | None) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise PackError(line, f"`{name}` must be a list")
    return value


def _yaml_row(row: Any, source_key: str | None) -> PackRow:
    if not isinstance(row, dict):
        return PackRow(None, {"__malformed__": row}, json.dumps(row, default=str))
    line = row.pop(_LINE, None)
    fields = {str(key): value for key, value in row.items()}
    fields.setdefault("source", source_key)
    return PackRow(line, fields, json.dumps(fields, default=str, ensure_ascii=False))


def _add_source(pack: Pack, raw: Any, line: int | None) -> str | None:
    """Register a source declaration; return its key (None when there is none)."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise PackError(line, "`source` must be a mapping")
    key = str(raw.get("key") or "").strip() or None
    try:
        pack.sources.append(_source_decl(raw))
    except ValueError as exc:
        if key is None:
            raise PackError(raw.get(_LINE, line), str(exc)) from exc
        pack.invalid_sources[key] = RowError(raw.get(_LINE, line), "source", str(exc))
    return key


def _source_decl(raw: dict[str, Any]) -> SourceDecl:
    line = raw.get(_LINE)
    where = f"source at line {line}" if line else "source"
    for required in ("key", "title", "kind"):
        if not str(raw.get(required) or "").strip():
            raise ValueError(f"{where}: `{required}` is missing")
    kind = str(raw["kind"]).strip()
    if kind not in SOURCE_KINDS:
        raise ValueError(f"{where}: kind {kind!r} is not one of {', '.join(SOURCE_KINDS)}")
    return SourceDecl(
        key=str(raw["key"]).strip(), title=str(raw["title"]).strip(), kind=kind,
        publisher=_text(raw.get("publisher")), url=_text(raw.get("url")),
        published_on=_optional_date(raw.get("published_on"), where, "published_on"),
        retrieved_on=_optional_date(raw.get("retrieved_on"), where, "retrieved_on"),
    )


def _optional_date(raw: Any, where: str, name: str) -> date | None:
    if raw is None or str(raw).strip() == "":
        return None
    try:
        return parse_partial_date(raw, name)[0]
    except Exception as exc:  # the validator's own exception type is private
        raise ValueError(f"{where}: {exc}") from exc


def _item_decl(raw: Any) -> ItemDecl:
    if not isinstance(raw, dict) or not str(raw.get("key") or "").strip():
        line = raw.get(_LINE) if isinstance(raw, dict) else None
        raise PackError(line, "every entry of `items` needs a `key`")
    key = str(raw["key"]).strip()
    return ItemDecl(key=key, name=_text(raw.get("name")) or key,
                    kind=_text(raw.get("kind")) or "other",
                    vendor=_text(raw.get("vendor")), family=_text(raw.get("family")))


def _text(raw: Any) -> str | None:
    return None if raw is None or str(raw).strip() == "" else str(raw).strip()


def _parse_csv(text: str) -> Pack:
    lines = text.splitlines()
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = [column.strip() for column in next(reader)]
    except (StopIteration, csv.Error) as exc:
        raise PackError(1, f"malformed CSV header: {exc}") from exc
    missing = [c for c in CSV_REQUIRED if c not in header]
    if missing or ("value" not in header and not {"low", "high"} <= set(header)):
        need = ", ".join(missing) or "value (or low and high)"
        raise PackError(1, f"CSV header lacks required column(s): {need}")
    pack, seen_sources, seen_items = Pack(), set[str](), set[str]()
    previous_end = 1
    try:
        for values in reader:
            line, previous_end = previous_end + 1, reader.line_num
            raw_text = "\n".join(lines[line - 1 : reader.line_num])
            if not any(v.strip() for v in values):
                continue
            if len(values) != len(header):
                fields = {"__malformed__": f"expected {len(header)} fields, got {len(values)}"}
                pack.rows.append(PackRow(line, fields, raw_text))
                continue
            fields = {k: (v if v.strip() else None) for k, v in zip(header, values, strict=True)}
            _csv_declarations(pack, fields, line, seen_sources, seen_items)
            pack.rows.append(PackRow(line, fields, raw_text))
    except csv.Error as exc:
        raise PackError(reader.line_num, f"malformed CSV: {exc}") from exc
    return pack


def _csv_declarations(pack: Pack, fields: dict[str, Any], line: int,
                      seen_sources: set[str], seen_items: set[str]) -> None:
    """The first row naming a source or item with `source_*` / `item_*` columns declares it."""
    source = fields.get("source")
    if source and source not in seen_sources and fields.get("source_kind"):
        seen_sources.add(source)
        raw = {k.removeprefix("source_"): v for k, v in fields.items() if k.startswith("source_")}
        _add_source(pack, {**raw, "key": source, _LINE: line}, line)
    item = fields.get("item")
    if item and item not in seen_items and fields.get("item_kind"):
        seen_items.add(item)
        raw = {k.removeprefix("item_"): v for k, v in fields.items() if k.startswith("item_")}
        pack.items.append(_item_decl({**raw, "key": item, _LINE: line}))
