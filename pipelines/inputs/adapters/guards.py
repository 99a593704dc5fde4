"""What every adapter checks before a value from a file reaches Python's recursion or the
database: JSON nesting depth (scanned without recursing), integers that fit the ledger's
columns, and NUL characters, which PostgreSQL text cannot hold.

Hostile input is normal input: each check turns a value that would crash a reader or the store
into a rejected file or row with a reason, the same on SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import fields, is_dataclass, replace
from typing import Any

from pipelines.inputs.adapters.base import AdapterError, Parsed

INT64_MAX = 2**63 - 1  # BigInteger columns (sizes, counts)
INT32_MAX = 2**31 - 1  # Integer columns (ranks, nodes, root): PostgreSQL's integer is 32 bits
NUL = "\x00"
NUL_ESCAPE = "\\x00"  # what a NUL becomes in stored text: visible, and PostgreSQL can hold it

# A JSON string (possessive, so an unclosed one runs to the end once, never backtracks) or a run
# of brackets. Brackets inside strings are not structure.
_JSON_TOKEN = re.compile(r'"(?:[^"\\]++|\\.)*+(?:"|\Z)|[\[{]+|[\]}]+', re.DOTALL)
_JSON_STRING = re.compile(r'"(?:[^"\\]++|\\.)*+(?:"|\Z)', re.DOTALL)
# The same strings in a text without a backslash (no escapes): a third faster on a price list.
_JSON_PLAIN_STRING = re.compile(r'"[^"]*+(?:"|\Z)')
_JSON_BRACKETS = re.compile(r"[\[{]+|[\]}]+")
_DIGITS = re.compile(r"[0-9]+")


def json_depth_problem(text: str, limit: int) -> tuple[int, str] | None:
    """(line, reason) when `text` nests arrays and objects deeper than `limit`, else None.

    An iterative scan, so a file of 100,000 `[` costs a loop, not Python's recursion limit.
    The strings are cut out first (in C, by the regex engine) and only the brackets left are
    walked: a 44 MB price list has 3 million strings and a few hundred thousand brackets."""
    skeleton = (_JSON_STRING if "\\" in text else _JSON_PLAIN_STRING).sub("", text)
    if skeleton.count("[") + skeleton.count("{") <= limit:
        return None
    depth = 0
    for match in _JSON_BRACKETS.finditer(skeleton):
        token = match.group()
        if token[0] in "]}":
            depth = max(depth - len(token), 0)
            continue
        depth += len(token)
        if depth > limit:
            return _deep_at(text, limit)
    return None


def _deep_at(text: str, limit: int) -> tuple[int, str]:
    """(line, reason) of the first bracket of `text` deeper than `limit` (it has one)."""
    depth = 0
    for match in _JSON_TOKEN.finditer(text):
        token = match.group()
        if token[0] == '"':
            continue
        if token[0] in "]}":
            depth = max(depth - len(token), 0)
            continue
        depth += len(token)
        if depth > limit:
            at = match.start() + len(token) - (depth - limit)
            line = text.count("\n", 0, at) + 1
            return line, (f"JSON nested deeper than {limit} levels (SPECLEDGER_JSON_MAX_DEPTH): "
                          "refused unread")
    raise AssertionError("json_depth_problem found a depth _deep_at does not")


def load_json(text: str, limit: int, what: str, hint: str = "") -> Any:
    """`text` as JSON, or AdapterError naming the line: too deep, malformed (with `hint`), or a
    number too long to read (Python refuses integers of more than 4300 digits)."""
    problem = json_depth_problem(text, limit)
    if problem is not None:
        raise AdapterError(problem[0], f"{what}: {problem[1]}")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise AdapterError(exc.lineno, f"malformed JSON: {exc.msg} (line {exc.lineno}, column "
                                       f"{exc.colno}); {what} cannot be read{hint}") from exc
    except (ValueError, RecursionError) as exc:  # a 5000-digit number; a depth limit set too high
        raise AdapterError(None, f"{what} cannot be read as JSON: {exc}") from exc


def whole(text: str, maximum: int = INT64_MAX) -> int | None:
    """ASCII digits as an int when it is at most `maximum`, else None (never a ValueError: the
    length is checked before int(), which refuses strings of more than 4300 digits)."""
    if _DIGITS.fullmatch(text) is None:
        return None
    if len(text.lstrip("0")) > len(str(maximum)):
        return None
    value = int(text)
    return value if value <= maximum else None


def fits(value: int, maximum: int = INT64_MAX) -> bool:
    """Whether a whole number fits a signed column of that maximum."""
    return -maximum - 1 <= value <= maximum


def finite_json(value: Any) -> Any:
    """JSON-able data with non-finite floats written as text ("inf", "nan"), so that the
    metadata stored as JSON is always valid JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, dict):
        return {key: finite_json(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [finite_json(item) for item in value]
    return value


def escape_nul(value: Any) -> Any:
    """Strings (in dataclasses, dicts and lists too) with each NUL written as the four characters
    `\\x00`; other values unchanged."""
    if isinstance(value, str):
        return value.replace(NUL, NUL_ESCAPE) if NUL in value else value
    if isinstance(value, dict):
        return {escape_nul(k): escape_nul(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(escape_nul(item) for item in value)
    if is_dataclass(value) and not isinstance(value, type):
        changed = {f.name: escape_nul(getattr(value, f.name)) for f in fields(value)}
        return replace(value, **changed)
    return value


def storable(parsed: Parsed, data: bytes | None = None) -> Parsed:
    """What an adapter read, safe to store on either database: NUL characters in its text
    escaped as `\\x00` (with a note saying so) and its runs' metadata valid JSON. Given the
    file's bytes, a file that cannot hold a NUL (no 0 byte, no escape that makes one) skips
    the look through everything it gave (seconds, for a 100,000-row price list)."""
    for run_index, run in enumerate(parsed.runs):
        parsed.runs[run_index] = replace(run, metadata=finite_json(run.metadata))
    if data is not None and not may_hold_nul(data):
        return parsed
    if not _has_nul(parsed):
        return parsed
    pack = parsed.pack
    pack.sources[:] = escape_nul(pack.sources)
    pack.items[:] = escape_nul(pack.items)
    pack.rows[:] = escape_nul(pack.rows)
    parsed.runs[:] = escape_nul(parsed.runs)
    parsed.rejected[:] = escape_nul(parsed.rejected)
    parsed.notes[:] = [*escape_nul(parsed.notes),
                       "NUL characters in the file's text are stored as \\x00"]
    return parsed


# What can put a NUL into decoded text: the byte itself, or an escape for it (JSON \u0000,
# YAML's \0, \x00, \u0000 and \U00000000).
_NUL_ESCAPE = re.compile(rb"\\(?:0|x00|u0000|U00000000)")


def may_hold_nul(data: bytes) -> bool:
    """Whether text read from `data` might contain a NUL character."""
    return b"\x00" in data or _NUL_ESCAPE.search(data) is not None


def _has_nul(parsed: Parsed) -> bool:
    """Whether any text the adapter read holds a NUL (a cheap look before rebuilding)."""
    return _contains_nul([parsed.pack.sources, parsed.pack.items, parsed.pack.rows,
                          parsed.runs, parsed.rejected, parsed.notes])


def _contains_nul(value: Any) -> bool:
    if isinstance(value, str):
        return NUL in value
    if isinstance(value, dict):
        return any(_contains_nul(k) or _contains_nul(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(_contains_nul(item) for item in value)
    if is_dataclass(value) and not isinstance(value, type):
        return any(_contains_nul(getattr(value, f.name)) for f in fields(value))
    return False
