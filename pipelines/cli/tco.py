"""`specledger tco`: the cost model on one TCO scenario file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich import box
from rich.table import Table

from pipelines.cli import ledger as cli_ledger
from pipelines.cli.c2c import console, run_reporting_errors
from pipelines.cli.options import JsonOption, ScenarioArgument
from pipelines.cli.options import LedgerHomeOption as HomeOption
from pipelines.cli.progress import OnStage, stages
from pipelines.cli.scenario_files import refuse_other_kind
from pipelines.cli.terminal import write_json

_FIGURES = (("annual_capex_usd", "capex/yr", 1e6), ("annual_opex_usd", "opex/yr", 1e6),
            ("annual_total_usd", "total/yr", 1e6), ("usd_per_gpu_hour", "$/GPU-h", 1.0),
            ("job_cost_usd", "job", 1e6))


def tco_command(scenario_file: ScenarioArgument, home: HomeOption = None,
                as_json: JsonOption = False) -> None:
    """Cost per year, per GPU-hour and per job of each option, and the break-even speed-up
    of the scale-up option; or a training run's cost by Epoch AI's method."""
    def act() -> dict[str, Any]:
        with stages("tco", quiet=as_json) as stage:
            return _answer(scenario_file, home, stage)
    result = run_reporting_errors(act)
    if as_json:
        write_json(result)
        return
    if result["mode"] == "comparison":
        _print_comparison(result)
    else:
        _print_training_run(result)
    _print_tornado(result)
    _print_inputs(result["inputs"])


def _answer(scenario_file: Path, home: Path | None, stage: OnStage) -> dict[str, Any]:
    """The scenario's answer: the newest version's stored result when the graph computed it,
    else evaluated on that version's figures; each stage named to `stage` as it starts."""
    stage("read the scenario")  # the models load here: most of its time
    from db.schema import TcoResult
    from pipelines.inputs.tco_scenarios import load_tco_scenario
    from pipelines.jobs import tco
    from pipelines.jobs.recompute import stored_answer
    from pipelines.ledger.view import newest_version

    settings = cli_ledger.settings_for(home)
    refuse_other_kind(scenario_file, "tco", settings.input_limits)
    scenario = load_tco_scenario(scenario_file, settings.input_limits)
    needs_ledger = (any(s.ref is not None for s in scenario.inputs.values())
                    or bool(scenario.c2c_links))
    if needs_ledger:
        stage("open the ledger")
    with newest_version(settings, needs_ledger) as view:
        version = view.dataset_version
        if view.session is not None and version is not None:
            # One question, one answer: the version's stored result when the graph
            # computed this scenario for it; a draft is computed from stored inputs.
            stored = stored_answer(view.session, TcoResult, scenario.name,
                                   scenario.content_sha256, version)
            if stored is not None:
                return stored
        stage("resolve the inputs")
        resolved = tco.resolve_inputs(
            scenario, view.session, on=view.on, known=view.known,
            scenarios_dir=settings.scenarios_dir, limits=settings.input_limits,
            dataset_version=version,
            c2c_results=(tco.stored_c2c(view.session, version)
                         if view.session is not None and version is not None else None))
        stage("evaluate the options")
        return tco.evaluate(scenario, resolved, version)


def _money(value: float | None, scale: float) -> str:
    if value is None:
        return "-"
    if scale == 1e6:  # millions: two decimals below 10 M, where one would hide differences
        return f"{value / scale:,.{2 if abs(value) < 10e6 else 1}f} M"
    return f"{value:,.2f}"


def _spread(band: dict[str, float] | None, scale: float) -> str:
    if not band:
        return "-"
    if scale == 1e6:
        return f"{_money(band['p10'], scale)[:-2]}-{_money(band['p90'], scale)}"
    return f"{band['p10']:,.2f}-{band['p90']:,.2f}"


def market_lines(result: dict[str, Any]) -> list[str]:
    """What the market charges to rent each option's GPU, beside what the option costs."""
    lines = []
    own = {o["name"]: o["usd_per_gpu_hour"] for o in result["options"]}
    for option, market in (result.get("market") or {}).items():
        terms = "; ".join(f"{term.replace('_', ' ')} median {t['median']:.2f} "
                          f"({t['offers']} offer{'s' * (t['offers'] != 1)}, cheapest "
                          f"{t['cheapest']:.2f} {t['cheapest_provider']})"
                          for term, t in market["usd_per_gpu_hour"].items())
        lines.append(f"{option}: {own[option]:.2f} USD/GPU-hour; renting {market['gpu']} on "
                     f"the market: {terms}")
    return lines


def _print_comparison(result: dict[str, Any]) -> None:
    version = result["dataset_version"]
    title = f"{result['scenario']}: USD" + (f", dataset version {version}" if version else "")
    table = Table(title=title, title_justify="left", box=box.SIMPLE)
    table.add_column("option")
    for _, label, _ in _FIGURES:
        table.add_column(label, justify="right")
    table.add_column("JCT days", justify="right")
    spread = Table(title="P10 to P90 over the ranged inputs", title_justify="left",
                   box=box.SIMPLE)
    spread.add_column("option", no_wrap=True)
    banded = [f for f in _FIGURES if f[0] in ("annual_total_usd", "usd_per_gpu_hour",
                                              "job_cost_usd")]  # the rest: --json
    for _, label, _ in banded:
        spread.add_column(label, justify="right", no_wrap=True)
    for option in result["options"]:
        role = (" (U)" if option["name"] == result["scale_up"] else
                " (O)" if option["name"] == result["scale_out"] else "")
        jct = "-" if option["jct_days"] is None else f"{option['jct_days']:.1f}"
        table.add_row(option["name"] + role, *(_money(option[key], scale)
                                               for key, _, scale in _FIGURES), jct)
        spread.add_row(option["name"], *(_spread(option["ranges"].get(key), scale)
                                         for key, _, scale in banded))
    console.print(table)
    for line in market_lines(result):
        console.print(line, highlight=False, soft_wrap=True)
    if result["ranges"]:
        console.print(spread)
    band = result["ranges"].get("break_even_speedup")
    line = f"break-even speed-up s* = (R_U + K) / (R_O + K) = {result['break_even_speedup']:.2f}"
    if band:
        line += f" (P10 {band['p10']:.2f}, P90 {band['p90']:.2f})"
    if result["speedup"] is not None:
        s_band = result["ranges"].get("speedup")
        line += f"; the JCTs give s = {result['speedup']:.2f}"
        if s_band:
            line += (f" (P10 {s_band['p10']:.2f}, P90 {s_band['p90']:.2f}, with the C2C "
                     "model's error)")
        call = result.get("verdict", {})
        if call.get("call") == "too close to call":
            line += (f": too close to call ({result['cheaper_option']} is cheaper at the point "
                     f"values, but the bands of s and s* overlap); {call['settle_with']} would "
                     "settle it")
        else:
            line += f", so {result['cheaper_option']} costs less per job"
    console.print(line, highlight=False)


def _print_training_run(result: dict[str, Any]) -> None:
    table = Table(title=f"{result['scenario']}: training-run cost (Epoch AI method), USD",
                  title_justify="left", box=box.SIMPLE)
    for column in ("hardware", "interconnect", "energy", "total"):
        table.add_column(column, justify="right")
    parts = ("hardware", "interconnect", "energy", "total")
    table.add_row(*(_money(result[f"{k}_usd"], 1e6) for k in parts))
    if result["ranges"]:
        table.add_row(*(_spread(result["ranges"].get(f"{k}_usd"), 1e6) for k in parts))
    console.print(table)
    console.print(f"{result['chip_hours']:,.0f} chip-hours; acquired {result['acquired']}, "
                  f"worth {result['start_value_per_chip_usd']:,.0f} USD per chip at the start "
                  f"({result['years_depreciated']:.2f} years of 0.14 OOM/yr progress)",
                  highlight=False)


def _print_tornado(result: dict[str, Any]) -> None:
    if not result["tornado"]:
        return
    key = "break_even_speedup" if result["mode"] == "comparison" else "total_usd"
    table = Table(title=f"what moves {key} most (each input alone at its low / high)",
                  title_justify="left", box=box.SIMPLE)
    table.add_column("input", overflow="fold")
    for column in ("low", "high", f"{key} at low", "at high"):
        table.add_column(column, justify="right")
    scale = 1.0 if key == "break_even_speedup" else 1e6
    for bar in result["tornado"]:
        low, high = bar[key]
        table.add_row(bar["input"], f"{bar['low']:,.4g}", f"{bar['high']:,.4g}",
                      f"{low / scale:,.3g}", f"{high / scale:,.3g}")
    console.print(table)


def _print_inputs(inputs: list[dict[str, Any]]) -> None:
    table = Table(title="inputs used (--json adds each one's item, observation and note)",
                  title_justify="left", box=box.SIMPLE)
    table.add_column("input", no_wrap=True)  # a name to copy into the scenario file
    table.add_column("value")
    table.add_column("from", overflow="fold")
    for u in inputs:
        value = (f"{u['low']:,.4g} to {u['high']:,.4g}" if u["low"] is not None
                 and u["high"] is not None and u["low"] < u["high"] else f"{u['value']:,.4g}")
        if u["source"]:
            where = f"{u['source']} ({u['as_of']})"
        elif u["origin"] == "inline":
            where = "scenario"
        else:
            where = f"{u['origin']}: {u['note']}"
        table.add_row(u["name"], f"{value} {u['unit'] if u['unit'] != '1' else ''}".strip(),
                      where)
    console.print(table)


def register(app: typer.Typer) -> None:
    app.command(name="tco")(tco_command)
