"""The results header of nccl-tests text output: which column is which, read by the header's own
names and never by position (the legacy header with its `error` float, `-C 1`'s `cputime`, `-S 1`'s
timestamp, per-iteration `i_*` columns), with or without its `#`."""

from __future__ import annotations

from dataclasses import dataclass

from pipelines.inputs.adapters.nccl_tests.common import SIDES

_HEADER_ALIASES = {"bytes": "size", "N": "count", "cputime": "time", "res": "error",
                   "wrong": "#wrong"}
_PREFIX_COLUMNS = ("size", "count", "type", "redop", "root")
_SIDE_COLUMNS = ("time", "algbw", "busbw", "#wrong", "error")


@dataclass(frozen=True)
class Side:
    name: str  # "out-of-place" | "in-place"
    time: int
    algbw: int
    busbw: int
    check: int | None  # index of `#wrong` or the legacy `error` column
    check_kind: str | None


@dataclass(frozen=True)
class Header:
    line: int
    names: tuple[str, ...]  # the file's column names, in order
    prefix: dict[str, int]
    sides: tuple[Side, ...]
    timestamp: int | None
    ignored: tuple[str, ...]

    @property
    def width(self) -> int:
        """Whitespace-separated fields of a row (the timestamp is a date and a time)."""
        return len(self.names) + (1 if self.timestamp is not None else 0)

    @property
    def legacy(self) -> bool:
        return self.sides[0].check_kind == "error"


def parse_header(text: str, line: int) -> Header | None:
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
        sides.append(Side(SIDES[number], span["time"], span["algbw"], span["busbw"],
                          span.get(kind) if kind else None, kind))
    timestamp = keys.index("timestamp") if "timestamp" in keys else None
    return Header(line, tuple(names), prefix, tuple(sides), timestamp, tuple(ignored))
