"""Split CSV text into records with their first line, so that damage stays local.

The csv module alone has two ways to lose rows silently: an unterminated quote swallows every
later line into one field, and a stray character after a closing quote is accepted. Here the
parser is strict, and when a record cannot be read its first physical line is reported as
damaged and reading starts again on the next line: every line ends up in exactly one record
(read, or damaged and kept for review), so the caller's counts always add up.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class CsvDamage:
    """A record the CSV parser could not read, and why."""

    reason: str


Record = tuple[int, str, list[str] | CsvDamage]  # (first line, its text, fields or damage)


def csv_records(text: str) -> Iterator[Record]:
    """Every record of `text`: (first line number, raw text, fields) or a CsvDamage."""
    lines = list(io.StringIO(text, newline=""))  # split at \n, \r\n and \r, endings kept
    start = 0
    while start < len(lines):
        reader = csv.reader(iter(lines[start:]), strict=True)
        consumed = 0
        try:
            for values in reader:
                first, consumed = start + consumed, reader.line_num
                yield first + 1, _joined(lines[first : start + consumed]), values
            return
        except csv.Error as exc:
            damaged = start + consumed
            yield damaged + 1, _joined(lines[damaged : damaged + 1]), CsvDamage(_reason(exc))
            start = damaged + 1


def _joined(lines: list[str]) -> str:
    return "".join(lines).rstrip("\r\n")


def _reason(exc: csv.Error) -> str:
    message = str(exc)
    if "unexpected end of data" in message:
        return ("unterminated quote: the quoted field opened on this line never closes "
                "(the following lines are read as rows of their own)")
    return f"the CSV parser cannot read this row: {message}"
