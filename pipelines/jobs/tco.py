"""TCO jobs: resolve a TCO scenario's inputs (inline, ledger, defaults; JCTs from the C2C
model), run the cost model with its uncertainty, and say where every input came from."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from db import results
from db.engine import Engine, Session
from db.results import StoredResult
from db.schema import C2CResult, DatasetVersion, TcoResult
from models.c2c.job_time import days_to_train
from models.tco.decision import Band, Verdict, comparison_verdict, rented_job_cost
from models.tco.ownership import compare
from models.tco.plans import (
    OPTION_FIGURES,
    TRAINING_RUN_FIGURES,
    ComparisonPlan,
    TrainingRunPlan,
    capex_coverage,
    flatten,
    training_run_figures,
)
from models.tco.training_run import training_run_cost
from models.tco.uncertainty import monte_carlo, tornado
from models.units import UnitError
from pipelines.inputs.limits import DEFAULT_LIMITS, InputLimits
from pipelines.inputs.scenarios import (
    Scenario,
    ScenarioError,
    canonical_json,
    load_scenario,
    scenario_paths,
)
from pipelines.inputs.tco_scenarios import (
    C2CLink,
    InputSpec,
    TcoScenario,
    check_bounds,
    load_tco_scenario,
    unit_factor,
)
from pipelines.jobs import c2c
from pipelines.jobs.recompute import (
    MissingInput,
    Outcome,
    RecomputeReport,
    inputs_digest,
    recompute_each,
)
from pipelines.ledger.cluster_specs import resolve_cluster
from pipelines.ledger.figures import FigureUsed, figure_date, undated_note
from pipelines.ledger.market import index_row
from pipelines.ledger.resolved import resolved_value

TORNADO_BARS = 8


@dataclass(frozen=True)
class ResolvedInputs:
    used: dict[str, FigureUsed]
    plan: ComparisonPlan | TrainingRunPlan
    c2c: dict[str, dict[str, Any]]  # option -> the C2C estimate its JCT came from
    # option -> what the market charges to rent its GPU (term -> index figures)
    market: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)

    @property
    def point(self) -> dict[str, float]:
        return {name: u.value for name, u in self.used.items()}

    @property
    def ranges(self) -> dict[str, tuple[float, float]]:
        return {name: (u.low, u.high) for name, u in self.used.items()  # type: ignore[misc]
                if u.is_range}


def resolve_inputs(scenario: TcoScenario, session: Session | None, *, on: date,
                   known: datetime, scenarios_dir: Path | None = None,
                   limits: InputLimits = DEFAULT_LIMITS, dataset_version: int | None = None,
                   c2c_results: Mapping[str, StoredResult] | None = None,
                   stored_only: bool = False) -> ResolvedInputs:
    """Every input's value: as written, from the ledger (valid on `on` as known at `known`),
    or its default; a rent from the version's stored price index; JCTs of linked C2C
    scenarios from their stored results on the version (`c2c_results`). With `stored_only`
    (the recompute graph) a linked scenario without a stored result is an error; otherwise
    (a draft the CLI prices) its file is found in the scenarios folder and estimated here."""
    used = {name: _resolve(scenario, spec, session, on, known, dataset_version)
            for name, spec in scenario.inputs.items()}
    plan = scenario.plan
    if isinstance(plan, TrainingRunPlan) and scenario.price_date_from_ledger:
        as_of = used["training_run.price_per_chip"].as_of
        plan = dataclasses.replace(plan, price_date=date.fromisoformat(str(as_of)))
    estimates, market = {}, {}
    for link in scenario.c2c_links:
        linked = _linked(scenario, link, c2c_results or {}, stored_only,
                         lambda link=link: _estimate_here(scenario, link, folder_of(
                             scenario, scenarios_dir), session, on, known, limits))
        used[f"options.{link.option}.jct"] = _modelled_jct(scenario, link, used, linked)
        estimates[link.option] = {**linked.estimate, "gpu": linked.gpu}
        rent = _market_beside(linked.gpu, session, dataset_version)
        if rent:
            market[link.option] = rent
    _check_consistency(scenario, used)
    return ResolvedInputs(used, plan, estimates, market)


def folder_of(scenario: TcoScenario, scenarios_dir: Path | None) -> Path:
    return scenarios_dir or Path(scenario.path).parent


# The terms an owned option's $/GPU-hour is set beside.
MARKET_TERMS = ("on_demand", "reserved_1y", "reserved_3y", "contract")


@dataclass(frozen=True)
class LinkedC2C:
    """A linked C2C scenario's estimate and what pricing its job needs from its definition."""

    estimate: dict[str, Any]
    gpu: str | None          # the GPU item its cluster names
    tokens: float | None     # the token budget of its time to train
    seq_len: int


def _linked(scenario: TcoScenario, link: C2CLink, stored: Mapping[str, StoredResult],
            stored_only: bool, estimate_here: Callable[[], LinkedC2C]) -> LinkedC2C:
    """The stored estimate of the linked scenario, or (outside the graph) one made here."""
    found = stored.get(link.scenario)
    if found is not None:
        cluster, model = found.definition.get("cluster", {}), found.definition["model"]
        tokens = found.definition.get("tokens")
        return LinkedC2C(found.result, cluster.get("gpu"),
                         None if tokens is None else float(tokens), int(model["seq_len"]))
    if stored_only:
        raise MissingInput(f"{scenario.path}:{link.line} options.{link.option}.c2c_scenario: "
                           f"C2C scenario {link.scenario!r} has no result on this dataset "
                           "version (its own error says why)")
    return estimate_here()


def _estimate_here(scenario: TcoScenario, link: C2CLink, folder: Path,
                   session: Session | None, on: date, known: datetime,
                   limits: InputLimits) -> LinkedC2C:
    """A draft's linked scenario estimated from its file as the recompute graph would store
    it (at its best layout unless pinned), so a draft and the stored result agree."""
    performance = find_c2c(scenario, link, folder, limits)
    specs = resolve_cluster(performance.cluster, session, on=on, known=known,
                            offloads=performance.layout.offload_layers > 0)
    return LinkedC2C(c2c.stored_estimate(performance, specs, None), performance.cluster.gpu,
                     performance.tokens, performance.model.seq_len)


def _market_beside(gpu: str | None, session: Session | None,
                   dataset_version: int | None) -> dict[str, Any] | None:
    """What renting the option's GPU costs on the market (the version's stored price
    index), to set beside what owning it costs; None without a ledger or an offer."""
    if session is None or gpu is None or dataset_version is None:
        return None
    terms = {}
    for term in MARKET_TERMS:
        row = index_row(session, dataset_version, gpu, term)
        if row is not None:
            terms[term] = {"median": float(row["median"]), "p25": float(row["p25"]),
                           "p75": float(row["p75"]), "offers": int(row["n_offers"]),
                           "cheapest": float(row["cheapest_price"]),
                           "cheapest_provider": str(row["cheapest_provider"]),
                           # price dates (valid time), not the dataset version's date
                           "as_of": _price_day(row, "price_to"),
                           "price_from": _price_day(row, "price_from"),
                           "cheapest_as_of": _price_day(row, "cheapest_as_of")}
    return {"gpu": gpu, "usd_per_gpu_hour": terms} if terms else None


def _price_day(row: dict[str, Any], column: str) -> str | None:
    """A price date of a stored index row as ISO text (the version's date for rows stored
    before the index kept price dates)."""
    value = row.get(column)
    if value is None or pd.isna(value):
        value = row["version_date"]
    return pd.Timestamp(value).date().isoformat()


def _resolve(scenario: TcoScenario, spec: InputSpec, session: Session | None, on: date,
             known: datetime, dataset_version: int | None) -> FigureUsed:
    unit = spec.field.unit or "1"
    if spec.market is not None:
        return _market_rent(scenario, spec, session, on, dataset_version)
    if spec.ref is None:
        return FigureUsed(spec.name, float(spec.value), unit, spec.origin,  # type: ignore[arg-type]
                         spec.low, spec.high,
                         note=(spec.written if spec.origin == "default"
                               else f"scenario: {spec.written}"))
    ref = spec.ref
    day = ref.on or on
    found = (resolved_value(session, ref.item, ref.metric, on=day, known=known)
             if session is not None else None)
    if found is None:
        where = f"{scenario.path}:{spec.line}" if spec.line else scenario.path
        reason = ("no ledger is open" if session is None else
                  f"the ledger has no {ref.metric} for item {ref.item!r} valid on {day}")
        raise MissingInput(f"{where} {spec.name}: {reason}; give {spec.name} inline or "
                           "ingest a source pack with that figure")
    row = found.winner
    try:
        factor = _ledger_scale(row["unit"], ref, spec.field)
    except UnitError as exc:
        raise ScenarioError(scenario.path, spec.line, spec.name,
                            f"ledger {ref.item}.{ref.metric} is in {row['unit']}: {exc}") from exc
    value, low, high = (float(row[k]) * factor for k in ("value", "low", "high"))
    for number in (value, low, high):  # a huge `times` or price can overflow to inf
        problem = check_bounds(number, spec.field)
        if problem:
            raise ScenarioError(scenario.path, spec.line, spec.name,
                                f"ledger {ref.item}.{ref.metric} gives {number:g}: {problem}")
    scale = "" if ref.times == 1 and ref.per == 1 else (
        f" x {ref.times:g}{' ' + ref.times_unit if ref.times_unit else ''}"
        + (f" / {ref.per:g}" if ref.per != 1 else ""))
    note = f"{row['value_written']} {row['unit_written']}{scale}"
    if undated := undated_note(row):   # said where its date would be printed
        note += f"; {undated}"
    low, high, ranged = _with_alternatives(spec, found.alternatives, low, high)
    if ranged:
        note += f"; ranged over the ledger's other live values ({ranged})"
    if spec.origin == "default":
        note = f"default: {spec.written}; {note}"
    return FigureUsed(spec.name, value, unit, "ledger", low, high, ref.item, ref.metric,
                     row["source"], figure_date(row), int(row["observation_id"]), note,
                     as_of_precision=row.get("as_of_precision"))


def _ledger_scale(unit: str, ref: Any, field: Any) -> float:
    """What a ledger figure in `unit` is multiplied by to be the input: its unit into the
    field's, times the reference's `times` (in `times_unit`) over its `per`. UnitError when
    the dimensions do not match."""
    written = f"({unit})*({ref.times_unit})" if ref.times_unit else unit
    return unit_factor(written, field) * ref.times / ref.per


def _with_alternatives(spec: InputSpec, alternatives: list[dict[str, Any]], low: float,
                       high: float) -> tuple[float, float, str]:
    """A ledger input's range widened to every live value the resolution rule did not pick
    (another source's figure for the same item and metric): a conflict the ledger keeps is
    a range the Monte Carlo samples and the tornado shows, so a verdict an alternative would
    flip says so. Returns (low, high, which alternatives in words: "" when none moved it)."""
    ref = spec.ref
    assert ref is not None
    said = []
    for alt in alternatives:
        try:
            factor = _ledger_scale(alt["unit"], ref, spec.field)
        except UnitError:
            continue  # a figure in another dimension is not an alternative of this one
        values = [float(alt[k]) * factor for k in ("value", "low", "high")]
        if any(check_bounds(v, spec.field) for v in values):
            continue
        if min(values) < low or max(values) > high:
            said.append(f"{alt['source']} {alt['value_written']} {alt['unit_written']}, "
                        f"{figure_date(alt) or 'undated'}")
        low, high = min(low, *values), max(high, *values)
    return low, high, "; ".join(said)


def _market_rent(scenario: TcoScenario, spec: InputSpec, session: Session | None, on: date,
                 dataset_version: int | None) -> FigureUsed:
    """A rent from the version's stored GPU-hour price index: the statistic asked for, the
    offers' P25-P75 as its range."""
    market = spec.market
    assert market is not None
    row = (index_row(session, dataset_version, market.gpu, market.term)
           if session is not None and dataset_version is not None else None)
    if row is None:
        where = f"{scenario.path}:{spec.line}" if spec.line else scenario.path
        reason = ("no ledger is open" if session is None else
                  f"the ledger knows no {market.term} offer for {market.gpu!r} on {on}")
        raise MissingInput(f"{where} {spec.name}: {reason}; give {spec.name} inline "
                           "(\"2.10 USD/hour\") or ingest a price list")
    value, low, high = (float(row[k]) for k in (market.statistic, "p25", "p75"))
    low, high = min(low, value), max(high, value)
    cheapest_on = row["cheapest_as_of"]  # a pandas Timestamp
    offers, providers = int(row["n_offers"]), int(row["n_providers"])
    counted = (f"the price index's one {market.term} offer" if offers == 1 else
               f"{market.statistic} of {offers} {market.term} offers from {providers} "
               f"provider{'s' if providers != 1 else ''} in the price index")
    note = (f"{counted} (P25-P75 "
            f"{row['p25']:.2f}-{row['p75']:.2f} USD/GPU-hour); cheapest "
            f"{row['cheapest_provider']} {row['cheapest_price']:.2f}")
    return FigureUsed(spec.name, value, "USD/hour", "market", low, high, market.gpu,
                      "gpu_hour_price", str(row["cheapest_source"]),
                      cheapest_on.date().isoformat(),
                      int(row["cheapest_observation_id"]), note)


def _modelled_jct(scenario: TcoScenario, link: C2CLink, used: dict[str, FigureUsed],
                  linked: LinkedC2C) -> FigureUsed:
    """The option's time to train from the linked estimate's iteration time, for the
    option's token budget (or the C2C scenario's), with the model's error band."""
    name = f"options.{link.option}.c2c_scenario"
    estimate = linked.estimate
    tokens = link.tokens if link.tokens is not None else linked.tokens
    if tokens is None:
        raise ScenarioError(scenario.path, link.line, f"options.{link.option}.tokens",
                            f"C2C scenario {link.scenario!r} sets no token budget: give tokens")
    gpus = used[f"options.{link.option}.gpus"].value
    if estimate["gpus"] != gpus:
        raise ScenarioError(scenario.path, link.line, name,
                            f"contradictory: C2C scenario {link.scenario!r} runs on "
                            f"{estimate['gpus']} GPUs but the option has {gpus:g}; the job "
                            "cost assumes the whole cluster runs the job")
    t_iter = estimate["t_iter_s"]
    days = days_to_train(t_iter, tokens, estimate["parallel"]["global_batch"], linked.seq_len)
    # The model's error band travels with the time to train: the Monte Carlo samples it like
    # any other range (each option's on its own, which does not understate the speed-up's).
    low, high = (days * bound / t_iter for bound in estimate["band"]["t_iter_s"])
    note = (f"C2C scenario {link.scenario}: {t_iter:.3g} s/iteration, "
            f"{tokens:.3g} tokens, C2C {estimate['c2c']:.2f}, "
            f"MFU {estimate['mfu']:.1%}; failure-free (divided by availability x goodput); "
            f"model error band {low:.3g}-{high:.3g} days ({estimate['band']['basis']})")
    return FigureUsed(f"options.{link.option}.jct", days, "day", "c2c", low=low, high=high,
                      note=note)


def find_c2c(scenario: TcoScenario, link: C2CLink, folder: Path,
             limits: InputLimits) -> Scenario:
    """The C2C scenario an option links to, in `folder` (by name; its file stem first)."""
    paths = scenario_paths(folder, "c2c")
    by_stem = [p for p in paths if p.stem == link.scenario]
    for path in by_stem + [p for p in paths if p not in by_stem]:
        try:
            candidate = load_scenario(path, limits)
        except ScenarioError:
            continue  # a broken neighbour is reported by its own recompute
        if candidate.name == link.scenario:
            return candidate
    raise ScenarioError(scenario.path, link.line, f"options.{link.option}.c2c_scenario",
                        f"no C2C scenario named {link.scenario!r} in {folder}")


def _check_consistency(scenario: TcoScenario, used: dict[str, FigureUsed]) -> None:
    """Inputs that cannot all hold at once, named."""
    for name, u in used.items():
        if name.endswith(".residual") and u.value > 0:
            cost = used[name.removesuffix("residual") + "cost"]
            if (u.high or u.value) > (cost.low if cost.low is not None else cost.value):
                spec = scenario.inputs[name]
                raise ScenarioError(scenario.path, spec.line, name,
                                    f"contradictory: a residual value of {u.value:g} USD "
                                    f"exceeds the item's cost of {cost.value:g} USD")


def evaluate(scenario: TcoScenario, resolved: ResolvedInputs,
             dataset_version: int | None) -> dict[str, Any]:
    """The JSON object `specledger tco --json` prints."""
    try:
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):  # checked below
            result = _evaluate(scenario, resolved, dataset_version)
    except ZeroDivisionError as exc:  # s* = (R_U + K) / (R_O + K) with R_O + K = 0
        raise ScenarioError(scenario.path, None, "options", "the break-even speed-up is "
                            "undefined: the scale-out option costs nothing a year (and "
                            "time_cost_per_year is 0)") from exc
    bad = list(c2c.non_finite(result))
    if bad:  # finite inputs whose products overflow: an error, never inf or NaN in a result
        raise ScenarioError(scenario.path, None, "(scenario)",
                            f"the cost model gives no finite {', '.join(bad[:3])}: an input "
                            "is too large or too small for it")
    return result


def shared_figures(used: Mapping[str, FigureUsed]) -> dict[str, str]:
    """Inputs read from one ledger observation (both options' goodput, one price in two
    places) are one uncertain figure, not two: each later one moves with the first, by name."""
    first: dict[int, str] = {}
    together = {}
    for name in sorted(used):
        figure = used[name]
        if figure.origin != "ledger" or figure.observation_id is None:
            continue
        leader = first.setdefault(figure.observation_id, name)
        if leader != name:
            together[name] = leader
    return together


def shared_job_times(scenario: TcoScenario) -> dict[str, str]:
    """Options whose job times come from one C2C scenario and one token budget carry one
    model error, not two: each later option's `jct` moves with the first's (own against rent
    of the same machine is then a question of price alone)."""
    first: dict[tuple[str, float | None], str] = {}
    together = {}
    for link in scenario.c2c_links:
        key = (link.scenario, link.tokens)
        if key in first:
            together[f"options.{link.option}.jct"] = f"options.{first[key]}.jct"
        else:
            first[key] = link.option
    return together


def _evaluate(scenario: TcoScenario, resolved: ResolvedInputs,
              dataset_version: int | None) -> dict[str, Any]:
    plan, point, ranges = resolved.plan, resolved.point, resolved.ranges
    together = {**shared_figures(resolved.used), **shared_job_times(scenario)}
    spread = (monte_carlo(plan.evaluate, point, ranges, samples=scenario.samples,
                          seed=scenario.seed, together=together) if ranges else {})
    rank_by = "break_even_speedup" if isinstance(plan, ComparisonPlan) else "total_usd"
    bars = (tornado(plan.evaluate, point, ranges, rank_by, together)[:TORNADO_BARS]
            if ranges else [])
    result: dict[str, Any] = {"scenario": scenario.name, "mode": scenario.mode,
                              "dataset_version": dataset_version}
    if isinstance(plan, ComparisonPlan):
        result.update(_comparison(plan, point, spread))
        shown = ["break_even_speedup"] + [f"{o.name}.job_cost_usd" for o in plan.options]
    else:
        result.update(_training_run(plan, point, spread))
        shown = list(TRAINING_RUN_FIGURES)
    result["uncertainty"] = ({"samples": scenario.samples, "seed": scenario.seed,
                              "distribution": "uniform between each range's low and high",
                              "ranged_inputs": sorted(ranges)} if ranges else None)
    result["tornado"] = [{"input": bar.name, "low": bar.low, "high": bar.high,
                          **{k: [bar.at_low[k], bar.at_high[k]] for k in shown
                             if k in bar.at_low}} for bar in bars]
    result["c2c"] = {option: {k: estimate.get(k) for k in (
        "gpus", "gpu", "t_iter_s", "c2c", "class", "recommended_fabric", "mfu",
        "time_to_train_days", "specs")} for option, estimate in resolved.c2c.items()}
    result["market"] = _with_rented_jobs(resolved.market, result.get("options", []))
    result["inputs"] = [u.to_json() for u in resolved.used.values()]
    return result


def _with_rented_jobs(market: dict[str, dict[str, Any]],
                      options: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each option's market line with its job rented at the on-demand median: the one
    rent-vs-buy figure the CLI, the briefing and the warehouse all print."""
    jobs = {o["name"]: (o.get("gpus"), o.get("jct_days")) for o in options}
    out = {}
    for name, line in market.items():
        on_demand = line["usd_per_gpu_hour"].get("on_demand")
        gpus, days = jobs.get(name, (None, None))
        cost = (rented_job_cost(on_demand["median"], gpus, days)
                if on_demand is not None and gpus and days is not None else None)
        out[name] = {**line, "on_demand_job_cost_usd": cost}
    return out


def _comparison(plan: ComparisonPlan, point: dict[str, float],
                spread: dict[str, Any]) -> dict[str, Any]:
    built = plan.build(point)
    costs = compare(built)
    outputs = flatten(costs)
    options = []
    plans = {o.name: o for o in plan.options}
    for option, cost in zip(built.options, costs.options, strict=True):
        figures = {f: outputs.get(f"{option.name}.{f}") for f in OPTION_FIGURES}
        options.append({
            "name": option.name, "gpus": int(option.gpus), **figures,
            "jct_days": option.jct_days,
            "opex_usd": {"energy": cost.energy, "colocation": cost.colocation,
                         "maintenance": cost.maintenance,
                         "staff_and_licences": cost.staff_and_licences},
            "capex": capex_coverage(plans[option.name], point, float(cost.colocation)),
            "ranges": {f: spread[f"{option.name}.{f}"].to_json() for f in OPTION_FIGURES
                       if f"{option.name}.{f}" in spread}})
    job = {o["name"]: o["job_cost_usd"] for o in options}
    pair = (plan.scale_up, plan.scale_out)
    cheaper = (min(pair, key=lambda name: job[name])
               if all(job[name] is not None for name in pair) else None)
    ranges = {k: spread[k].to_json() for k in ("break_even_speedup", "speedup") if k in spread}
    return {"scale_up": plan.scale_up, "scale_out": plan.scale_out, "options": options,
            "break_even_speedup": outputs["break_even_speedup"],
            "speedup": outputs.get("speedup"), "cheaper_option": cheaper,
            "verdict": verdict_of(plan, outputs, ranges, cheaper).to_json(),
            "time_cost_per_year_usd": point["time_cost_per_year"], "ranges": ranges}


def verdict_of(plan: ComparisonPlan, outputs: dict[str, Any],
               ranges: dict[str, dict[str, float]], cheaper: str | None) -> Verdict:
    """The comparison's verdict by models.tco.decision's rule; no call without both job
    times (no cheaper option). Without ranges, s and s* are points: a band of zero width."""
    s, s_star = outputs.get("speedup"), outputs.get("break_even_speedup")
    if cheaper is None or s is None or s_star is None:
        return Verdict(None)
    return comparison_verdict(plan.scale_up, plan.scale_out, Band.of(s, ranges.get("speedup")),
                              Band.of(s_star, ranges.get("break_even_speedup")))


def _training_run(plan: TrainingRunPlan, point: dict[str, float],
                  spread: dict[str, Any]) -> dict[str, Any]:
    cost = training_run_cost(plan.build(point))
    return {**training_run_figures(cost), "chip_hours": cost.chip_hours,
            "start_value_per_chip_usd": cost.start_value_per_chip,
            "acquired": cost.acquired.isoformat(), "years_depreciated": cost.years_depreciated,
            "released": plan.released.isoformat(), "price_date": plan.price_date.isoformat(),
            "training_start": plan.training_start.isoformat(),
            "ranges": {k: spread[k].to_json() for k in TRAINING_RUN_FIGURES if k in spread}}


def inputs_sha256(scenario: TcoScenario, resolved: ResolvedInputs, code_version: str) -> str:
    """The scenario, every input's value and origin, the linked C2C estimates, the market
    set beside the options (a price move changes the result's rent-vs-buy line), the code."""
    figures = [(u.name, u.value, u.low, u.high, u.origin, u.observation_id)
               for u in resolved.used.values()]
    return inputs_digest(scenario.definition, {"inputs": figures, "c2c": resolved.c2c,
                                               "market": resolved.market,
                                               "plan": repr(resolved.plan)}, code_version)


def stored_c2c(session: Session, dataset_version: int) -> dict[str, StoredResult]:
    """The version's stored C2C estimates by scenario name: what TCO prices jobs with."""
    return results.stored_results(session, C2CResult, dataset_version)


def recompute(target: Engine | Session, scenarios_dir: Path, dataset_version: int, *, on: date,
              now: datetime, code_version: str, lock_timeout_seconds: float = 60.0,
              limits: InputLimits = DEFAULT_LIMITS) -> RecomputeReport:
    """Store a tco_result for every TCO scenario in `scenarios_dir` for `dataset_version`
    (JCTs of linked C2C scenarios from the same folder; each file read within `limits`)."""
    def compute(session: Session, scenario: TcoScenario, version: DatasetVersion) -> Outcome:
        row = results.record_scenario(session, name=scenario.name, kind="tco",
                                      definition=canonical_json(scenario.definition),
                                      content_sha256=scenario.content_sha256,
                                      path=scenario.path, recorded_at=now)
        if results.result_for(session, row.id, version.id, TcoResult) is not None:
            return "unchanged"
        resolved = resolve_inputs(scenario, session, on=on, known=version.cutoff_at,
                                  scenarios_dir=scenarios_dir, limits=limits,
                                  dataset_version=version.id,
                                  c2c_results=stored_c2c(session, version.id),
                                  stored_only=True)
        digest = inputs_sha256(scenario, resolved, code_version)
        earlier = results.latest_result_with_inputs(session, scenario.name, digest, TcoResult)
        payload = {} if earlier is not None else evaluate(scenario, resolved, version.id)
        results.add_tco_result(session, scenario=row, dataset_version_id=version.id,
                               result=payload, inputs_sha256=digest,
                               code_version=code_version, computed_at=now, reused_from=earlier)
        return "reused" if earlier is not None else "computed"
    return recompute_each(target, scenario_paths(scenarios_dir, "tco"), dataset_version,
                          load=lambda path: load_tco_scenario(path, limits), compute=compute,
                          name_of=lambda s: s.name,
                          lock_timeout_seconds=lock_timeout_seconds)
