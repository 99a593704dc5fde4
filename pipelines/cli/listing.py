"""`specledger list items|metrics`: what there is to ask about, by the keys the other commands
take."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from pipelines.cli import ledger as cli_ledger
from pipelines.cli.options import HomeOption, JsonOption
from pipelines.cli.tables import Column, print_table
from pipelines.cli.terminal import label, plain_console, write_json

WHAT = ("items", "metrics")
EXIT_UNKNOWN = 2  # an item the ledger does not have
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
        what: Annotated[str, typer.Argument(metavar="items|metrics",
                                            help="What to list: items or metrics.")],
        item: Annotated[str | None, typer.Option(
            "--item", show_default="every item",
            help="Only the metrics this item has values of.")] = None,
        home: HomeOption = None, as_json: JsonOption = False) -> None:
    """The ledger's items (key, name, kind, how many metrics and values) or its metrics
    (key, unit, how many items have a value), as known now."""
    if what not in WHAT:
        raise typer.BadParameter(f"{what!r}: expected one of {', '.join(WHAT)}",
                                 param_hint="WHAT")
    settings = cli_ledger.settings_for(home)
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
    from db import queries
    from db.engine import Session
    from pipelines.ledger.connection import open_ledger, utc_now

    engine = open_ledger(settings)
    with Session(engine) as session:
        known = item is None or item in queries.items_by_key(session)
        frame = queries.observations_frame(session, known=utc_now(), item=item)
    engine.dispose()
    if not known:
        refuse_unknown(f"no item {item!r} in the ledger (`specledger list items` lists them)")
    if what == "items":
        return [{"item": key, "name": group["item_name"].iloc[0],
                 "kind": group["item_kind"].iloc[0], "metrics": int(group["metric"].nunique()),
                 "values": len(group)} for key, group in frame.groupby("item", sort=True)]
    return [{"metric": key, "unit": group["unit"].iloc[0],
             "items": int(group["item"].nunique()), "values": len(group)}
            for key, group in frame.groupby("metric", sort=True)]


def register(app: typer.Typer) -> None:
    app.command(name="list")(list_command)
