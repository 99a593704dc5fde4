"""`specledger estimate` and `specledger sweep`: the C2C model on one scenario file."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich import box
from rich.table import Table

from pipelines.cli import ledger as cli_ledger
from pipelines.cli.options import JsonOption, ScenarioArgument
from pipelines.cli.options import LedgerHomeOption as HomeOption
from pipelines.cli.progress import stages
from pipelines.cli.scenario_files import refuse_other_kind
from pipelines.cli.terminal import label, plain_console, write_json

EXIT_BAD_SCENARIO = 2
# Markup off: scenario names, units and messages print as written (pipelines/cli/terminal.py).
console = plain_console()
errors = plain_console(stderr=True)


def run_reporting_errors(action: Any) -> Any:
    """Run `action`; a bad scenario or a figure nobody gives exits 2 with its message (a bad
    scenario, NoValidLayout and the other model refusals are ValueErrors)."""
    from pipelines.jobs.recompute import MissingInput
    from pipelines.ledger.cluster_specs import MissingSpec

    try:
        return action()
    except (MissingSpec, MissingInput, ValueError) as exc:
        message = str(exc)
        if "the ledger" in message:  # which one: --home's, SPECLEDGER_HOME's or the URL's
            message += f" (ledger {cli_ledger.ledger_shown()})"
        errors.print(label("error:", "red", message), highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_BAD_SCENARIO) from exc


AsWrittenOption = Annotated[bool, typer.Option(
    "--as-written", help="The file's own layout (estimate) or its parallel choices held "
    "(sweep), instead of the layout the briefing and the warehouse store.")]


def estimate(scenario_file: ScenarioArgument, home: HomeOption = None,
             as_json: JsonOption = False, as_written: AsWrittenOption = False) -> None:
    """Iteration time, C2C and the fabric it points to, at the layout the briefing and the
    warehouse store for the scenario (its best, unless it pins one); --as-written: the
    file's own layout."""
    def act() -> dict[str, Any]:
        from pipelines.inputs.scenarios import load_scenario
        from pipelines.jobs import c2c
        from pipelines.ledger.view import scenario_specs

        limits = cli_ledger.settings_for(home).input_limits  # also the ledger, for messages
        refuse_other_kind(scenario_file, "c2c", limits)
        scenario = load_scenario(scenario_file, limits)
        hw, used, version = scenario_specs(scenario, home)
        if as_written:
            return c2c.estimate(scenario, (hw, used), version)
        return c2c.stored_estimate(scenario, (hw, used), version)
    result = run_reporting_errors(act)
    if as_json:
        write_json(result)
        return
    _print_estimates([result], title=f"{result['scenario']} on {result['gpus']} GPUs, "
                                     f"{_layout_said(result)}")
    _print_specs(result["specs"])
    if not result["fits"]:
        raise typer.Exit(1)


def _layout_said(result: dict[str, Any]) -> str:
    """How the layout shown was chosen, as the briefing says it."""
    choice = result.get("layout_choice") or {}
    if choice.get("mode") == "search":
        return (f"its best layout (best of {choice.get('fit', 0):,} that fit, as the briefing "
                "and the warehouse store it)")
    if choice.get("mode") == "pinned":
        return "the layout the scenario pins (as the briefing and the warehouse store it)"
    return "the file's own layout"


def sweep(scenario_file: ScenarioArgument, home: HomeOption = None,
          top: Annotated[int, typer.Option("--top", min=1, help="How many layouts to show.")]
          = 5, as_json: JsonOption = False, as_written: AsWrittenOption = False) -> None:
    """The fastest layouts that fit on cluster.gpus: for a `layout: search` scenario, the
    search the briefing runs (the layouts the calibration covers, its global batch held; the
    first row is the one it stores); for a pinned one, or with --as-written, every valid
    layout with the file's parallel choices held."""
    def act() -> dict[str, Any]:
        with stages("sweep", quiet=as_json) as stage:
            stage("read the scenario")  # the model loads here: most of its time
            from pipelines.inputs.scenarios import load_scenario
            from pipelines.jobs import c2c
            from pipelines.ledger.view import scenario_specs

            limits = cli_ledger.settings_for(home).input_limits  # also the ledger, for messages
            refuse_other_kind(scenario_file, "c2c", limits)
            scenario = load_scenario(scenario_file, limits)
            stage("read the hardware figures")
            hw, used, version = scenario_specs(scenario, home)
            stage("search the layouts")
            if scenario.layout_mode == "search" and not as_written:
                found = c2c.calibrated_sweep(scenario, (hw, used), top, version,
                                             max_layouts=limits.sweep_max_layouts)
                return {**found, "search": "calibrated"}
            return {**c2c.sweep_scenario(scenario, (hw, used), top, version,
                                         max_layouts=limits.sweep_max_layouts),
                    "search": "written"}
    result = run_reporting_errors(act)
    if as_json:
        write_json(result)
        return
    searched = ("the briefing's search: the layouts the calibration covers"
                if result["search"] == "calibrated" else "the file's parallel choices held")
    _print_estimates(result["best"], title=(
        f"{result['scenario']}: {result['evaluated']:,} layouts, {result['valid']:,} fit "
        f"({searched}), {result['seconds']:.2f} s"))
    _print_specs(result["specs"])


def _print_estimates(rows: list[dict[str, Any]], title: str) -> None:
    table = Table(title=title, title_justify="left", box=box.SIMPLE)
    for column in ("layout", "s/iter", "C2C up", "C2C out", "class", "fabric", "MFU", "GiB"):
        table.add_column(column, justify="left" if column in ("layout", "class", "fabric")
                         else "right")
    for row in rows:
        p = row["parallel"]
        extra = "".join(f" {k}{p[k]}" for k in ("cp", "etp") if p.get(k, 1) not in (1, p["tp"]))
        layout = (f"tp{p['tp']} pp{p['pp']} dp{p['dp']} ep{p['ep']}{extra} "
                  f"mb{p['micro_batch']} v{p['interleave']}"
                  f"{' sp' if p['sequence_parallel'] else ''} rc:{p['recompute']} z{p['zero']}")
        table.add_row(layout, f"{row['t_iter_s']:.3f}", f"{row['c2c_scale_up']:.2f}",
                      f"{row['c2c_scale_out']:.2f}", row["class"], row["recommended_fabric"],
                      f"{row['mfu']:.1%}",
                      f"{row['memory_gib_per_gpu']:.1f}{'' if row['fits'] else ' ✗'}")
    console.print(table)
    first = rows[0]
    stack = ", ".join(f"{k} {v:.3f}" for k, v in first["t_comm_exposed_s"].items())
    console.print(f"time stack (s/iter): compute {first['t_compute_s']:.3f}, bubble "
                  f"{first['t_bubble_s']:.3f}, exposed {stack}", highlight=False)
    band = first.get("band")
    if band:
        low, high = band["t_iter_s"]
        console.print(f"model error band (P10-P90 of measured / predicted): {low:.3f}-"
                      f"{high:.3f} s/iter; {band['basis']}", highlight=False)
    if not first["fits"]:   # no time to train for a job that cannot run
        hbm = next((s["value"] for s in first.get("specs") or () if s["name"] == "hbm_bytes"),
                   None)
        held = f"; the GPU has {hbm / 2**30:.1f} GiB of HBM" if hbm else ""
        console.print(f"does not fit: the layout needs "
                      f"{first['memory_gib_per_gpu']:.1f} GiB per GPU{held} (90 % usable): "
                      "shard more (tp, pp, zero) or recompute activations", highlight=False)
    elif first["time_to_train_days"] is not None:
        days = f"time to train: {first['time_to_train_days']:.1f} days"
        if band and band["time_to_train_days"]:
            low, high = band["time_to_train_days"]
            days += f" (P10-P90 {low:.1f}-{high:.1f})"
        # Page 1's time to train is this stretched by the TCO option's availability and
        # goodput: say which one this is, so the two are not read as one figure.
        days += ", failure-free (a TCO option divides it by its availability x goodput)"
        console.print(days, highlight=False)
    compute = first.get("compute")
    if compute:
        console.print(f"compute: {compute['arch']}, {compute['precision']} GEMMs at "
                      f"{compute['gemm_efficiency']:.0%} of {compute['gemm_peak_tflops']:,.0f} "
                      f"TFLOP/s, fused attention at {compute['attention_efficiency']:.0%} of the "
                      "BF16 peak (models/c2c/calibration.py)", highlight=False)


def _print_specs(specs: list[dict[str, Any]]) -> None:
    table = Table(title="figures used", title_justify="left", box=box.SIMPLE)
    for column in ("figure", "value", "origin", "source / note"):
        table.add_column(column, overflow="fold")
    for s in specs:
        origin = s["origin"] + (f" {s['item']}.{s['metric']}" if s["item"] else "")
        note = f"{s['source']} ({s['as_of']})" if s["source"] else (s["note"] or "")
        table.add_row(s["name"], f"{s['value']:.4g} {s['unit']}", origin, note)
    console.print(table)


def validate(home: HomeOption = None, as_json: JsonOption = False,
             points: Annotated[bool, typer.Option(
                 "--points/--summary", help="Every point of every set, or one line a set.")]
             = True) -> None:
    """The C2C and serving models against every published measurement they are calibrated
    on: each set's points, the predictions and errors (mean, max). No ledger needed."""
    from pipelines.jobs.c2c import fidelity_json

    del home  # accepted like every command's; the published sets need no ledger
    report = fidelity_json()
    if as_json:
        # --summary: each set's error summary and point count, not its points.
        write_json(report if points else {"sets": [
            {**{k: v for k, v in s.items() if k != "points"}, "points": len(s["points"])}
            for s in report["sets"]], "serving_targets": report["serving_targets"],
            "serving_unexpressed": report["serving_unexpressed"]})
        return
    for calibration_set in report["sets"] if points else []:
        unit = calibration_set["error_unit"]
        table = Table(title=f"{calibration_set['title']} ({calibration_set['published_on']})",
                      title_justify="left", box=box.SIMPLE)
        for column in ("point", f"measured, {calibration_set['quantity']}", "model", "error"):
            table.add_column(column, justify="left" if column == "point" else "right")
        for point in calibration_set["points"]:
            table.add_row(point["point"], f"{point['measured']:.4g}", f"{point['predicted']:.4g}",
                          f"{point['error']:+.1f} {'%' if unit == '%' else 'pts'}")
        console.print(table)
    # The sets are the C2C model's (training) and the serving model's (M5): "model error".
    summary = Table(title="Model error per calibration set", title_justify="left",
                    box=box.SIMPLE)
    for column in ("set", "published", "points", "mean abs", "max abs", "band holds"):
        summary.add_column(column, justify="left" if column in ("set", "published") else "right")
    for calibration_set in report["sets"]:
        unit = "%" if calibration_set["error_unit"] == "%" else " pts"
        held = calibration_set.get("band_coverage")
        summary.add_row(calibration_set["title"], calibration_set["published_on"],
                        str(len(calibration_set["points"])),
                        f"{calibration_set['mean_abs_error']:.1f}{unit}",
                        f"{calibration_set['max_abs_error']:.1f}{unit}",
                        f"{held['inside']} of {held['points']} ({held['how']})" if held else "")
    console.print(summary)
    console.print("band holds: the C2C model's error band, built with the set left out of the "
                  "fit and of the band, holds this many of the set's points "
                  "(models/c2c/calibration.py, LEAVE_OUT_COVERAGE)", highlight=False)
    targets = Table(title="Serving model per GPU family, left out of its fit",
                    title_justify="left", box=box.SIMPLE)
    # Headers as short as their values, no cell wrapped: the table fits 80 columns with its
    # longest family (blackwell_ultra), span ("absurd (>50x)") and miss ("a band of 15.8x");
    # "misses" is the one number a family short of the targets gives instead of a verdict.
    for column in ("family", "points", "mean", "holds", "band span", "misses"):
        targets.add_column(column, justify="left" if column in ("family",) else "right",
                           no_wrap=True)
    for row in report["serving_targets"]:
        short = row["short"]
        label = row["family"] if row.get("engine") is None else (
            f"{row['family']} {row['engine']}")   # an engine's band on the family
        targets.add_row(label, str(row["left_out_points"]),
                        f"{row['left_out_mean_abs_error']:.1f}%",
                        f"{100 * row['band_coverage']:.0f}%", _span(row["band_span"]),
                        "none" if short is None else short["figure"])
    console.print(targets)
    first = report["serving_targets"][0]["targets"] if report["serving_targets"] else None
    if first:
        console.print(f"targets: mean |error| <= {first['mean_abs_error']:.0f} %, a band holding "
                      f">= {100 * first['band_coverage']:.0f} % within {first['band_span']}x; a "
                      "family short of them gives no serving verdict", highlight=False)
    _print_unexpressed(report["serving_unexpressed"])


# A band wider than 0.2-10 (measured / predicted) is absurd: its span is not worth the digits.
ABSURD_SPAN = 50.0


def _span(span: float) -> str:
    """A band's high / low as the families' table prints it: "1.98x", or "absurd"."""
    return f"{span:.2f}x" if span <= ABSURD_SPAN else f"absurd (>{ABSURD_SPAN:.0f}x)"


def _print_unexpressed(rows: list[dict[str, Any]]) -> None:
    """The published serving rows the model is not scored on: how many, and why."""
    if not rows:
        return
    table = Table(title="Published serving rows the model cannot express",
                  title_justify="left", box=box.SIMPLE)
    table.add_column("rows", justify="right")
    table.add_column("why", overflow="fold")
    for row in rows:
        table.add_row(str(row["rows"]), row["why"])
    console.print(table)
    console.print(f"{sum(row['rows'] for row in rows)} rows in all; `--json` names each",
                  highlight=False)


def register(app: typer.Typer) -> None:
    app.command()(estimate)
    app.command()(sweep)
    app.command()(validate)
