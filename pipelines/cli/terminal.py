"""Terminal output that shows what it is given, as written, and JSON that is always JSON.

Ledger text (units, titles, reasons), file names and error messages may hold anything,
`[/bold]` included: the CLI's consoles never read markup or emoji codes in them. The CLI
styles its own labels with `label()` instead of markup. Output that goes to a pipe or a file
is laid out PIPED_WIDTH columns wide (COLUMNS, when set, wins): a table's cells are not cut
to fit an 80-column terminal nobody is looking at.
"""

from __future__ import annotations

import json
import math
import os
import sys
from typing import Any

from rich.console import Console
from rich.text import Text

PIPED_WIDTH = 200
# typer's names of a value's type, as click names them in help.
CLICK_NAMES = {"str": "TEXT", "int": "INTEGER", "float": "FLOAT", "path": "PATH",
               "Path": "PATH", "bool": "BOOLEAN", "datetime": "DATETIME"}


def plain_console(*, stderr: bool = False) -> Console:
    """A console that prints strings literally: no markup, no :emoji: codes; PIPED_WIDTH
    columns wide when it is not a terminal."""
    console = Console(stderr=stderr, markup=False, emoji=False)
    if not console.is_terminal and not os.environ.get("COLUMNS"):
        console.width = PIPED_WIDTH
    return console


def plain_help() -> None:
    """Typer's help as people read it: an option's value as click names it (`--home PATH`,
    `--as-of TEXT`), nothing for a flag (typer prints `<bool>`, `<list[Path]>`), an argument
    in the usage line as `PATHS...` (typer prints `{paths}...`), a default given as text
    as written (`[default: ./var]`, typer prints `[default: (./var)]`), and a command's
    summary in the command list as one paragraph (typer keeps the docstring's line breaks
    there, so the list wrapped mid-sentence)."""
    from typer import core, rich_utils

    def option_value(self: Any, ctx: Any) -> str | None:
        if self.is_flag or self.count:
            return None
        if self.metavar:
            return str(self.metavar)
        shown = str(typed(self, ctx)).strip("<>").removesuffix("...")
        return f"[{shown}]" if "|" in shown else CLICK_NAMES.get(shown, shown.upper())

    typed = core.TyperOption.display_type

    def usage_name(self: Any) -> str:
        name = (self.metavar or self.name or "").upper() + ("..." if self.nargs != 1 else "")
        return name if self.required else f"[{name}]"

    default_text = core.TyperOption._get_default_string

    def default_as_written(self: Any, *, ctx: Any, show_default_is_str: bool,
                           default_value: Any) -> str:
        text = default_text(self, ctx=ctx, show_default_is_str=show_default_is_str,
                            default_value=default_value)
        return text[1:-1] if show_default_is_str else text

    summary = rich_utils._make_command_help

    def one_paragraph(*, help_text: str, markup_mode: Any) -> Any:
        first, gap, rest = help_text.partition("\n\n")
        return summary(help_text=" ".join(first.split()) + gap + rest, markup_mode=markup_mode)

    core.TyperOption.display_type_rich = option_value  # type: ignore[method-assign]
    core.TyperOption._get_default_string = default_as_written  # type: ignore[method-assign]
    core.TyperArgument.display_type_rich = lambda self, ctx: None  # type: ignore[method-assign]
    core.TyperArgument._usage_display_name = usage_name  # type: ignore[method-assign]
    rich_utils._make_command_help = one_paragraph  # type: ignore[assignment]


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
