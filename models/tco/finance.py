"""Annualising capital: the capital recovery factor, and Epoch AI's economic depreciation."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

Num = float | npt.NDArray[np.float64]

HOURS_PER_YEAR = 8760.0  # docs/tco-method.md#opex: energy and $/GPU-hour use 8,760 h a year
DAYS_PER_YEAR = 365.0  # docs/tco-method.md#job-cost-and-break-even: J = (R + K) x JCT / 365

# Epoch AI (docs/tco-method.md#capex): ML GPU price-performance improves 0.14 orders of magnitude a
# year, so it is optimal to replace k ln(10) of the fleet's value per year.
EPOCH_OOMS_PER_YEAR = 0.14
EPOCH_DAYS_PER_YEAR = 365.25
EPOCH_HOURS_PER_YEAR = 24 * EPOCH_DAYS_PER_YEAR


def capital_recovery_factor(rate: Num, years: Num) -> Num:
    """CRF(r, n) = r(1+r)^n / ((1+r)^n - 1): the level yearly payment that repays 1 over n
    years at interest r; 1/n (straight line) when r = 0."""
    rate, years = np.asarray(rate, dtype=float), np.asarray(years, dtype=float)
    growth = np.power(1.0 + rate, years)
    with np.errstate(divide="ignore", invalid="ignore"):
        crf = np.where(rate == 0.0, 1.0 / years, rate * growth / (growth - 1.0))
    return _scalar(crf)


def annualised_capex(cost: Num, rate: Num, years: Num, residual: Num = 0.0) -> Num:
    """Yearly cost of owning `cost` for `years` at `rate`, net of the present value of a
    residual (resale) value at the end of its life."""
    present_residual = np.asarray(residual, dtype=float) / np.power(1.0 + np.asarray(rate), years)
    return _scalar((np.asarray(cost, dtype=float) - present_residual)
                   * capital_recovery_factor(rate, years))


def economic_replacement_rate(ooms_per_year: float = EPOCH_OOMS_PER_YEAR) -> float:
    """Share of the hardware's value used up per year when price-performance improves
    `ooms_per_year` orders of magnitude a year: k ln(10) (0.3224 for k = 0.14)."""
    return ooms_per_year * math.log(10)


def depreciated_value(price: Num, years: Num, ooms_per_year: float = EPOCH_OOMS_PER_YEAR) -> Num:
    """Value after `years` of price-performance progress: price x 10^(-k years)."""
    return _scalar(np.asarray(price, dtype=float) * np.power(10.0, -ooms_per_year
                                                              * np.asarray(years)))


def _scalar(value: npt.NDArray[np.float64]) -> Num:
    return float(value) if np.ndim(value) == 0 else value
