"""Page 1 of the briefing: each workload's decision, the market in one line per GPU, and the
few changes since the last briefing that move a decision or a price."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import date
from typing import Any

import pandas as pd

from models.dates import date_span
from models.market.frames import term_label
from models.records import Rent, TcoOption, TcoRecord
from models.tco.decision import Flip, flipping_inputs, margin_swings
from models.tco.decision import point_at_range_end as point_at_end
from models.tco.inputs import option_inputs
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
# Page 1 prints at most this many changes and names at most this many flipping inputs.
MAX_HEADLINES = 5
MAX_FLIPS = 2


def decision_lines(records: Iterable[TcoRecord], scenarios: Sequence[ScenarioLine], *,
                   as_of: date | None = None, max_age_days: int | None = None
                   ) -> list[DecisionLine]:
    """One decision per TCO comparison of the version, as the TCO stage stored it: its
    verdict and margin, and each option's rent-vs-buy line (a rent price older than
    `max_age_days` on `as_of` says so: rent_basis)."""
    by_name = {s.name: s for s in scenarios}
    return [decision_line(record, by_name, as_of=as_of, max_age_days=max_age_days)
            for record in records if record.mode == "comparison"]


def decision_line(record: TcoRecord, scenarios: dict[str, ScenarioLine], *,
                  as_of: date | None = None, max_age_days: int | None = None) -> DecisionLine:
    up, out = record.scale_up or "", record.scale_out or ""
    workload = _workload(record, scenarios)
    speedup, break_even, verdict = record.speedup, record.break_even, record.verdict
    line = DecisionLine(name=record.scenario, workload=workload or record.scenario,
                        illustrative=workload is None,
                        scale_up_option=up, scale_out_option=out,
                        options=tuple(_option(o, scenarios.get(record.c2c_links.get(o.name, "")),
                                              as_of, max_age_days, record.inputs)
                                      for o in record.options),
                        cheaper=record.cheaper_option, settle_with=verdict.settle_with,
                        break_even=break_even.value if break_even else None,
                        speedup=speedup.value if speedup else None)
    margin = verdict.margin
    if margin is None or speedup is None:
        return line  # a job time or a band is unknown: $/GPU-hour compares, cost per job not
    flips = flipping_inputs(record.tornado, margin.cheaper, margin.dearer)
    return replace(
        line, cheaper=margin.cheaper, dearer=margin.dearer, saving=margin.saving,
        saving_p10=margin.p10, saving_p90=margin.p90, too_close=margin.too_close,
        speedup_p10=speedup.p10, speedup_p90=speedup.p90,
        flips=tuple(flip_text(f, record.options) for f in flips[:MAX_FLIPS]),
        point_at_end=point_at_range_end(record, margin.cheaper, margin.dearer),
        swings=tuple(margin_swings(record.tornado, margin.cheaper, margin.dearer)))


def point_at_range_end(record: TcoRecord, cheaper: str, dearer: str) -> str | None:
    """Why a point estimate can sit outside its own P10-P90 (models.tco.decision
    .point_at_range_end), as page 1 says it: "own-hgx-b200 capex nodes cost at its low end
    ($146 M-$198 M)"; None when no input's point is an end of its range."""
    costs = {o.name: o.job_cost_usd for o in record.options}
    point = (costs.get(cheaper), costs.get(dearer))
    if point[0] is None or point[1] is None:
        return None
    found = point_at_end(record.tornado, cheaper, dearer, (point[0], point[1]))
    if found is None:
        return None
    money = format_usd if found.input.endswith((".cost", "price", "usd")) else _plain
    return (f"{input_label(found.input)} at its {found.end} end "
            f"({money(found.low)}–{money(found.high)})")


def flip_text(flip: Flip, options: Sequence[TcoOption]) -> str:
    """A flipping input as page 1 says it. A job time is the C2C model's failure-free one; the
    table beside it prints time to train (stretched by availability x goodput), so the flip
    is said in the table's terms: "hgx-ndr time to train at the low end of its range (8.2
    days)"."""
    name = flip.input.removeprefix("options.")
    by_name = {o.name: o for o in options}
    option = by_name.get(name.removesuffix(".jct")) if name.endswith(".jct") else None
    where = f"at the {flip.end} end of its range"
    if option is None or not option.availability or not option.goodput:
        return f"{input_label(flip.input)} {where} ({_plain(flip.value)})"
    days = flip.value / (option.availability * option.goodput)
    return f"{option.name} time to train {where} ({_plain(days)} days)"


def input_dates(inputs: Sequence[Mapping[str, Any]], option: str
                ) -> tuple[str | None, str | None, int]:
    """The date span of the ledger and market figures an option's cost reads: its own inputs
    and the shared ones (models.dates.date_span)."""
    return date_span(option_inputs(inputs, option))


def _option(option: TcoOption, linked: ScenarioLine | None, as_of: date | None,
            max_age_days: int | None, inputs: Sequence[Mapping[str, Any]] = ()) -> OptionLine:
    on_demand = option.on_demand
    oldest, newest, undated = input_dates(inputs, option.name)
    return OptionLine(inputs_oldest=oldest, inputs_newest=newest, inputs_undated=undated,
                      name=option.name, gpus=option.gpus, gpu=option.gpu,
                      time_to_train_days=option.jct_days, job_cost_usd=option.job_cost_usd,
                      usd_per_gpu_hour=option.usd_per_gpu_hour,
                      market_usd_per_gpu_hour=on_demand.median if on_demand else None,
                      market_job_cost_usd=option.rented_job_cost_usd,
                      layout=linked.layout if linked else None,
                      layout_note=linked.layout_note if linked else None,
                      layout_searched=linked.layout_searched if linked else False,
                      basis=(rent_basis(option.rent, as_of, max_age_days,
                                        committed_rent(option)) if option.rent
                             else "owned"),
                      rented=option.rent is not None,
                      rent_stale=past_limit(option.rent, as_of, max_age_days),
                      capex_missing=option.capex_missing,
                      goodput_source=option.goodput_source,
                      availability=option.availability, goodput=option.goodput,
                      utilisation=option.utilisation,
                      upfront_capex_usd=option.upfront_capex_usd,
                      annual_opex_usd=option.annual_opex_usd,
                      market_priced_from=(_day(on_demand.price_from or on_demand.as_of)
                                          if on_demand else None),
                      market_priced_to=_day(on_demand.as_of) if on_demand else None,
                      fabric=linked.fabric if linked else None,
                      fabric_borrowed=linked.fabric_borrowed if linked else None)


def past_limit(rent: Mapping[str, Any] | None, as_of: date | None,
               max_age_days: int | None) -> bool:
    """Whether a rent was priced longer ago than the market's age limit on `as_of`."""
    if rent is None or max_age_days is None:
        return False
    age = _age_days(rent.get("as_of"), as_of)
    return age is not None and age > max_age_days


def rent_basis(rent: Mapping[str, Any], as_of: date | None = None,
               max_age_days: int | None = None, committed: Rent | None = None) -> str:
    """A rented option's price as the TCO stage read it, with its offers (or ledger item and
    source) and date: "rented at $2.35/GPU-hour: h100-1yr-contract-index (...), price of
    2026-03-01"; on `as_of`, a price older than `max_age_days` (the market's age limit, past
    which an offer leaves the price index) says how old it is, and what the market's current
    offers on a committed term (`committed`, the index's line for the same GPU) charge."""
    if rent.get("origin") == "market":   # the price index: how many offers, whose
        note = str(rent.get("note") or "").split(" (P25")[0]
    else:                                # a ledger figure or the scenario's own
        note = (f"{rent['item']} ({rent.get('source')})" if rent.get("item")
                else str(rent.get("note") or "the scenario's figure"))
    when = f", price of {rent['as_of']}" if rent.get("as_of") else ""
    if past_limit(rent, as_of, max_age_days):
        when += (f" ({_age_days(rent.get('as_of'), as_of)} days old, past the market's "
                 f"{max_age_days}-day limit)")
        if committed is not None:
            when += f"; {_committed_now(committed)}"
    return f"rented at {format_usd(float(rent['value']))}/GPU-hour: {note}{when}"


# The committed terms a current rent is looked for on, most like a rent-vs-buy contract first.
COMMITTED_TERMS = ("contract", "reserved_1y", "reserved_3y")


def committed_rent(option: TcoOption) -> Rent | None:
    """The market's line for the option's GPU on the first committed term it has offers on."""
    return next((option.rents[t] for t in COMMITTED_TERMS if t in option.rents), None)


def _committed_now(rent: Rent) -> str:
    """"the market's current contract offers for it: $2.72 median of 1 (hyperstack), priced
    2026-08-26"."""
    priced = f", priced {rent.price_dates}" if rent.price_dates else ""
    who = f" ({rent.cheapest_provider})" if rent.offers == 1 else ""
    return (f"the market's current {term_label(rent.term)} offers for it: "
            f"{format_usd(rent.median)} median of {rent.offers}{who}{priced}")


def _age_days(priced_on: object, as_of: date | None) -> int | None:
    """Days from a price's date (ISO text as stored) to `as_of`; None when either is unknown."""
    if as_of is None or not priced_on:
        return None
    try:
        return (as_of - date.fromisoformat(str(priced_on)[:10])).days
    except ValueError:
        return None


def _workload(record: TcoRecord, scenarios: dict[str, ScenarioLine]) -> str | None:
    """The job the options run, from the C2C scenario an option links to (None: no option
    links one, the comparison's job times are given, not modelled). Comparisons of one job
    at one size share it, so page 1 sets their options side by side."""
    for option in record.options:
        linked = scenarios.get(record.c2c_links.get(option.name, ""))
        if linked is not None:
            title = linked.title or linked.workload.split(";")[0]   # the job, not the layout
            return title + (f", {option.gpus:,} GPUs" if option.gpus else "")
    return None


def _plain(value: float) -> str:
    return f"{value:,.3g}" if abs(value) < 1e4 else f"{value:,.0f}"


def market_lines(index: pd.DataFrame, version: int) -> list[MarketLine]:
    """One line per GPU with an offer at `version`: the on-demand median with its price
    dates, its change over the week, and the cheapest offer of any term with its date. The
    change is the index's week-over-week change over matched offers (same provider, region,
    instance, term), so that offers coming or going (its `composition`, said apart) are never
    a price move: None when no offer is priced on both dates."""
    if index.empty:
        return []
    now = index[index["dataset_version"] == version]
    lines = []
    for gpu, rows in now.groupby("gpu", sort=True):
        cheapest = rows.sort_values(["cheapest_price", "term"]).iloc[0]
        on_demand = rows[rows["term"] == ON_DEMAND]
        median = float(on_demand["median"].iloc[0]) if not on_demand.empty else None
        row = on_demand.iloc[0] if median is not None else None
        matched = _cell(row, "wow_change")   # None: no offer priced on both dates
        change = None if matched is None else float(matched)
        lines.append(MarketLine(
            gpu=str(gpu), median_usd=median,
            offers=int(on_demand["n_offers"].iloc[0]) if median is not None else 0,
            providers=int(on_demand["n_providers"].iloc[0]) if median is not None else 0,
            change=change,
            cheapest_usd=float(cheapest["cheapest_price"]),
            cheapest_provider=str(cheapest["cheapest_provider"]),
            cheapest_term=str(cheapest["term"]), cheapest_source=str(cheapest["cheapest_source"]),
            as_of=pd.Timestamp(cheapest["version_date"]).date(),
            price_from=_day(_cell(row, "price_from")), price_to=_day(_cell(row, "price_to")),
            cheapest_as_of=_day(_cell(cheapest, "cheapest_as_of")),
            composition=_cell(row, "wow_composition")))
    return lines


def _cell(row: pd.Series | None, column: str) -> Any:
    """A stored index cell, None when the row, the column or the value is missing."""
    if row is None or column not in row.index:
        return None
    value = row[column]
    return None if value is None or (not isinstance(value, str) and pd.isna(value)) else value


def _day(value: Any) -> date | None:
    return None if value is None else pd.Timestamp(value).date()


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
    """The price index per GPU and term over every version of `index`, with the latest
    version's offers, price dates and matched changes."""
    if index.empty:
        return []
    series = []
    for (gpu, term), rows in index.groupby(["gpu", "term"], sort=True):
        rows = rows.sort_values("dataset_version")
        latest = rows.iloc[-1]
        counted = _cell(latest, "n_offers"), _cell(latest, "n_providers")
        change_7d, change_90d = _cell(latest, "wow_change"), _cell(latest, "d90_change")
        series.append(MarketSeries(
            str(gpu), str(term),
            tuple((pd.Timestamp(r.version_date).date(), float(r.median))
                  for r in rows.itertuples()),
            offers=None if counted[0] is None else int(counted[0]),
            providers=None if counted[1] is None else int(counted[1]),
            priced_from=_day(_cell(latest, "price_from")),
            priced_to=_day(_cell(latest, "price_to")),
            change_7d=None if change_7d is None else float(change_7d),
            change_90d=None if change_90d is None else float(change_90d),
            composition_7d=_cell(latest, "wow_composition") or None,
            composition_90d=_cell(latest, "d90_composition") or None))
    return series
