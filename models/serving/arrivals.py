"""Poisson arrivals at a serving instance: the load it carries under a percentile latency limit.

MLPerf Inference's Server and Interactive scenarios send requests as a Poisson process at a
target rate and report the highest rate whose p99 time per output token stays within a limit
(and p99 time to first token within another). With continuous batching every request in flight
is decoded at once, so up to its batch limit the instance is an infinite-server queue (M/G/inf):
the number of requests in flight is Poisson with mean L = arrival rate x time in system,
whatever the distribution of that time. A token's time is the step of the batch it is decoded
in, and the slowest tokens are decoded in the fullest batches: the p99 token in a batch near
the p99 of that count, L + z sqrt(L) (z = 2.33, the normal approximation). So the load that
meets the limit is the largest mean L with TPOT(L + z sqrt(L)) within the limit (and
L + z sqrt(L) within the batch the KV cache holds), and the instance's throughput is the
curve's at L. What the arrivals cost is the throughput between L and the concurrency whose
time per token is the limit itself.

The time to first token is not held to its limit here: the model's prefill is not queued
(a request's prefill waits for no other), so it would bind only where the prefill alone
exceeds it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist
from typing import Final

from models.serving.cost import Point

P99: Final = 0.99
BISECTIONS: Final = 60


def _at(curve: Sequence[Point], concurrency: float) -> tuple[float, float]:
    """(tokens/s per GPU, tokens/s per user) at `concurrency` on `curve` (sorted by
    concurrency): interpolated in log-log between its points; below its first point the
    throughput falls in proportion (fewer requests, each as fast), above its last it holds."""
    first, last = curve[0], curve[-1]
    if concurrency <= first.concurrency:
        return first.tok_s_per_gpu * concurrency / first.concurrency, first.tok_s_per_user
    if concurrency >= last.concurrency:
        return last.tok_s_per_gpu, last.tok_s_per_user
    upper = next(i for i, p in enumerate(curve) if p.concurrency >= concurrency)
    a, b = curve[upper - 1], curve[upper]
    share = math.log(concurrency / a.concurrency) / math.log(b.concurrency / a.concurrency)

    def between(low: float, high: float) -> float:
        return math.exp(math.log(low) + share * (math.log(high) - math.log(low)))
    return (between(a.tok_s_per_gpu, b.tok_s_per_gpu),
            between(a.tok_s_per_user, b.tok_s_per_user))


def peak_in_flight(load: float, quantile: float = P99) -> float:
    """The `quantile` of the requests in flight at a mean of `load` (Poisson, normal
    approximation): load + z sqrt(load)."""
    return load + NormalDist().inv_cdf(quantile) * math.sqrt(load)


def load_at_limit(curve: Sequence[Point], tpot_limit_s: float, quantile: float = P99
                  ) -> Point | None:
    """The point of `curve` (a configuration's, by concurrency) that Poisson arrivals reach
    when the `quantile` of the time per output token must stay within `tpot_limit_s`: at the
    largest mean load whose peak_in_flight keeps its time per token within the limit and its
    batch within the curve's largest. None when even the lightest load misses the limit."""
    ordered = sorted(curve, key=lambda p: p.concurrency)
    if not ordered:
        return None
    z = NormalDist().inv_cdf(quantile)
    # The largest load whose peak in flight still fits the batch the curve ends at.
    high = ((-z + math.sqrt(z * z + 4 * ordered[-1].concurrency)) / 2) ** 2

    def meets(load: float) -> bool:
        return 1 / _at(ordered, peak_in_flight(load, quantile))[1] <= tpot_limit_s

    low = 1e-6
    if not meets(low):
        return None
    if not meets(high):
        for _ in range(BISECTIONS):  # in log space: the loads span orders of magnitude
            middle = math.sqrt(low * high)
            low, high = (middle, high) if meets(middle) else (low, middle)
        high = low
    per_gpu, per_user = _at(ordered, high)
    return Point(high, per_gpu, per_user)
