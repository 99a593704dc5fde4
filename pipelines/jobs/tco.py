"""TCO jobs: resolve a TCO scenario's inputs (inline, ledger, defaults; JCTs from the C2C
model), run the cost model with its uncertainty, and say where every input came from."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

import numpy as np

from db import results
from db.engine import Engine, Session
from db.schema import DatasetVersion, TcoResult
from models.tco.ownership import compare
from models.tco.plans import (
    OPTION_FIGURES,
    TRAINING_RUN_FIGURES,
    ComparisonPlan,
    TrainingRunPlan,
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
from pipelines.ledger.figures import FigureUsed
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
                   limits: InputLimits = DEFAULT_LIMITS) -> ResolvedInputs:
    """Every input's value: as written, from the ledger (valid on `on` as known at `known`),
    or its default; JCTs of linked C2C scenarios from the performance model (each C2C file
    read within `limits`)."""
    used = {name: _resolve(scenario, spec, session, on, known)
            for name, spec in scenario.inputs.items()}
    plan = scenario.plan
    if isinstance(plan, TrainingRunPlan) and scenario.price_date_from_ledger:
        as_of = used["training_run.price_per_chip"].as_of
        plan = dataclasses.replace(plan, price_date=date.fromisoformat(str(as_of)))
    estimates = {}
    for link in scenario.c2c_links:
        folder = folder_of(scenario, scenarios_dir)
        used[f"options.{link.option}.jct"], estimates[link.option] = _modelled_jct(
            scenario, link, used, folder, session, on, known, limits)
    _check_consistency(scenario, used)
    market = {link.option: rent for link in scenario.c2c_links
              if (rent := _market_beside(scenario, link, folder_of(scenario, scenarios_dir),
                                         session, on, known, limits))}
    return ResolvedInputs(used, plan, estimates, market)


def folder_of(scenario: TcoScenario, scenarios_dir: Path | None) -> Path:
    return scenarios_dir or Path(scenario.path).parent


# The terms an owned option's $/GPU-hour is set beside.
MARKET_TERMS = ("on_demand", "reserved_1y", "reserved_3y")


def _market_beside(scenario: TcoScenario, link: C2CLink, folder: Path,
                   session: Session | None, on: date, known: datetime,
                   limits: InputLimits) -> dict[str, Any] | None:
    """What renting the option's GPU costs on the market (the price index valid on `on` as
    known at `known`), to set beside what owning it costs; None without a ledger or an offer."""
    gpu = _find_c2c(scenario, link, folder, limits).cluster.gpu
    if session is None or gpu is None:
        return None
    terms = {}
    for term in MARKET_TERMS:
        row = index_row(session, gpu, term, on=on, known=known)
        if row is not None:
            terms[term] = {"median": float(row["median"]), "p25": float(row["p25"]),
                           "p75": float(row["p75"]), "offers": int(row["n_offers"]),
                           "cheapest": float(row["cheapest_price"]),
                           "cheapest_provider": str(row["cheapest_provider"])}
    return {"gpu": gpu, "usd_per_gpu_hour": terms} if terms else None


def _resolve(scenario: TcoScenario, spec: InputSpec, session: Session | None, on: date,
             known: datetime) -> FigureUsed:
    unit = spec.field.unit or "1"
    if spec.market is not None:
        return _market_rent(scenario, spec, session, on, known)
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
    written_unit = f"({row['unit']})*({ref.times_unit})" if ref.times_unit else row["unit"]
    try:
        factor = unit_factor(written_unit, spec.field) * ref.times / ref.per
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
    if spec.origin == "default":
        note = f"default: {spec.written}; {note}"
    return FigureUsed(spec.name, value, unit, "ledger", low, high, ref.item, ref.metric,
                     row["source"], row["as_of"].isoformat(), int(row["observation_id"]), note)


def _market_rent(scenario: TcoScenario, spec: InputSpec, session: Session | None, on: date,
                 known: datetime) -> FigureUsed:
    """A rent from the market's GPU-hour price index valid on `on` as known at `known`: the
    statistic asked for, the offers' P25-P75 as its range."""
    market = spec.market
    assert market is not None
    row = (index_row(session, market.gpu, market.term, on=on, known=known)
           if session is not None else None)
    if row is None:
        where = f"{scenario.path}:{spec.line}" if spec.line else scenario.path
        reason = ("no ledger is open" if session is None else
                  f"the ledger knows no {market.term} offer for {market.gpu!r} on {on}")
        raise MissingInput(f"{where} {spec.name}: {reason}; give {spec.name} inline "
                           "(\"2.10 USD/hour\") or ingest a price list")
    value, low, high = (float(row[k]) for k in (market.statistic, "p25", "p75"))
    low, high = min(low, value), max(high, value)
    cheapest_on = row["cheapest_as_of"]  # a pandas Timestamp
    note = (f"{market.statistic} of {int(row['n_offers'])} {market.term} offer(s) from "
            f"{int(row['n_providers'])} provider(s) in the price index (P25-P75 "
            f"{row['p25']:.2f}-{row['p75']:.2f} USD/GPU-hour); cheapest "
            f"{row['cheapest_provider']} {row['cheapest_price']:.2f}")
    return FigureUsed(spec.name, value, "USD/hour", "market", low, high, market.gpu,
                      "gpu_hour_price", str(row["cheapest_source"]),
                      cheapest_on.date().isoformat(),
                      int(row["cheapest_observation_id"]), note)


def _modelled_jct(scenario: TcoScenario, link: C2CLink, used: dict[str, FigureUsed],
                  folder: Path, session: Session | None, on: date, known: datetime,
                  limits: InputLimits) -> tuple[FigureUsed, dict[str, Any]]:
    name = f"options.{link.option}.c2c_scenario"
    performance = _find_c2c(scenario, link, folder, limits)
    if link.tokens is not None:
        performance = dataclasses.replace(performance, tokens=link.tokens)
    if performance.tokens is None:
        raise ScenarioError(scenario.path, link.line, f"options.{link.option}.tokens",
                            f"C2C scenario {link.scenario!r} sets no token budget: give tokens")
    specs = resolve_cluster(performance.cluster, session, on=on, known=known,
                            offloads=performance.layout.offload_layers > 0)
    estimate = c2c.estimate(performance, specs, None)
    gpus = used[f"options.{link.option}.gpus"].value
    if estimate["gpus"] != gpus:
        raise ScenarioError(scenario.path, link.line, name,
                            f"contradictory: C2C scenario {link.scenario!r} runs on "
                            f"{estimate['gpus']} GPUs but the option has {gpus:g}; the job "
                            "cost assumes the whole cluster runs the job")
    days = estimate["time_to_train_days"]
    # The model's error band travels with the time to train: the Monte Carlo samples it like
    # any other range (each option's on its own, which does not understate the speed-up's).
    low, high = estimate["band"]["time_to_train_days"]
    note = (f"C2C scenario {link.scenario}: {estimate['t_iter_s']:.3g} s/iteration, "
            f"{performance.tokens:.3g} tokens, C2C {estimate['c2c']:.2f}, "
            f"MFU {estimate['mfu']:.1%}; failure-free (divided by availability x goodput); "
            f"model error band {low:.3g}-{high:.3g} days ({estimate['band']['basis']})")
    return FigureUsed(f"options.{link.option}.jct", days, "day", "c2c", low=low, high=high,
                      note=note), estimate


def _find_c2c(scenario: TcoScenario, link: C2CLink, folder: Path,
              limits: InputLimits) -> Scenario:
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


def _evaluate(scenario: TcoScenario, resolved: ResolvedInputs,
              dataset_version: int | None) -> dict[str, Any]:
    plan, point, ranges = resolved.plan, resolved.point, resolved.ranges
    spread = (monte_carlo(plan.evaluate, point, ranges, samples=scenario.samples,
                          seed=scenario.seed) if ranges else {})
    rank_by = "break_even_speedup" if isinstance(plan, ComparisonPlan) else "total_usd"
    bars = tornado(plan.evaluate, point, ranges, rank_by)[:TORNADO_BARS] if ranges else []
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
    result["c2c"] = {option: {k: estimate[k] for k in (
        "gpus", "t_iter_s", "c2c", "class", "recommended_fabric", "mfu", "time_to_train_days",
        "specs")} for option, estimate in resolved.c2c.items()}
    result["market"] = resolved.market
    result["inputs"] = [u.to_json() for u in resolved.used.values()]
    return result


def _comparison(plan: ComparisonPlan, point: dict[str, float],
                spread: dict[str, Any]) -> dict[str, Any]:
    built = plan.build(point)
    costs = compare(built)
    outputs = flatten(costs)
    options = []
    for option, cost in zip(built.options, costs.options, strict=True):
        figures = {f: outputs.get(f"{option.name}.{f}") for f in OPTION_FIGURES}
        options.append({
            "name": option.name, "gpus": int(option.gpus), **figures,
            "jct_days": option.jct_days,
            "opex_usd": {"energy": cost.energy, "colocation": cost.colocation,
                         "maintenance": cost.maintenance,
                         "staff_and_licences": cost.staff_and_licences},
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
            "verdict": verdict(ranges, cheaper),
            "time_cost_per_year_usd": point["time_cost_per_year"], "ranges": ranges}


# What settles a call the model's error leaves open.
SETTLE = ("a measured nccl-tests all-reduce on the scale-out fabric, or a benchmark of the "
          "workload on each option")


def verdict(ranges: dict[str, dict[str, float]], cheaper: str | None) -> dict[str, Any]:
    """"too close to call" when the P10-P90 of the speed-up s and of the break-even s*
    overlap (the model's band and the cost ranges cannot tell which side s falls on), else
    the cheaper option; with what would settle it."""
    s, s_star = ranges.get("speedup"), ranges.get("break_even_speedup")
    if cheaper is None or s is None or s_star is None:
        return {"call": None, "settle_with": None}
    overlap = s["p10"] <= s_star["p90"] and s_star["p10"] <= s["p90"]
    if overlap:
        return {"call": "too close to call", "settle_with": SETTLE}
    return {"call": cheaper, "settle_with": None}


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
    """The scenario, every input's value and origin, the linked C2C estimates, the code."""
    figures = [(u.name, u.value, u.low, u.high, u.origin, u.observation_id)
               for u in resolved.used.values()]
    return inputs_digest(scenario.definition, {"inputs": figures, "c2c": resolved.c2c,
                                               "plan": repr(resolved.plan)}, code_version)


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
                                  scenarios_dir=scenarios_dir, limits=limits)
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
