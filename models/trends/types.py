"""The values models/trends produces: flags, trend points and series, fits, changes.

Plain frozen dataclasses so they can be stored (flags), rendered (reports/) and compared in
tests. Every number carries the observations it rests on, so the briefing can cite them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import date

# Most severe first: the executive summary lists flags in this order.
SEVERITIES: tuple[str, ...] = ("critical", "warning", "info")

FLAG_KINDS: tuple[str, ...] = (
    # density
    "density_threshold",      # a rack/system above a cooling threshold people plan with
    "density_growth",         # rack/system power growth per year (log-linear fit)
    # interconnect
    "interconnect_trend",     # per-GPU scale-up or scale-out bandwidth doubling time
    "bandwidth_ratio",        # scale-up / scale-out bandwidth ratio of a generation
    "switch_capacity",        # switch capacity doubling time
    # evidence
    "single_source",          # a value resting on one source
    "unconfirmed",            # only unconfirmed (status U) sources
    "stale",                  # no observation newer than the configured age
    "conflicting",            # live sources disagree beyond the tolerance
    "claim_without_measurement",  # a vendor bandwidth claim with no measurement beside it
    "undated",                # a printed density/performance claim without a usable date
    # changes since the previous dataset version
    "added",
    "changed",
    "superseded",
    "result_moved",           # a scenario's C2C class, fabric or break-even speed-up moved
    # market prices and quotes (models/market)
    "price_move",             # a GPU-hour price index median moved beyond the threshold
    "new_cheapest",           # another provider now has the cheapest offer of a GPU and term
    "quote_expiring",         # a vendor quote expires within the notice period, or expired
    "lead_time_grew",         # a vendor quoted a longer lead time than in its previous quote
)


@dataclass(frozen=True)
class Flag:
    """One finding. `subject` identifies it within a dataset version (e.g. "gb200-nvl72 /
    rack_it_power" or a scenario name); `message` is one sentence a reader understands,
    with numbers, units, sources and dates."""

    kind: str
    severity: str
    subject: str
    message: str
    observation_ids: tuple[int, ...] = ()
    item: str | None = None
    metric: str | None = None
    scenario: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in FLAG_KINDS:
            raise ValueError(f"unknown flag kind {self.kind!r}")
        if self.severity not in SEVERITIES:
            raise ValueError(f"unknown severity {self.severity!r}")


def by_severity(flags: list[Flag]) -> list[Flag]:
    """Most severe first, then by kind and subject (a stable, deterministic order)."""
    return sorted(flags, key=lambda f: (SEVERITIES.index(f.severity),
                                        FLAG_KINDS.index(f.kind), f.subject))


@dataclass(frozen=True)
class TrendPoint:
    """One resolved value placed on a trend: an item's figure at its as_of date."""

    item: str            # item key
    label: str           # item name as printed
    metric: str
    value: float         # in `unit` (after any conversion named in the series' formula)
    low: float
    high: float
    unit: str
    as_of: date
    source: str          # source key of the winning observation
    status: str          # C / S / U
    observation_ids: tuple[int, ...]
    group: str = ""      # e.g. "rack" / "system", "InfiniBand" / "Ethernet"
    as_of_precision: str = "day"   # day / month / year: print 2024 for a year-precise as_of


@dataclass(frozen=True)
class LogLinearFit:
    """log2(value) = intercept + slope * years since 2000-01-01, least squares."""

    n: int
    first: date
    last: date
    slope_log2_per_year: float
    intercept_log2: float
    r2: float

    @property
    def growth_per_year(self) -> float:
        """Multiplicative growth minus one: 0.41 means +41 % a year."""
        return float(2 ** self.slope_log2_per_year - 1)

    @property
    def doubling_years(self) -> float | None:
        """Years to double; None when the fit does not grow."""
        return 1 / self.slope_log2_per_year if self.slope_log2_per_year > 0 else None

    def value_at(self, day: date) -> float:
        return float(2 ** (self.intercept_log2 + self.slope_log2_per_year * years_since_2000(day)))


def years_since_2000(day: date) -> float:
    return (day - date(2000, 1, 1)).days / 365.25


@dataclass(frozen=True)
class Series:
    """A trend line: points in date order, the fit over them, and how values were derived."""

    key: str
    title: str
    unit: str
    points: tuple[TrendPoint, ...]
    fit: LogLinearFit | None
    formula: str = ""    # e.g. "port_rate x NICs per GPU (1)"; empty when values are as sourced


@dataclass(frozen=True)
class Threshold:
    """A planning threshold (e.g. the air-cooling limit per rack), itself a sourced value."""

    key: str
    label: str
    low: float
    high: float
    unit: str
    source: str
    as_of: date
    observation_ids: tuple[int, ...]
    as_of_precision: str = "day"


@dataclass(frozen=True)
class Crossing:
    """A rack or system whose power is above (or within) a threshold band."""

    point: TrendPoint
    threshold: str       # Threshold.key
    position: str        # "above" (low > threshold high) or "within" (ranges overlap)


@dataclass(frozen=True)
class DensityTrend:
    series: tuple[Series, ...]               # e.g. rack IT power, 8-GPU system power
    thresholds: tuple[Threshold, ...]
    crossings: tuple[Crossing, ...]
    fit: LogLinearFit | None                 # over every point of every series


@dataclass(frozen=True)
class BandwidthRatio:
    """Scale-up vs scale-out bandwidth per GPU of one generation, like for like
    (one direction, bits per second)."""

    scale_up: TrendPoint
    scale_out: TrendPoint
    ratio: float
    formula: str


@dataclass(frozen=True)
class InterconnectTrend:
    scale_up: Series                          # per-GPU scale-up, by NVLink generation
    scale_out: Series                         # per-GPU scale-out (NIC rate x NICs per GPU)
    ratios: tuple[BandwidthRatio, ...]
    switch_capacity: tuple[Series, ...]       # by family (InfiniBand, Ethernet silicon, ...)
    latency: tuple[TrendPoint, ...] = ()      # where sourced


@dataclass(frozen=True)
class ObservationChange:
    """One observation-level change between two dataset versions."""

    kind: str            # "added", "changed" or "superseded"
    item: str
    metric: str
    source: str
    unit: str
    before: float | None
    after: float | None
    as_of: date
    observation_ids: tuple[int, ...]


@dataclass(frozen=True)
class Changes:
    observations: tuple[ObservationChange, ...] = ()
    flags: tuple[Flag, ...] = field(default_factory=tuple)


def finite(value: float) -> bool:
    return math.isfinite(value)
