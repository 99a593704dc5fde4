"""Answer a `kind: serving` scenario: each option's curve (measured when the ledger has points
for the same hardware, model, precision, request shape and the option's whole deployment --
tensor, data-attention, expert and pipeline parallelism, aggregated or not --, else the serving
model's), its cost per million tokens at its price per GPU-hour, and at the target
interactivity the cheaper option with its margin and band."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from datetime import date, datetime
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from db import queries, results
from db.engine import Engine, Session
from db.schema import DatasetVersion, ServingResult, TcoResult
from models.c2c.spec import ClusterSpec, Precision
from models.serving import calibration, layouts
from models.serving.calibration import engine_constants
from models.serving.cost import (
    Point,
    ServingMargin,
    at_target,
    cheaper_at_target,
    priced,
    usd_per_mtok,
)
from models.serving.curve import serving_curve
from models.serving.layout_array import Layouts, throughput_at_target
from models.serving.spec import Deployment, RequestShape
from models.serving.token_costs import prefill_share, token_costs
from models.serving.validation import deployment as measured_deployment
from models.serving.validation import dp_attention_band
from models.tco.decision import NO_VERDICT, TOO_CLOSE
from models.tco.inputs import option_inputs
from pipelines.inputs.errors import InputError
from pipelines.inputs.limits import DEFAULT_LIMITS, InputLimits
from pipelines.inputs.measurements import shipped_serving_points
from pipelines.inputs.scenarios import canonical_json, scenario_paths
from pipelines.inputs.serving_scenarios import (
    Price,
    ServingOption,
    ServingScenario,
    load_serving_scenario,
)
from pipelines.jobs.recompute import (
    MissingInput,
    Outcome,
    RecomputeReport,
    inputs_digest,
    recompute_each,
)
from pipelines.ledger.cluster_specs import MissingSpec, resolve_cluster
from pipelines.ledger.figures import FigureUsed
from pipelines.ledger.market_tiers import rental_tiers, version_offers

if TYPE_CHECKING:
    from pipelines.inputs.tco_scenarios import TcoScenario

# A measured curve needs at least this many points of one shape.
MIN_MEASURED_POINTS = 2
# A measured curve carries no model error: its band is the point itself.
MEASURED_BAND = (1.0, 1.0)


@dataclass(frozen=True)
class MeasuredCurve:
    """The measured points that answer for an option, and what they are: the sources and
    run dates they were read from, the framework (and its releases) that ran them."""

    points: list[Point]
    sources: tuple[str, ...] = ()
    days: tuple[date, ...] = ()
    framework: str = ""
    versions: tuple[str, ...] = ()

    def note(self) -> str:
        """"measured: 6 points, vllm v0.13.0, inferencex-2026-01-02 (run of 2026-01-02)"."""
        engine = " ".join(filter(None, [self.framework, "/".join(self.versions)]))
        text = f"measured: {len(self.points)} points" + (f", {engine}" if engine else "")
        if self.sources:
            text += f", {', '.join(self.sources)}"
        if self.days:
            first, last = min(self.days), max(self.days)
            text += f" (run of {first})" if first == last else f" (runs of {first} to {last})"
        return text


class MissingPrice(MissingInput):
    """An option's price per GPU-hour that neither the scenario, the market nor TCO gives."""


class NotOneMachine(MissingInput):
    """An option priced by a TCO option whose cluster is another machine than its own."""


def evaluate(scenario: ServingScenario, session: Session | None, *, on: date,
             known: datetime, dataset_version: int | None,
             scenarios_dir: Path | None = None, limits: InputLimits = DEFAULT_LIMITS,
             measured: pd.DataFrame | None = None,
             tco_results: dict[str, dict[str, Any]] | None = None,
             stored_only: bool = False) -> dict[str, Any]:
    """The scenario's answer as plain JSON-ready data
    (docs/scenarios.md#what-specledger-serving-prints).
    `tco_results`: TCO results by scenario name already computed for the same dataset
    version and day (options priced by one are read from it; it keeps what is computed);
    `stored_only`: they are the version's stored results, and nothing else may be run."""
    tco_results = {} if tco_results is None else tco_results
    options = [_option(scenario, option, session, on=on, known=known,
                       scenarios_dir=scenarios_dir, limits=limits, measured=measured,
                       dataset_version=dataset_version, tco_results=tco_results,
                       stored_only=stored_only)
               for option in scenario.options]
    offers = (version_offers(session, dataset_version)
              if session is not None and dataset_version is not None else None)
    for option, spec in zip(options, scenario.options, strict=True):
        option["rent_beside"] = rent_beside(option, spec.cluster.gpu, session, dataset_version)
        option["price_tiers"] = price_tiers(option, spec, offers, scenario.request)
    bases = sorted({price_basis(option.price) for option in scenario.options})
    reached = [o["priced"] for o in options if o["priced"] is not None]
    # Like with like: an owner's cost against a renter's price is not a verdict on the hardware.
    margin = (cheaper_at_target(reached, calibration.paired_bands()) if len(bases) == 1
              else None)
    for option in options:
        option.pop("priced")
    short = short_of_targets(options, margin)
    return {
        "scenario": scenario.name, "kind": "serving", "dataset_version": dataset_version,
        "model": scenario.model_key, "precision": scenario.weights.value,
        "request": {"input_tokens": scenario.request.input_tokens,
                    "output_tokens": scenario.request.output_tokens},
        "target_tok_s_per_user": scenario.target_tok_s_per_user,
        "options": options,
        "cheaper_option": margin.cheaper if margin else None,
        "dearer_option": margin.dearer if margin else None,
        "margin": margin.saving if margin else None,
        "band": ({"p10": margin.p10, "p90": margin.p90, "basis": margin.basis,
                  "note": margin_note(margin, scenario.model_key),
                  "model_measured": calibration.model_measured(scenario.model_key)}
                 if margin else None),
        "call": (None if margin is None else NO_VERDICT if short else
                 TOO_CLOSE if margin.too_close else margin.cheaper),
        # Each compared model estimate's family short of the calibration targets, with its
        # one number: [family, figure, target] ("Blackwell", "62.7 % off", "≤ 20 %").
        "short_of_targets": [list(s) for s in short],
        "unreached": [o["name"] for o in options if o["at_target"] is None],
        "price_basis": bases[0] if len(bases) == 1 else "mixed",
        "not_compared": (None if len(bases) == 1 else
                         f"the options are priced on different bases ({', '.join(bases)}): "
                         "a verdict needs them all owned, or all rented on one term"),
    }


def short_of_targets(options: list[dict[str, Any]], margin: ServingMargin | None
                     ) -> list[tuple[str, str, str]]:
    """The families, short of the calibration targets, of the compared options' model
    estimates (a measured curve carries no model error), each once."""
    if margin is None:
        return []
    compared = [o for o in options if o["name"] in (margin.cheaper, margin.dearer)
                and o["source"] != "measured"]
    found = (calibration.short_of_targets(arch, engine) for arch, engine in dict.fromkeys(
        (o["arch"], o["deployment"]["engine"]) for o in compared))
    return [short for short in found if short]


def margin_note(margin: ServingMargin, model: str) -> str:
    """What the margin's band rests on: the paired band's comparisons (for the cheaper's and
    the dearer's families), or each option's own band at its ends; and, for a `model` the
    constants are not fitted on, that its error is not measured."""
    if margin.pair is None:
        note = "each option's band taken at its ends (their errors not known to move together)"
    else:
        note = calibration.PAIRED_BAND[margin.pair][2]
    if not calibration.model_measured(model):
        note += (f"; no {model} serving point is among the measured ones (those are of "
                 f"{', '.join(calibration.MEASURED_MODELS)}): the model's error on "
                 f"{model} is not measured")
    return note


def rent_beside(option: dict[str, Any], gpu: str | None, session: Session | None,
                dataset_version: int | None) -> dict[str, Any] | None:
    """The same option rented on demand at the version's stored price index (median over
    providers), set beside its own price: USD per GPU-hour and per million output tokens at
    the target. None: the ledger has no on-demand offer for the GPU."""
    from pipelines.ledger.market import index_row

    if session is None or dataset_version is None or gpu is None:
        return None
    row = index_row(session, dataset_version, gpu, "on_demand")
    if row is None:
        return None
    median = float(row["median"])
    at = option["at_target"]
    providers = int(row["n_providers"])
    return {"usd_per_gpu_hour": median,
            "usd_per_mtok_out": None if at is None else usd_per_mtok(median, at["tok_s_per_gpu"]),
            "source": f"market: {gpu} on-demand median over {providers} "
                      f"provider{'s' * (providers != 1)}, index of "
                      f"{pd.Timestamp(row['version_date']).date()}"}


def price_tiers(option: dict[str, Any], spec: ServingOption, offers: pd.DataFrame | None,
                request: RequestShape) -> list[dict[str, Any]]:
    """The option's cost per million tokens under each price tier the ledger can give:
    owned (its own price, when that is an owner's cost), neocloud and hyperscaler on-demand
    (models.market.tiers); per tier the price, where it comes from, and at the target the
    cost with every GPU-second charged to output, then input and output apart
    (models.serving.token_costs)."""
    found = []
    if price_basis(spec.price) == "owned":
        found.append(("owned", option["usd_per_gpu_hour"], option["price_source"]))
    if offers is not None:
        for tier, rent in rental_tiers(offers, spec.cluster.gpu).items():
            found.append((tier, rent.usd_per_gpu_hour, f"market: {spec.cluster.gpu} "
                          f"on-demand, {rent.describe()}"))
    at, share = option["at_target"], option["prefill_share"]
    rows = []
    for tier, usd, source in found:
        row: dict[str, Any] = {"tier": tier, "usd_per_gpu_hour": usd, "source": source,
                               "usd_per_mtok_all_out": None, "usd_per_mtok_in": None,
                               "usd_per_mtok_out": None}
        if at is not None and share is not None:
            split = token_costs(usd, at["tok_s_per_gpu"], request, share)
            row.update(usd_per_mtok_all_out=usd_per_mtok(usd, at["tok_s_per_gpu"]),
                       usd_per_mtok_in=split.usd_per_mtok_in,
                       usd_per_mtok_out=split.usd_per_mtok_out)
        rows.append(row)
    return rows


def price_basis(price: Price) -> str:
    """How an option is priced: "owned" (a TCO option's cost), "rented <term>" (the market's
    index) or "given" (a figure the scenario writes)."""
    if price.usd_per_gpu_hour is not None:
        return "given"
    if price.market_gpu is not None:
        return f"rented {price.market_term.replace('_', ' ')}"
    return "owned"


@dataclass(frozen=True)
class LayoutAnswer:
    """One deployment of an option evaluated: its curve (measured or the model's), its point
    at the target, its band (low, high, basis) and whose constants made it."""

    deployment: Deployment
    source: str                     # measured | model
    curve: list[Point]
    target: Point | None
    band: tuple[float, float, str]
    constants_note: str

    def evaluated(self) -> layouts.Evaluated:
        return layouts.Evaluated(self.deployment,
                                 None if self.target is None else self.target.tok_s_per_gpu,
                                 self.band[:2])


def at_layout(scenario: ServingScenario, option: ServingOption, dep: Deployment,
              hw: ClusterSpec, measured: pd.DataFrame | None) -> LayoutAnswer:
    """The option at deployment `dep`: the ledger's measured curve of that very deployment
    when it has one (MIN_MEASURED_POINTS), else the serving model's with the family's band
    (deployment_band)."""
    found = measured_points(measured, replace(option, deployment=dep), scenario)
    if len(found.points) >= MIN_MEASURED_POINTS:
        return LayoutAnswer(dep, "measured", found.points,
                            at_target(found.points, scenario.target_tok_s_per_user),
                            (*MEASURED_BAND, found.note()), "measured")
    constants, constants_note = calibration.constants(hw.arch)
    curve = [Point(p.concurrency, p.tok_s_per_gpu, p.tok_s_per_user, p.ttft_s)
             for p in serving_curve(scenario.model, dep, hw, scenario.request, constants,
                                    hw.gemm_peak)]
    return LayoutAnswer(dep, "model", curve, at_target(curve, scenario.target_tok_s_per_user),
                        deployment_band(hw.arch, dep), constants_note)


def searched_layouts(scenario: ServingScenario, option: ServingOption, hw: ClusterSpec,
                     measured: pd.DataFrame | None,
                     own: LayoutAnswer) -> tuple[LayoutAnswer, int]:
    """The option at its best layout (models/serving/layouts.best) of every layout its
    hardware holds (layouts.candidates) and the file's own deployment (`own`, already
    evaluated), and how many layouts were tried; `own` when no layout reaches the target.

    A layout the ledger has measured answers with its measured curve (at_layout); the rest
    are the model's, evaluated all at once (models/serving/layout_array), each ranked at the
    low end of its band (rows_band_low): an uncovered layout carries the widest band, so a
    search finds the hardware's strengths rather than the model's errors. The winner among
    the model's layouts is evaluated again the scalar way, which gives the same number and
    its whole curve."""
    space = search_space(scenario, hw)
    base = option.deployment
    mine = option_measured(measured, option, scenario)
    gpus = measured_gpus(mine)
    by_measurement = np.isin(space.total_gpus, list(gpus)) if gpus else \
        np.zeros(len(space), dtype=bool)
    tried = [at_layout(scenario, option, space.deployment(int(i), base), hw, mine)
             for i in np.flatnonzero(by_measurement)]
    model_rows = space.take(np.flatnonzero(~by_measurement))
    if len(model_rows):
        constants, _ = calibration.constants(hw.arch)
        tok = throughput_at_target(scenario.model, model_rows, hw, scenario.request, base,
                                   constants, engine_constants(base.engine, hw.arch),
                                   hw.gemm_peak, scenario.target_tok_s_per_user)
        reached = np.flatnonzero(~np.isnan(tok))
        if len(reached):
            assured = tok[reached] * rows_band_low(hw.arch, model_rows.take(reached), base)
            # layouts.best's order: assured, then the estimate, then the fewest GPUs.
            order = np.lexsort((model_rows.total_gpus[reached], -tok[reached], -assured))
            winner = model_rows.deployment(int(reached[order[0]]), base)
            tried.append(at_layout(scenario, option, winner, hw, mine))
    tried = [t for t in tried if t.deployment != own.deployment] + [own]
    pick = layouts.best([t.evaluated() for t in tried])
    chosen = next((t for t in tried if pick is not None and t.deployment == pick.deployment),
                  own)
    return chosen, len(space) + (0 if space.contains(own.deployment) else 1)


def search_space(scenario: ServingScenario, hw: ClusterSpec) -> Layouts:
    """The layouts an option is searched over: layouts.candidates, less those the model
    cannot cost. Data-parallel attention with a MoE's experts split by TP across the
    replicas needs each replica's tokens combined over the others' expert slices, a
    collective the model has no term for; such a layout is kept only where a measurement ran
    one (shipped_coverage), else a search would pick it for the term it lacks (it did: DP72
    on an NVL72 at 1.7x the best measured layout's throughput)."""
    space = layouts.candidates(scenario.model, hw.domain_gpus)
    if not scenario.model.is_moe:
        return space
    uncosted = (space.dp > 1) & (space.ep == 0) & ~shipped_coverage().covers_rows(space)
    return space.take(np.flatnonzero(~uncosted))


def rows_band_low(arch: str, rows: Layouts, base: Deployment) -> np.ndarray:
    """deployment_band's low end per row: it depends only on whether the measurements cover
    the row and whether it replicates attention, so four bands answer every row."""
    covered = shipped_coverage().covers_rows(rows)
    replicated = rows.dp > 1
    low = np.empty(len(rows))
    for flag_covered in (False, True):
        for flag_replicated in (False, True):
            mask = (covered == flag_covered) & (replicated == flag_replicated)
            if mask.any():
                first = int(np.flatnonzero(mask)[0])
                low[mask] = deployment_band(arch, rows.deployment(first, base))[0]
    return low


def option_measured(measured: pd.DataFrame | None, option: ServingOption,
                    scenario: ServingScenario) -> pd.DataFrame | None:
    """The measured points of the option's hardware, the scenario's model, precision and
    request shape: those any of its layouts can be answered by (measured_points picks a
    layout's own among them)."""
    if measured is None or measured.empty or option.cluster.gpu is None:
        return None
    return measured[(measured["hardware"] == option.cluster.gpu)
                    & (measured["model"] == scenario.model_key)
                    & (measured["precision"] == scenario.weights.value)
                    & (measured["input_tokens"] == scenario.request.input_tokens)
                    & (measured["output_tokens"] == scenario.request.output_tokens)]


def measured_gpus(rows: pd.DataFrame | None) -> set[int]:
    """Every deployment size (all its GPUs, prefill included) the rows measured: a layout of
    another size has no measured curve."""
    if rows is None or rows.empty:
        return set()
    sizes = set()
    for r in rows.itertuples():
        if bool(r.disaggregated):
            parts = (r.decode_gpus, r.prefill_gpus)
            if not any(v is None or pd.isna(v) for v in parts):
                sizes.add(int(parts[0]) + int(parts[1]))
        elif r.gpus is not None and not pd.isna(r.gpus):
            sizes.add(int(r.gpus))
    return sizes


def _option(scenario: ServingScenario, option: ServingOption, session: Session | None, *,
            on: date, known: datetime, scenarios_dir: Path | None, limits: InputLimits,
            measured: pd.DataFrame | None, dataset_version: int | None,
            tco_results: dict[str, dict[str, Any]], stored_only: bool) -> dict[str, Any]:
    hw, used = option_hardware(option, session, on=on, known=known)
    price, price_note, price_inputs = option_price(
        option.price, session, on=on, known=known, scenarios_dir=scenarios_dir, limits=limits,
        dataset_version=dataset_version, tco_results=tco_results, stored_only=stored_only)
    check_one_machine(scenario.path, option, session, on=on, known=known,
                      scenarios_dir=scenarios_dir, limits=limits)
    own = at_layout(scenario, option, option.deployment, hw, measured)
    answer, tried = (own, 0) if option.layout == "pinned" else \
        searched_layouts(scenario, option, hw, measured, own)
    dep, target = answer.deployment, answer.target
    low, high, basis = answer.band
    # A measured curve's split is the model's at the same concurrency: the share, not the rate.
    constants, _ = calibration.constants(hw.arch)
    share = None if target is None else prefill_share(
        scenario.model, dep, hw, scenario.request, target.concurrency, constants, hw.gemm_peak)
    return {
        "name": option.name, "source": answer.source, "gpu": option.cluster.gpu,
        "arch": hw.arch, "gpus_per_instance": dep.total_gpus,
        "deployment": deployment_json(dep),
        "layout": layout_json(option, answer, own, tried, price),
        "usd_per_gpu_hour": price, "price_source": price_note,
        "constants": answer.constants_note,
        "band": {"low": low, "high": high, "basis": basis},
        "curve": [_row(p, price) for p in answer.curve],
        "at_target": None if target is None else _row(target, price),
        "prefill_share": share,
        "hardware": [f.to_json() for f in used],
        "price_inputs": price_inputs,
        # A model estimate says whose constants made it: two of them may have paired errors.
        "priced": None if target is None else priced(
            option.name, price, target, (low, high),
            family=hw.arch if answer.source == "model" else None,
            engine=dep.engine if answer.source == "model" else None),
    }


def layout_json(option: ServingOption, answer: LayoutAnswer, own: LayoutAnswer, tried: int,
                price: float) -> dict[str, Any]:
    """How the option's layout was chosen: searched (best of `tried`) or pinned; its label;
    whether the measurements cover it; and the file's own deployment beside it, at the
    target, for reference."""
    at = own.target
    return {"mode": option.layout, "label": layouts.layout_label(answer.deployment),
            "candidates": tried, "covered": shipped_coverage().covers(answer.deployment),
            "note": (f"best of {tried}" if option.layout == "search"
                     else "pinned by the scenario"),
            "file": {"label": layouts.layout_label(own.deployment),
                     "deployment": deployment_json(own.deployment), "source": own.source,
                     "tok_s_per_gpu": None if at is None else at.tok_s_per_gpu,
                     "usd_per_mtok_out": None if at is None else usd_per_mtok(
                         price, at.tok_s_per_gpu)}}


# The figures that make two clusters one machine: its GPU's memory, the scale-up domain and
# the per-GPU rates on both tiers (the GEMM peak follows the weights' precision, and may
# differ between a training and a serving view of the same GPUs).
MACHINE_FIGURES = ("hbm_bytes", "hbm_bw", "domain_gpus", "scaleup_bw", "scaleout_bw", "arch")


def check_one_machine(path: str, option: ServingOption, session: Session | None, *,
                      on: date, known: datetime, scenarios_dir: Path | None,
                      limits: InputLimits) -> None:
    """An option priced by a TCO option is the machine that option buys: the cluster of the
    C2C scenario its job time comes from. Raises NotOneMachine naming the first figure that
    differs (a serving option on 800G ports priced at a 400G-per-GPU bill of materials)."""
    from pipelines.jobs.tco import find_c2c

    price = option.price
    if price.tco_scenario is None or scenarios_dir is None:
        return
    tco = find_tco_scenario(price.tco_scenario, scenarios_dir, limits, skip_broken=True)
    link = None if tco is None else next(
        (k for k in tco.c2c_links if k.option == price.tco_option), None)
    if tco is None or link is None:
        return  # no such scenario (the price says so), or a given job time: nothing to compare
    c2c = find_c2c(tco, link, scenarios_dir, limits)
    theirs, _ = resolve_cluster(replace(c2c.cluster, precision=Precision.BF16, gpus=None),
                                session, on=on, known=known)
    ours, _ = resolve_cluster(replace(option.cluster, precision=Precision.BF16),
                              session, on=on, known=known)
    for name in MACHINE_FIGURES:
        mine, other = getattr(ours, name), getattr(theirs, name)
        if mine != other:
            raise NotOneMachine(
                f"{path}: options.{option.name}.cluster: not the machine its price is for: "
                f"{name} {_figure(name, mine)} here, {_figure(name, other)} in C2C "
                f"scenario {c2c.name!r} (the cluster of TCO scenario {tco.name!r}, option "
                f"{link.option!r}, which prices it); an option is one machine: give it "
                "the same cluster")


def find_tco_scenario(name: str, folder: Path, limits: InputLimits, *,
                      skip_broken: bool = False) -> TcoScenario | None:
    """The TCO scenario named `name` in `folder` (None: none is). A file that cannot be read
    raises, unless `skip_broken` (a broken neighbour is reported by its own recompute)."""
    from pipelines.inputs.tco_scenarios import load_tco_scenario

    for path in scenario_paths(folder, "tco"):
        try:
            scenario = load_tco_scenario(path, limits)
        except InputError:
            if skip_broken:
                continue
            raise
        if scenario.name == name:
            return scenario
    return None


def _figure(name: str, value: object) -> str:
    """A machine figure in the unit people read it in (per-GPU rates in Gb/s, one way)."""
    if name in ("scaleup_bw", "scaleout_bw") and isinstance(value, float):
        return f"{value * 8 / 1e9:,.0f} Gb/s per GPU"
    if name == "hbm_bytes" and isinstance(value, float):
        return f"{value / 1e9:,.0f} GB"
    if name == "hbm_bw" and isinstance(value, float):
        return f"{value / 1e9:,.0f} GB/s"
    return str(value)


def deployment_json(dep: Deployment) -> dict[str, Any]:
    """The option's deployment as the answer prints it (ep null: experts split by TP), with
    the serving engine whose terms the model used."""
    return {"tp": dep.tp, "dp": dep.dp, "ep": dep.ep, "pp": dep.pp,
            "max_batch": dep.max_batch, "prefill_gpus": dep.prefill_gpus,
            "kv_cache": "bf16" if dep.kv_bytes == 2 else "fp8", "engine": dep.engine}


@cache
def shipped_coverage() -> layouts.Coverage:
    """The layouts the serving model's measurements ran (its calibration points)."""
    return layouts.coverage(measured_deployment(p) for p in shipped_serving_points().points)


def deployment_band(arch: str, deployment: Deployment) -> tuple[float, float, str]:
    """The family's band (its engine's, where that engine has one on it: calibration.band),
    widened by the data-parallel-attention band when the deployment replicates attention (the
    model's least certain layout); a deployment no measurement ran (shipped_coverage) carries
    the band of a family the fit never saw as well: the widest."""
    low, high, basis = calibration.band(arch, deployment.engine)
    coverage = shipped_coverage()
    if not coverage.covers(deployment):
        far_low, far_high, _ = calibration.UNCALIBRATED_BAND
        low, high = min(low, far_low), max(high, far_high)
        basis = (f"{basis}; widened to a never-measured configuration's band: "
                 f"{coverage.describe(deployment)}")
    scheme = dp_attention_band(shipped_serving_points().points) if deployment.dp > 1 else None
    if scheme is None:
        return low, high, basis
    return min(low, scheme[0]), max(high, scheme[1]), f"{basis}; widened by {scheme[2]}"


def option_hardware(option: ServingOption, session: Session | None, *, on: date,
                    known: datetime) -> tuple[ClusterSpec, list[FigureUsed]]:
    """The option's GPU and fabrics. FP4 weights on a GPU without an FP4 peak (Hopper) are
    unpacked and multiplied at its FP8 peak, as the engines' mixed-precision kernels do."""
    try:
        return resolve_cluster(option.cluster, session, on=on, known=known)
    except MissingSpec as exc:
        if option.cluster.precision != Precision.FP4 or "peak_fp4" not in str(exc):
            raise
    hw, used = resolve_cluster(replace(option.cluster, precision=Precision.FP8), session,
                               on=on, known=known)
    peak = next(f for f in used if f.name == "gemm_peak_flops")
    note = "FP4 weights at the FP8 peak: the GPU has no FP4 peak in the ledger"
    return hw, [replace(f, note=note) if f is peak else f for f in used]


def _row(point: Point, price: float) -> dict[str, Any]:
    return {"concurrency": point.concurrency, "tok_s_per_gpu": point.tok_s_per_gpu,
            "tok_s_per_user": point.tok_s_per_user, "ttft_s": point.ttft_s,
            "usd_per_mtok_out": usd_per_mtok(price, point.tok_s_per_gpu)}


def _same_deployment(row: Any, dep: Deployment, moe: bool) -> bool:
    """Whether a measured point ran the option's deployment: as many GPUs, DP attention or not
    as the option, the same tensor parallelism per attention replica, the same expert layout
    (ep 1 or none: experts split by TP), aggregated unless the option is disaggregated with
    as many prefill GPUs. InferenceX writes tp = the instance's GPUs and dp = tp under DP
    attention; the model's deployment has tp 1 and dp GPUs then."""
    def whole(value: Any) -> int | None:
        return None if value is None or pd.isna(value) else int(value)

    dp = whole(row.dp) or 1
    if bool(row.disaggregated) != dep.disaggregated:
        return False
    if dep.disaggregated:
        return (whole(row.decode_gpus) == dep.gpus
                and whole(row.prefill_gpus) == dep.prefill_gpus and (dp > 1) == (dep.dp > 1))
    if whole(row.gpus) != dep.gpus or (dp > 1) != (dep.dp > 1):
        return False
    if dp == 1 and whole(row.tp) != dep.tp:
        return False
    if dp > 1 and whole(row.tp) != dep.dp:
        return False
    return not moe or (whole(row.ep) or 1) == (dep.ep or 1)


def measured_points(measured: pd.DataFrame | None, option: ServingOption,
                    scenario: ServingScenario) -> MeasuredCurve:
    """The ledger's measured points for the option's hardware, the scenario's model,
    precision and request shape, and the option's whole deployment (_same_deployment), by
    concurrency: of one framework (the one with the most such points; a TP1 point never
    answers for a TP8 option, nor one engine's curve for another's), the latest run at each
    concurrency."""
    rows = option_measured(measured, option, scenario)
    if rows is None:
        return MeasuredCurve([])
    rows = rows[rows["tok_s_per_user"].notna() & rows["concurrency"].notna()]
    if "spec_decoding" in rows:   # speculative decoding is another curve: not this one
        rows = rows[rows["spec_decoding"].fillna("none").isin(["none", ""])]
    if rows.empty:
        return MeasuredCurve([])
    same = [_same_deployment(r, option.deployment, scenario.model.is_moe)
            for r in rows.itertuples()]
    rows = rows[same]
    if rows.empty:
        return MeasuredCurve([])
    frameworks = rows["framework"].fillna("").value_counts()
    framework = sorted(frameworks[frameworks == frameworks.max()].index)[0]
    rows = rows[rows["framework"].fillna("") == framework]
    rows = rows.sort_values(["concurrency", "as_of", "id"]).drop_duplicates(
        "concurrency", keep="last")
    points = [Point(float(r.concurrency), float(r.tok_s_per_gpu), float(r.tok_s_per_user),
                    None if pd.isna(r.ttft_s) else float(r.ttft_s))
              for r in rows.itertuples()]
    return MeasuredCurve(
        points, sources=tuple(sorted(set(rows["source_key"]))),
        days=tuple(sorted(set(rows["as_of"]))), framework=framework,
        versions=tuple(sorted({str(v) for v in rows["framework_version"].dropna()})))


def option_price(price: Price, session: Session | None, *, on: date, known: datetime,
                 scenarios_dir: Path | None, limits: InputLimits,
                 dataset_version: int | None,
                 tco_results: dict[str, dict[str, Any]] | None = None,
                 stored_only: bool = False) -> tuple[float, str, list[dict[str, Any]]]:
    """USD per GPU-hour, where it comes from and the dated figures it rests on: the scenario
    (none), the version's stored price index (its source names the index's date), or the TCO
    model's own figure for an option of a TCO scenario (the TCO inputs that option's cost
    reads, with their sources and dates; `tco_results`
    keeps each TCO scenario's result, so options priced by one are evaluated once; with
    `stored_only`, the recompute graph's rule, they are the version's stored results and
    a TCO scenario without one is an error, never run here)."""
    if price.usd_per_gpu_hour is not None:
        return price.usd_per_gpu_hour, "scenario", []
    if price.market_gpu is not None:
        from pipelines.ledger.market import index_row

        # The version's stored price index: the figure the briefing and the warehouse show.
        row = (None if session is None or dataset_version is None else
               index_row(session, dataset_version, price.market_gpu, price.market_term))
        if row is None:
            raise MissingPrice(f"price.market: the ledger has no {price.market_term} offer "
                               f"for {price.market_gpu!r} known on {on}")
        day = pd.Timestamp(row["version_date"]).date()
        offers, providers = int(row["n_offers"]), int(row["n_providers"])
        return float(row["median"]), (
            f"market: {price.market_gpu} {price.market_term} median over {providers} "
            f"provider{'s' * (providers != 1)} ({offers} offer{'s' * (offers != 1)}), "
            f"index of {day}"), []
    cache = {} if tco_results is None else tco_results
    name = str(price.tco_scenario)
    if name not in cache and stored_only:
        raise MissingPrice(f"price.tco: TCO scenario {name!r} has no result on dataset "
                           f"version {dataset_version} (see its own error)")
    if name not in cache:
        cache[name] = _tco_result(name, session, on=on, known=known,
                                  scenarios_dir=scenarios_dir, limits=limits,
                                  dataset_version=dataset_version)
    for option in cache[name].get("options", []):
        if option["name"] == price.tco_option:
            return (float(option["usd_per_gpu_hour"]), f"TCO: {name}, option {price.tco_option}",
                    [dict(f) for f in option_inputs(cache[name].get("inputs") or [],
                                                    str(price.tco_option))])
    raise MissingPrice(f"price.option: TCO scenario {name!r} has no option "
                       f"{price.tco_option!r}")


def _tco_result(name: str, session: Session | None, *, on: date, known: datetime,
                scenarios_dir: Path | None, limits: InputLimits,
                dataset_version: int | None) -> dict[str, Any]:
    """The TCO model's result for the TCO scenario `name` in the scenarios folder."""
    from pipelines.jobs import tco

    folder = scenarios_dir or Path(".")
    scenario = find_tco_scenario(name, folder, limits)
    if scenario is None:
        raise MissingPrice(f"price.tco: no TCO scenario named {name!r} in {folder}")
    stored = (tco.stored_c2c(session, dataset_version)
              if session is not None and dataset_version is not None else None)
    resolved = tco.resolve_inputs(scenario, session, on=on, known=known, scenarios_dir=folder,
                                  limits=limits, dataset_version=dataset_version,
                                  c2c_results=stored)
    return tco.evaluate(scenario, resolved, dataset_version)


def definition_sha256(scenario: ServingScenario) -> str:
    return hashlib.sha256(canonical_json(scenario.definition).encode()).hexdigest()


def recompute(target: Engine | Session, scenarios_dir: Path, dataset_version: int, *, on: date,
              now: datetime, code_version: str, lock_timeout_seconds: float = 60.0,
              limits: InputLimits = DEFAULT_LIMITS) -> RecomputeReport:
    """Store a serving_result for every serving scenario in `scenarios_dir` for
    `dataset_version`: the answer as the version knows the hardware, the prices and the
    measured points. An answer equal to an earlier one of the same scenario is reused."""
    def compute(session: Session, scenario: ServingScenario, version: DatasetVersion
                ) -> Outcome:
        row = results.record_scenario(
            session, name=scenario.name, kind="serving",
            definition=canonical_json(scenario.definition),
            content_sha256=definition_sha256(scenario),
            path=scenario.path, recorded_at=now)
        if results.result_for(session, row.id, version.id, ServingResult) is not None:
            return "unchanged"
        # The TCO scenarios were recomputed for this version and day just before: their
        # stored results price the options instead of running the TCO model again.
        stored_tco = {s.name: json.loads(r.result_json)
                      for r, s in results.results_of(session, TcoResult, version.id)}
        payload = evaluate(scenario, session, on=on, known=version.cutoff_at,
                           dataset_version=version.id, scenarios_dir=scenarios_dir,
                           limits=limits,
                           measured=queries.inference_points(session, version.cutoff_at),
                           tco_results=stored_tco, stored_only=True)
        # What the answer rests on is the answer itself, the version aside.
        digest = inputs_digest(scenario.definition,
                               {**payload, "dataset_version": None}, code_version)
        earlier = results.latest_result_with_inputs(session, scenario.name, digest,
                                                    ServingResult)
        results.add_serving_result(session, scenario=row, dataset_version_id=version.id,
                                   result={} if earlier is not None else payload,
                                   inputs_sha256=digest, code_version=code_version,
                                   computed_at=now, reused_from=earlier)
        return "reused" if earlier is not None else "computed"
    return recompute_each(target, scenario_paths(scenarios_dir, "serving"), dataset_version,
                          load=lambda path: load_serving_scenario(path, limits),
                          compute=compute, name_of=lambda s: s.name,
                          lock_timeout_seconds=lock_timeout_seconds)
