"""What a million tokens costs along a serving curve, at a target interactivity, and which
option is cheaper there, by how much and how sure the model is."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

SECONDS_PER_HOUR = 3600.0


@dataclass(frozen=True)
class Point:
    """One point of a curve as a cost reads it (model or measured)."""

    concurrency: float
    tok_s_per_gpu: float
    tok_s_per_user: float
    ttft_s: float | None = None


def usd_per_mtok(usd_per_gpu_hour: float, tok_s_per_gpu: float) -> float:
    """USD per million output tokens: every GPU-second of the instance charged to the output
    tokens it produced (the convention of the public serving benchmarks)."""
    return usd_per_gpu_hour / SECONDS_PER_HOUR / tok_s_per_gpu * 1e6


def at_target(points: Sequence[Point], target: float) -> Point | None:
    """The most throughput per GPU that still gives each user at least `target` tokens/s:
    between the two points that bracket the target, interpolated in log-log (throughput and
    interactivity trade off as power laws between neighbouring concurrencies); the fastest
    point when every point is faster than needed; None when none reaches the target."""
    ordered = sorted(points, key=lambda p: -p.tok_s_per_user)   # fastest per user first
    if not ordered or ordered[0].tok_s_per_user < target:
        return None
    slower = [p for p in ordered if p.tok_s_per_user < target]
    faster = [p for p in ordered if p.tok_s_per_user >= target]
    best = max(faster, key=lambda p: p.tok_s_per_gpu)
    if not slower:
        return best
    above, below = faster[-1], slower[0]
    share = (math.log(target / above.tok_s_per_user)
             / math.log(below.tok_s_per_user / above.tok_s_per_user))
    throughput = math.exp(math.log(above.tok_s_per_gpu) + share * (
        math.log(below.tok_s_per_gpu) - math.log(above.tok_s_per_gpu)))
    concurrency = math.exp(math.log(above.concurrency) + share * (
        math.log(below.concurrency) - math.log(above.concurrency)))
    ttft = (None if above.ttft_s is None or below.ttft_s is None
            else above.ttft_s + share * (below.ttft_s - above.ttft_s))
    interpolated = Point(concurrency, throughput, target, ttft)
    return interpolated if interpolated.tok_s_per_gpu >= best.tok_s_per_gpu else best


@dataclass(frozen=True)
class Priced:
    """An option at the target: its cost per million output tokens with the range the
    model's band (or a measurement's) gives it. For a model estimate, `family` and `engine`
    are those whose constants made it (see cheaper_at_target); None for a measured curve."""

    name: str
    usd_per_mtok: float
    low: float
    high: float
    family: str | None = None
    engine: str | None = None


def priced(name: str, usd_per_gpu_hour: float, point: Point, band: tuple[float, float],
           family: str | None = None, engine: str | None = None) -> Priced:
    """`band` is measured / predicted throughput (low, high): cost scales inversely."""
    cost = usd_per_mtok(usd_per_gpu_hour, point.tok_s_per_gpu)
    return Priced(name, cost, cost / band[1], cost / band[0], family, engine)


# How a margin's band was built (ServingMargin.basis).
PAIRED = "paired"
WIDEST = "widest"


@dataclass(frozen=True)
class ServingMargin:
    cheaper: str
    dearer: str
    saving: float       # 1 - cost_cheaper / cost_dearer
    p10: float
    p90: float
    # (cheaper's family, dearer's family) when the band is their paired one; None: each
    # option's band taken alone, at the widest.
    pair: tuple[str, str] | None = None

    @property
    def basis(self) -> str:
        """PAIRED: one option's error against the other's; WIDEST: each alone."""
        return WIDEST if self.pair is None else PAIRED

    @property
    def too_close(self) -> bool:
        return self.p10 < 0 < self.p90


def cheaper_at_target(options: Sequence[Priced],
                      paired: Mapping[tuple[str, str], tuple[float, float]] | None = None
                      ) -> ServingMargin | None:
    """The cheapest option against the next cheapest (None with fewer than two options).

    Two model estimates with one engine are not wrong independently: of one family they share
    its constants, of two families each family's leaning. When `paired` has their families
    (the cheaper's first), the margin is banded by it: the band (calibration.PAIRED_SHAPE) of
    one configuration's measured / predicted over the other's (validation.paired_ratios).
    Otherwise (two engines, a measured curve beside a model's, or a pair of families with too
    few comparisons) the errors are taken as unrelated and the band at the widest combination
    of the two options' bands: the cheaper at its dearest against the dearer at its cheapest,
    and the reverse."""
    if len(options) < 2:
        return None
    first, second = sorted(options, key=lambda o: o.usd_per_mtok)[:2]
    ratio = first.usd_per_mtok / second.usd_per_mtok
    pair = (first.family, second.family)
    if (paired and first.family and second.family and first.engine is not None
            and first.engine == second.engine and pair in paired):
        # Cost scales inversely with throughput: the real cost ratio is the estimated one
        # over (first's measured/predicted) / (second's measured/predicted).
        low, high = paired[pair]
        return ServingMargin(first.name, second.name, 1 - ratio, 1 - ratio / low,
                             1 - ratio / high, pair)
    return ServingMargin(first.name, second.name, 1 - ratio,
                         1 - first.high / second.low, 1 - first.low / second.high)
