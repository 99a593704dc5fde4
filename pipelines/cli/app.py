"""The `specledger` command line: a thin shell over pipelines.jobs.steps and the ledger queries."""

from __future__ import annotations

import os
import sys
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich import box
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table
from rich.text import Text

from models.dates import out_of_range
from models.resolve import CONFLICT_TOLERANCE
from pipelines.cli import c2c as cli_c2c
from pipelines.cli import changes as cli_changes
from pipelines.cli import export as cli_export
from pipelines.cli import flags as cli_flags
from pipelines.cli import ledger as cli_ledger
from pipelines.cli import listing as cli_listing
from pipelines.cli import serving as cli_serving
from pipelines.cli import tco as cli_tco
from pipelines.cli.options import MAX_LEDGER_ID, HomeOption, JsonOption
from pipelines.cli.progress import Unwatched, stages, watched
from pipelines.cli.terminal import label, plain_console, plain_help, write_json
from pipelines.flows.serve_checks import (
    NO_SERVER_HELP,
    WEEKLY_CRON,
    prefect_api_url,
    schedule_timezone,
)

# What a command needs is imported inside it: `specledger --help` must not pay for SQLAlchemy,
# pandas, Prefect or WeasyPrint (seconds), and `value` only for SQLAlchemy.
if TYPE_CHECKING:
    from pydantic import ValidationError

    from db.engine import LedgerBusyError, LockWait
    from db.warehouse import Published
    from pipelines.jobs.ingest import FileReport, IngestReport
    from pipelines.ledger.resolved import ResolvedValue
    from pipelines.settings import Settings

EXIT_REJECTED, EXIT_NO_VALUE = 1, 3


app = typer.Typer(help="specledger: a dated, source-tagged ledger of AI-infrastructure specs.",
                  no_args_is_help=True, add_completion=False)
plain_help()
# Markup off: ledger text, paths and messages print as written (pipelines/cli/terminal.py).
console = plain_console()
errors = plain_console(stderr=True)



def _print_version(asked: bool) -> None:
    if asked:
        from importlib.metadata import PackageNotFoundError, version

        try:
            console.print(f"specledger {version('specledger')}")
        except PackageNotFoundError:  # a source tree that was not installed
            console.print("specledger 0+unknown")
        raise typer.Exit()


@app.callback()
def _root(shown: Annotated[bool, typer.Option(
        "--version", callback=_print_version, is_eager=True,
        help="Print the version and exit.")] = False) -> None:
    """specledger: a dated, source-tagged ledger of AI-infrastructure specs."""


def _settings(home: Path | None) -> Settings:
    return cli_ledger.settings_for(home)


def _parse_day(text: str | None, name: str) -> date | None:
    if text is None:
        return None
    try:
        day = date.fromisoformat(text)
    except ValueError as exc:
        raise typer.BadParameter(f"{text!r} is not a date (YYYY-MM-DD)", param_hint=name) from exc
    problem = out_of_range(day, name)
    if problem:
        raise typer.BadParameter(problem, param_hint=name)
    return day


def _parse_moment(text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text)
        # A zone far from UTC can carry the last instant Python holds past it.
        moment = moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)
    except (ValueError, OverflowError) as exc:
        raise typer.BadParameter(f"{text!r} is not an ISO timestamp specledger can use",
                                 param_hint="--known-at") from exc
    problem = out_of_range(moment.date(), "--known-at")
    if problem:
        raise typer.BadParameter(problem, param_hint="--known-at")
    return moment


@app.command()
def run(home: HomeOption = None,
        as_of: Annotated[str | None, typer.Option(
            "--as-of", show_default="today, UTC", help="Briefing date YYYY-MM-DD")] = None,
        offline: Annotated[bool, typer.Option(
            "--offline", help="Fetch no remote source (gpuhunt's catalogs, Azure's prices): "
                              "their last good copies stand")] = False) -> None:
    """The main job: fetch the remote sources (data/remote_sources.yaml), ingest them and
    data/sources, publish warehouse.duckdb, render the PDF briefing."""
    from pipelines.ledger.connection import utc_now

    settings = _settings(home)
    day = _parse_day(as_of, "--as-of") or utc_now().date()
    _quiet_prefect(settings.home)
    from pipelines.flows.prefect_home import migrate_prefect_home
    from pipelines.flows.weekly_briefing import weekly_briefing  # Prefect loads settings on import

    # Two first runs of a home at once would migrate its Prefect database together and one
    # would fail: one migrates it, the other waits for that.
    migrate_prefect_home(settings.lock_timeout_seconds)

    with stages(f"run {day}") as stage:
        stage("start Prefect")   # its temporary server: seconds before the first stage
        result = weekly_briefing(as_of=day, home=settings.home,
                                 sources_dir=settings.sources_dir,
                                 scenarios_dir=settings.scenarios_dir,
                                 offline=True if offline else None,
                                 on_stage=None if isinstance(stage, Unwatched) else stage)
    _print_wait(result.lock_wait)
    console.print(f"{'remote':<10} {result.remote.summary()}", highlight=False)
    _print_ingest(result.ingest)
    for model, report in (("c2c", result.c2c), ("tco", result.tco),
                          ("serving", result.serving)):
        if report is None:
            continue
        console.print(f"{model:<10} {len(report.computed)} computed, {len(report.reused)} reused "
                      f"(inputs unchanged), {len(report.unchanged)} already stored")
        if report.deferred:
            console.print(f"{'':<10} {len(report.deferred)} new or changed not stored: version "
                          f"{report.dataset_version} has a briefing, so they wait for the next "
                          f"version ({', '.join(report.deferred)})", highlight=False)
        for name, reason in report.failed.items():
            errors.print(label("scenario failed", "red", f"{name}: {reason}"),
                         highlight=False)
    flagged = ("already computed for this version" if result.flags.already_stored
               else f"{result.flags.stored} raised")
    console.print(f"flags      {flagged}")
    console.print(f"warehouse  {result.warehouse}")
    reused = " (laid out before from the same pages: taken from the render cache)"
    console.print(f"briefing   {result.briefing}{reused if result.briefing_reused else ''}",
                  highlight=False)
    from pipelines.jobs.steps import appendix_path

    console.print(f"appendix   {appendix_path(result.briefing)}")


@app.command()
def report(home: HomeOption = None,
           as_of: Annotated[str | None, typer.Option(
               "--as-of", show_default="today, UTC", help="Briefing date YYYY-MM-DD")]
           = None,
           output: Annotated[Path | None, typer.Option(
               "--output", show_default="the name that briefing got under briefings/ in "
                                        "--home",
               help="Where to write the PDF")] = None,
           version: Annotated[int | None, typer.Option(
               "--version", min=1, max=MAX_LEDGER_ID, show_default="the date's first",
               help="Which of the date's briefings: its dataset version")] = None) -> None:
    """Re-render a briefing of a past date from the ledger (same dataset version, same
    bytes as the briefing of that date and version when the code version is the same)."""
    from pipelines.jobs import steps as jobs

    settings = _settings(home)
    day = _parse_day(as_of, "--as-of") or jobs.utc_now().date()
    try:
        rendered = jobs.report(settings, as_of=day, target=output, dataset_version=version)
    except jobs.NoDatasetVersion as exc:
        errors.print(label("error", "red", f"{exc}; run `specledger run` or `specledger "
                                           "ingest` first"), highlight=False)
        raise typer.Exit(3) from exc
    console.print(f"briefing   {rendered.path}")
    console.print(f"appendix   {rendered.appendix}")
    console.print(f"version    {rendered.dataset_version}")
    console.print(f"sha256     {rendered.sha256}")
    if rendered.reproduces_first is None:
        console.print("first briefing recorded for this date and version")
    elif rendered.reproduces_first:
        console.print("identical to the briefing recorded for this date and version")
    else:
        console.print(f"differs from the briefing recorded for this date and version "
                      f"({rendered.first_sha256}): the code version or the template changed")


@app.command()
def ingest(paths: Annotated[list[Path], typer.Argument(
               help="Source packs, Epoch ml_hardware.csv, nccl-tests output, MLPerf "
                    "systems/*.json, result_*.txt or Inference summary_results.json, "
                    "InferenceX results, or folders of them.")],
           home: HomeOption = None, as_json: JsonOption = False,
           item: Annotated[str | None, typer.Option(
               "--item", show_default="the file's own",
               help="Ledger item a measurement is of, when the file cannot say "
                              "(e.g. ib-ndr for a multi-node nccl-tests run).")] = None,
           as_of: Annotated[str | None, typer.Option(
               "--as-of", show_default="the file's own dates",
               help="Date of the file's facts when the file has none: an "
                               "nccl-tests text log, an MLPerf round, an InferenceX "
                               "artifact's run, an Epoch snapshot.")]
           = None,
           allow_rejects: Annotated[bool, typer.Option(
               "--allow-rejects", help="Exit 0 even when rows were rejected.")] = False,
           no_publish: Annotated[bool, typer.Option(
               "--no-publish", help="Leave the warehouse as it is (by default it is rebuilt "
                                    "for the new dataset version).")] = False) -> None:
    """Ingest files, recognised by content, and republish the warehouse. Exit 1 when rows
    were rejected."""
    from db.engine import LedgerBusyError
    from pipelines.jobs import steps as jobs
    from pipelines.jobs.ingest import expand_paths

    settings = _settings(home)
    day = _parse_day(as_of, "--as-of")
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        errors.print(label("error:", "red", f"no such file or folder: {', '.join(missing)}"),
                     highlight=False, soft_wrap=True)
        raise typer.Exit(2)
    files = expand_paths(paths)
    waits: list[LockWait] = []
    with stages("ingest", quiet=as_json) as stage:
        try:
            stage(f"read {len(files):,} file{'s' * (len(files) != 1)}", spinner=False)
            with _file_progress(len(files), enabled=watched(as_json)) as advance:
                report = jobs.ingest(settings, paths, today=jobs.utc_now().date(),
                                     on_file=advance, item=item, as_of=day,
                                     on_wait=waits.append)
        except LedgerBusyError as exc:
            errors.print(label("error:", "red", _busy_message(exc)), highlight=False,
                         soft_wrap=True)
            raise typer.Exit(4) from exc
        stage.close()
        if not as_json:  # what was committed shows even if the publish then fails
            _print_wait(waits[0])
            _print_ingest(report)
        warehouse = _staged_publish(settings, report, stage, skip=no_publish, as_json=as_json)
    if as_json:
        write_json({**report.to_json(), "warehouse": _warehouse_json(warehouse, settings)})
        _print_wait(waits[0], errors)  # standard output holds the JSON alone
    else:
        if warehouse is not None:
            console.print(f"warehouse {warehouse.path} {warehouse.describe()}",
                          highlight=False, soft_wrap=True)
        else:
            console.print(f"warehouse {settings.warehouse_path} not rebuilt (--no-publish): "
                          f"it does not show dataset version {report.dataset_version} yet",
                          highlight=False, soft_wrap=True)
    if report.total("rejected") and not allow_rejects:
        raise typer.Exit(EXIT_REJECTED)


def _staged_publish(settings: Settings, report: IngestReport, stage: Any, *, skip: bool,
                    as_json: bool) -> Published | None:
    """The ingest's publish as a stage of its progress (None with --no-publish); a failure
    with --json still prints what was committed, and why nothing else was."""
    if skip:
        return None
    try:
        stage("publish warehouse.duckdb")
        return _publish_ingested(settings, report)
    except Exception as exc:
        if as_json:  # a script must still learn what was committed, and why nothing else
            write_json({**report.to_json(), "warehouse": _failed_publish_json(exc, settings)})
        raise


def _publish_ingested(settings: Settings, report: IngestReport) -> Published:
    """Republish the warehouse for the ingest's dataset version. Its rows are committed
    whatever happens here: a publish that fails says so before the CLI's one-line error
    (exit 5), and the next ingest or run publishes them."""
    from pipelines.jobs import steps as jobs

    try:
        return jobs.publish(settings, report.dataset_version, as_of=jobs.utc_now().date(),
                            built_at=jobs.utc_now())
    except Exception:
        errors.print(label("note:", "yellow", f"the ingest is committed (dataset version "
                                              f"{report.dataset_version}); the warehouse "
                                              "was not republished"),
                     highlight=False, soft_wrap=True)
        raise


def _warehouse_json(published: Published | None, settings: Settings) -> dict[str, Any]:
    """`published`: the warehouse shows this ingest (its version, or a newer one holding
    its rows); `outcome`: built, already_published, newer_held, or null (--no-publish)."""
    if published is None:
        return {"published": False, "path": str(settings.warehouse_path), "outcome": None,
                "dataset_version": None, "waited_seconds": None}
    return {"published": True, "path": str(published.path), "outcome": published.outcome,
            "dataset_version": published.held_version,
            "waited_seconds": round(published.wait.seconds, 1) if published.wait.waited
            else None}


def _failed_publish_json(exc: BaseException, settings: Settings) -> dict[str, Any]:
    """The warehouse part of `ingest --json` when publishing failed after the commit (the
    command then exits 5): not published, and why, in the words of the one-line error."""
    from db.redact import redact

    return {"published": False, "path": str(settings.warehouse_path), "outcome": "failed",
            "dataset_version": None, "waited_seconds": None,
            "error": redact(_reason(exc), _known_secrets())}


@contextmanager
def _file_progress(total: int, enabled: bool) -> Iterator[Callable[[FileReport], None]]:
    """A rich progress bar over files; yields the callback that advances it."""
    progress = Progress(TextColumn("ingest"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("{task.description}", markup=False), console=errors,
                        transient=True,
                        disable=not enabled)
    task = progress.add_task("", total=total)
    with progress:
        yield lambda report: progress.update(task, advance=1, description=Path(report.path).name)


def distinct_names(paths: list[str]) -> list[str]:
    """Each path's name, with as few of its folders as make it unlike the others' (the
    whole path when nothing shorter does)."""
    parts = [Path(p).parts for p in paths]

    def shown(path: str, own: tuple[str, ...]) -> str:
        for depth in range(1, len(own)):
            tail = own[-depth:]
            if sum(other[-depth:] == tail for other in parts) == 1:
                return "/".join(tail)
        return path
    return [shown(path, own) for path, own in zip(paths, parts, strict=True)]


def _print_ingest(report: IngestReport) -> None:
    table = Table(title=f"ingest run {report.run_id}", title_justify="left", box=box.SIMPLE)
    # File names only (the table fits 80 columns; the lines below it give full paths), with
    # as many of their folders as tell apart files of one name (a submission's loadgen logs).
    names = distinct_names([f.path for f in report.files])
    table.add_column("file", overflow="fold", min_width=min(20, max(map(len, names), default=4)))
    for column in ("read", "accepted", "unchanged", "rejected"):
        table.add_column(column, justify="right", no_wrap=True)
    table.add_column("note", overflow="fold", min_width=16)
    for f, name in zip(report.files, names, strict=True):
        counts = (f.read, f.accepted, f.unchanged, f.rejected)
        table.add_row(name, *map(str, counts), _note(f))
    console.print(table)
    for f in report.files:
        if f.outcome == "unchanged_file":
            console.print(f"{_shown_path(f.path)}: already ingested (sha256 {f.sha256[:12]}), "
                          "nothing changed", highlight=False, soft_wrap=True)
        for note in f.notes:
            console.print(f"{_shown_path(f.path)}: {note}", style="dim", highlight=False,
                          soft_wrap=True)
        for e in f.errors[:SHOWN_REJECTIONS]:
            where = f"{f.path}:{e.line}" if e.line else f.path
            errors.print(label("rejected", "red", f"{where} ", (e.field, "bold"),
                               f": {e.reason}"), highlight=False, soft_wrap=True)
        if len(f.errors) > SHOWN_REJECTIONS:   # a summary, not a flood: review has them all
            common = Counter(e.field for e in f.errors).most_common(3)
            fields = ", ".join(f"{field} ({n:,})" for field, n in common)
            errors.print(label("rejected", "red", f"{f.path}: and "
                               f"{len(f.errors) - SHOWN_REJECTIONS:,} more rejected rows "
                               f"(most rejected fields: {fields}); `specledger review` "
                               "lists them all"), highlight=False, soft_wrap=True)
    state = "new" if report.dataset_changed else "unchanged"
    console.print(f"dataset version {report.dataset_version} ({state}) "
                  f"{report.dataset_hash[:12]}")


def _print_wait(wait: LockWait, to: Any = None) -> None:
    """Say how long the command waited for another run's write lock, when it did."""
    if wait.waited:
        (to or console).print(label("lock      ", "yellow", wait.describe()), highlight=False)


def _busy_message(exc: LedgerBusyError) -> str:
    return f"{exc} (ledger {_ledger()})"


def _shown_path(path: str) -> str:
    """A path relative to the working folder when it lies below it (tables stay narrow)."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return path


def _note(report: FileReport) -> str:
    if report.outcome == "unchanged_file":
        return "same bytes"
    if report.outcome == "rejected_file":
        return "file rejected whole"
    from pipelines.inputs.adapters.registry import SOURCE_PACK

    notes = [] if report.format in (SOURCE_PACK, "unknown") else [report.format]
    if report.superseded:
        notes.append(f"{report.superseded} superseded")
    if report.measured_runs:
        notes.append(f"{report.measured_runs} run" + "s" * (report.measured_runs > 1))
    return ", ".join(notes)


@app.command()
def value(item: str, metric: str, home: HomeOption = None,
          as_of: Annotated[str | None, typer.Option(
              "--as-of", show_default="today, UTC", help="Valid on this date")] = None,
          known_at: Annotated[str | None, typer.Option(
              "--known-at", show_default="now",
              help="As the ledger knew it at this ISO timestamp")]
          = None,
          as_json: JsonOption = False) -> None:
    """The resolved value of ITEM METRIC, with the rule that chose it. Exit 3 if none."""
    from db.engine import Session
    from pipelines.ledger.connection import open_ledger, utc_now
    from pipelines.ledger.resolved import resolved_value

    settings = _settings(home)
    day = _parse_day(as_of, "--as-of") or utc_now().date()
    moment = _parse_moment(known_at) or utc_now()
    engine = open_ledger(settings)
    with Session(engine) as session:
        resolved = resolved_value(session, item, metric, on=day, known=moment)
        missing = None if resolved is not None else _why_no_value(session, item, metric,
                                                                  moment)
    engine.dispose()
    if resolved is None:
        if as_json:
            write_json({"item": item, "metric": metric, "value": None}, indent=None)
        errors.print(f"no value for {item} {metric} valid on {day} as known at "
                     f"{moment.isoformat()}" + (f": {missing}" if missing else ""),
                     highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_NO_VALUE)
    payload = value_json(resolved)
    if as_json:
        write_json(payload)
        return
    console.print(Text.assemble(
        f"{item} {metric} = ", (_shown(payload), "bold"),
        f" {payload['unit']}  ({_when(payload)}, {payload['source']}, "
        f"status {payload['status']})"))
    console.print(f"rule: {payload['reason']}", style="dim")
    for alternative in payload["alternatives"]:
        console.print(f"  alt: {_shown(alternative)} {alternative['unit']} "
                      f"({_when(alternative)}, {alternative['source']})", style="dim")


def _when(figure: dict[str, Any]) -> str:
    """"as of 2024-03-18", or "undated, valid from 2024-01-01" for a figure without a date."""
    if figure["as_of"] is None:
        return f"undated, valid from {figure['valid_from']}"
    return f"as of {figure['as_of']}"


def _why_no_value(session: Any, item: str, metric: str, moment: datetime) -> str | None:
    """Why ITEM METRIC has no value at all (not only none on that date): the item or the
    metric does not exist, or the item has no value of that metric; with what it does have.
    None when the ledger knows the pair (then only the dates are wrong)."""
    from db import queries

    known = queries.observations_frame(session, known=moment, item=item)
    if metric in set(known["metric"]):
        return None
    if known.empty:
        return f"the ledger knew no item {item!r} then (`specledger list items` lists them)"
    has = sorted(set(known["metric"]))
    catalogue = queries.metrics_by_key(session)
    said = (f"{item} has no {metric}" if metric in catalogue
            else f"no metric {metric!r} exists")
    return (f"{said}; {item}'s metrics are {', '.join(has)} "
            "(`specledger list metrics` lists every metric)")


def _shown(row: dict[str, Any]) -> str:
    low, high = row["low"], row["high"]
    return f"{low:g}" if low == high else f"{low:g}–{high:g}"


def _observation_json(row: dict[str, Any]) -> dict[str, Any]:
    from pipelines.ledger.figures import figure_date  # pint, for the units: not for --help

    return {"value": row["value"], "low": row["low"], "high": row["high"], "unit": row["unit"],
            "value_written": row["value_written"], "unit_written": row["unit_written"],
            # as_of is the figure's date, null when its source gives none; valid_from is
            # where its valid time starts (the same date for a dated figure).
            "as_of": figure_date(row), "valid_from": row["as_of"].isoformat(),
            "source": row["source"],
            "source_kind": row["source_kind"], "status": row["status"],
            "value_kind": row["value_kind"], "quote": row["quote"],
            "recorded_at": row["recorded_at"].isoformat()}


def value_json(resolved: ResolvedValue) -> dict[str, Any]:
    winner = resolved.winner
    return {"item": winner["item"], "metric": winner["metric"], **_observation_json(winner),
            "reason": resolved.resolution.reason,
            "alternatives": [_observation_json(a) for a in resolved.alternatives]}


def _a_number(value: float) -> float:
    """A float option that is a number: click's ranges let NaN through (it compares false)."""
    if value != value:
        raise typer.BadParameter("nan is not a number; give one between 0 and 1")
    return value


@app.command()
def review(home: HomeOption = None, as_json: JsonOption = False,
           tolerance: Annotated[float, typer.Option(
               "--tolerance", min=0.0, max=1.0, callback=_a_number,
               help="Relative difference below which two sources agree (0.01 = 1 %; at 1 "
                    "every pair agrees).")] = CONFLICT_TOLERANCE
           ) -> None:
    """Rejected rows (with file, line, field, reason) and live values that disagree."""
    from db import queries
    from db.engine import Session
    from pipelines.ledger.connection import open_ledger, utc_now
    from pipelines.ledger.resolved import conflicts

    settings = _settings(home)
    engine = open_ledger(settings)
    now = utc_now()
    with Session(engine) as session:
        rejected = queries.rejected_rows(session)
        conflicting = conflicts(session, on=now.date(), known=now, tolerance=tolerance)
    engine.dispose()
    if as_json:
        write_json({"rejected": rejected, "conflicts": [value_json(c) for c in conflicting]})
        return
    table = Table(title=f"{len(rejected)} rejected rows", title_justify="left")
    for column in ("file", "line", "field", "reason"):
        table.add_column(column, overflow="fold")
    for row in rejected:
        table.add_row(row["path"], str(row["line"] or ""), row["field"], row["reason"])
    console.print(table)
    table = Table(title=f"{len(conflicting)} conflicting values", title_justify="left")
    for column in ("item", "metric", "chosen", "alternatives", "rule"):
        table.add_column(column, overflow="fold")
    for c in conflicting:
        payload = value_json(c)
        table.add_row(payload["item"], payload["metric"],
                      f"{_shown(payload)} {payload['unit']} ({payload['source']})",
                      "; ".join(f"{_shown(a)} ({a['source']})" for a in payload["alternatives"]),
                      payload["reason"])
    console.print(table)


@app.command()
def serve(home: HomeOption = None,
          cron: Annotated[str, typer.Option(
              "--cron", help="When the weekly briefing runs")] = WEEKLY_CRON,
          timezone: Annotated[str, typer.Option(
              "--timezone", help="IANA time zone the cron is read in")] = "UTC") -> None:
    """Serve the weekly briefing (on its schedule) and the on-demand ingest from this process,
    against the Prefect server PREFECT_API_URL names."""
    try:
        schedule_timezone(timezone)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--timezone") from exc
    if not prefect_api_url():
        errors.print(NO_SERVER_HELP, highlight=False, markup=True)  # our own text
        raise typer.Exit(2)
    settings = _settings(home)
    from pipelines.flows.serving import serve_deployments

    console.print(f"serving weekly-briefing/weekly ({cron}, {timezone}) and "
                  f"ingest-files/ingest on {prefect_api_url()}; Ctrl-C stops")
    serve_deployments(settings.home.resolve(), cron, timezone)


@app.command()
def migrate(home: HomeOption = None) -> None:
    """Bring the ledger's schema to the latest migration (run and ingest do this too)."""
    from db.redact import redact_url
    from pipelines.ledger.connection import open_ledger

    settings = _settings(home)
    open_ledger(settings).dispose()
    console.print(f"ledger at head: {redact_url(settings.resolved_database_url)}")


def _quiet_prefect(home: Path) -> None:
    """Offline, quiet Prefect with its state under home (unless the operator set it)."""
    prefect_home = (home / ".prefect").resolve()
    # Prefect does not create missing parents of PREFECT_HOME; its ephemeral server then
    # never comes up and the run times out, so create the folder first.
    prefect_home.mkdir(parents=True, exist_ok=True)
    defaults = {"PREFECT_HOME": str(prefect_home),
                "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "1",
                "PREFECT_LOGGING_LEVEL": "WARNING",
                "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "60"}
    for name, value_ in defaults.items():
        os.environ.setdefault(name, value_)
    if not os.environ.get("PREFECT_LOGGING_SETTINGS_PATH"):  # an operator's file stands
        from pipelines.flows.prefect_logging import quiet_logging_config

        os.environ["PREFECT_LOGGING_SETTINGS_PATH"] = str(quiet_logging_config(prefect_home))
    if not os.environ.get("SPECLEDGER_TRACEBACK"):
        from pipelines.flows.console import console_without_tracebacks

        console_without_tracebacks(_known_secrets())


cli_c2c.register(app)
cli_tco.register(app)
cli_serving.register(app)
cli_export.register(app)
cli_listing.register(app)
cli_flags.register(app)
cli_changes.register(app)


# --- failures: one paragraph that says what failed and why, credentials masked --------------

EXIT_FAILED = 5  # a step of the command failed; the message names it
# An ingest prints this many rejected rows a file, then a summary line (review lists them all).
SHOWN_REJECTIONS = 20


def main() -> None:
    """Run the CLI. A failure prints one paragraph, not a traceback (SPECLEDGER_TRACEBACK=1
    shows it): the command and step that failed, why, and no database password."""
    cli_ledger.forget()
    try:
        app()
    except Exception as exc:  # the CLI's last word on anything a step raised
        # Imported only now: a command that failed has loaded them already, --help never does.
        from pydantic import ValidationError

        from db.engine import LedgerBusyError

        if isinstance(exc, LedgerBusyError):
            _fail(_busy_message(exc), 4)
        if isinstance(exc, LookupError):
            _fail(str(exc), 2)
        if isinstance(exc, ValidationError):  # a setting (environment or .env) out of range
            _fail(settings_problem(exc), 2)
        if os.environ.get("SPECLEDGER_TRACEBACK"):
            raise
        _fail(failure_message(exc), EXIT_FAILED)


def settings_problem(exc: ValidationError) -> str:
    """`SPECLEDGER_FETCH_TIMEOUT_SECONDS='nan': Input should be a finite number`, per setting."""
    said = [f"SPECLEDGER_{'_'.join(map(str, e['loc'])).upper()}={e.get('input')!r}: {e['msg']}"
            for e in exc.errors()]
    return "invalid setting " + "; ".join(said)


def _fail(message: str, code: int) -> None:
    from db.redact import redact

    errors.print(label("error:", "red", redact(message, _known_secrets())),
                 highlight=False, soft_wrap=True)
    sys.exit(code)


def failure_message(exc: BaseException) -> str:
    """`specledger <command> failed [at step <task>]: <why>`, on one line."""
    step = _failed_step(exc)
    where = f"specledger {_command()} failed" + (f" at step {step}" if step else "")
    return f"{where}: {_reason(exc)}"


def _reason(exc: BaseException) -> str:
    from db.engine import is_connection_lost
    from db.redact import database_error

    if (said := database_error(exc)) is not None:
        if is_connection_lost(exc):
            return (f"the connection to the ledger database {_ledger()} failed or was lost "
                    f"({said}); run it again once the database is reachable")
        return f"the ledger database {_ledger()} reported {said}"
    if isinstance(exc, OSError) and exc.filename:
        return f"{exc.filename}: {exc.strerror or _one_line(str(exc))}"
    return f"{type(exc).__name__}: {_one_line(str(exc))}"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _ledger() -> str:
    """The URL of the ledger the command used (--home's, not the default's), password masked."""
    return cli_ledger.ledger_shown()


def _known_secrets() -> list[str]:
    return cli_ledger.known_secrets()


def _command() -> str:
    return next((a for a in sys.argv[1:] if not a.startswith("-")), "")


def _failed_step(exc: BaseException) -> str | None:
    """The Prefect task the exception came from (the innermost one on its traceback)."""
    tasks = {}
    for name, module in list(sys.modules.items()):
        if name.startswith("pipelines.") and module is not None:
            for value in vars(module).values():
                fn = getattr(value, "fn", None)
                if type(value).__name__ == "Task" and hasattr(fn, "__code__"):
                    tasks[fn.__code__] = value.name
    found = None
    for frame, _line in traceback.walk_tb(exc.__traceback__):
        found = tasks.get(frame.f_code, found)
    return found
