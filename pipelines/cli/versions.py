"""What `flags` and `changes` share: a read-only session on the ledger, the dataset versions
it holds, and the exits for a ledger with none (3) and for a version it does not hold (2)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from pipelines.cli import ledger as cli_ledger
from pipelines.cli.listing import errors, refuse_unknown
from pipelines.cli.options import MAX_LEDGER_ID
from pipelines.cli.terminal import label

if TYPE_CHECKING:
    from db.engine import Session

EXIT_NO_VERSION = 3  # as `report`: nothing to show until an ingest or a run


def version_option(default: str, what: str) -> Any:
    """An option naming a dataset version, bounded to what the ledger's ids hold."""
    return Annotated[int | None, typer.Option(
        f"--{what}", min=1, max=MAX_LEDGER_ID, show_default=default,
        help="A dataset version (`specledger changes` and `report` name them).")]


@contextmanager
def ledger_versions(home: Path | None) -> Iterator[tuple[Session, list[int]]]:
    """A session on --home's ledger and its dataset versions, oldest first; a ledger
    without any exits 3 saying how to make one."""
    from db import queries
    from db.engine import Session
    from pipelines.ledger.connection import open_ledger

    engine = open_ledger(cli_ledger.settings_for(home))
    try:
        with Session(engine) as session:
            versions = [v for v, _ in queries.dataset_versions(session)]
            if not versions:
                errors.print(label("error:", "red", "the ledger has no dataset version yet: "
                                   "run `specledger run` or `specledger ingest` first"),
                             highlight=False, soft_wrap=True)
                raise typer.Exit(EXIT_NO_VERSION)
            yield session, versions
    finally:
        engine.dispose()


def known_version(version: int, versions: list[int], option: str) -> int:
    """`version` when the ledger holds it; else exit 2 with the versions it holds."""
    if version not in versions:
        held = (f"version {versions[0]}" if len(versions) == 1
                else f"versions {versions[0]} to {versions[-1]}")
        refuse_unknown(f"{option} {version}: no such dataset version; the ledger holds {held}")
    return version
