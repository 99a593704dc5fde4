"""nccl-tests output: the text of `all_reduce_perf` and the other `*_perf` binaries, in every
layout in circulation, and the `-J` JSON.

Each results table is one run: a MeasurementRun of NcclPoints, one per message size, with what the
lines around the table say about it (command, parameters, rank -> host -> device map, NCCL
version, footer). A log of several runs (concatenated logs, a script running one binary after
another) gives several runs.

Columns are read by the header's names, never by position: the legacy header (before 2022-08)
differs by collective and has an `error` float instead of `#wrong`; `-C 1` renames `time` to
`cputime`; `-S 1` adds a timestamp; per-iteration mode adds `i_*` columns. Launcher labels
(OpenMPI `[1,0]<stdout>:`, Intel MPI `[0] `, Slurm `0: `) are stripped first. Lines that are not
results (NCCL INFO/WARN, device listings, comments) are counted as skipped; a results line that is
cut short or garbled is a Rejected naming the column that failed.

Each run also gives one candidate observation, `busbw_measured`: the peak bus bandwidth (GB/s,
1e9 B/s, as reported) among the large messages (sizes >= the largest / 16). Bus bandwidth measures
a fabric, so the row names a fabric item: the one given with --item, else the NVLink generation of
a single-node run's GPUs. A multi-node run measures a scale-out network the file never names, so
without --item its summary is rejected with the reason, as is a run with no date and no --as-of.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import PurePath
from typing import Any

from pipelines.adapters.base import (
    AdapterError,
    AdapterOptions,
    MeasurementRun,
    NcclPoint,
    Parsed,
    Rejected,
)
from pipelines.packs import Pack, PackRow, SourceDecl

FORMAT = "nccl-tests"
METRIC = "busbw_measured"
UNIT = "GB/s"  # nccl-tests' GB/s is 1e9 bytes per second
LARGE_MESSAGE_FRACTION = 16  # "large messages": sizes >= the run's largest / 16
_SNIFF_BYTES = 64 * 1024
_TIME_FORMAT = "%Y-%m-%d %H:%M:%S"  # util.cu TIME_STRING_FORMAT: JSON times and -S timestamps
_SIDES = ("out-of-place", "in-place")

# Launcher labels: OpenMPI --tag-output, Intel MPI -prepend-rank (`[0] `, which Intel MPI also
# writes in mid-line wherever a printf chunk started), Slurm --label (` 0: `).
_LABEL = re.compile(r"^\s*(?:\[\d+,\d+\]<std(?:out|err)>:|(?P<intel>\[\d+\])(?:\s|$)|\d+:(?=\s))")
_INFO = re.compile(r"\bNCCL (?:INFO|WARN|TRACE)\b")
_INFO_LINE = re.compile(r"^\S+:\d+:\d+ \[\d+\] NCCL (?:INFO|WARN|TRACE)\b")
_NCCL_VERSION = re.compile(r"\bNCCL version (\d+\.\d+\.\d+)(\S*)")
_ALGO = re.compile(r"(?:NCCL_ALGO set by environment to |-> Algo |NCCL_ALGO=)([A-Za-z][\w,:;^]*)")
_TESTS_VERSION = re.compile(r"^nccl-tests version (.+?) nccl-headers=(\d+) nccl-library=(\d+)")
_STARTING = re.compile(r"^Collective test starting: (\S+)")
_CONCLUDED = re.compile(r"^Collective test concluded: (\S+)")
_PARAMS = re.compile(r"^nThread \d+ nGpus \d+")
_PARAM = re.compile(r"([A-Za-z_]+(?: iters)?):?\s+(\S+)")
_DEVICE = re.compile(
    r"^Rank\s+(?P<rank>\d+)\s+(?:Group\s+(?P<group>\d+)\s+)?Pid\s+(?P<pid>\d+)\s+on\s+(?P<host>\S+)"
    r"\s+device\s+(?P<device>\d+)\s+\[(?P<bus>[^\]]*)\]\s+(?P<name>.+?)\s*$")
_OUT_OF_BOUNDS = re.compile(r"^Out of bounds values\s*:\s*(\d+)\s*(\w+)?")
_AVG_BUSBW = re.compile(r"^Avg bus bandwidth\s*:\s*(\S+)\s*(\w+)?")
_REDUCED_MAX = re.compile(r"Reducing maxBytes to (\d+)")
_JSON_OUTPUT = re.compile(r"^Writing JSON output to (\S+)")
_BINARY = re.compile(r"(?:^|[\s/])(?P<name>[a-z][a-z0-9_]*?)_perf(?:_mpi)?(?=\s|$)")
_PROMPT = re.compile(r"^(?:\([^)]*\)\s+)?\S*\$\s+")
_SIZE_ARG = re.compile(r"^(\d+(?:\.\d+)?)([KMG]?)$", re.IGNORECASE)
_LAUNCHERS = ("mpirun", "mpiexec", "srun", "orterun", "jsrun", "aprun")

_HEADER_ALIASES = {"bytes": "size", "N": "count", "cputime": "time", "res": "error",
                   "wrong": "#wrong"}
_PREFIX_COLUMNS = ("size", "count", "type", "redop", "root")
_SIDE_COLUMNS = ("time", "algbw", "busbw", "#wrong", "error")
_WORD_SIZE = {"int8": 1, "uint8": 1, "char": 1, "f8e4m3": 1, "f8e5m2": 1, "half": 2,
              "float16": 2, "bfloat16": 2, "int32": 4, "uint32": 4, "int": 4, "float": 4,
              "float32": 4, "int64": 8, "uint64": 8, "double": 8, "float64": 8}
# The NVLink generation of a GPU model's SXM/superchip parts (item keys in the ledger).
_NVLINK_ITEM = {"V100": "nvlink-2", "A100": "nvlink-3", "H100": "nvlink-4", "H200": "nvlink-4",
                "H800": "nvlink-4", "H20": "nvlink-4", "B100": "nvlink-5", "B200": "nvlink-5",
                "GB200": "nvlink-5", "B300": "nvlink-5", "GB300": "nvlink-5"}
_GPU_MODEL = re.compile(r"\b(GB300|GB200|B300|B200|B100|H200|H100|H800|H20|A100|V100)\b")
_PCIE_CARD = re.compile(r"PCI[Ee]|\bNVL\b")


# ---------------------------------------------------------------- sniffing and dispatch

def detect(name: str, data: bytes) -> str | None:
    """'nccl-tests' for nccl-tests text output or -J JSON, by content; else None."""
    head = data[:_SNIFF_BYTES].decode("utf-8", "replace").lstrip("\ufeff \t\r\n")
    if head.startswith("{"):
        return FORMAT if _looks_like_json_run(head, data) else None
    for line in head.splitlines():
        text = _unlabel(line)[0].strip()
        comment = text.lstrip("#").strip()
        if (_PARAMS.match(comment) or _DEVICE.match(comment) or _TESTS_VERSION.match(comment)
                or _parse_header(text, 0) is not None):
            return FORMAT
    return None


def _looks_like_json_run(head: str, data: bytes) -> bool:
    """A `results` list plus a key only nccl-tests writes (nccl_version, nthreads, device_info)."""
    return (re.search(rb'"results"\s*:\s*\[', data) is not None
            and re.search(r'"(?:nccl_version|nthreads|device_info)"\s*:', head) is not None)


def parse(name: str, data: bytes, options: AdapterOptions) -> Parsed:
    """Read one nccl-tests file: the JSON when it is JSON, else the text."""
    if not data.strip():
        raise AdapterError(None, "empty file")
    text = data.decode("utf-8", "replace").lstrip("\ufeff")
    parsed = Parsed(format=FORMAT, pack=Pack())
    if "\ufffd" in text:
        parsed.notes.append("bytes that are not UTF-8 were replaced by U+FFFD")
    runs = _read_json(text, parsed) if text.lstrip().startswith("{") else _read_text(name, text,
                                                                                       parsed)
    source_key = f"nccl-tests-{hashlib.sha256(data).hexdigest()[:12]}"
    for index, run in enumerate(runs):
        key = source_key if index == 0 else f"{source_key}-{index + 1}"
        parsed.runs.append(_summarise(run, key, options, parsed))
    return parsed


# ---------------------------------------------------------------- what a run is, before summary

@dataclass
class _Run:
    """A run read from the file, with the file text of each point for the summary row."""

    run: MeasurementRun
    raw: dict[int, str]  # id(point) -> the point's text in the file
    column: str  # the file's name for the bus bandwidth column
    label: str  # "all_reduce_perf" or "run" for the title and quote
    complete: bool = True  # False when the run stopped before its largest size
    stopped_reason: str = ""


# ---------------------------------------------------------------- text layouts

def _unlabel(line: str) -> tuple[str, bool]:
    """The line without its launcher label; True when an Intel MPI label was also mid-line."""
    match = _LABEL.match(line)
    if match is None:
        return line, False
    body = line[match.end():]
    intel = match.group("intel")
    if intel is None:
        return body, False
    # Glued to the previous chunk (`-1[0]    1626.5`); a `[0]` after a space is NCCL's own.
    unglued = re.sub(r"(?<=\S)" + re.escape(intel), " ", body)
    return unglued, unglued != body


@dataclass(frozen=True)
class _Side:
    name: str  # "out-of-place" | "in-place"
    time: int
    algbw: int
    busbw: int
    check: int | None  # index of `#wrong` or the legacy `error` column
    check_kind: str | None


@dataclass(frozen=True)
class _Header:
    line: int
    names: tuple[str, ...]  # the file's column names, in order
    prefix: dict[str, int]
    sides: tuple[_Side, ...]
    timestamp: int | None
    ignored: tuple[str, ...]

    @property
    def width(self) -> int:
        """Whitespace-separated fields of a row (the timestamp is a date and a time)."""
        return len(self.names) + (1 if self.timestamp is not None else 0)

    @property
    def legacy(self) -> bool:
        return self.sides[0].check_kind == "error"


def _parse_header(text: str, line: int) -> _Header | None:
    """The results header (`size count type ... busbw ...`), with or without its `#`."""
    names = text.lstrip("#").split()
    keys = [_HEADER_ALIASES.get(n, n) for n in names]
    starts = [i for i, k in enumerate(keys) if k == "time"]
    if "busbw" not in keys or not starts or "size" not in keys[:starts[0]]:
        return None
    prefix = {k: i for i, k in enumerate(keys[:starts[0]]) if k in _PREFIX_COLUMNS}
    bounds = [*starts[:2], len(keys)]
    sides, ignored = [], [names[i] for i in range(starts[0]) if keys[i] not in _PREFIX_COLUMNS]
    for number, (start, end) in enumerate(zip(bounds, bounds[1:], strict=False)):
        span: dict[str, int] = {}
        for i in range(start, end):
            if keys[i] in _SIDE_COLUMNS:
                span.setdefault(keys[i], i)
        ignored += [names[i] for i in range(start, end)
                    if keys[i] not in _SIDE_COLUMNS and keys[i] != "timestamp"]
        if "algbw" not in span or "busbw" not in span:
            return None
        kind = "#wrong" if "#wrong" in span else "error" if "error" in span else None
        sides.append(_Side(_SIDES[number], span["time"], span["algbw"], span["busbw"],
                           span.get(kind) if kind else None, kind))
    timestamp = keys.index("timestamp") if "timestamp" in keys else None
    return _Header(line, tuple(names), prefix, tuple(sides), timestamp, tuple(ignored))


@dataclass
class _Context:
    """What the lines around one results table say about its run."""

    first_line: int | None = None
    command: str | None = None
    program: str | None = None  # from `# Collective test starting: all_reduce_perf`
    tests_version: str | None = None
    library_code: int | None = None
    nccl_version: str | None = None
    nccl_build: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    devices: list[dict[str, Any]] = field(default_factory=list)
    algorithms: list[str] = field(default_factory=list)
    json_output: str | None = None

    def touch(self, line: int) -> None:
        if self.first_line is None:
            self.first_line = line

    @property
    def empty(self) -> bool:
        return self.first_line is None


@dataclass
class _Table:
    header: _Header
    context: _Context
    points: list[NcclPoint] = field(default_factory=list)
    raw: dict[int, str] = field(default_factory=dict)
    rejected: list[Rejected] = field(default_factory=list)
    footer: dict[str, Any] = field(default_factory=dict)
    errors: list[float] = field(default_factory=list)  # legacy `error` floats
    timestamps: list[datetime] = field(default_factory=list)
    elided: list[int] = field(default_factory=list)
    closed: bool = False


class _BadCell(ValueError):
    def __init__(self, column: str, reason: str) -> None:
        super().__init__(reason)
        self.column, self.reason = column, reason


class _TextReader:
    """Walks the lines once: a results header opens a table, a footer or the next run's
    preamble closes it; preamble lines feed the context of the next table."""

    def __init__(self) -> None:
        self.tables: list[_Table] = []
        self.pending = _Context()
        self.open: _Table | None = None
        self.skipped = 0
        self.relabelled = 0
        self.notes: list[str] = []
        self._continued: list[str] = []

    def feed(self, number: int, raw: str) -> None:
        body, relabelled = _unlabel(raw)
        self.relabelled += relabelled
        text = body.strip()
        if self._row(number, raw, text):
            return
        self.skipped += 1
        if not text:
            return
        if text.endswith("\\"):  # a shell command continued on the next line
            self._continued.append(text.lstrip(">").strip().rstrip("\\"))
            return
        continued, self._continued = self._continued, []
        if text.startswith("#"):
            self._comment(number, text)
        else:
            self._other(number, text, continued)

    def _row(self, number: int, raw: str, text: str) -> bool:
        """A results line of the open table (a point or a Rejected); False for anything else."""
        if not text[:1].isdigit() or _INFO_LINE.match(text):
            return False
        if self.open is None:
            return self._stray_row(number, raw, text)
        result = _read_row(number, text, self.open.header)
        if isinstance(result, Rejected):
            self.open.rejected.append(replace(result, raw_text=raw))
            return True
        point, error, stamp = result
        self.open.points.append(point)
        self.open.raw[id(point)] = raw
        self.open.errors += error
        if stamp is not None:
            self.open.timestamps.append(stamp)
        return True

    def _stray_row(self, number: int, raw: str, text: str) -> bool:
        """A results row after its table ended (two processes writing one log): rejected."""
        last = self.tables[-1] if self.tables else None
        if last is None or not self.pending.empty or len(text.split()) != last.header.width:
            return False
        last.rejected.append(Rejected(
            number, "row", f"a results row after the end of the table at line {last.header.line} "
                           "(its footer came first: two runs writing to one log?)", raw))
        return True

    def _comment(self, number: int, text: str) -> None:
        header = _parse_header(text, number)
        if header is not None:
            self._start(header)
            return
        comment = text.lstrip("#").strip()
        if self._footer(number, comment):
            return
        if match := _TESTS_VERSION.match(comment):
            self._preamble(number).tests_version = match.group(1)
            self.pending.library_code = int(match.group(3))
        elif match := _STARTING.match(comment):
            self._preamble(number).program = match.group(1)
        elif match := _JSON_OUTPUT.match(comment):
            self._preamble(number).json_output = match.group(1)
        else:
            self._preamble_facts(number, comment)

    def _other(self, number: int, text: str, continued: list[str]) -> None:
        header = _parse_header(text, number)
        if header is not None:  # a header whose `#` a copy-paste lost
            self._start(header)
        elif self._preamble_facts(number, text):
            return
        elif (command := _command(text, continued)) is not None:
            self._preamble(number).command = command  # its NCCL_ALGO is read with the command
        elif not self._log_facts(text) and text in ("...", "…") and self.open is not None:
            self.open.elided.append(number)

    def _preamble_facts(self, number: int, text: str) -> bool:
        if _PARAMS.match(text):
            self._preamble(number).params.update(_parameters(text))
        elif match := _REDUCED_MAX.search(text):  # nccl-tests lowered maxBytes to fit memory
            self._preamble(number).params["maxBytes"] = int(match.group(1))
        elif match := _DEVICE.match(text):
            self._preamble(number).devices.append(_device(match))
        else:
            return False
        return True

    def _log_facts(self, text: str) -> bool:
        """NCCL's own log lines: the version and the algorithm, for the run they belong to."""
        target = self.open.context if self.open is not None else self.pending
        if match := _NCCL_VERSION.search(text):
            target.nccl_version, target.nccl_build = match.group(1), match.group(2) or None
            return True
        if (match := _ALGO.search(text)) and match.group(1) not in target.algorithms:
            target.algorithms.append(match.group(1))
        return _INFO.search(text) is not None

    def _footer(self, number: int, comment: str) -> bool:
        """The table's footer lines; a second footer (another process's) does not overwrite."""
        values = _footer_values(comment)
        table = self.open or (self.tables[-1] if self.tables else None)
        if values is None or table is None:
            return False
        if values.keys() & table.footer.keys():
            self.notes.append(f"a second footer line at line {number} ignored (two runs "
                              "writing to one log?)")
        else:
            table.footer.update(values)
        table.closed = True
        self.open = None
        return True

    def _preamble(self, number: int) -> _Context:
        """The context of the next run: a preamble line ends the open table."""
        self.open = None
        self.pending.touch(number)
        return self.pending

    def _start(self, header: _Header) -> None:
        context = self.pending
        if self.open is not None and not self.open.points and not self.open.rejected:
            # The header printed again (two processes of a non-MPI build): one table.
            context = _merge(self.open.context, context)
            self.tables.pop()
        self.open = _Table(header, context)
        self.tables.append(self.open)
        self.pending = _Context()


def _footer_values(comment: str) -> dict[str, Any] | None:
    if match := _OUT_OF_BOUNDS.match(comment):
        return {"out_of_bounds_values": int(match.group(1)),
                "out_of_bounds_ok": match.group(2) != "FAILED"}
    if match := _AVG_BUSBW.match(comment):
        values: dict[str, Any] = {"avg_bus_bandwidth": _float_or_text(match.group(1))}
        if match.group(2):
            values["avg_bus_bandwidth_check"] = match.group(2)
        return values
    if _CONCLUDED.match(comment):
        return {"concluded": True}
    return None


def _merge(first: _Context, second: _Context) -> _Context:
    merged = replace(first, params={**first.params, **second.params},
                     devices=[*first.devices, *second.devices],
                     algorithms=[*first.algorithms, *second.algorithms])
    for name in ("command", "program", "tests_version", "library_code", "nccl_version",
                 "nccl_build", "json_output"):
        if getattr(second, name) is not None:
            setattr(merged, name, getattr(second, name))
    return merged


def _parameters(text: str) -> dict[str, Any]:
    """`nThread 1 nGpus 1 minBytes 8 ... step: 2(factor) warmup iters: 5 ...` as a mapping."""
    return {key: int(value) if re.fullmatch(r"-?\d+", value) else value
            for key, value in _PARAM.findall(text)}


def _device(match: re.Match[str]) -> dict[str, Any]:
    device = {"rank": int(match["rank"]), "pid": int(match["pid"]), "host": match["host"],
              "device": int(match["device"]), "bus_id": match["bus"], "name": match["name"]}
    if match["group"] is not None:
        device["group"] = int(match["group"])
    return device


def _command(text: str, continued: list[str]) -> str | None:
    """A shell command running a `*_perf` binary (with its continuation lines), prompt removed."""
    line = text.lstrip(">").strip()
    if _BINARY.search(line) is None or _INFO.search(line):
        return None
    return _PROMPT.sub("", " ".join(" ".join([*continued, line]).split()))


def _float_or_text(text: str) -> float | str:
    try:
        return float(text)
    except ValueError:
        return text


# ---------------------------------------------------------------- one results line

def _read_row(number: int, text: str, header: _Header
              ) -> tuple[NcclPoint, list[float], datetime | None] | Rejected:
    """A results line as (point, legacy error floats, timestamp), or why it is not one."""
    tokens = text.split()
    if len(tokens) != header.width:
        return Rejected(number, "row", _width_reason(tokens, header, text), text)
    cells = tokens
    if header.timestamp is not None:
        at = header.timestamp
        cells = [*tokens[:at], f"{tokens[at]} {tokens[at + 1]}", *tokens[at + 2:]]
    try:
        return _point(number, cells, header)
    except _BadCell as bad:
        return Rejected(number, bad.column, bad.reason, text)


def _width_reason(tokens: list[str], header: _Header, text: str) -> str:
    found, expected = len(tokens), header.width
    if _INFO.search(text):
        why = "an NCCL log line was printed into the middle of this row"
    elif found < expected and "." in tokens[0]:
        why = "the row's size columns are missing (the row was split by other output)"
    elif found < expected:
        why = "the line is cut short"
    else:
        why = "the line has extra fields"
    return (f"expected {expected} fields ({' '.join(header.names)}), found {found}: {why}")


def _point(number: int, cells: list[str], header: _Header
           ) -> tuple[NcclPoint, list[float], datetime | None]:
    names, prefix = header.names, header.prefix
    size = _whole(cells[prefix["size"]], names[prefix["size"]], "a whole number of bytes")
    count = (_whole(cells[prefix["count"]], names[prefix["count"]], "a whole number of elements")
             if "count" in prefix else 0)
    redop = cells[prefix["redop"]] if "redop" in prefix else None
    root = _root(cells[prefix["root"]], names[prefix["root"]]) if "root" in prefix else None
    measured, errors = [], []
    for side in header.sides:
        values, error = _side(cells, names, side)
        measured.append(values)
        errors += [] if error is None else [error]
    oop = measured[0]
    ip = measured[1] if len(measured) > 1 else (None, None, None, None)
    point = NcclPoint(
        line=number, collective="", size_bytes=size, count=count,
        dtype=cells[prefix["type"]] if "type" in prefix else "",
        redop=None if redop in (None, "none") else redop, root=root,
        oop_time_us=oop[0], oop_algbw=oop[1], oop_busbw=oop[2], oop_wrong=oop[3],
        ip_time_us=ip[0], ip_algbw=ip[1], ip_busbw=ip[2], ip_wrong=ip[3])
    stamp = None
    if header.timestamp is not None:
        stamp = _timestamp(cells[header.timestamp], names[header.timestamp])
    return point, errors, stamp


def _side(cells: list[str], names: tuple[str, ...], side: _Side
          ) -> tuple[tuple[float, float, float, int | None], float | None]:
    """(time, algbw, busbw, #wrong) of one side, and its legacy `error` float if any."""
    time = _measure(cells[side.time], names[side.time], side.name, "microseconds")
    algbw = _measure(cells[side.algbw], names[side.algbw], side.name, "GB/s")
    busbw = _measure(cells[side.busbw], names[side.busbw], side.name, "GB/s")
    wrong, error = None, None
    if side.check is not None and cells[side.check] != "N/A":
        cell, column = cells[side.check], names[side.check]
        if side.check_kind == "error":
            error = _measure(cell, column, side.name, "a deviation")
        else:
            wrong = _wrong(cell, column, side.name)
    return (time, algbw, busbw, wrong), error


def _whole(cell: str, column: str, expected: str) -> int:
    if not cell.isdigit():
        raise _BadCell(column, f"{column} {cell!r} is not {expected}")
    return int(cell)


def _root(cell: str, column: str) -> int | None:
    """The root rank; -1 (what nccl-tests prints for collectives without one) is None."""
    if not re.fullmatch(r"-?\d+", cell):
        raise _BadCell(column, f"{column} {cell!r} is not a rank number (or -1)")
    return None if int(cell) < 0 else int(cell)


def _measure(cell: str, column: str, side: str, expected: str) -> float:
    try:
        value = float(cell)
    except ValueError:
        raise _BadCell(column, f"{side} {column} {cell!r} is not a number "
                               f"(expected {expected})") from None
    if not math.isfinite(value) or value < 0:
        raise _BadCell(column, f"{side} {column} {cell!r} is not a finite, non-negative number")
    return value


def _wrong(cell: str, column: str, side: str) -> int:
    """`#wrong` is printed with %g, so large counts come as 1.2e+07."""
    value = _measure(cell, column, side, "a count of wrong elements, or N/A")
    if value != int(value):
        raise _BadCell(column, f"{side} {column} {cell!r} is not a whole count")
    return int(value)


def _zoned(moment: datetime) -> datetime:
    """nccl-tests prints the host's local time without a zone; the ledger stores UTC, and the
    host's zone is unknowable, so the time is read as UTC (at most a day off for the date)."""
    return moment.replace(tzinfo=UTC)


def _timestamp(cell: str, column: str) -> datetime:
    try:
        return _zoned(datetime.strptime(cell, _TIME_FORMAT))
    except ValueError:
        raise _BadCell(column, f"{column} {cell!r} is not a time "
                               "(expected YYYY-MM-DD HH:MM:SS)") from None


# ---------------------------------------------------------------- text runs

def _read_text(name: str, text: str, parsed: Parsed) -> list[_Run]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    reader = _TextReader()
    for number, line in enumerate(lines, 1):
        reader.feed(number, line.rstrip("\r"))
    parsed.skipped_lines = reader.skipped
    parsed.notes += reader.notes
    if not reader.tables:
        raise AdapterError(None, "no nccl-tests results table (a header line naming size, time, "
                                 "algbw and busbw) in the file")
    if reader.relabelled:
        parsed.notes.append(f"Intel MPI rank labels removed from inside {reader.relabelled} "
                            "lines")
    if not reader.pending.empty:
        parsed.notes.append(f"the run starting at line {reader.pending.first_line} has no "
                            "results table")
    runs = []
    for table in reader.tables:
        parsed.rejected += table.rejected
        if not table.points:
            what = "no readable rows" if table.rejected else "no rows"
            parsed.notes.append(f"the results table at line {table.header.line} has {what}")
            continue
        runs.append(_text_run(name, table, parsed))
    if not runs and not parsed.rejected:
        raise AdapterError(reader.tables[0].header.line,
                           "the results table has no rows (the run stopped before its first size)")
    return runs


def _text_run(name: str, table: _Table, parsed: Parsed) -> _Run:
    context, header = table.context, table.header
    collective = _text_collective(name, table, parsed)
    points = [replace(p, collective=collective) for p in table.points]
    raw = {id(new): table.raw[id(old)] for old, new in zip(table.points, points, strict=True)}
    facts = _command_facts(context.command)
    ranks, nodes, per_node = _text_topology(context, facts, parsed, header.line)
    run = MeasurementRun(
        kind=FORMAT, item=None,
        started_at=table.timestamps[0] if table.timestamps else None,
        finished_at=table.timestamps[-1] if table.timestamps else None,
        ranks=ranks, nodes=nodes, gpus_per_node=per_node,
        device=_most_common([d["name"] for d in context.devices]),
        nccl_version=context.nccl_version or _version_from_code(context.library_code),
        collective=collective, metadata=_text_metadata(table, facts), points=points)
    result = _Run(run, raw, header.names[header.sides[0].busbw],
                  context.program or (f"{collective}_perf" if collective != "unknown" else "run"))
    _check_complete(result, table, facts)
    if table.elided:
        parsed.notes.append(f"rows were elided ('...') at line(s) "
                            f"{', '.join(map(str, table.elided))}: the peak covers the rows shown")
    if not table.closed:
        parsed.notes.append(f"the results table at line {header.line} has no footer: the run "
                            "may have stopped early")
    if context.json_output:
        parsed.notes.append(f"the run also wrote {context.json_output} (-J): that JSON carries "
                            "the same results with the run's date")
    return result


def _text_collective(name: str, table: _Table, parsed: Parsed) -> str:
    """The test's collective: the preamble, the command, the file name, else the header."""
    context = table.context
    for text in (context.program, context.command):
        if text and (match := _BINARY.search(f" {text}")):
            return match.group("name")
    if match := _BINARY.search(" " + PurePath(name).name.replace(".", " ")):
        parsed.notes.append(f"collective {match.group('name')} taken from the file name")
        return match.group("name")
    if table.header.legacy:
        return _collective_from_shape(table, parsed)
    parsed.notes.append(f"the run at line {table.header.line} does not name its collective "
                        "(no command line or preamble): collective 'unknown'")
    return "unknown"


def _collective_from_shape(table: _Table, parsed: Parsed) -> str:
    """Legacy headers differ by collective: redop and root -> reduce; root -> broadcast;
    redop -> all_reduce or reduce_scatter (count = size / word, or size / (word x ranks))."""
    prefix, line = table.header.prefix, table.header.line
    if "root" in prefix:
        found = "reduce" if "redop" in prefix else "broadcast"
        parsed.notes.append(f"collective {found} inferred from the legacy header at line {line}")
        return found
    point = table.points[0]
    word = _WORD_SIZE.get(point.dtype)
    ratio = point.size_bytes / (point.count * word) if word and point.count else None
    if "redop" in prefix and ratio in (1, 1.0):
        parsed.notes.append(f"collective all_reduce inferred from the legacy header at line "
                            f"{line} (redop, no root) and count = size / {word} ({point.dtype})")
        return "all_reduce"
    shape = "redop, no root" if "redop" in prefix else "neither redop nor root"
    parsed.notes.append(f"the legacy header at line {line} ({shape}) fits several collectives "
                        "(all_gather, alltoall, reduce_scatter, sendrecv) and the file names none: "
                        "collective 'unknown'")
    return "unknown"


def _command_facts(command: str | None) -> dict[str, Any]:
    """What a command line says: launcher, processes, -g/-t, -e and NCCL_ALGO."""
    if not command:
        return {}
    tokens = command.split()
    binary = next((i for i, t in enumerate(tokens) if _BINARY.search(f" {t}")), len(tokens))
    launcher = any(PurePath(t).name.startswith(_LAUNCHERS) for t in tokens[:binary])
    facts: dict[str, Any] = {"launcher": launcher}
    options = {"-np": "processes", "-n": "processes", "--np": "processes",
               "--ntasks": "processes"}
    facts |= _flag_values(tokens[:binary], options) if launcher else {"processes": 1}
    facts |= _flag_values(tokens[binary + 1:], {"-g": "nGpus", "--ngpus": "nGpus",
                                                  "-t": "nThread", "--nthreads": "nThread",
                                                  "-e": "maxBytes", "--maxbytes": "maxBytes"})
    if algo := re.search(r"NCCL_ALGO=(\S+)", command):
        facts["algorithm"] = algo.group(1)
    return facts


def _flag_values(tokens: list[str], flags: dict[str, str]) -> dict[str, int]:
    values = {}
    for flag, value in zip(tokens, tokens[1:], strict=False):
        if flag in flags and (number := _size_arg(value)) is not None:
            values[flags[flag]] = number
    return values


def _size_arg(text: str) -> int | None:
    """nccl-tests' size syntax: 8, 1250M, 8G (K/M/G are powers of 1024)."""
    match = _SIZE_ARG.match(text)
    if match is None:
        return None
    scale = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}[match.group(2).upper()]
    return int(float(match.group(1)) * scale)


def _text_topology(context: _Context, facts: dict[str, Any], parsed: Parsed, line: int
                   ) -> tuple[int | None, int | None, int | None]:
    """(ranks, nodes, GPUs per node): the device lines, else the parameters and command."""
    if context.devices:
        per_host = Counter(d["host"] for d in context.devices)
        return len(context.devices), len(per_host), _per_node(per_host, parsed, line)
    params = {**{k: facts[k] for k in ("nThread", "nGpus") if k in facts}, **context.params}
    processes = facts.get("processes")
    if processes is None:
        return None, None, None
    ranks = processes * params.get("nThread", 1) * params.get("nGpus", 1)
    if facts.get("launcher"):
        return ranks, None, None
    return ranks, 1, ranks  # one process without a launcher runs on one host


def _per_node(per_host: Counter[str], parsed: Parsed, line: int) -> int:
    counts = set(per_host.values())
    if len(counts) > 1:
        parsed.notes.append(f"the run at line {line} has unequal ranks per host "
                            f"({dict(per_host)}): GPUs per node is the largest")
    return max(counts)


def _check_complete(result: _Run, table: _Table, facts: dict[str, Any]) -> None:
    """A run without footer that stopped at half its maxBytes or less: no large messages."""
    max_bytes = table.context.params.get("maxBytes", facts.get("maxBytes"))
    largest = max(p.size_bytes for p in table.points)
    if not table.closed and isinstance(max_bytes, int) and largest * 2 <= max_bytes:
        result.complete = False
        result.stopped_reason = (f"the run stopped at {largest} B (no footer), before its maxBytes "
                                 f"{max_bytes}: its peak busbw does not describe large messages")


def _text_metadata(table: _Table, facts: dict[str, Any]) -> dict[str, Any]:
    context, header = table.context, table.header
    algorithms = [*context.algorithms]
    if facts.get("algorithm") and facts["algorithm"] not in algorithms:
        algorithms.insert(0, facts["algorithm"])
    metadata: dict[str, Any] = {
        "layout": "legacy" if header.legacy else "current",
        "header_line": header.line,
        "command": context.command,
        "parameters": context.params or None,
        "devices": context.devices or None,
        "nccl_tests_version": context.tests_version,
        "nccl_build": context.nccl_build,
        "algorithm": _one_or_list(algorithms),
        "time_column": "cputime" if "cputime" in header.names else None,
        "ignored_columns": sorted(set(header.ignored)) or None,
        "legacy_error_max": max(table.errors) if table.errors else None,
        "json_output": context.json_output,
        "footer": table.closed,
        **table.footer,
    }
    return {key: value for key, value in metadata.items() if value is not None}


# ---------------------------------------------------------------- -J JSON

def _read_json(text: str, parsed: Parsed) -> list[_Run]:
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise AdapterError(exc.lineno, f"malformed JSON: {exc.msg} at column {exc.colno} (a run "
                                       "that stopped early leaves its -J file unclosed)") from exc
    if not isinstance(document, dict) or not isinstance(document.get("results"), list):
        raise AdapterError(1, "no `results` list: not nccl-tests -J output")
    config = document.get("config") if isinstance(document.get("config"), dict) else {}
    devices = [d for d in config.get("devices") or document.get("devices") or []
               if isinstance(d, dict)]
    collective = _json_collective(document.get("args"), parsed)
    places = _element_places(text, document["results"])
    points, raw = [], {}
    for result, (line, raw_text) in zip(document["results"], places, strict=True):
        try:
            point = replace(_json_point(result, line), collective=collective)
        except _BadCell as bad:
            parsed.rejected.append(Rejected(line, bad.column, bad.reason, raw_text))
            continue
        points.append(point)
        raw[id(point)] = raw_text
    if not points:
        if parsed.rejected:
            return []
        raise AdapterError(1, "the `results` list is empty (the run stopped before its first size)")
    return [_json_run(document, config, devices, collective, points, raw, parsed)]


def _element_places(text: str, results: list[Any]) -> list[tuple[int | None, str]]:
    """(line, text) of each `results` element, found by decoding the list again in place."""
    fallback = [(None, json.dumps(r)) for r in results]
    match = re.search(r'"results"\s*:\s*\[', text)
    if match is None:
        return fallback
    decoder, position, places = json.JSONDecoder(), match.end(), []
    for expected in results:
        while position < len(text) and text[position] in " \t\r\n,":
            position += 1
        try:
            value, end = decoder.raw_decode(text, position)
        except json.JSONDecodeError:
            return fallback
        if value != expected:  # `"results":[` seen inside a string: keep the safe answer
            return fallback
        places.append((text.count("\n", 0, position) + 1, text[position:end]))
        position = end
    return places


def _json_collective(args: Any, parsed: Parsed) -> str:
    if isinstance(args, list) and args and (match := _BINARY.search(f" {args[0]}")):
        return match.group("name")
    parsed.notes.append("the JSON's args do not name a *_perf binary: collective 'unknown'")
    return "unknown"


def _json_point(result: Any, line: int | None) -> NcclPoint:
    if not isinstance(result, dict):
        raise _BadCell("results", f"a results element is {type(result).__name__}, not an object")
    oop = result.get("out_of_place")
    if not isinstance(oop, dict):
        raise _BadCell("out_of_place", "no out-of-place measurement (null: a trace replay "
                                       "writes the in-place side only)")
    ip = result.get("in_place")
    measured = [_json_side(oop, "out_of_place")]
    measured.append(_json_side(ip, "in_place") if isinstance(ip, dict) else (None,) * 4)
    redop = result.get("redop")
    return NcclPoint(
        line=line, collective="", size_bytes=_json_whole(result, "size"),
        count=_json_whole(result, "count"), dtype=str(result.get("type") or ""),
        redop=None if redop in (None, "none") else str(redop),
        root=_root(str(result.get("root", "-1")).strip(), "root"),
        oop_time_us=measured[0][0], oop_algbw=measured[0][1], oop_busbw=measured[0][2],
        oop_wrong=measured[0][3], ip_time_us=measured[1][0], ip_algbw=measured[1][1],
        ip_busbw=measured[1][2], ip_wrong=measured[1][3])


def _json_side(side: dict[str, Any], key: str) -> tuple[float, float, float, int | None]:
    time_key = "cpu_time" if "cpu_time" in side else "time"
    values = [_json_number(side.get(k), f"{key}.{k}") for k in (time_key, "alg_bw", "bus_bw")]
    wrong = side.get("nwrong")
    if wrong is not None:
        number = _json_number(wrong, f"{key}.nwrong")
        if number != int(number):
            raise _BadCell(f"{key}.nwrong", f"{key}.nwrong {wrong!r} is not a whole count")
        wrong = int(number)
    return values[0], values[1], values[2], wrong


def _json_number(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _BadCell(name, f"{name} {value!r} is not a finite number")
    if value < 0:
        raise _BadCell(name, f"{name} {value!r} is negative")
    return float(value)


def _json_whole(result: dict[str, Any], key: str) -> int:
    value = result.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _BadCell(key, f"{key} {value!r} is not a whole number")
    return value


def _json_run(document: dict[str, Any], config: dict[str, Any], devices: list[dict[str, Any]],
              collective: str, points: list[NcclPoint], raw: dict[int, str],
              parsed: Parsed) -> _Run:
    # One device entry per process (util.cu parses the first line of each process's block).
    per_process = _positive(config.get("nthreads")) * _positive(config.get("ngpus"))
    per_host = Counter(str(d.get("hostname")) for d in devices)
    ranks = per_process * len(devices) if devices else None
    nodes = len(per_host) or None
    per_node = per_process * _per_node(per_host, parsed, 1) if devices else None
    run = MeasurementRun(
        kind=FORMAT, item=None,
        started_at=_json_time(document.get("start_time"), "start_time", parsed),
        finished_at=_json_time(document.get("end_time"), "end_time", parsed),
        ranks=ranks, nodes=nodes, gpus_per_node=per_node,
        device=_most_common([str(d.get("device_info")) for d in devices if d.get("device_info")]),
        nccl_version=_version_from_code(document.get("nccl_version")), collective=collective,
        metadata=_json_metadata(document, config, devices), points=points)
    label = f"{collective}_perf" if collective != "unknown" else "run"
    return _Run(run, raw, "bus_bw", label)


def _positive(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 1


def _json_time(value: Any, key: str, parsed: Parsed) -> datetime | None:
    if value is None:
        return None
    try:
        return _zoned(datetime.strptime(str(value), _TIME_FORMAT))
    except ValueError:
        parsed.notes.append(f"{key} {value!r} is not a time (YYYY-MM-DD HH:MM:SS): ignored")
        return None


def _json_metadata(document: dict[str, Any], config: dict[str, Any],
                   devices: list[dict[str, Any]]) -> dict[str, Any]:
    args = document.get("args")
    # Only NCCL's settings: the environment can hold anything, secrets included.
    env = [e for e in document.get("env") or [] if isinstance(e, str) and e.startswith("NCCL_")]
    algorithms = [e.split("=", 1)[1] for e in env if e.startswith("NCCL_ALGO=")]
    for result in document["results"]:
        tuning = result.get("tuning") if isinstance(result, dict) else None
        algo = tuning.get("algo") if isinstance(tuning, dict) else None
        if algo and algo not in algorithms:
            algorithms.append(str(algo))
    metadata: dict[str, Any] = {
        "layout": "json",
        "json_version": document.get("version"),
        "command": " ".join(map(str, args)) if isinstance(args, list) else None,
        "parameters": {k: v for k, v in config.items() if k != "devices"} or None,
        "devices": [{"rank": d.get("rank"), "group": d.get("group"), "pid": d.get("pid"),
                     "host": d.get("hostname"), "device": d.get("device"),
                     "bus_id": d.get("device_hex"), "name": d.get("device_info")}
                    for d in devices] or None,
        "nccl_env": env or None,
        "algorithm": _one_or_list(algorithms),
        "errors": document.get("errors") or None,
    }
    bounds, average = document.get("out_of_bounds"), document.get("average_bus_bandwidth")
    if isinstance(bounds, dict):
        metadata["out_of_bounds_values"] = bounds.get("count")
        metadata["out_of_bounds_ok"] = str(bounds.get("okay")).lower() == "true"
    if isinstance(average, dict):
        metadata["avg_bus_bandwidth"] = average.get("bandwidth")
        metadata["avg_bus_bandwidth_check"] = average.get("okay")
    metadata["footer"] = isinstance(bounds, dict)
    return {key: value for key, value in metadata.items() if value is not None}


# ---------------------------------------------------------------- shared helpers

def _most_common(names: list[str]) -> str | None:
    return Counter(names).most_common(1)[0][0] if names else None


def _one_or_list(values: list[str]) -> str | list[str] | None:
    return None if not values else values[0] if len(values) == 1 else values


def _version_from_code(code: Any) -> str | None:
    """NCCL_VERSION_CODE as dotted: 22803 -> 2.28.3 (from 2.9: X*10000 + Y*100 + Z), 2708 ->
    2.7.8 (before: X*1000 + Y*100 + Z)."""
    if isinstance(code, bool) or not isinstance(code, int) or code <= 0:
        return None
    if code >= 10000:
        return f"{code // 10000}.{code % 10000 // 100}.{code % 100}"
    return f"{code // 1000}.{code % 1000 // 100}.{code % 100}"


# ---------------------------------------------------------------- the summary observation

def _summarise(found: _Run, source_key: str, options: AdapterOptions, parsed: Parsed
               ) -> MeasurementRun:
    """The run with its item, and its busbw_measured row (or the reason it is rejected)."""
    run = found.run
    item, item_problem = _item(run, options)
    run = replace(run, item=item)
    peak, side, busbw = _peak(run.points)
    line, raw_text = peak.line, found.raw[id(peak)]
    run_date = run.started_at.date() if run.started_at else None
    as_of = run_date or options.as_of
    problems = [] if found.complete else [("busbw", found.stopped_reason)]
    if item_problem:
        problems.append(("item", item_problem))
    if as_of is None:
        problems.append(("as_of", "the file gives no date for this run; ingest it with "
                                  "--as-of YYYY-MM-DD"))
    if problems:
        reason = "; ".join(p[1] for p in problems)
        parsed.rejected.append(Rejected(line, problems[0][0], reason, raw_text))
        return run
    parsed.pack.sources.append(SourceDecl(
        key=source_key, title=_title(run, found.label), kind="measurement",
        published_on=run_date))
    parsed.pack.rows.append(PackRow(line, {
        "source": source_key, "item": item, "metric": METRIC, "value": busbw, "unit": UNIT,
        "as_of": as_of, "status": "C", "value_kind": "measured",
        "quote": _quote(run, found.label, peak, side, busbw)}, raw_text, found.column))
    return run


def _peak(points: list[NcclPoint]) -> tuple[NcclPoint, str, float]:
    """The largest busbw (either side) among the large messages; the first one on a tie."""
    threshold = max(p.size_bytes for p in points) / LARGE_MESSAGE_FRACTION
    best: tuple[NcclPoint, str, float] | None = None
    for point in points:
        if point.size_bytes < threshold:
            continue
        for side, value in zip(_SIDES, (point.oop_busbw, point.ip_busbw), strict=True):
            if value is not None and (best is None or value > best[2]):
                best = (point, side, value)
    assert best is not None  # the largest point is always above its own threshold
    return best


def _item(run: MeasurementRun, options: AdapterOptions) -> tuple[str | None, str | None]:
    """The fabric item: --item, else a single-node run's NVLink generation; else why not."""
    if options.item:
        return options.item, None
    hint = "ingest it with --item <ledger item>"
    if run.nodes is None:
        return None, ("the file lists no devices, so the fabric measured (NVLink within one node, "
                      f"or a scale-out network) is unknown; {hint}, e.g. --item nvlink-4")
    model = _GPU_MODEL.search(run.device or "")
    if run.nodes > 1:
        nvl72 = (" (on a GB200/GB300 NVL72 rack the nodes share one NVLink domain: "
                 "--item nvlink-5)" if model and model.group(1) in ("GB200", "GB300") else "")
        return None, (f"a {run.nodes}-node run measures the scale-out fabric, which the file does "
                      f"not name; {hint}, e.g. --item ib-ndr{nvl72}")
    if run.device is None:
        return None, f"the file names no GPU model, so the NVLink generation is unknown; {hint}"
    if _PCIE_CARD.search(run.device):
        return None, (f"{run.device} is a PCIe card: a single-node run measures PCIe or bridge "
                      f"links, not an NVLink generation; {hint}")
    if model is None:
        return None, f"device {run.device!r} maps to no NVLink generation the ledger has; {hint}"
    return _NVLINK_ITEM[model.group(1)], None


def _title(run: MeasurementRun, label: str) -> str:
    title = f"nccl-tests {label} run"
    if run.nodes and run.gpus_per_node and run.device:
        return f"{title}, {run.nodes} x {run.gpus_per_node} {run.device}"
    return f"{title}, {run.ranks} ranks" if run.ranks else title


def _quote(run: MeasurementRun, label: str, peak: NcclPoint, side: str, busbw: float) -> str:
    who = [f"nccl-tests {label}"]
    if run.nodes and run.gpus_per_node:
        nodes = f"{run.nodes} node{'s' if run.nodes > 1 else ''}"
        gpus = f"{nodes} x {run.gpus_per_node} GPU{'s' if run.gpus_per_node > 1 else ''}"
        who.append(f"{gpus} ({run.device})" if run.device else gpus)
    elif run.ranks:
        who.append(f"{run.ranks} ranks")
    if run.nccl_version:
        who.append(f"NCCL {run.nccl_version}")
    text = (f"{', '.join(who)}: peak busbw {busbw:g} GB/s at {peak.size_bytes} B ({side})")
    average = run.metadata.get("avg_bus_bandwidth")
    if isinstance(average, int | float):
        text += f"; avg bus bandwidth {average:g} GB/s"
    return text

