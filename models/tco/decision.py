"""A TCO comparison read as a decision: which option is cheaper per job, by how much, how
sure the model is, and what would change the answer.

Pure arithmetic over a comparison's stored figures. With both job times known, the cost per
job of the scale-out option over the scale-up one is s / s*, where s = JCT_out / JCT_up (the
C2C model's speed-up) and s* the break-even speed-up (models.tco.ownership), so the margin
and its band follow from the bands of s and s* without another Monte Carlo run.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Band:
    """A point value with its P10 and P90."""

    value: float
    p10: float
    p90: float

    @classmethod
    def of(cls, value: float, ranges: Mapping[str, float] | None) -> Band:
        """`value` with the P10/P90 of `ranges` (a point band when they are missing)."""
        ranges = ranges or {}
        return cls(value, float(ranges.get("p10", value)), float(ranges.get("p90", value)))


@dataclass(frozen=True)
class Margin:
    """How much cheaper per job `cheaper` is than `dearer`: 1 - cost_cheaper / cost_dearer
    (0.09: 9 % cheaper), with its P10-P90 (a band reaching below 0 means the other option
    may be the cheaper one)."""

    cheaper: str
    dearer: str
    saving: float
    p10: float
    p90: float

    @property
    def too_close(self) -> bool:
        """The band holds both answers (a band that touches zero does too: at its end the
        two options cost the same)."""
        return self.p10 <= 0 <= self.p90


def job_cost_margin(scale_up: str, scale_out: str, speedup: Band,
                    break_even: Band) -> Margin:
    """The cost-per-job margin of a comparison from its speed-up s and break-even s*.

    cost_out / cost_up = s / s*. The band takes the extremes of both bands together
    (s at its P10 with s* at its P90, and the reverse): the two come from different
    uncertainties (the C2C model's error; the ledger's price and power ranges), and the
    widest combination is the honest one to print.
    """
    ratio = speedup.value / break_even.value          # cost_out / cost_up
    low = speedup.p10 / break_even.p90
    high = speedup.p90 / break_even.p10
    if ratio >= 1:   # scale-up is cheaper: saving = 1 - cost_up / cost_out = 1 - 1 / ratio
        return Margin(scale_up, scale_out, 1 - 1 / ratio, 1 - 1 / low, 1 - 1 / high)
    return Margin(scale_out, scale_up, 1 - ratio, 1 - high, 1 - low)


# What settles a call the model's error leaves open.
SETTLE = ("a measured nccl-tests all-reduce on the scale-out fabric, or a benchmark of the "
          "workload on each option")
TOO_CLOSE = "too close to call"
# A serving comparison whose model estimates are of a GPU family short of the calibration
# targets (models.serving.calibration.short_of_targets): no band to decide on.
NO_VERDICT = "no verdict"


@dataclass(frozen=True)
class Verdict:
    """A comparison's answer: the cheaper option per job, or "too close to call" when the
    margin's P10-P90 holds both answers (then what would settle it); `call` is None when a
    job time or a band is unknown (cost per GPU-hour compares, cost per job cannot)."""

    call: str | None
    margin: Margin | None = None

    @property
    def settle_with(self) -> str | None:
        return SETTLE if self.call == TOO_CLOSE else None

    def to_json(self) -> dict[str, object]:
        margin = self.margin
        return {"call": self.call, "settle_with": self.settle_with,
                "cheaper": margin.cheaper if margin else None,
                "dearer": margin.dearer if margin else None,
                "saving": margin.saving if margin else None,
                "saving_p10": margin.p10 if margin else None,
                "saving_p90": margin.p90 if margin else None}


def comparison_verdict(scale_up: str, scale_out: str, speedup: Band | None,
                       break_even: Band | None) -> Verdict:
    """The one rule that calls a comparison: the cost-per-job margin from s and s* with its
    widest band (job_cost_margin); too close to call when that band straddles zero, which is
    when the P10-P90 of s and of s* overlap."""
    if speedup is None or break_even is None:
        return Verdict(None)
    margin = job_cost_margin(scale_up, scale_out, speedup, break_even)
    return Verdict(TOO_CLOSE if margin.too_close else margin.cheaper, margin)


HOURS_PER_DAY = 24


def rented_job_cost(usd_per_gpu_hour: float, gpus: float, days: float) -> float:
    """The same GPU-hours as an owned option's job, rented at a price per GPU-hour: the
    rent-vs-buy line beside an owned option."""
    return usd_per_gpu_hour * gpus * days * HOURS_PER_DAY


@dataclass(frozen=True)
class Flip:
    """One input of the tornado that, at an end of its range, makes the other option the
    cheaper one per job."""

    input: str
    end: str          # "low" or "high"
    value: float      # the input at that end


def flipping_inputs(tornado: Sequence[Mapping[str, object]], cheaper: str,
                    dearer: str) -> list[Flip]:
    """The tornado inputs (largest swing first, as stored) whose low or high end turns
    `dearer` into the cheaper option per job. Each tornado row holds the input's name,
    its `low` and `high`, and `<option>.job_cost_usd` as [cost at low, cost at high]."""
    flips = []
    for row, costs_cheaper, costs_dearer in _job_costs(tornado, cheaper, dearer):
        for n, end in enumerate(("low", "high")):
            if costs_dearer[n] < costs_cheaper[n]:
                flips.append(Flip(str(row["input"]), end, float(row[end])))  # type: ignore[arg-type]
                break
    return flips


@dataclass(frozen=True)
class PointAtEnd:
    """A tornado input whose point value is an end of its range: the Monte Carlo moves it one
    way only, so the point estimate can sit outside its own P10-P90."""

    input: str
    end: str          # "low" or "high": the end the point takes
    low: float
    high: float


def point_at_range_end(tornado: Sequence[Mapping[str, object]], cheaper: str, dearer: str,
                       point: tuple[float, float]) -> PointAtEnd | None:
    """Of the tornado inputs that leave both job costs at their point values (`point`:
    cheaper's, dearer's) at one end of their range and move them at the other, the one that
    moves the margin most; None when there is none."""
    found: list[tuple[float, PointAtEnd]] = []
    for row, costs_cheaper, costs_dearer in _job_costs(tornado, cheaper, dearer):
        for n, end in enumerate(("low", "high")):
            at_point = (math.isclose(costs_cheaper[n], point[0], rel_tol=1e-9)
                        and math.isclose(costs_dearer[n], point[1], rel_tol=1e-9))
            moves = not (math.isclose(costs_cheaper[1 - n], point[0], rel_tol=1e-9)
                         and math.isclose(costs_dearer[1 - n], point[1], rel_tol=1e-9))
            if at_point and moves:
                swing = abs(costs_cheaper[1 - n] / costs_dearer[1 - n] - point[0] / point[1])
                found.append((swing, PointAtEnd(str(row["input"]), end,
                                                float(row["low"]),  # type: ignore[arg-type]
                                                float(row["high"]))))  # type: ignore[arg-type]
    return max(found, key=lambda f: f[0])[1] if found else None


def _job_costs(tornado: Sequence[Mapping[str, object]], cheaper: str, dearer: str
               ) -> Iterator[tuple[Mapping[str, object], tuple[float, float], tuple[float, float]]]:
    """Each tornado row with both options' job costs at the input's (low, high) ends; rows
    without a finite pair for both are skipped."""
    for row in tornado:
        pairs = [row.get(f"{name}.job_cost_usd") for name in (cheaper, dearer)]
        if all(_pair(p) for p in pairs):
            yield row, tuple(pairs[0]), tuple(pairs[1])  # type: ignore[misc,arg-type]


def _pair(value: object) -> bool:
    return (isinstance(value, list | tuple) and len(value) == 2
            and all(isinstance(v, int | float) and math.isfinite(v) for v in value))


@dataclass(frozen=True)
class Swing:
    """One tornado input's effect on the margin: the saving of the cheaper option (as in
    Margin) with the input at the low and at the high end of its range."""

    input: str
    low: float
    high: float
    saving_at_low: float
    saving_at_high: float


def margin_swings(tornado: Sequence[Mapping[str, object]], cheaper: str, dearer: str,
                  top: int = 5) -> list[Swing]:
    """The `top` inputs that move the cost-per-job margin the most, largest first (the
    tornado of the margin, from the stored tornado of each option's job cost)."""
    swings = []
    for row, costs_cheaper, costs_dearer in _job_costs(tornado, cheaper, dearer):
        low, high = (1 - c / d for c, d in zip(costs_cheaper, costs_dearer, strict=True))
        swings.append(Swing(str(row["input"]), float(row["low"]), float(row["high"]),  # type: ignore[arg-type]
                            low, high))
    swings.sort(key=lambda s: -abs(s.saving_at_high - s.saving_at_low))
    return [s for s in swings if s.saving_at_high != s.saving_at_low][:top]
