"""`specledger changes`: what each dataset version changed against the one before it, old ->
new per item and metric (db.changes: added, changed, superseded), and the results that moved.

The changes that matter most come first, as the briefing ranks them: those of a figure a
stored result of the version read, then the resolved values that moved, then changed before
superseded before added, then the larger move. Each row also says what the resolved value
(what `value` and current_value show, valid on each cut-off's date) was and became, which is
what the warehouse's `changes` table lists per (item, metric).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

import typer

from pipelines.cli.flags import print_flag
from pipelines.cli.listing import console
from pipelines.cli.options import HomeOption, JsonOption
from pipelines.cli.tables import Column, print_table
from pipelines.cli.terminal import write_json
from pipelines.cli.versions import known_version, ledger_versions, version_option

# The flags that say a result moved: a scenario's class, fabric or break-even speed-up, and a
# market price index.
MOVED_KINDS = ("result_moved", "price_move")
COLUMNS = (Column("item", whole=True), Column("metric", whole=True),
           Column("kind", whole=True), Column("source", whole=True, drop=2),
           Column("old → new"), Column("resolved", drop=3), Column("read by", drop=1))


def changes_command(
        since: version_option("the version before the newest", "since") = None,
        limit: Annotated[int, typer.Option(
            "--limit", min=1, help="The most changes shown per version (the ones that matter "
                                   "most; every change is counted).")] = 30,
        home: HomeOption = None, as_json: JsonOption = False) -> None:
    """What changed in each dataset version after --since (by default, in the newest against
    the one before it): old -> new per item and metric, and the results that moved. Exit 2
    for a version the ledger does not have."""
    with ledger_versions(home) as (session, versions):
        after = known_version(since, versions, "--since") if since is not None else None
        shown = [v for v in versions if v > after] if after is not None else versions[-1:]
        report = [version_changes(session, v, limit) for v in shown]
    if as_json:
        write_json({"since": after, "versions": report})
        return
    if not report:
        console.print(f"nothing after version {after}: it is the newest", highlight=False)
    for version in report:
        _print_version(version)


def version_changes(session: Any, version_id: int, limit: int) -> dict[str, Any]:
    """A version's changes against the one before it (by cut-off): counts per kind, the
    `limit` that matter most, and its flags of results that moved."""
    from db import changes, cli_queries, outputs, queries
    from pipelines.jobs.flags import read_by

    version = queries.dataset_version(session, version_id)
    previous = outputs.previous_version(session, version)
    moved = cli_queries.version_flags(session, version_id, kinds=MOVED_KINDS)
    base = {"dataset_version": version_id, "cutoff_at": version.cutoff_at.isoformat(),
            "observations": version.observation_count,
            "flags_computed": outputs.has_flags(session, version_id), "results_moved": moved}
    if previous is None:
        return {**base, "previous": None, "counts": None, "changes": []}
    window = {"previous": previous.cutoff_at, "cutoff": version.cutoff_at}
    readers = read_by(session, version_id) or {}
    rows = changes.top_changes(session, **window, version_id=version_id,
                               decisive=set(readers), limit=limit)
    counts = {kind: dict(zip(("observations", "items", "metrics"), n, strict=True))
              for kind, n in changes.change_counts(session, **window).items()}
    return {**base, "previous": previous.id, "counts": counts,
            "changes": [{**row, "as_of": row["as_of"].isoformat(),
                         "resolved_before": _resolved(session, row, previous.cutoff_at),
                         "resolved_after": _resolved(session, row, version.cutoff_at),
                         "read_by": list(readers.get((row["item"], row["metric"]), ()))}
                        for row in rows]}


def _resolved(session: Any, change: dict[str, Any], at: datetime) -> dict[str, Any] | None:
    """The (item, metric)'s resolved value valid on `at`'s date as known at `at`: value, unit
    and the source that won (None: no value)."""
    from pipelines.ledger.resolved import resolved_value

    found = resolved_value(session, change["item"], change["metric"], on=at.date(), known=at)
    if found is None:
        return None
    winner = found.winner
    return {"value": winner["value"], "unit": winner["unit"], "source": winner["source"]}


def resolved_move(change: dict[str, Any]) -> str:
    """`120 → 130 kW`, `unchanged 120 kW` (another source moved, the winner did not), `→ 37
    TFLOP/s` (a first value), `130 kW → none`."""
    before, after = change["resolved_before"], change["resolved_after"]
    if before is not None and after is not None and before == after:
        return f"unchanged {before['value']:,.4g} {before['unit']}"
    shown = [f"{v['value']:,.4g}" if v else "" for v in (before, after)]
    unit = (after or before or {"unit": ""})["unit"]
    if after is None:
        return f"{shown[0]} {unit} → none"
    return f"{shown[0]} → {shown[1]} {unit}".strip()


def old_to_new(change: dict[str, Any]) -> str:
    """`1.15 → 3 dimensionless`, `→ 400 W` (added), `700 W withdrawn` (superseded)."""
    def shown(value: float | None) -> str:
        return "" if value is None else f"{value:,.4g}"

    before, after, unit = shown(change["before_value"]), shown(change["after_value"]), \
        change["unit"]
    if change["kind"] == "superseded":
        return f"{before} {unit} withdrawn"
    return f"{before} → {after} {unit}".strip()


def _print_version(version: dict[str, Any]) -> None:
    number = version["dataset_version"]
    if version["previous"] is None:
        console.print(f"dataset version {number} is the first: {version['observations']:,} "
                      "observations, nothing before it to compare with", highlight=False)
    else:
        counts = version["counts"]
        said = ", ".join(f"{n['observations']:,} {kind}" for kind, n in counts.items())
        total = sum(n["observations"] for n in counts.values())
        rows = version["changes"]
        more = f"; the {len(rows)} that matter most" if len(rows) < total else ""
        print_table(console, f"dataset version {number} against {version['previous']}: "
                             f"{said} observations{more}",
                    COLUMNS, [[c["item"], c["metric"], c["kind"], c["source"], old_to_new(c),
                               resolved_move(c), ", ".join(c["read_by"])] for c in rows])
        if len(rows) < total:
            console.print(f"and {total - len(rows):,} more (--limit, or --json)",
                          highlight=False)
    _print_moved(version)


def _print_moved(version: dict[str, Any]) -> None:
    if not version["flags_computed"]:
        console.print(f"results that moved: not known for version {version['dataset_version']} "
                      "(an ingest's version: `specledger run` computes its results and flags)",
                      highlight=False)
        return
    moved = version["results_moved"]
    console.print(f"results that moved: {len(moved) or 'none'}", highlight=False)
    for flag in moved:
        print_flag(flag)


def register(app: typer.Typer) -> None:
    app.command(name="changes")(changes_command)
