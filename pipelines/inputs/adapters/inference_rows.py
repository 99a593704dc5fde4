"""What the inference benchmark readers share (InferenceX, MLPerf Inference): the file's JSON
array of result rows with each row's line and text, the checks a value passes before it becomes
part of a serving point, the canonical model names, and the collector that turns kept points,
rejected rows and skipped rows into one Parsed with its run and sources.

Each reader maps its own keys (inferencex.py, mlperf_inference.py). A row is a point, a
rejected row naming its line, key and JSON pointer, or a skipped row of another kind of result
(counted in the notes, not a row): read = points + rejected, nothing lost.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from models.dates import out_of_range
from pipelines.inputs.adapters.base import (
    AdapterError,
    AdapterOptions,
    InferencePoint,
    MeasurementRun,
    Parsed,
    Rejected,
    decode,
    slug,
)
from pipelines.inputs.adapters.guards import INT32_MAX, load_json
from pipelines.inputs.limits import InputLimits
from pipelines.inputs.packs import Pack, SourceDecl

KIND = "inference"
SNIFF_BYTES = 64 * 1024
KEY_MAX = 150  # a slug key made from a written name is cut to this
_LISTED = 50  # names listed in a run's metadata and in notes, at most
_SHOWN = 60  # characters of a bad value quoted in a reason

# A decimal number written as text ("123.4", "1e3"); anything else in a number field is bad.
_NUMBER_TEXT = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")

# Canonical model keys, matched at the start of the name's last path part, lowercased, up to a
# separator: "deepseek-ai/DeepSeek-R1-0528" and InferenceX's prefix "dsr1" are deepseek-r1,
# MLPerf's "llama2-70b-99.9" is llama-2-70b. More specific names come first (glm-5.1 before
# glm-5).
_MODELS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(f"(?:{pattern})(?=$|[-_ ])"), key) for pattern, key in (
        (r"deepseek-r1|dsr1", "deepseek-r1"),
        (r"deepseek-v4-pro|dsv4", "deepseek-v4-pro"),
        (r"gpt-oss-120b|gptoss(?:120b)?", "gpt-oss-120b"),
        (r"llama-3\.3-70b|llama70b", "llama-3.3-70b"),
        (r"llama-?2-70b", "llama-2-70b"),
        (r"llama-?3[._]1-405b", "llama-3.1-405b"),
        (r"llama-?3[._]1-8b", "llama-3.1-8b"),
        (r"mixtral-8x7b", "mixtral-8x7b"),
        (r"gpt-?j(?:-6b)?", "gpt-j-6b"),
        (r"qwen-?3\.5(?:-397b-a17b)?", "qwen3.5-397b-a17b"),
        (r"kimi-?k2\.5", "kimi-k2.5"),
        (r"kimi-?k2\.6", "kimi-k2.6"),
        (r"kimi-?k3", "kimi-k3"),
        (r"minimax-?m2\.5", "minimax-m2.5"),
        (r"minimax-?m3", "minimax-m3"),
        (r"glm-?5\.1", "glm-5.1"),
        (r"glm-?5\.2", "glm-5.2"),
        (r"glm-?5", "glm-5"),
    ))


class BadValue(ValueError):
    """A value a row cannot give: the row is rejected under `key` (`path`: its keys inside
    the row, for the JSON pointer, when the value is nested)."""

    def __init__(self, key: str, reason: str, path: tuple[str, ...] | None = None) -> None:
        super().__init__(reason)
        self.key, self.reason, self.path = key, reason, path or (key,)


# ---------------------------------------------------------------- sniffing and reading


def looks_like(data: bytes, patterns: tuple[re.Pattern[str], ...]) -> bool:
    """Whether the file starts as JSON and its first 64 KiB hold every one of `patterns`
    (the keys only its format writes)."""
    head = data[:SNIFF_BYTES].decode("utf-8", "replace").lstrip("\ufeff \t\r\n")
    return head.startswith(("[", "{")) and all(pattern.search(head) for pattern in patterns)


# What a reader makes of one row: its point, the source it cites and whether its hardware is a
# known item; or, for a row of another kind of result, why it is skipped.
Reading = tuple[InferencePoint, SourceDecl, bool] | str


def read_points(data: bytes, options: AdapterOptions, file_format: str, what: str,
                layout: Callable[[list[Row]], str],
                read_row: Callable[[Row, AdapterOptions], Reading]) -> Parsed:
    """Read every row of the file with `read_row`: a point kept, a row rejected (not an
    object, or a BadValue), or a row skipped."""
    rows = read_rows(data, options.limits, what)
    collector = Collector.start(file_format, layout(rows))
    for row in rows:
        if not isinstance(row.value, dict):
            collector.reject_shape(row)
            continue
        try:
            reading = read_row(row, options)
        except BadValue as bad:
            collector.reject(row, bad)
            continue
        if isinstance(reading, str):
            collector.skip(reading)
        else:
            collector.keep(*reading)
    return collector.finish(len(rows))


# ---------------------------------------------------------------- the file's rows


@dataclass(frozen=True)
class Row:
    """One element of the file's array: its position, where it starts and its text."""

    index: int
    line: int
    text: str
    value: Any

    def pointer(self, path: tuple[str, ...] = ()) -> str:
        """The JSON pointer of the row (or of a key in it): "/3/output_tput_per_gpu"."""
        escaped = (part.replace("~", "~0").replace("/", "~1") for part in path)
        return "/" + "/".join((str(self.index), *escaped))

    def line_of(self, key: str) -> int:
        """The line of `"key":` in the row's text, else the row's first line."""
        found = re.search('"' + re.escape(key) + r'"\s*:', self.text)
        return self.line if found is None else self.line + self.text.count("\n", 0, found.start())


def read_rows(data: bytes, limits: InputLimits, what: str) -> list[Row]:
    """The elements of the file's top-level JSON array (a single object is one row), each with
    its line and text; AdapterError when the file is not JSON, nests too deep or holds more
    rows than SPECLEDGER_MAX_ROWS_PER_FILE."""
    text = decode(data)
    document = load_json(text, limits.json_max_depth, what)
    if isinstance(document, list):
        elements = document
    elif isinstance(document, dict):
        elements = [document]
    else:
        raise AdapterError(1, f"{what}: expected a JSON array of result rows (or one row)")
    if len(elements) > limits.max_rows_per_file:
        raise AdapterError(None, f"more than {limits.max_rows_per_file:,} rows "
                                 f"({len(elements):,}; SPECLEDGER_MAX_ROWS_PER_FILE): split the "
                                 "file")
    places = _places(text) if isinstance(document, list) else [_whole(text)]
    return [Row(index, line, raw, value)
            for index, ((line, raw), value) in enumerate(zip(places, elements, strict=True))]


def _whole(text: str) -> tuple[int, str]:
    start = len(text) - len(text.lstrip())
    return text.count("\n", 0, start) + 1, text.strip()


def _places(text: str) -> list[tuple[int, str]]:
    """(line, text) of each element of the top-level array, decoded again in place (the text
    is valid JSON: load_json read it), counting lines as it goes."""
    decoder = json.JSONDecoder()
    position = text.index("[") + 1
    line, counted, places = 1, 0, []
    while True:
        while text[position] in " \t\r\n,":
            position += 1
        if text[position] == "]":
            return places
        line += text.count("\n", counted, position)
        counted = position
        end = decoder.raw_decode(text, position)[1]
        places.append((line, text[position:end]))
        position = end


# ---------------------------------------------------------------- values


def shown(value: Any) -> str:
    """A value as a reason quotes it, cut short."""
    written = json.dumps(value, ensure_ascii=False)
    return written if len(written) <= _SHOWN else written[:_SHOWN] + "…"


def label(row: Mapping[str, Any], key: str, *, required: bool = True,
         what: str = "") -> str | None:
    """A name the row gives under `key`, stripped; None (or BadValue when required) when it
    is missing or empty; BadValue when it is not text."""
    value = row.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise BadValue(key, f"no {key}{': ' + what if what else ''}")
        return None
    if not isinstance(value, str):
        raise BadValue(key, f"{key} {shown(value)} is not a name")
    return value.strip()


def number(row: Mapping[str, Any], key: str, *, required: bool = False, zero: bool = False,
           path: tuple[str, ...] | None = None, what: str = "") -> float | None:
    """A finite number under `key` (a number, or a decimal written as text), positive (or at
    least 0 with `zero`); None when missing and not required; else BadValue."""
    value = row.get(key)
    if value is None:
        if required:
            raise BadValue(key, f"no {key}{': ' + what if what else ''}", path)
        return None
    if isinstance(value, str) and len(value) < 100 and _NUMBER_TEXT.fullmatch(value.strip()):
        value = float(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadValue(key, f"{key} {shown(value)} is not a number", path)
    try:
        figure = float(value)
    except OverflowError:  # an integer of hundreds of digits
        figure = math.inf
    if not math.isfinite(figure):
        raise BadValue(key, f"{key} {shown(value)} is not a finite number", path)
    if figure < 0 or (figure == 0 and not zero):
        raise BadValue(key, f"{key} {shown(value)} is not a positive number", path)
    return figure


def count(row: Mapping[str, Any], key: str, *, required: bool = True, minimum: int = 1,
          what: str = "") -> int | None:
    """A whole number under `key` (an integer, an integral float such as 8.0, or digits as
    text) between `minimum` and the largest integer the ledger stores; None when missing and
    not required; else BadValue."""
    value = row.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise BadValue(key, f"no {key}{': ' + what if what else ''}")
        return None
    whole_number: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        whole_number = value
    elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
        whole_number = int(value)
    elif isinstance(value, str) and re.fullmatch(r"\s*\d{1,10}\s*", value):
        whole_number = int(value)
    if whole_number is None:
        raise BadValue(key, f"{key} {shown(value)} is not a whole number")
    if not minimum <= whole_number <= INT32_MAX:
        raise BadValue(key, f"{key} {shown(value)} is not between {minimum} and {INT32_MAX}")
    return whole_number


def flag(row: Mapping[str, Any], key: str) -> bool | None:
    """A yes/no under `key`: true/false (as JSON or text, any case); None when missing."""
    value = row.get(key)
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise BadValue(key, f"{key} {shown(value)} is not true or false")


def canonical_model(written: str, aliases: Mapping[str, str]) -> str | None:
    """The canonical key of a model name (an alias first), or None when it is not known."""
    if written in aliases:
        return aliases[written]
    base = written.strip().rstrip("/").rsplit("/", 1)[-1].lower()
    return next((key for pattern, key in _MODELS if pattern.match(base)), None)


def known_hardware(written: str, aliases: Mapping[str, str],
                   lookup: Callable[[str], str | None]) -> tuple[str, bool]:
    """(the ledger's key for a hardware name, whether it is known): an alias first, then the
    reader's own table (`lookup`); an unknown name keyed by its slug."""
    if written in aliases:
        return aliases[written], True
    found = lookup(written)
    if found is not None:
        return found, True
    return slug(written)[:KEY_MAX].rstrip("-") or "unknown", False


# ---------------------------------------------------------------- points into a Parsed


@dataclass
class Collector:
    """What a reader keeps while it reads the rows: the points, the rejected rows, the rows of
    other kinds of result it skips, the hardware names it could not place, the sources."""

    parsed: Parsed
    layout: str
    points: list[InferencePoint] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    unplaced: Counter[str] = field(default_factory=Counter)

    @classmethod
    def start(cls, file_format: str, layout: str) -> Collector:
        return cls(Parsed(format=file_format, pack=Pack()), layout)

    def reject(self, row: Row, bad: BadValue) -> None:
        self.parsed.rejected.append(Rejected(row.line_of(bad.path[0]), bad.key,
                                             f"{row.pointer(bad.path)}: {bad.reason}", row.text))

    def reject_shape(self, row: Row) -> None:
        self.parsed.rejected.append(Rejected(
            row.line, "row", f"{row.pointer()}: a result row is "
                             f"{type(row.value).__name__}, not an object", row.text))

    def skip(self, reason: str) -> None:
        self.skipped[reason] += 1

    def keep(self, point: InferencePoint, source: SourceDecl, known: bool) -> None:
        """Keep a point, noting a hardware name it could not place, declaring its source."""
        self.points.append(point)
        if not known:
            self.unplaced[point.hardware_written] += 1
        if all(s.key != source.key for s in self.parsed.pack.sources):
            self.parsed.pack.sources.append(source)

    def finish(self, rows: int) -> Parsed:
        """The Parsed: one run holding every point (none when no row gave one), with notes
        on what was skipped and which hardware names were keyed by their slug."""
        parsed, points = self.parsed, self.points
        parsed.skipped_lines = sum(self.skipped.values())
        for reason, times in sorted(self.skipped.items()):
            parsed.notes.append(f"{times} row(s) of {reason} skipped")
        if self.unplaced:
            names = ", ".join(shown(n) for n in sorted(self.unplaced)[:_LISTED])
            parsed.notes.append(f"hardware not in data/item_aliases.yaml, kept under its slug "
                                f"key: {names}")
        if points:
            parsed.runs.append(MeasurementRun(
                kind=KIND, item=_only({p.hardware for p in points}), started_at=None,
                finished_at=None, benchmark=_only({p.benchmark for p in points}),
                metadata=self._metadata(rows), points=points))
        return parsed

    def _metadata(self, rows: int) -> dict[str, Any]:
        def listed(values: set[str]) -> list[str]:
            return sorted(values)[:_LISTED]
        points = self.points
        return {"layout": self.layout, "rows": rows, "points": len(points),
                "rejected": len(self.parsed.rejected),
                "skipped": dict(sorted(self.skipped.items())),
                "hardware": listed({p.hardware for p in points}),
                # The GPUs the figures are per: a loadgen log read again with another systems
                # JSON beside it is another run.
                "gpus": sorted({p.gpus for p in points})[:_LISTED],
                "models": listed({p.model for p in points}),
                "as_of": listed({p.as_of.isoformat() for p in points}),
                "sources": listed({p.source_key for p in points})}


def _only(values: set[str]) -> str | None:
    return next(iter(values)) if len(values) == 1 else None


def as_of_of(written: Any, key: str, options: AdapterOptions, no_date: str) -> date:
    """The row's date: what the file writes under `key` (YYYY-MM-DD, or a time starting with
    it), else --as-of; BadValue naming the option when there is neither."""
    if written is None:
        if options.as_of is None:
            raise BadValue("as_of", no_date)
        return options.as_of
    if isinstance(written, str) and re.match(r"\d{4}-\d{2}-\d{2}(?:$|[T ])", written):
        try:
            day = date.fromisoformat(written[:10])
        except ValueError:
            pass
        else:
            problem = out_of_range(day, key)
            if problem:
                raise BadValue(key, problem)
            return day
    raise BadValue(key, f"{key} {shown(written)} is not a date (YYYY-MM-DD)")
