"""Alpha-beta costs of NCCL-style collectives, and which fabric tier a group lands on.

`n` ranks, `size` bytes per rank (the full buffer for all-reduce, the gathered buffer for
all-gather / reduce-scatter), `bw` the per-GPU one-direction bandwidth the tier achieves
(line rate x efficiency, or a measured bus bandwidth), `alpha` the per-step latency.
Formulas: docs/c2c-method.md#collectives.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from models.c2c.spec import ClusterSpec, FloatArray, IntArray


@dataclass(frozen=True)
class Tier:
    """One fabric tier as the collectives see it: achieved bandwidth and step latency."""

    bw: float
    alpha: float


@dataclass(frozen=True)
class TieredTime:
    """A communication time and the part of it spent on each tier."""

    scale_up: FloatArray
    scale_out: FloatArray

    @property
    def total(self) -> FloatArray:
        return self.scale_up + self.scale_out

    def __add__(self, other: TieredTime) -> TieredTime:
        return TieredTime(self.scale_up + other.scale_up, self.scale_out + other.scale_out)

    def scaled(self, factor: FloatArray | float) -> TieredTime:
        return TieredTime(self.scale_up * factor, self.scale_out * factor)


def tiers(hw: ClusterSpec) -> tuple[Tier, Tier]:
    return (Tier(hw.scaleup_bw * hw.scaleup_efficiency, hw.scaleup_latency),
            Tier(hw.scaleout_bw * hw.scaleout_efficiency, hw.scaleout_latency))


def ring_all_reduce(n: FloatArray, size: FloatArray, tier: Tier) -> FloatArray:
    return np.where(n > 1, 2 * (n - 1) * tier.alpha + 2 * (n - 1) / n * size / tier.bw, 0.0)


def ring_gather(n: FloatArray, size: FloatArray, tier: Tier) -> FloatArray:
    """All-gather or reduce-scatter (same cost)."""
    return np.where(n > 1, (n - 1) * tier.alpha + (n - 1) / n * size / tier.bw, 0.0)


def p2p(size: FloatArray, tier: Tier) -> FloatArray:
    return tier.alpha + size / tier.bw


def members_in_domain(stride: IntArray, n: IntArray, domain: int) -> IntArray:
    """How many of a group's n members (ranks `stride` apart) share one scale-up domain."""
    fit = np.maximum(domain // np.maximum(stride, 1), 1)
    return np.minimum(n, fit).astype(np.int64)


@dataclass(frozen=True)
class Placement:
    """Where a group of ranks sits: `k` members in each scale-up domain, `across` domains,
    `whole` where one domain holds them all. Computed once for every collective the same
    group runs (the sweep's hot path)."""

    k: FloatArray
    across: FloatArray
    whole: npt.NDArray[np.bool_]


def placement(stride: IntArray, n: IntArray, hw: ClusterSpec) -> Placement:
    """The placement of n ranks `stride` apart on `hw`'s scale-up domains."""
    k = members_in_domain(stride, n, hw.domain_gpus).astype(np.float64)
    across = n.astype(np.float64) / k
    return Placement(k=k, across=across, whole=across <= 1)


def hierarchical(kind: str, stride: IntArray, n: IntArray, size: FloatArray,
                 hw: ClusterSpec, placed: Placement | None = None) -> TieredTime:
    """A collective over n ranks `stride` apart: inside the scale-up domain when the whole
    group fits, otherwise reduce-scatter inside the domain, the collective across domains
    on the NICs over 1/k of the data, and all-gather inside the domain (k members/domain).
    `placed`: the group's placement, when the caller already has it."""
    up, out = tiers(hw)
    where = placed if placed is not None else placement(stride, n, hw)
    k = where.k
    if kind == "all_reduce":  # RS + AG inside, all-reduce of the shard across
        inside = ring_all_reduce(k, size, up)
        inside_split = 2 * ring_gather(k, size, up)
        crossing = ring_all_reduce(where.across, size / k, out)
    else:  # a gather's split inside is the gather inside itself
        inside = ring_gather(k, size, up)
        # NCCL runs all-gather and reduce-scatter as one ring over all n ranks: n - 1 steps,
        # of which across - 1 cross the network; the other n - across are NVLink steps, so the
        # latency grows with the whole group, not with the domains alone.
        inside_split = inside + (where.across - 1) * (k - 1) * up.alpha
        crossing = ring_gather(where.across, size / k, out)
    return TieredTime(np.where(where.whole, inside, inside_split),
                      np.where(where.whole, 0.0, crossing))


def all_to_all(stride: IntArray, n: IntArray, size: FloatArray, hw: ClusterSpec) -> TieredTime:
    """All-to-all of `size` bytes per rank: the in-domain share on NVLink and the rest on
    the NICs, concurrently; the slower path sets the time, split by each path's share."""
    up, out = tiers(hw)
    k = members_in_domain(stride, n, hw.domain_gpus).astype(np.float64)
    nf = n.astype(np.float64)
    inside = np.where(k > 1, (k - 1) * up.alpha + size * (k - 1) / nf / up.bw, 0.0)
    crossing = np.where(nf > k, (nf - k) * out.alpha + size * (nf - k) / nf / out.bw, 0.0)
    total = np.maximum(inside, crossing)
    share_up = np.divide(inside, inside + crossing, out=np.zeros_like(total),
                         where=(inside + crossing) > 0)
    return TieredTime(total * share_up, total * (1 - share_up))
