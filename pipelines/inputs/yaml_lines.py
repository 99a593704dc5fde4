"""Read YAML into plain values that remember their lines, within bounds, and fast.

Built from libyaml's event stream rather than PyYAML's node graph, for three reasons:
- bounds: nesting depth and what aliases expand to are counted as the events arrive, so an
  alias bomb ("billion laughs") or 100,000 nested brackets is refused at its line before it
  costs memory or recursion;
- lines: every mapping and list knows its line, and the line of each key and each item, without
  an internal key mixed into the data (which would leak into messages and hashes);
- cost: no node graph; a 200,000-row pack reads in a few seconds and a fraction of the memory.

Plain scalars resolve to what a data file means: decimal integers, floats written with a point
(YAML 1.1's rule, as PyYAML reads them), true/false, null. Anything else stays text for the
reader to judge with a row-level message: dates (`2024-02-30` is then "not a calendar date",
not a crash of the whole file), `0x2BC`, `7_00`, `1:20`, `yes`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from pipelines.inputs.limits import DEFAULT_LIMITS, InputLimits

_INT = re.compile(r"[-+]?[0-9]+")
# A float has a point and a signed exponent, as YAML 1.1 (PyYAML) reads them: "300e9" and
# "1.5e3" stay text as they always did (readers parse them, and what a file wrote is kept).
_FLOAT = re.compile(r"[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][-+][0-9]+)?")
_SPECIAL_FLOATS = {".inf": float("inf"), "+.inf": float("inf"), "-.inf": float("-inf"),
                   ".nan": float("nan")}
_NULLS = ("", "~", "null", "Null", "NULL")
_BOOLS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False,
          "FALSE": False}
_CORE_TAGS = ("tag:yaml.org,2002:str", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float",
              "tag:yaml.org,2002:bool", "tag:yaml.org,2002:null", "tag:yaml.org,2002:map",
              "tag:yaml.org,2002:seq")
_MAX_INT_DIGITS = 18  # beyond 64 bits; Python itself refuses to parse 4,300+ digit ints
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when the wheel has it


class YamlMap(dict):
    """A mapping with the line it starts on and the line of each key (1-based).

    A key written twice keeps its first value; `duplicates` lists the later ones (key, line)
    so that the reader can reject the row instead of silently keeping either value."""

    line: int
    # Shared empty defaults, replaced on first use: a one-line row (flow style, the common
    # case in packs) then costs no extra objects, which matters at 200,000 rows.
    key_lines: dict[str, int] = {}  # noqa: RUF012 - only keys on another line than the mapping
    duplicates: list[tuple[str, int]] = []  # noqa: RUF012
    merged: set[Any] = set()  # noqa: RUF012 - keys that came from a `<<` merge

    def key_line(self, key: str) -> int:
        """The line `key` is written on (the mapping's line when it is not in the mapping)."""
        return self.key_lines.get(key, self.line)


class YamlList(list):
    """A list with the line it starts on and the line of each item (1-based)."""

    line: int
    item_lines: list[int]


class YamlError(ValueError):
    """The text is not YAML we can read, or breaks a bound; says at which line and why."""

    def __init__(self, line: int | None, reason: str) -> None:
        super().__init__(reason if line is None else f"line {line}: {reason}")
        self.line, self.reason = line, reason


def load_yaml(text: str, limits: InputLimits = DEFAULT_LIMITS) -> Any:
    """The one document in `text` as YamlMap / YamlList / scalars (None for an empty text)."""
    builder = _Builder(limits)
    parser = _LOADER(text)
    try:
        feed, next_event = builder.feed, parser.get_event
        while parser.check_event():  # the parser's own loop: no generator per event
            feed(next_event())
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise YamlError(mark.line + 1 if mark else None,
                        f"malformed YAML: {exc.problem or exc.context}") from exc
    except yaml.YAMLError as exc:
        raise YamlError(None, f"malformed YAML: {exc}") from exc
    finally:
        parser.dispose()
    return builder.document


class _Frame:
    """A mapping or list being built, with the size (in values) it holds so far."""

    __slots__ = ("value", "key", "size", "anchor")

    def __init__(self, value: YamlMap | YamlList, anchor: str | None) -> None:
        self.value, self.key, self.size, self.anchor = value, _NO_KEY, 1, anchor


_NO_KEY = object()


class _Builder:
    def __init__(self, limits: InputLimits) -> None:
        self.limits = limits
        self.stack: list[_Frame] = []
        self.anchors: dict[str, tuple[Any, int]] = {}  # anchor -> (value, size it expands to)
        self.alias_nodes = 0
        self.documents = 0
        self.document: Any = None

    def feed(self, event: yaml.Event) -> None:
        line = event.start_mark.line + 1 if event.start_mark else None
        if type(event) is yaml.ScalarEvent:  # most events: the fast path first
            self._add(_scalar(event, line), 1, line, event.anchor)
        elif isinstance(event, yaml.MappingStartEvent | yaml.SequenceStartEvent):
            self._open(event, line)
        elif isinstance(event, yaml.MappingEndEvent | yaml.SequenceEndEvent):
            frame = self.stack.pop()
            if isinstance(frame.value, YamlMap) and frame.key is not _NO_KEY:
                raise YamlError(line, "a mapping key has no value")
            self._add(frame.value, frame.size, frame.value.line, frame.anchor)
        elif isinstance(event, yaml.AliasEvent):
            self._alias(event.anchor, line)
        elif isinstance(event, yaml.DocumentStartEvent):
            self.documents += 1
            if self.documents > 1:
                raise YamlError(line, "more than one YAML document (`---`): a file holds one")

    def _open(self, event: yaml.CollectionStartEvent, line: int | None) -> None:
        _check_tag(event.tag, line)
        if len(self.stack) >= self.limits.yaml_max_depth:
            raise YamlError(line, f"nested deeper than {self.limits.yaml_max_depth} levels "
                                  "(SPECLEDGER_YAML_MAX_DEPTH)")
        value: YamlMap | YamlList
        if isinstance(event, yaml.MappingStartEvent):
            value = YamlMap()
        else:
            value = YamlList()
            value.item_lines = []
        value.line = line or 0
        self.stack.append(_Frame(value, event.anchor))

    def _alias(self, anchor: str, line: int | None) -> None:
        if anchor not in self.anchors:
            raise YamlError(line, f"alias *{anchor} refers to no anchor &{anchor} before it")
        value, size = self.anchors[anchor]
        self.alias_nodes += size
        if self.alias_nodes > self.limits.yaml_max_alias_nodes:
            raise YamlError(line, f"aliases expand to more than {self.limits.yaml_max_alias_nodes}"
                                  " values (SPECLEDGER_YAML_MAX_ALIAS_NODES): an alias bomb?")
        self._add(value, size, line, None)

    def _add(self, value: Any, size: int, line: int | None, anchor: str | None) -> None:
        if anchor is not None:
            self.anchors[anchor] = (value, size)
        if not self.stack:
            self.document = value
            return
        frame = self.stack[-1]
        frame.size += size
        container = frame.value
        if isinstance(container, YamlList):
            container.append(value)
            container.item_lines.append(line or 0)
        elif frame.key is _NO_KEY:
            frame.key = _key(value, line)
            # Only a key's first writing has its line kept: a second one (a repeated key)
            # must not pass for the first when the first sat on the mapping's own line.
            if (line != container.line and str(frame.key) not in container.key_lines
                    and frame.key not in container):
                _own(container, "key_lines")[str(frame.key)] = line or 0
        else:
            _set(container, frame.key, value, line)
            frame.key = _NO_KEY


def _own(mapping: YamlMap, name: str) -> Any:
    """The mapping's own `key_lines` / `duplicates`, created on first use."""
    if name not in mapping.__dict__:
        setattr(mapping, name, {"key_lines": {}, "duplicates": [], "merged": set()}[name])
    return getattr(mapping, name)


def _key(value: Any, line: int | None) -> Any:
    if isinstance(value, dict | list):
        raise YamlError(line, "a mapping or list used as a mapping key")
    return value


def _set(mapping: YamlMap, key: Any, value: Any, line: int | None) -> None:
    if key == "<<" and isinstance(value, dict | list):  # a merge key: earlier keys win
        for merged in value if isinstance(value, list) else [value]:
            if not isinstance(merged, dict):
                raise YamlError(line, "`<<` merges mappings only")
            for merged_key, merged_value in merged.items():
                if merged_key not in mapping:
                    mapping[merged_key] = merged_value
                    _own(mapping, "merged").add(merged_key)
        return
    if key in mapping.merged:  # a key written in the mapping wins over a merged one
        mapping.merged.discard(key)
    elif key in mapping:
        _own(mapping, "duplicates").append((str(key), line or 0))
        return
    mapping[key] = value


def _check_tag(tag: str | None, line: int | None) -> None:
    if tag is not None and tag not in _CORE_TAGS and tag != "!":
        raise YamlError(line, f"unsupported YAML tag {tag!r}: write plain values")


def _scalar(event: yaml.ScalarEvent, line: int | None) -> Any:
    text, tag = event.value, event.tag
    if tag is None:
        if event.style:  # quoted or block text (libyaml says "" for plain, PyYAML None)
            return text
        first = text[:1]
        if first.isalpha() and first not in "tTfFnN":  # a word: the commonest plain value
            return text
    else:
        _check_tag(tag, line)
        if tag == "tag:yaml.org,2002:str" or not (
                (event.implicit[0] and not event.style) or tag in _CORE_TAGS):
            return text
    if text in _NULLS:
        return None
    if text in _BOOLS:
        return _BOOLS[text]
    if _INT.fullmatch(text):
        # A longer integer stays text: the validator then quotes it as written.
        return int(text) if len(text.lstrip("+-")) <= _MAX_INT_DIGITS else text
    if _FLOAT.fullmatch(text):
        number = float(text)
        return text if number in (float("inf"), float("-inf")) else number  # 1e400: as written
    return _SPECIAL_FLOATS.get(text.lower(), text)


def check_bounds(text: str, limits: InputLimits = DEFAULT_LIMITS) -> None:
    """Raise YamlError if `text` is not YAML or breaks a bound (depth, alias expansion), before
    a reader hands it to PyYAML's own recursive loader (scenario files keep that loader for
    their per-key line maps; they are small, so reading them twice costs nothing)."""
    load_yaml(text, limits)


def read_bounded_text(path: Path, limits: InputLimits = DEFAULT_LIMITS) -> str:
    """A small text file's content (UTF-8); YamlError when it is beyond max_file_bytes."""
    size = path.stat().st_size
    if size > limits.max_file_bytes:
        raise YamlError(None, f"the file is {size:,} bytes, more than SPECLEDGER_MAX_FILE_BYTES "
                              f"({limits.max_file_bytes:,})")
    return path.read_text(encoding="utf-8")


LINES = "__lines__"  # in a line-mapped mapping: key -> line of that key ("" -> the mapping's)


def with_line_maps(value: Any) -> Any:
    """`value` as plain dicts and lists, each mapping carrying its key lines under LINES: the
    form the scenario and declaration readers look lines up in."""
    if isinstance(value, YamlMap):
        mapped: dict[Any, Any] = {key: with_line_maps(item) for key, item in value.items()}
        mapped[LINES] = {str(key): value.key_line(str(key)) for key in value}
        mapped[LINES][""] = value.line
        return mapped
    if isinstance(value, list):
        return [with_line_maps(item) for item in value]
    return value
