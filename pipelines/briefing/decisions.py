"""Page 1 of the briefing: each workload's decision, the market in one line per GPU, and the
few changes since the last briefing that move a decision or a price."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

import pandas as pd

from db.schema import Scenario, TcoResult
from models.tco.decision import Band, flipping_inputs, job_cost_margin, margin_swings
from models.trends.types import ObservationChange
from reports.context import (
    DecisionLine,
    Headline,
    MarketLine,
    MarketSeries,
    OptionLine,
    ResultMove,
    ScenarioLine,
)
from reports.decisions import input_label
from reports.formatting import format_percent, format_usd

ON_DEMAND = "on_demand"
HOURS_PER_DAY = 24
# Page 1 prints at most this many changes and names at most this many flipping inputs.
MAX_HEADLINES = 5
MAX_FLIPS = 2


def decision_lines(tco_results: Iterable[tuple[TcoResult, Scenario]],
                   scenarios: Sequence[ScenarioLine], index: pd.DataFrame,
                   version: int) -> list[DecisionLine]:
    """One decision per TCO comparison of the version, its options priced against the
    market's on-demand index of the same version."""
    workloads = {s.name: s.workload for s in scenarios}
    on_demand = _on_demand(index, version)
    return [decision_line(result, scenario, workloads, on_demand)
            for result, scenario in tco_results if result.mode == "comparison"]


def decision_line(result: TcoResult, scenario: Scenario, workloads: dict[str, str],
                  on_demand: dict[str, float]) -> DecisionLine:
    figures = json.loads(result.result_json)
    definition = json.loads(scenario.definition)
    c2c = figures.get("c2c") or {}
    options = tuple(_option(o, c2c.get(o["name"]) or {}, on_demand)
                    for o in figures.get("options", []))
    up, out = result.scale_up_option or "", result.scale_out_option or ""
    workload = _workload(definition, workloads)
    line = DecisionLine(name=scenario.name, workload=workload or scenario.name,
                        illustrative=workload is None,
                        scale_up_option=up, scale_out_option=out, options=options,
                        cheaper=result.cheaper_option,
                        settle_with=(figures.get("verdict") or {}).get("settle_with"),
                        break_even=result.break_even_speedup, speedup=result.speedup)
    ranges = figures.get("ranges") or {}
    if result.speedup is None or result.break_even_speedup is None:
        return line  # a job time is unknown: $/GPU-hour compares, cost per job cannot
    speedup = Band.of(result.speedup, ranges.get("speedup"))
    margin = job_cost_margin(up, out, speedup,
                             Band.of(result.break_even_speedup, ranges.get("break_even_speedup")))
    tornado = figures.get("tornado") or []
    flips = flipping_inputs(tornado, margin.cheaper, margin.dearer)
    return replace(
        line, cheaper=margin.cheaper, dearer=margin.dearer, saving=margin.saving,
        saving_p10=margin.p10, saving_p90=margin.p90, too_close=margin.too_close,
        speedup_p10=speedup.p10, speedup_p90=speedup.p90,
        flips=tuple(f"{input_label(f.input)} at the {f.end} end of its range "
                    f"({_plain(f.value)})" for f in flips[:MAX_FLIPS]),
        swings=tuple(margin_swings(tornado, margin.cheaper, margin.dearer)))


def _option(option: dict[str, Any], c2c: dict[str, Any],
            on_demand: dict[str, float]) -> OptionLine:
    gpu = next((s.get("item") for s in c2c.get("specs", [])
                if isinstance(s, dict) and s.get("name") == "peak_flops"), None)
    days, gpus = option.get("jct_days"), option.get("gpus")
    market = on_demand.get(gpu) if gpu else None
    market_cost = (market * gpus * days * HOURS_PER_DAY
                   if market is not None and days is not None and gpus else None)
    return OptionLine(name=option["name"], gpus=gpus, gpu=gpu, time_to_train_days=days,
                      job_cost_usd=option.get("job_cost_usd"),
                      usd_per_gpu_hour=option.get("usd_per_gpu_hour"),
                      market_usd_per_gpu_hour=market, market_job_cost_usd=market_cost)


def _workload(definition: dict[str, Any], workloads: dict[str, str]) -> str | None:
    """The model and job size the options run, from the C2C scenario an option links to
    (None: no option links one, the comparison's job times are given, not modelled).
    Comparisons of one model at one size share it, so page 1 sets their options side by
    side."""
    for option in definition.get("options", []):
        linked = option.get("c2c_scenario")
        if linked in workloads:
            gpus = option.get("gpus")
            shape = workloads[linked].split(";")[0]   # the model, not the layout
            return shape + (f", {gpus:,} GPUs" if gpus else "")
    return None


def _plain(value: float) -> str:
    return f"{value:,.3g}" if abs(value) < 1e4 else f"{value:,.0f}"


def _on_demand(index: pd.DataFrame, version: int) -> dict[str, float]:
    """The on-demand median per GPU at `version`."""
    if index.empty:
        return {}
    rows = index[(index["dataset_version"] == version) & (index["term"] == ON_DEMAND)]
    return {str(r.gpu): float(r.median) for r in rows.itertuples()}


def market_lines(index: pd.DataFrame, version: int,
                 compared: int | None) -> list[MarketLine]:
    """One line per GPU with an offer at `version`: the on-demand median, its change since
    `compared`, and the cheapest offer of any term."""
    if index.empty:
        return []
    now = index[index["dataset_version"] == version]
    before = _on_demand(index, compared) if compared is not None else {}
    lines = []
    for gpu, rows in now.groupby("gpu", sort=True):
        cheapest = rows.sort_values(["cheapest_price", "term"]).iloc[0]
        on_demand = rows[rows["term"] == ON_DEMAND]
        median = float(on_demand["median"].iloc[0]) if not on_demand.empty else None
        then = before.get(str(gpu))
        lines.append(MarketLine(
            gpu=str(gpu), median_usd=median,
            offers=int(on_demand["n_offers"].iloc[0]) if median is not None else 0,
            providers=int(on_demand["n_providers"].iloc[0]) if median is not None else 0,
            change=(median / then - 1) if median is not None and then else None,
            cheapest_usd=float(cheapest["cheapest_price"]),
            cheapest_provider=str(cheapest["cheapest_provider"]),
            cheapest_term=str(cheapest["term"]), cheapest_source=str(cheapest["cheapest_source"]),
            as_of=pd.Timestamp(cheapest["version_date"]).date()))
    return lines


def headlines(moves: Sequence[ResultMove], market: Sequence[MarketLine],
              observations: Sequence[ObservationChange], *, price_tolerance: float,
              limit: int = MAX_HEADLINES) -> list[Headline]:
    """The changes since the compared version that move a decision or a price, most
    decisive first: moved results (class and fabric before break-even), then market
    indices that moved beyond `price_tolerance`, then the changed values the results read
    (observations come ordered that way from the ledger), at most `limit`."""
    order = {"c2c_class": 0, "recommended_fabric": 0, "cheaper_option": 0}
    found = [Headline("result", m.scenario,
                      f"{m.field.replace('_', ' ')} {m.before} → {m.after}")
             for m in sorted(moves, key=lambda m: order.get(m.field, 1))]
    found += [Headline("price", line.gpu,
                       f"on-demand index {format_percent(line.change, signed=True)} to "
                       f"{format_usd(line.median_usd)}/GPU-hour")
              for line in sorted(market, key=lambda x: -abs(x.change or 0))
              if line.change is not None and line.median_usd is not None
              and abs(line.change) > price_tolerance]
    found += [Headline("value", f"{c.item} / {c.metric}", _observation_text(c))
              for c in observations if c.kind == "changed"]
    return found[:limit]


def _observation_text(change: ObservationChange) -> str:
    before, after = change.before, change.after
    if before is None or after is None or not math.isfinite(before) or not math.isfinite(after):
        return f"changed ({change.source})"
    unit = "" if change.unit in ("", "1") else f" {change.unit}"  # a plain number has no unit
    return f"{_plain(before)} → {_plain(after)}{unit} ({change.source})"


def market_history(index: pd.DataFrame) -> list[MarketSeries]:
    """The price index per GPU and term over every version of `index`."""
    if index.empty:
        return []
    return [MarketSeries(str(gpu), str(term), tuple(
                (pd.Timestamp(r.version_date).date(), float(r.median))
                for r in rows.sort_values("dataset_version").itertuples()))
            for (gpu, term), rows in index.groupby(["gpu", "term"], sort=True)]
