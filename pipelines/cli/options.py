"""The options every command shares, defined once, each showing its default in `--help`.

Help text is read as rich markup, so a default written into it as `[default: ./var]` was
taken for a tag and never shown; a default that is not the option's Python value (None
standing for "./var", "today", "the newest version") is given as `show_default=` instead.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer

HOME_DEFAULT = "./var"
# The largest id the ledger's id columns hold (INTEGER on PostgreSQL): an option naming a
# ledger row is bounded to it before any query, so 2^63 is a usage error, not a crash.
MAX_LEDGER_ID = 2**31 - 1


def home_shown() -> str:
    """--home's default as help shows it: ./var, or the folder SPECLEDGER_HOME names."""
    named = os.environ.get("SPECLEDGER_HOME")
    return f"{named}, from SPECLEDGER_HOME" if named else HOME_DEFAULT


def home_option(holds: str) -> Any:
    """--home for a command that reads `holds` there (e.g. "the SQLite ledger")."""
    return Annotated[Path | None, typer.Option(
        "--home", envvar="SPECLEDGER_HOME", show_default=home_shown(),
        help=f"Folder holding {holds}.")]


HomeOption = home_option("the SQLite ledger, warehouse.duckdb and briefings/")
LedgerHomeOption = home_option("the SQLite ledger")
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON object instead.")]
ScenarioArgument = Annotated[Path, typer.Argument(help="A scenario YAML file.",
                                                  exists=True, dir_okay=False)]
