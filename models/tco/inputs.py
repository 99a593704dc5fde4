"""What a TCO input is and where its default comes from: pure data, no file reading.

Each field of a TCO scenario has the model's unit, its bounds and, when it may be left out, a
default: a number with the reason for it, or a reference to a ledger figure (read as of the
dataset version, so the default moves with the ledger). pipelines/inputs/tco_scenarios.py reads
files against these tables; docs/tco-method.md explains each default.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any


@dataclass(frozen=True)
class LedgerRef:
    """A value to read from the ledger: (item, metric) x times / per, valid on `on`."""

    item: str
    metric: str
    times: float = 1.0
    times_unit: str | None = None  # when `times` is a quantity ("7.39 MW")
    per: float = 1.0
    on: date | None = None
    written: str = ""


@dataclass(frozen=True)
class MarketRef:
    """A rent read from the market's GPU-hour price index as of the dataset version: a
    statistic of the offers for one GPU on one term, their P25-P75 spread as its range."""

    gpu: str
    term: str = "on_demand"
    statistic: str = "median"  # median | min | p25 | p75
    written: str = ""


MARKET_STATISTICS = ("median", "min", "p25", "p75")


@dataclass(frozen=True)
class Field:
    """How one input is read: its model unit, bounds and default."""

    unit: str  # the model's unit; "" for a plain number
    low: float | None = 0.0  # smallest allowed value (inclusive)
    high: float | None = None
    low_open: bool = False  # the bound itself is not allowed
    default: float | LedgerRef | None = None  # None: the field is required
    default_note: str = ""
    integer: bool = False
    per_year: bool = False  # "USD" is read as USD per year


def _ref(item: str, metric: str, note: str) -> tuple[LedgerRef, str]:
    return LedgerRef(item, metric, written=f"{item}.{metric}"), note


_ELECTRICITY, _ELECTRICITY_NOTE = _ref("us-industrial-electricity", "electricity_price",
                                       "US industrial average (EIA), the ledger's default price")
_PUE, _PUE_NOTE = _ref("uptime-global-dc-survey", "pue", "industry-average PUE (Uptime survey)")
_COLO, _COLO_NOTE = _ref("colo-na-primary-250-500kw", "colocation_price",
                         "CBRE North America primary markets, 250-500 kW average asking rate")
_INTERCONNECT, _INTERCONNECT_NOTE = _ref(
    "epoch-cluster-interconnect", "network_cost_share",
    "Epoch: interconnect is 19 % of cluster hardware cost")
_FRACTION = {"low": 0.0, "high": 1.0}

FINANCE_FIELDS = {
    "finance.cost_of_capital": Field("", high=1.0),
    "finance.electricity": Field("USD/kWh", default=_ELECTRICITY, default_note=_ELECTRICITY_NOTE),
    "time_cost_per_year": Field("USD/year", default=0.0, per_year=True,
                                default_note="no time-proportional cost (K = 0)"),
}
OPTION_FIELDS = {
    "gpus": Field("", low=1.0, integer=True),
    "it_power": Field("kW", low_open=True),
    "power_fraction": Field("", **_FRACTION, low_open=True, default=1.0,
                            default_note="draws its full IT power (conservative)"),
    "pue": Field("", low=1.0, default=_PUE, default_note=_PUE_NOTE),
    "colocation": Field("USD/kW/month", default=_COLO, default_note=_COLO_NOTE),
    "maintenance_rate": Field("", **_FRACTION, default=0.0, default_note="no maintenance contract"),
    "staff": Field("USD/year", default=0.0, per_year=True, default_note="no dedicated staff"),
    "licences": Field("USD/year", default=0.0, per_year=True, default_note="no licences"),
    "availability": Field("", **_FRACTION, low_open=True, default=1.0,
                          default_note="always available"),
    "goodput": Field("", **_FRACTION, low_open=True, default=1.0,
                     default_note="no work lost to failures"),
    "utilisation": Field("", **_FRACTION, low_open=True, default=1.0,
                         default_note="busy with paid work all year"),
    "jct": Field("day", low_open=True),
}
# A rented option pays its rent per GPU-hour and owns nothing: no capex, power or facility.
RENTED_OPTION_FIELDS = {
    "rent": Field("USD/hour", low_open=True),
    **{key: OPTION_FIELDS[key] for key in ("gpus", "staff", "licences", "availability",
                                           "goodput", "utilisation", "jct")},
}
CAPEX_FIELDS = {
    "cost": Field("USD"),
    "life_years": Field("year", low_open=True),
    "residual": Field("USD", default=0.0, default_note="no resale value"),
}
TRAINING_RUN_FIELDS = {
    "chips": Field("", low=1.0),
    "hours": Field("hour", low_open=True),
    "price_per_chip": Field("USD", low_open=True),
    "server_overhead": Field("", low=1.0, default=1.0,
                             default_note="the price is already a server price per chip"),
    "chip_tdp": Field("kW", low_open=True),
    "server_power_ratio": Field("", low=1.0, default=1.8,
                                default_note="Epoch's default server/chip power ratio"),
    "average_draw": Field("", **_FRACTION, low_open=True, default=0.75,
                          default_note="Epoch: GPUs draw 75 % of server TDP while training"),
    "pue": Field("", low=1.0, default=1.25, default_note="Epoch: PUE of non-hyperscalers"),
    "electricity": Field("USD/kWh", default=_ELECTRICITY, default_note=_ELECTRICITY_NOTE),
    "interconnect_share": Field("", low=0.0, high=0.99, default=_INTERCONNECT,
                                default_note=_INTERCONNECT_NOTE),
}


def option_inputs(inputs: Sequence[Mapping[str, Any]], option: str
                  ) -> list[Mapping[str, Any]]:
    """The TCO inputs one option's cost reads: those named for it and those all options share
    (the names without an "options." prefix)."""
    return [f for f in inputs if str(f.get("name") or "").startswith(f"options.{option}.")
            or not str(f.get("name") or "").startswith("options.")]
