"""One results line of nccl-tests text output, read by its table's header: an NcclPoint with any
legacy `error` floats and `-S 1` timestamp, or a Rejected naming the column that failed (a line
cut short, garbled, or with a value that is not a finite, non-negative number)."""

from __future__ import annotations

import math
from datetime import datetime

from pipelines.inputs.adapters.base import NcclPoint, Rejected
from pipelines.inputs.adapters.guards import INT64_MAX, whole
from pipelines.inputs.adapters.nccl_tests.common import INFO, TIME_FORMAT, BadCell, root_rank, zoned
from pipelines.inputs.adapters.nccl_tests.header import Header, Side


def read_row(number: int, text: str, header: Header
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
    except BadCell as bad:
        return Rejected(number, bad.column, bad.reason, text)


def _width_reason(tokens: list[str], header: Header, text: str) -> str:
    found, expected = len(tokens), header.width
    if INFO.search(text):
        why = "an NCCL log line was printed into the middle of this row"
    elif found < expected and "." in tokens[0]:
        why = "the row's size columns are missing (the row was split by other output)"
    elif found < expected:
        why = "the line is cut short"
    else:
        why = "the line has extra fields"
    return (f"expected {expected} fields ({' '.join(header.names)}), found {found}: {why}")


def _point(number: int, cells: list[str], header: Header
           ) -> tuple[NcclPoint, list[float], datetime | None]:
    names, prefix = header.names, header.prefix
    size = _whole(cells[prefix["size"]], names[prefix["size"]], "a whole number of bytes")
    count = (_whole(cells[prefix["count"]], names[prefix["count"]], "a whole number of elements")
             if "count" in prefix else 0)
    redop = cells[prefix["redop"]] if "redop" in prefix else None
    root = root_rank(cells[prefix["root"]], names[prefix["root"]]) if "root" in prefix else None
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


def _side(cells: list[str], names: tuple[str, ...], side: Side
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
    if not (cell.isascii() and cell.isdigit()):  # str.isdigit() also takes "²", int() does not
        raise BadCell(column, f"{column} {cell!r} is not {expected}")
    value = whole(cell)
    if value is None:
        raise BadCell(column, f"{column} {cell} is beyond a 64-bit integer (at most {INT64_MAX})")
    return value


def _measure(cell: str, column: str, side: str, expected: str) -> float:
    try:
        value = float(cell)
    except ValueError:
        raise BadCell(column, f"{side} {column} {cell!r} is not a number "
                              f"(expected {expected})") from None
    if not math.isfinite(value) or value < 0:
        raise BadCell(column, f"{side} {column} {cell!r} is not a finite, non-negative number")
    return value


def _wrong(cell: str, column: str, side: str) -> int:
    """`#wrong` is printed with %g, so large counts come as 1.2e+07."""
    value = _measure(cell, column, side, "a count of wrong elements, or N/A")
    if value != int(value):
        raise BadCell(column, f"{side} {column} {cell!r} is not a whole count")
    if value > INT64_MAX:
        raise BadCell(column, f"{side} {column} {cell} is beyond a 64-bit integer")
    return int(value)


def _timestamp(cell: str, column: str) -> datetime:
    try:
        return zoned(datetime.strptime(cell, TIME_FORMAT))
    except ValueError:
        raise BadCell(column, f"{column} {cell!r} is not a time "
                              "(expected YYYY-MM-DD HH:MM:SS)") from None
