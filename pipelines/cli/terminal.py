"""Terminal output that shows what it is given, as written, and JSON that is always JSON.

Ledger text (units, titles, reasons), file names and error messages may hold anything,
`[/bold]` included: the CLI's consoles never read markup or emoji codes in them. The CLI
styles its own labels with `label()` instead of markup.
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any

from rich.console import Console
from rich.text import Text


def plain_console(*, stderr: bool = False) -> Console:
    """A console that prints strings literally: no markup, no :emoji: codes."""
    return Console(stderr=stderr, markup=False, emoji=False)


def label(name: str, style: str, *rest: str | tuple[str, str]) -> Text:
    """`name` in `style`, then `rest` (plain strings, or (text, style) pairs) after a space."""
    return Text.assemble((name, style), " ", *rest)


def finite(value: Any) -> Any:
    """`value` with every NaN or infinite float inside it (dicts, lists, tuples) as None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value


def json_text(payload: Any, indent: int | None = 2) -> str:
    """Strict JSON (never NaN or Infinity): non-finite numbers become null, dates and other
    values JSON has no type for become their text."""
    return json.dumps(finite(payload), indent=indent, default=str, allow_nan=False)


def write_json(payload: Any, indent: int | None = 2) -> None:
    """Print `payload` as one JSON document on standard output (the machine-readable --json)."""
    sys.stdout.write(json_text(payload, indent) + "\n")
