"""What the nccl-tests readers share: the format's name, the Run that the text and -J JSON readers
hand to the summary, the BadCell they raise for a value they cannot take, and the small helpers
both use (times, root ranks, GPUs per node, the commonest device, NCCL version codes)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pipelines.inputs.adapters.base import MeasurementRun, Parsed
from pipelines.inputs.adapters.guards import INT32_MAX, whole

FORMAT = "nccl-tests"
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"  # util.cu TIME_STRING_FORMAT: JSON times and -S timestamps
SIDES = ("out-of-place", "in-place")
INFO = re.compile(r"\bNCCL (?:INFO|WARN|TRACE)\b")
BINARY = re.compile(r"(?:^|[\s/])(?P<name>[a-z][a-z0-9_]*?)_perf(?:_mpi)?(?=\s|$)")


# ---------------------------------------------------------------- what a run is, before summary

@dataclass
class Run:
    """A run read from the file, with the file text of each point for the summary row."""

    run: MeasurementRun
    raw: dict[int, str]  # id(point) -> the point's text in the file
    column: str  # the file's name for the bus bandwidth column
    label: str  # "all_reduce_perf" or "run" for the title and quote
    complete: bool = True  # False when the run stopped before its largest size
    stopped_reason: str = ""


# ---------------------------------------------------------------- shared helpers

class BadCell(ValueError):
    def __init__(self, column: str, reason: str) -> None:
        super().__init__(reason)
        self.column, self.reason = column, reason


def zoned(moment: datetime) -> datetime:
    """nccl-tests prints the host's local time without a zone; the ledger stores UTC, and the
    host's zone is unknowable, so the time is read as UTC (at most a day off for the date)."""
    return moment.replace(tzinfo=UTC)


def root_rank(cell: str, column: str) -> int | None:
    """The root rank; -1 (what nccl-tests prints for collectives without one) is None."""
    if not re.fullmatch(r"-?[0-9]+", cell):
        raise BadCell(column, f"{column} {cell!r} is not a rank number (or -1)")
    if cell.startswith("-"):
        return None
    rank = whole(cell, INT32_MAX)
    if rank is None:
        raise BadCell(column, f"{column} {cell} is beyond any rank number (at most {INT32_MAX})")
    return rank


def gpus_per_node(per_host: Counter[str], parsed: Parsed, line: int) -> int:
    counts = set(per_host.values())
    if len(counts) > 1:
        parsed.notes.append(f"the run at line {line} has unequal ranks per host "
                            f"({dict(per_host)}): GPUs per node is the largest")
    return max(counts)


def most_common(names: list[str]) -> str | None:
    return Counter(names).most_common(1)[0][0] if names else None


def one_or_list(values: list[str]) -> str | list[str] | None:
    return None if not values else values[0] if len(values) == 1 else values


def version_from_code(code: Any) -> str | None:
    """NCCL_VERSION_CODE as dotted: 22803 -> 2.28.3 (from 2.9: X*10000 + Y*100 + Z), 2708 ->
    2.7.8 (before: X*1000 + Y*100 + Z)."""
    if isinstance(code, bool) or not isinstance(code, int) or code <= 0:
        return None
    if code >= 10000:
        return f"{code // 10000}.{code % 10000 // 100}.{code % 100}"
    return f"{code // 1000}.{code % 1000 // 100}.{code % 100}"
