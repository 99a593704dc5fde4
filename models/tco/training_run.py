"""The cost of one training run by Epoch AI's amortised-hardware-plus-energy method
(docs/tco-method.md#training-run-cost; Cottier et al. 2024, epoch-research/training-cost-trends):

    acquired      = max(price date, hardware release + 90 days)
    start value   = price per chip x server overhead x 10^(-0.14 x years from acquired to start)
    hardware      = start value x 0.14 ln(10) / (365.25 x 24) x chip-hours
    interconnect  = hardware x f / (1 - f), f = 0.19 of cluster hardware cost
    energy        = chip TDP x server/chip power x average draw x PUE x chip-hours x $/kWh
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

from models.tco.finance import (
    EPOCH_DAYS_PER_YEAR,
    EPOCH_HOURS_PER_YEAR,
    Num,
    depreciated_value,
    economic_replacement_rate,
)

ACQUISITION_DELAY = timedelta(days=90)  # Epoch: nobody owns a chip before release + 3 months


@dataclass(frozen=True)
class TrainingRun:
    chips: Num
    hours: Num  # wall-clock training time
    price_per_chip: Num  # USD; a server price divided by its chips, or a chip price
    server_overhead: Num  # 1.0 for a server price; Epoch: 1.66 (A100) on a single-chip price
    released: date
    price_date: date
    training_start: date
    chip_tdp_kw: Num
    server_power_ratio: Num  # server power / (chips x chip TDP); A100 (6.5/8)/0.4 = 2.03
    average_draw: Num  # share of server TDP drawn while training; 0.75 for GPUs
    pue: Num
    electricity_usd_per_kwh: Num
    interconnect_share: Num = 0.19  # of total cluster hardware cost


@dataclass(frozen=True)
class TrainingRunCost:
    acquired: date
    years_depreciated: float
    start_value_per_chip: Num
    chip_hours: Num
    hardware: Num
    interconnect: Num
    energy: Num

    @property
    def total(self) -> Num:
        return self.hardware + self.interconnect + self.energy


def acquisition_date(released: date, price_date: date) -> date:
    return max(price_date, released + ACQUISITION_DELAY)


def training_run_cost(run: TrainingRun) -> TrainingRunCost:
    """The amortised hardware, interconnect and energy cost of `run`."""
    acquired = acquisition_date(run.released, run.price_date)
    # Training cannot start before the chips are there (Epoch clamps the same way).
    years = max((run.training_start - acquired).days, 0) / EPOCH_DAYS_PER_YEAR
    start_value = depreciated_value(run.price_per_chip * run.server_overhead, years)
    chip_hours = run.chips * run.hours
    hardware = start_value * economic_replacement_rate() / EPOCH_HOURS_PER_YEAR * chip_hours
    interconnect = hardware * run.interconnect_share / (1.0 - run.interconnect_share)
    energy = (run.chip_tdp_kw * run.server_power_ratio * run.average_draw * run.pue
              * chip_hours * run.electricity_usd_per_kwh)
    return TrainingRunCost(acquired, years, start_value, chip_hours, hardware, interconnect,
                           energy)
