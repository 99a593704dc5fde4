"""Uncertainty over ranged inputs: a seeded Monte Carlo (P10/P50/P90) and a tornado.

An input given as a range [low, high] (the ledger keeps both) is sampled uniformly between
them: a source that says "120-140" states bounds, not a most likely value. Every other input
stays at its point value. The model is evaluated once on arrays of samples, so 10,000 samples
cost one vectorised call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from models.tco.finance import Num

Model = Callable[[Mapping[str, Num]], Mapping[str, Num]]
PERCENTILES = (10, 50, 90)


class TooManySamples(ValueError):
    """More samples than the caller allows: refused before any array is drawn."""


@dataclass(frozen=True)
class Percentiles:
    p10: float
    p50: float
    p90: float

    def to_json(self) -> dict[str, float]:
        return {"p10": self.p10, "p50": self.p50, "p90": self.p90}


@dataclass(frozen=True)
class TornadoBar:
    """How far one input, alone at its low and high end, moves each output."""

    name: str
    low: float
    high: float
    at_low: dict[str, float]
    at_high: dict[str, float]

    def swing(self, output: str) -> float:
        return abs(self.at_high[output] - self.at_low[output])


def _at_same_rank(value: Num, leader: tuple[float, float],
                  follower: tuple[float, float]) -> Num:
    """A follower's value at the same place in its range as `value` in the leader's."""
    (low, high), (f_low, f_high) = leader, follower
    share = (value - low) / (high - low) if high > low else 0.5
    return f_low + share * (f_high - f_low)


def monte_carlo(model: Model, point: Mapping[str, float],
                ranges: Mapping[str, tuple[float, float]], *, samples: int,
                seed: int, max_samples: int | None = None,
                together: Mapping[str, str] | None = None) -> dict[str, Percentiles]:
    """P10/P50/P90 of every output over `samples` draws (same seed, same answer). Memory is
    8 bytes per sample for each ranged input, output and intermediate array; more than
    `max_samples` (None: no limit) is refused with TooManySamples. `together` maps a ranged
    input to the one it moves with (one error, two names: two options' job times from one
    C2C estimate): it takes no draw of its own, only the same place in its own range."""
    if samples < 1:
        raise ValueError("samples must be at least 1")
    if max_samples is not None and samples > max_samples:
        raise TooManySamples(f"{samples:,} samples is more than the limit of {max_samples:,}")
    together = {k: v for k, v in (together or {}).items() if k in ranges and v in ranges}
    rng = np.random.default_rng(seed)
    values: dict[str, Num] = dict(point)
    for name in sorted(ranges):  # sorted: the draws do not depend on dict order
        if name not in together:
            low, high = ranges[name]
            values[name] = rng.uniform(low, high, samples)
    for name, leader in together.items():
        values[name] = _at_same_rank(values[leader], ranges[leader], ranges[name])
    outputs = model(values)
    result = {}
    for name, value in outputs.items():
        p10, p50, p90 = np.percentile(np.broadcast_to(value, (samples,)), PERCENTILES)
        result[name] = Percentiles(float(p10), float(p50), float(p90))
    return result


def tornado(model: Model, point: Mapping[str, float],
            ranges: Mapping[str, tuple[float, float]], rank_by: str,
            together: Mapping[str, str] | None = None) -> list[TornadoBar]:
    """One bar per ranged input, widest swing of `rank_by` first; an input that moves with
    another (`together`, as in monte_carlo) is no bar of its own but moves with its leader's."""
    together = {k: v for k, v in (together or {}).items() if k in ranges and v in ranges}
    bars = []
    for name, (low, high) in ranges.items():
        if name in together:
            continue
        followers = [f for f, leader in together.items() if leader == name]
        at_low = model({**point, name: low, **{f: ranges[f][0] for f in followers}})
        at_high = model({**point, name: high, **{f: ranges[f][1] for f in followers}})
        bars.append(TornadoBar(name, low, high, {k: float(v) for k, v in at_low.items()},
                               {k: float(v) for k, v in at_high.items()}))
    return sorted(bars, key=lambda bar: (-bar.swing(rank_by), bar.name))
