"""Owning a cluster for a year, per GPU-hour and per job; the break-even speed-up.

docs/tco-method.md (capex, opex, job cost and break-even):
    A = sum_k C_k CRF(r, n_k)                            annualised capex
    O = P_IT u_p PUE 8760 p_elec + colo P_IT 12 + m C_IT + L + N 8760 rent   opex per year
    R = A + O;  c = R / (N 8760 availability goodput);  J = (R' + K) JCT / 365
    R' = (R - rent) / utilisation + rent   (an idle year is paid by the jobs that do run)
    s* = (R'_U + K) / (R'_O + K), scale-up U wins a job when JCT_O / JCT_U >= s*
Every field may be a float or a numpy array of samples.
"""

from __future__ import annotations

from dataclasses import dataclass

from models.tco.finance import (
    DAYS_PER_YEAR,
    HOURS_PER_YEAR,
    Num,
    annualised_capex,
    economic_replacement_rate,
)

DEPRECIATION_MODES = ("crf", "economic")


@dataclass(frozen=True)
class CapexItem:
    """One capital outlay: compute racks, the scale-out fabric, a cooling retrofit, storage."""

    name: str
    cost: Num  # USD
    life_years: Num
    it: bool = False  # IT equipment: the base of the maintenance charge
    residual: Num = 0.0  # USD resale value at the end of its life


@dataclass(frozen=True)
class Option:
    """One way to build the cluster (e.g. GB200 NVL72 racks, or HGX nodes on InfiniBand)."""

    name: str
    gpus: Num
    capex: tuple[CapexItem, ...]
    it_power_kw: Num
    power_fraction: Num = 1.0  # average draw / IT power
    pue: Num = 1.0
    colocation_usd_per_kw_month: Num = 0.0  # charged on IT power
    maintenance_rate: Num = 0.0  # share of IT capex per year
    staff_usd_per_year: Num = 0.0
    licences_usd_per_year: Num = 0.0
    availability: Num = 1.0
    goodput: Num = 1.0
    # The share of the year the cluster does paid work: its owned costs are paid by those
    # jobs alone (a rent is paid only for the hours rented).
    utilisation: Num = 1.0
    jct_days: Num | None = None  # the job's wall-clock time on this option
    depreciation: str = "crf"  # crf | economic (Epoch: k ln 10 of the value per year)
    rent_usd_per_gpu_hour: Num = 0.0  # a rented option: what each GPU-hour costs


@dataclass(frozen=True)
class Finance:
    cost_of_capital: Num
    electricity_usd_per_kwh: Num
    time_cost_usd_per_year: Num = 0.0  # K: staff, cost of delay; scales with wall-clock time


@dataclass(frozen=True)
class OptionCost:
    """A year of owning one option, and what its job costs."""

    name: str
    annual_capex: Num
    energy: Num
    colocation: Num
    maintenance: Num
    staff_and_licences: Num
    usd_per_gpu_hour: Num  # at 100 % availability and goodput
    usd_per_useful_gpu_hour: Num  # at the option's availability x goodput
    job_cost: Num | None
    rental: Num = 0.0  # a rented option's rent for a year of its GPUs
    utilisation: Num = 1.0

    @property
    def annual_opex(self) -> Num:
        return (self.energy + self.colocation + self.maintenance + self.staff_and_licences
                + self.rental)

    @property
    def annual_total(self) -> Num:
        return self.annual_capex + self.annual_opex

    @property
    def annual_charged(self) -> Num:
        """What the year's jobs pay between them: the owned costs over the utilisation (idle
        hours cost the same), the rent as paid."""
        return (self.annual_total - self.rental) / self.utilisation + self.rental


@dataclass(frozen=True)
class Comparison:
    finance: Finance
    options: tuple[Option, ...]
    scale_up: str  # name of option U
    scale_out: str  # name of option O

    def option(self, name: str) -> Option:
        return next(o for o in self.options if o.name == name)


@dataclass(frozen=True)
class ComparisonCost:
    options: tuple[OptionCost, ...]
    break_even_speedup: Num  # s* = (R_U + K) / (R_O + K)
    speedup: Num | None  # s = JCT_O / JCT_U, when both JCTs are known

    def option(self, name: str) -> OptionCost:
        return next(o for o in self.options if o.name == name)


def annual_capex(option: Option, rate: Num) -> Num:
    """Sum of the items' annualised cost: CRF over each item's life, or Epoch's economic
    depreciation (k ln 10 of the purchase value per year, whatever the book life)."""
    if option.depreciation == "economic":
        return sum((item.cost * economic_replacement_rate() for item in option.capex), 0.0)
    return sum((annualised_capex(item.cost, rate, item.life_years, item.residual)
                for item in option.capex), 0.0)


def option_cost(option: Option, finance: Finance) -> OptionCost:
    """A year of owning `option`, per GPU-hour, and the cost of its job when its JCT is known."""
    if option.depreciation not in DEPRECIATION_MODES:
        raise ValueError(f"{option.name}: depreciation must be one of {DEPRECIATION_MODES}")
    capex = annual_capex(option, finance.cost_of_capital)
    energy = (option.it_power_kw * option.power_fraction * option.pue * HOURS_PER_YEAR
              * finance.electricity_usd_per_kwh)
    colocation = option.colocation_usd_per_kw_month * option.it_power_kw * 12.0
    it_capex = sum((item.cost for item in option.capex if item.it), 0.0)
    maintenance = option.maintenance_rate * it_capex
    fixed = option.staff_usd_per_year + option.licences_usd_per_year
    gpu_hours = option.gpus * HOURS_PER_YEAR
    rental = option.rent_usd_per_gpu_hour * gpu_hours
    total = capex + energy + colocation + maintenance + fixed + rental
    charged = (total - rental) / option.utilisation + rental
    job = (None if option.jct_days is None
           else (charged + finance.time_cost_usd_per_year) * option.jct_days / DAYS_PER_YEAR)
    return OptionCost(option.name, capex, energy, colocation, maintenance, fixed,
                      total / gpu_hours, charged / (gpu_hours * option.availability
                                                    * option.goodput), job, rental,
                      option.utilisation)


def compare(comparison: Comparison) -> ComparisonCost:
    """Every option's cost, the break-even speed-up of U over O, and the speed-up the JCTs give."""
    costs = tuple(option_cost(o, comparison.finance) for o in comparison.options)
    by_name = {c.name: c for c in costs}
    up, out = by_name[comparison.scale_up], by_name[comparison.scale_out]
    k = comparison.finance.time_cost_usd_per_year
    break_even = (up.annual_charged + k) / (out.annual_charged + k)
    jct_up = comparison.option(comparison.scale_up).jct_days
    jct_out = comparison.option(comparison.scale_out).jct_days
    speedup = None if jct_up is None or jct_out is None else jct_out / jct_up
    return ComparisonCost(costs, break_even, speedup)
