"""TCO scenarios as plans over named inputs, so a Monte Carlo or a tornado can vary any of them.

An input's name is its path in the scenario file ("options.nvl72.capex.racks.cost",
"finance.electricity"), in the model's units: USD, years, kW, USD/kWh, USD/kW/month, days,
fractions. `evaluate` maps a dict of input values (floats or sample arrays) to named outputs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

from models.tco.finance import Num
from models.tco.ownership import CapexItem, Comparison, ComparisonCost, Finance, Option, compare
from models.tco.training_run import TrainingRun, TrainingRunCost, training_run_cost

OPTION_FIGURES = ("annual_capex_usd", "annual_opex_usd", "annual_total_usd", "usd_per_gpu_hour",
                  "usd_per_useful_gpu_hour", "job_cost_usd")


@dataclass(frozen=True)
class CapexPlan:
    name: str
    it: bool
    # What the item buys, of CAPEX_CATEGORIES (an all-in rack is compute and network); empty
    # when the scenario does not say.
    categories: tuple[str, ...] = ()


# The categories every owned option's capex is read against: a category no item covers is
# printed as "not in the ledger", never as zero. Facility space and power are colocation's
# (an opex) when the option pays colocation.
CAPEX_CATEGORIES = ("compute", "network", "cooling", "facility")


@dataclass(frozen=True)
class OptionPlan:
    name: str
    capex: tuple[CapexPlan, ...]
    has_jct: bool
    depreciation: str = "crf"
    # The JCT is the performance model's failure-free time to train: the wall clock is
    # longer by 1 / (availability x goodput).
    modelled_jct: bool = False
    rented: bool = False  # rents its GPUs (options.<name>.rent): owns nothing

    def key(self, field: str) -> str:
        return f"options.{self.name}.{field}"

    def build(self, v: Mapping[str, Num]) -> Option:
        jct = None
        if self.has_jct:
            jct = v[self.key("jct")]
            if self.modelled_jct:
                jct = jct / (v[self.key("availability")] * v[self.key("goodput")])
        if self.rented:
            return Option(name=self.name, gpus=v[self.key("gpus")], capex=(), it_power_kw=0.0,
                          staff_usd_per_year=v[self.key("staff")],
                          licences_usd_per_year=v[self.key("licences")],
                          availability=v[self.key("availability")],
                          goodput=v[self.key("goodput")],
                          utilisation=v.get(self.key("utilisation"), 1.0), jct_days=jct,
                          rent_usd_per_gpu_hour=v[self.key("rent")])
        items = tuple(CapexItem(c.name, v[self.key(f"capex.{c.name}.cost")],
                                v[self.key(f"capex.{c.name}.life_years")], c.it,
                                v.get(self.key(f"capex.{c.name}.residual"), 0.0))
                      for c in self.capex)
        return Option(name=self.name, gpus=v[self.key("gpus")], capex=items,
                      it_power_kw=v[self.key("it_power")],
                      power_fraction=v[self.key("power_fraction")], pue=v[self.key("pue")],
                      colocation_usd_per_kw_month=v[self.key("colocation")],
                      maintenance_rate=v[self.key("maintenance_rate")],
                      staff_usd_per_year=v[self.key("staff")],
                      licences_usd_per_year=v[self.key("licences")],
                      availability=v[self.key("availability")], goodput=v[self.key("goodput")],
                      utilisation=v.get(self.key("utilisation"), 1.0), jct_days=jct,
                      depreciation=self.depreciation)


def capex_coverage(option: OptionPlan, v: Mapping[str, Num],
                   colocation_usd: float | None) -> dict[str, Any]:
    """What an owned option's capex buys, by category: each item's cost and categories, the
    categories no item covers (`missing`, printed "not in the ledger"), and whether facility
    is colocation's (an opex) instead. Empty for a rented option."""
    if option.rented:
        return {}
    items = [{"name": c.name, "categories": list(c.categories),
              "cost_usd": float(v[f"options.{option.name}.capex.{c.name}.cost"])}
             for c in option.capex]
    covered = {category for c in option.capex for category in c.categories}
    in_colocation = "facility" not in covered and bool(colocation_usd)
    missing = [c for c in CAPEX_CATEGORIES
               if c not in covered and not (c == "facility" and in_colocation)]
    return {"items": items, "missing": missing, "facility_in_colocation": in_colocation}


@dataclass(frozen=True)
class ComparisonPlan:
    """Options U (scale-up) and O (scale-out), and any others, on shared finance inputs."""

    options: tuple[OptionPlan, ...]
    scale_up: str
    scale_out: str

    def build(self, v: Mapping[str, Num]) -> Comparison:
        finance = Finance(v["finance.cost_of_capital"], v["finance.electricity"],
                          v["time_cost_per_year"])
        return Comparison(finance, tuple(o.build(v) for o in self.options), self.scale_up,
                          self.scale_out)

    def evaluate(self, v: Mapping[str, Num]) -> dict[str, Num]:
        return flatten(compare(self.build(v)))


def flatten(cost: ComparisonCost) -> dict[str, Num]:
    """Named outputs: break_even_speedup, speedup, and <option>.<figure> for every option."""
    out: dict[str, Num] = {"break_even_speedup": cost.break_even_speedup}
    if cost.speedup is not None:
        out["speedup"] = cost.speedup
    for o in cost.options:
        figures = (o.annual_capex, o.annual_opex, o.annual_total, o.usd_per_gpu_hour,
                   o.usd_per_useful_gpu_hour, o.job_cost)
        out.update({f"{o.name}.{name}": value for name, value in zip(OPTION_FIGURES, figures,
                                                                     strict=True)
                    if value is not None})
    return out


TRAINING_RUN_FIGURES = ("hardware_usd", "interconnect_usd", "energy_usd", "total_usd")


@dataclass(frozen=True)
class TrainingRunPlan:
    """Epoch AI's training-run cost; the dates are fixed, every number can vary."""

    released: date
    price_date: date
    training_start: date

    def build(self, v: Mapping[str, Num]) -> TrainingRun:
        def get(name: str) -> Num:
            return v[f"training_run.{name}"]
        return TrainingRun(chips=get("chips"), hours=get("hours"),
                           price_per_chip=get("price_per_chip"),
                           server_overhead=get("server_overhead"), released=self.released,
                           price_date=self.price_date, training_start=self.training_start,
                           chip_tdp_kw=get("chip_tdp"),
                           server_power_ratio=get("server_power_ratio"),
                           average_draw=get("average_draw"), pue=get("pue"),
                           electricity_usd_per_kwh=get("electricity"),
                           interconnect_share=get("interconnect_share"))

    def evaluate(self, v: Mapping[str, Num]) -> dict[str, Num]:
        return training_run_figures(training_run_cost(self.build(v)))


def training_run_figures(cost: TrainingRunCost) -> dict[str, Num]:
    """Named outputs: hardware_usd, interconnect_usd, energy_usd, total_usd."""
    return dict(zip(TRAINING_RUN_FIGURES, (cost.hardware, cost.interconnect, cost.energy,
                                           cost.total), strict=True))
