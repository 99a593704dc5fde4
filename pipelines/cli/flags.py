"""`specledger flags`: a dataset version's flags, most severe first; those on one scenario's
verdict (about the scenario, or about a figure its stored result read), of a severity and up."""

from __future__ import annotations

from collections import Counter
from typing import Annotated, Any, Literal

import typer
from rich.padding import Padding
from rich.text import Text

from pipelines.cli.listing import console, refuse_unknown
from pipelines.cli.options import HomeOption, JsonOption
from pipelines.cli.terminal import label, write_json
from pipelines.cli.versions import known_version, ledger_versions, version_option

# db.schema.FLAG_SEVERITIES, most severe first (not imported: --help must not load SQLAlchemy;
# a test holds the two equal).
SEVERITIES = ("critical", "warning", "info")
Severity = Literal["critical", "warning", "info"]
SEVERITY_STYLE = {"critical": "bold red", "warning": "yellow", "info": "dim"}


def flags_command(
        scenario: Annotated[str | None, typer.Option(
            "--scenario", show_default="every flag",
            help="Only the flags on this scenario's verdict: about the scenario, or about a "
                 "figure its result read (`specledger list scenarios` names them).")] = None,
        severity: Annotated[Severity | None, typer.Option(
            "--severity", show_default="every severity",
            help="Only flags this severe or more.")] = None,
        version: version_option("the newest with flags", "version") = None,
        home: HomeOption = None, as_json: JsonOption = False) -> None:
    """The flags of the newest dataset version that has them (or of --version): evidence,
    trends, changes and results that moved, most severe first. Exit 2 for a scenario or a
    version the ledger does not have."""
    from db import cli_queries, outputs

    wanted = SEVERITIES[:SEVERITIES.index(severity) + 1] if severity else SEVERITIES
    with ledger_versions(home) as (session, versions):
        chosen = (known_version(version, versions, "--version") if version is not None
                  else cli_queries.newest_flagged_version(session) or versions[-1])
        if scenario is not None:
            _known_scenario(scenario, cli_queries.scenario_names(session))
        rows = cli_queries.version_flags(session, chosen, severities=wanted)
        if scenario is not None:
            rows = _on_scenario(rows, scenario, _read_by(session, chosen, scenario))
        note = _unflagged(chosen, versions[-1], outputs.has_flags(session, chosen),
                          defaulted=version is None)
    if as_json:
        write_json({"dataset_version": chosen, "newest_version": versions[-1],
                    "scenario": scenario, "severity": severity, "flags": rows})
        return
    console.print(_heading(rows, chosen, scenario, severity) + note, highlight=False,
                  soft_wrap=True)
    for row in rows:
        print_flag(row)


def print_flag(row: dict[str, Any]) -> None:
    """A flag as two lines: severity, kind and subject whole; then its message, wrapped."""
    console.print(label(row["severity"], SEVERITY_STYLE[row["severity"]],
                        f"{row['kind']}  {row['subject']}"), highlight=False, soft_wrap=True)
    console.print(Padding(Text(row["message"]), (0, 0, 0, 2)))


def _known_scenario(name: str, names: list[str]) -> None:
    if name not in names:
        known = f" (it knows {', '.join(names)})" if 0 < len(names) <= 12 else ""
        refuse_unknown(f"no scenario {name!r} in the ledger{known}: `specledger list "
                       "scenarios` lists the scenario files, which `specledger run` computes")


def _read_by(session: Any, version: int, scenario: str) -> set[tuple[str, str]]:
    """The ledger (item, metric) pairs `scenario`'s stored results of `version` read."""
    from pipelines.jobs.flags import read_by

    readers = read_by(session, version) or {}
    return {pair for pair, names in readers.items() if scenario in names}


def _on_scenario(rows: list[dict[str, Any]], scenario: str,
                 reads: set[tuple[str, str]]) -> list[dict[str, Any]]:
    return [r for r in rows if r["scenario"] == scenario or (r["item"], r["metric"]) in reads]


def _heading(rows: list[dict[str, Any]], chosen: int, scenario: str | None,
             severity: str | None) -> str:
    """`12 flags of dataset version 4 (2 critical, 10 warning)`, with what was asked."""
    counts = Counter(r["severity"] for r in rows)
    by = ", ".join(f"{counts[s]} {s}" for s in SEVERITIES if counts[s])
    return (f"{len(rows)} flag{'s' * (len(rows) != 1)} of dataset version {chosen}"
            + (f" ({by})" if by else "")
            + (f" on {scenario}'s verdict" if scenario else "")
            + {"critical": ", critical only", "warning": ", warning or worse"}.get(
                severity or "", ""))


def _unflagged(chosen: int, newest: int, has_flags: bool, *, defaulted: bool) -> str:
    """What the heading adds when the version shown has no flags, or is not the newest
    because the newest has none: flags are computed by a run, not by an ingest."""
    if not has_flags:
        return (f"; version {chosen} has no flags computed (an ingest's version: "
                "`specledger run` computes them)")
    if defaulted and chosen != newest:
        return (f"; version {newest}, the newest, has none computed yet (an ingest's "
                "version: `specledger run` computes them)")
    return ""


def register(app: typer.Typer) -> None:
    app.command(name="flags")(flags_command)
