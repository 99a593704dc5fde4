"""The text layouts of nccl-tests output, walked line by line: launcher labels stripped, each
results header opening a table whose rows are read into points, and the lines around it (command,
parameters, device list, NCCL version and algorithm, footer) gathered as the table's context;
everything else is counted as skipped."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from pipelines.inputs.adapters.base import NcclPoint, Rejected
from pipelines.inputs.adapters.guards import whole
from pipelines.inputs.adapters.nccl_tests.common import BINARY, INFO
from pipelines.inputs.adapters.nccl_tests.header import Header, parse_header
from pipelines.inputs.adapters.nccl_tests.rows import read_row

# Launcher labels: OpenMPI --tag-output, Intel MPI -prepend-rank (`[0] `, which Intel MPI also
# writes in mid-line wherever a printf chunk started), Slurm --label (` 0: `).
_LABEL = re.compile(r"^\s*(?:\[\d+,\d+\]<std(?:out|err)>:|(?P<intel>\[\d+\])(?:\s|$)|\d+:(?=\s))")
_INFO_LINE = re.compile(r"^\S+:\d+:\d+ \[\d+\] NCCL (?:INFO|WARN|TRACE)\b")
_NCCL_VERSION = re.compile(r"\bNCCL version (\d+\.\d+\.\d+)(\S*)")
_ALGO = re.compile(r"(?:NCCL_ALGO set by environment to |-> Algo |NCCL_ALGO=)([A-Za-z][\w,:;^]*)")
TESTS_VERSION = re.compile(r"^nccl-tests version (.+?) nccl-headers=(\d+) nccl-library=(\d+)")
_STARTING = re.compile(r"^Collective test starting: (\S+)")
_CONCLUDED = re.compile(r"^Collective test concluded: (\S+)")
PARAMS = re.compile(r"^nThread \d+ nGpus \d+")
# A name starts a word: tried from inside one, findall would rescan long words (quadratic).
_PARAM = re.compile(r"(?<![A-Za-z_])([A-Za-z_]+(?: iters)?):?\s+(\S+)")
# The name is \S...\S, not .+?\s*$: a lazy name before \s*$ rescans every run of spaces
# (minutes for a hostile line).
DEVICE = re.compile(
    r"^Rank\s+(?P<rank>\d+)\s+(?:Group\s+(?P<group>\d+)\s+)?Pid\s+(?P<pid>\d+)\s+on\s+(?P<host>\S+)"
    r"\s+device\s+(?P<device>\d+)\s+\[(?P<bus>[^\]]*)\]\s+(?P<name>\S(?:.*\S)?)\s*$")
_OUT_OF_BOUNDS = re.compile(r"^Out of bounds values\s*:\s*(\d+)\s*(\w+)?")
_AVG_BUSBW = re.compile(r"^Avg bus bandwidth\s*:\s*(\S+)\s*(\w+)?")
_REDUCED_MAX = re.compile(r"Reducing maxBytes to (\d+)")
_JSON_OUTPUT = re.compile(r"^Writing JSON output to (\S+)")
_PROMPT = re.compile(r"^(?:\([^)]*\)\s+)?\S*\$\s+")


def unlabel(line: str) -> tuple[str, bool]:
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


@dataclass
class Context:
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
class Table:
    header: Header
    context: Context
    points: list[NcclPoint] = field(default_factory=list)
    raw: dict[int, str] = field(default_factory=dict)
    rejected: list[Rejected] = field(default_factory=list)
    footer: dict[str, Any] = field(default_factory=dict)
    errors: list[float] = field(default_factory=list)  # legacy `error` floats
    timestamps: list[datetime] = field(default_factory=list)
    elided: list[int] = field(default_factory=list)
    closed: bool = False


class TextReader:
    """Walks the lines once: a results header opens a table, a footer or the next run's
    preamble closes it; preamble lines feed the context of the next table."""

    def __init__(self) -> None:
        self.tables: list[Table] = []
        self.pending = Context()
        self.open: Table | None = None
        self.skipped = 0
        self.relabelled = 0
        self.notes: list[str] = []
        self._continued: list[str] = []

    def feed(self, number: int, raw: str) -> None:
        body, relabelled = unlabel(raw)
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
        result = read_row(number, text, self.open.header)
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
        header = parse_header(text, number)
        if header is not None:
            self._start(header)
            return
        comment = text.lstrip("#").strip()
        if self._footer(number, comment):
            return
        if match := TESTS_VERSION.match(comment):
            self._preamble(number).tests_version = match.group(1)
            self.pending.library_code = whole(match.group(3))
        elif match := _STARTING.match(comment):
            self._preamble(number).program = match.group(1)
        elif match := _JSON_OUTPUT.match(comment):
            self._preamble(number).json_output = match.group(1)
        else:
            self._preamble_facts(number, comment)

    def _other(self, number: int, text: str, continued: list[str]) -> None:
        header = parse_header(text, number)
        if header is not None:  # a header whose `#` a copy-paste lost
            self._start(header)
        elif self._preamble_facts(number, text):
            return
        elif (command := _command(text, continued)) is not None:
            self._preamble(number).command = command  # its NCCL_ALGO is read with the command
        elif not self._log_facts(text) and text in ("...", "…") and self.open is not None:
            self.open.elided.append(number)

    def _preamble_facts(self, number: int, text: str) -> bool:
        if PARAMS.match(text):
            self._preamble(number).params.update(_parameters(text))
        elif match := _REDUCED_MAX.search(text):  # nccl-tests lowered maxBytes to fit memory
            self._preamble(number).params["maxBytes"] = _number(match.group(1))
        elif match := DEVICE.match(text):
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
        return INFO.search(text) is not None

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

    def _preamble(self, number: int) -> Context:
        """The context of the next run: a preamble line ends the open table."""
        self.open = None
        self.pending.touch(number)
        return self.pending

    def _start(self, header: Header) -> None:
        context = self.pending
        if self.open is not None and not self.open.points and not self.open.rejected:
            # The header printed again (two processes of a non-MPI build): one table.
            context = _merge(self.open.context, context)
            self.tables.pop()
        self.open = Table(header, context)
        self.tables.append(self.open)
        self.pending = Context()


def _footer_values(comment: str) -> dict[str, Any] | None:
    if match := _OUT_OF_BOUNDS.match(comment):
        return {"out_of_bounds_values": _number(match.group(1)),
                "out_of_bounds_ok": match.group(2) != "FAILED"}
    if match := _AVG_BUSBW.match(comment):
        values: dict[str, Any] = {"avg_bus_bandwidth": _float_or_text(match.group(1))}
        if match.group(2):
            values["avg_bus_bandwidth_check"] = match.group(2)
        return values
    if _CONCLUDED.match(comment):
        return {"concluded": True}
    return None


def _merge(first: Context, second: Context) -> Context:
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
    return {key: _number(value) for key, value in _PARAM.findall(text)}


def _device(match: re.Match[str]) -> dict[str, Any]:
    device = {"rank": _number(match["rank"]), "pid": _number(match["pid"]),
              "host": match["host"], "device": _number(match["device"]), "bus_id": match["bus"],
              "name": match["name"]}
    if match["group"] is not None:
        device["group"] = _number(match["group"])
    return device


def _command(text: str, continued: list[str]) -> str | None:
    """A shell command running a `*_perf` binary (with its continuation lines), prompt removed."""
    line = text.lstrip(">").strip()
    if BINARY.search(line) is None or INFO.search(line):
        return None
    return _PROMPT.sub("", " ".join(" ".join([*continued, line]).split()))


def _number(text: str) -> int | str:
    """A whole number as an int when it fits 64 bits; anything else stays the text written."""
    value = whole(text.removeprefix("-"))
    if value is None:
        return text
    return -value if text.startswith("-") else value


def _float_or_text(text: str) -> float | str:
    try:
        value = float(text)
    except ValueError:
        return text
    return value if math.isfinite(value) else text
