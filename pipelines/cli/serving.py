"""`specledger serving`: cost per million tokens at a target interactivity, per option."""

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


def serving_command(scenario_file: ScenarioArgument, home: HomeOption = None,
                    as_json: JsonOption = False) -> None:
    """Each option's curve of tokens/s per GPU against tokens/s per user, its cost per
    million output tokens, and at the target interactivity the cheaper option with its
    margin and the model's band. A measured curve in the ledger is preferred to the model's."""
    def act() -> dict[str, Any]:
        with stages("serving", quiet=as_json) as stage:
            return _answer(scenario_file, home, stage)
    result = run_reporting_errors(act)
    if as_json:
        write_json(result)
        return
    print_result(result)


def _answer(scenario_file: Path, home: Path | None, stage: OnStage) -> dict[str, Any]:
    """The scenario's answer: the newest version's stored one when the graph computed it,
    else evaluated on that version; each stage named to `stage` as it starts."""
    stage("read the scenario")  # the models load here: most of its time
    from db.queries import inference_points
    from db.schema import ServingResult
    from pipelines.inputs.serving_scenarios import load_serving_scenario
    from pipelines.jobs import serving
    from pipelines.jobs.recompute import stored_answer
    from pipelines.ledger.view import newest_version

    settings = cli_ledger.settings_for(home)
    refuse_other_kind(scenario_file, "serving", settings.input_limits)
    scenario = load_serving_scenario(scenario_file, settings.input_limits)
    stage("open the ledger")
    with newest_version(settings, needed=True) as view:
        if view.session is not None and view.dataset_version is not None:
            # One question, one answer: the version's stored answer when the graph
            # computed this scenario for it.
            stored = stored_answer(view.session, ServingResult, scenario.name,
                                   serving.definition_sha256(scenario), view.dataset_version)
            if stored is not None:
                return stored
        stage("read the measured curves")
        measured = None if view.session is None else inference_points(view.session, view.known)
        stage("search each option's layouts")
        return serving.evaluate(scenario, view.session, on=view.on, known=view.known,
                                dataset_version=view.dataset_version,
                                scenarios_dir=settings.scenarios_dir,
                                limits=settings.input_limits, measured=measured)


def print_result(result: dict[str, Any]) -> None:
    from models.serving import calibration  # numpy and pint: not for --help
    from models.tco.decision import NO_VERDICT

    target = result["target_tok_s_per_user"]
    console.print(f"{result['scenario']}: {result['model']} {result['precision']}, "
                  f"{result['request']['input_tokens']:,} in / "
                  f"{result['request']['output_tokens']:,} out tokens, target {target:g} "
                  f"tokens/s per user (dataset version {result['dataset_version']})")
    table = Table(box=box.SIMPLE_HEAD)
    # At the target: the concurrency, tokens/s per GPU and per user, time to first token,
    # USD per million output tokens, and the band on throughput (measured / modelled).
    for heading in ("option", "from", "$/GPU-h", "conc.", "tok/s/GPU", "tok/s/user", "TTFT",
                    "$/M out", "band"):
        table.add_column(heading, justify="left" if heading in ("option", "from") else "right",
                         overflow="fold")
    for option in result["options"]:
        at = option["at_target"]
        band = option["band"]
        cells = ([f"{at['concurrency']:,.0f}", f"{at['tok_s_per_gpu']:,.0f}",
                  f"{at['tok_s_per_user']:,.1f}",
                  "-" if at["ttft_s"] is None else f"{at['ttft_s']:.2f} s",
                  f"{at['usd_per_mtok_out']:,.3g}"] if at else ["does not reach the target",
                                                                  "", "", "", ""])
        table.add_row(option["name"], option["source"], f"{option['usd_per_gpu_hour']:.3g}",
                      *cells, f"{band['low']:.2f}–{band['high']:.2f}")
    console.print(table)
    for option in result["options"]:
        console.print(f"  {option['name']}: {chosen_layout(option)}{layout(option['deployment'])}; "
                      f"price from {option['price_source']}; "
                      f"{option['source']} curve ({option['constants']}); band "
                      f"{option['band']['basis']}")
    if result["cheaper_option"] is None:
        console.print("no comparison: fewer than two options reach the target")
        return
    band = result["band"]
    cheaper = (f"{result['cheaper_option']} is {result['margin']:.1%} cheaper per million "
               "output tokens")
    verdict = f"{cheaper} (80 % band {band['p10']:+.1%} to {band['p90']:+.1%})"
    if result["call"] == "too close to call":
        verdict = f"too close to call: {verdict}"
    misses = calibration.short_text(result.get("short_of_targets") or [])
    if result["call"] == NO_VERDICT and misses:
        # As page 1 says it: the margin, and the one number per family that withholds a band.
        verdict = f"no verdict: {cheaper} (no band: {misses})"
    estimated = any(o["source"] == "model" for o in result["options"])
    if estimated and not band.get("model_measured", True):
        verdict += f"; {calibration.unmeasured_model(result['model'])}"
    console.print(verdict)


def chosen_layout(option: dict[str, Any]) -> str:
    """How the option's layout was chosen: "DP8 x EP8, best of 13 (the file's DP16 x EP16:
    $0.717 per M out); " (nothing for an answer stored before layouts were searched)."""
    chosen = option.get("layout")
    if not chosen:
        return ""
    text = f"{chosen['label']}, {chosen['note']}"
    own = chosen["file"]
    if chosen["mode"] == "search" and own["label"] != chosen["label"]:
        cost = own["usd_per_mtok_out"]
        text += (f" (the file's {own['label']}: "
                 + ("does not reach the target" if cost is None else f"${cost:,.3g} per M out")
                 + ")")
    return f"{text}; "


def layout(deployment: dict[str, Any]) -> str:
    """An option's deployment in a few words: tp, dp, pp, the experts, the batch limit, the
    KV cache and a prefill pool."""
    experts = "experts split by TP" if deployment["ep"] is None else f"ep {deployment['ep']}"
    words = (f"tp {deployment['tp']} x dp {deployment['dp']} x pp {deployment['pp']}, "
             f"{experts}, at most {deployment['max_batch']:,} sequences a replica, "
             f"{deployment['kv_cache']} KV cache")
    if deployment["prefill_gpus"]:
        noun = "GPU" if deployment["prefill_gpus"] == 1 else "GPUs"
        words += f", {deployment['prefill_gpus']} prefill {noun}"
    return words


def register(app: typer.Typer) -> None:
    app.command(name="serving")(serving_command)
