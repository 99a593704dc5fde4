"""`specledger list items|metrics|scenarios`: what there is to ask about, by the keys the other
commands take."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from pipelines.cli import ledger as cli_ledger
from pipelines.cli.options import HomeOption, JsonOption
from pipelines.cli.tables import Column, print_table
from pipelines.cli.terminal import label, plain_console, write_json

WHAT = ("items", "metrics", "scenarios")
EXIT_UNKNOWN = 2  # an item, metric, scenario or version the ledger does not have
console = plain_console()
errors = plain_console(stderr=True)

ITEM_COLUMNS = (Column("item", whole=True), Column("name", drop=2), Column("kind", drop=1),
                Column("metrics", whole=True, right=True),
                Column("values", whole=True, right=True))
METRIC_COLUMNS = (Column("metric", whole=True), Column("unit", whole=True),
                  Column("items", whole=True, right=True),
                  Column("values", whole=True, right=True))


def refuse_unknown(message: str) -> None:
    """Print `message` as an error and exit 2 (an unknown key, scenario or version)."""
    errors.print(label("error:", "red", message), highlight=False, soft_wrap=True)
    raise typer.Exit(EXIT_UNKNOWN)


def list_command(
        what: Annotated[str, typer.Argument(metavar="items|metrics|scenarios",
                                            help="What to list: items, metrics or scenarios.")],
        item: Annotated[str | None, typer.Option(
            "--item", show_default="every item",
            help="Only the metrics this item has values of.")] = None,
        home: HomeOption = None, as_json: JsonOption = False) -> None:
    """The ledger's items (key, name, kind, how many metrics and values) or its metrics
    (key, unit, how many items have a value), as known now; or the scenario files of the
    scenarios folder (name, kind, description), which needs no ledger."""
    if what not in WHAT:
        raise typer.BadParameter(f"{what!r}: expected one of {', '.join(WHAT)}",
                                 param_hint="WHAT")
    settings = cli_ledger.settings_for(home)
    if what == "scenarios":
        _list_scenarios(settings.scenarios_dir, settings.input_limits, as_json)
        return
    rows = _ledger_rows(settings, what, item)
    if as_json:
        write_json(rows)
        return
    title = f"{len(rows)} {what}" + (f" of {item}" if item else "")
    columns = ITEM_COLUMNS if what == "items" else METRIC_COLUMNS
    print_table(console, title, columns,
                [[f"{v:,}" if isinstance(v, int) else str(v) for v in row.values()]
                 for row in rows])


def _ledger_rows(settings: Any, what: str, item: str | None) -> list[dict[str, Any]]:
    """The rows of `list items` or `list metrics` (of `item`); an item the ledger does not
    know exits 2 naming the command that lists the ones it does."""
    from db import cli_queries, queries
    from db.engine import Session
    from pipelines.ledger.connection import open_ledger, utc_now

    counts = cli_queries.item_counts if what == "items" else cli_queries.metric_counts
    engine = open_ledger(settings)
    with Session(engine) as session:
        known = item is None or item in queries.items_by_key(session)
        rows = counts(session, utc_now(), item)
    engine.dispose()
    if not known:
        refuse_unknown(f"no item {item!r} in the ledger (`specledger list items` lists them)")
    return rows


def _list_scenarios(folder: Path, limits: Any, as_json: bool) -> None:
    """The scenario files of `folder`: each one's name, kind, file and description."""
    from pipelines.cli.scenario_files import scenario_files

    if not folder.is_dir():
        refuse_unknown(f"no scenarios folder {folder} (SPECLEDGER_SCENARIOS_DIR names it)")
    found = scenario_files(folder, limits)
    rows = [{"scenario": f.name, "kind": f.kind, "file": str(f.path),
             "description": f.problem or f.description} for f in found]
    if as_json:
        write_json(rows)
        return
    # The file is the name with .yaml in the shipped folder: a column only for those that
    # are not, so the names (what --scenario takes) and the kinds fit 80 columns.
    other = [f.path.name if f.name is None or f.path.stem != f.name else "" for f in found]
    columns = [Column("scenario", whole=True), Column("kind", whole=True),
               *([Column("file", whole=True, drop=1)] if any(other) else []),
               Column("description", drop=2)]
    cells = [[f.name or "(no name)", f.kind or "?", *([named] if any(other) else []),
              f.problem or f.description] for f, named in zip(found, other, strict=True)]
    where = ("" if not any(other) else " unless the file column names another")
    print_table(console, f"{len(rows)} scenarios in {_shown(folder)}, each in "
                         f"<scenario>.yaml{where}", columns, cells)


def _shown(folder: Path) -> str:
    """A folder relative to the working folder when it lies below it."""
    try:
        return str(folder.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(folder)


def register(app: typer.Typer) -> None:
    app.command(name="list")(list_command)
