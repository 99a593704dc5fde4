"""The serving model over many layouts at once: each layout's output tokens/s per GPU at a
target interactivity, in numpy, so a search can try every layout an option's hardware holds.

It is models/serving/curve.py and models/serving/cost.at_target written over arrays: one row
per layout, one column per concurrency of the curve (1, 2, 4, ... up to the layout's limit,
and the limit), the same terms in the same order, so a layout's answer here is the scalar
model's (tests/models/serving/test_layout_array.py holds them equal). Everything that does
not depend on the layout (the model's shape, the hardware, the request, the constants) is
computed once; what depends on the layout alone is computed once per row; only the decode
step is computed per row and concurrency.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from models.c2c.spec import ClusterSpec
from models.serving.calibration import EngineConstants, ServingConstants
from models.serving.curve import (
    ACTIVATION_BYTES,
    dense_equivalent_params,
    expected_largest_normal,
    layer_overhead,
    usable_hbm,
)
from models.serving.spec import Deployment, RequestShape, ServingLLM

IntArray = np.ndarray
FloatArray = np.ndarray


@dataclass(frozen=True)
class Layouts:
    """Layouts as columns: tensor parallelism, data-parallel attention replicas, expert
    parallelism (0: the experts split by TP, the engines' default), pipeline stages and
    prefill GPUs (0: aggregated). The formats, batch limit and engine are the base
    deployment's, shared by every row."""

    tp: IntArray
    dp: IntArray
    ep: IntArray
    pp: IntArray
    prefill_gpus: IntArray

    def __post_init__(self) -> None:
        sizes = {len(self.tp), len(self.dp), len(self.ep), len(self.pp), len(self.prefill_gpus)}
        if len(sizes) != 1:
            raise ValueError(f"layout columns differ in length: {sorted(sizes)}")

    def __len__(self) -> int:
        return len(self.tp)

    @property
    def gpus(self) -> IntArray:
        """The decode instance's GPUs: tp x dp x pp."""
        return self.tp * self.dp * self.pp

    @property
    def total_gpus(self) -> IntArray:
        return self.gpus + self.prefill_gpus

    def deployment(self, row: int, base: Deployment) -> Deployment:
        """Row `row` as a Deployment with `base`'s formats, batch limit and engine."""
        ep = int(self.ep[row])
        return Deployment(tp=int(self.tp[row]), dp=int(self.dp[row]), ep=ep or None,
                          pp=int(self.pp[row]), weights=base.weights, kv_bytes=base.kv_bytes,
                          max_batch=base.max_batch, prefill_gpus=int(self.prefill_gpus[row]),
                          engine=base.engine)

    def contains(self, dep: Deployment) -> bool:
        """Whether a row has `dep`'s layout (its formats, limit and engine aside)."""
        return bool(((self.tp == dep.tp) & (self.dp == dep.dp) & (self.ep == (dep.ep or 0))
                     & (self.pp == dep.pp) & (self.prefill_gpus == dep.prefill_gpus)).any())

    @classmethod
    def of(cls, deployments: list[Deployment]) -> Layouts:
        """The deployments as columns (their formats, limit and engine are not kept)."""
        def column(values: list[int]) -> IntArray:
            return np.asarray(values, dtype=np.int64)

        return cls(column([d.tp for d in deployments]), column([d.dp for d in deployments]),
                   column([d.ep or 0 for d in deployments]),
                   column([d.pp for d in deployments]),
                   column([d.prefill_gpus for d in deployments]))

    def take(self, rows: IntArray) -> Layouts:
        return Layouts(self.tp[rows], self.dp[rows], self.ep[rows], self.pp[rows],
                       self.prefill_gpus[rows])


def _tier(group: FloatArray, hw: ClusterSpec) -> tuple[FloatArray, FloatArray]:
    """curve._tier per row: NVLink inside the scale-up domain, the NICs beyond it."""
    inside = group <= hw.domain_gpus
    bandwidth = np.where(inside, hw.scaleup_bw * hw.scaleup_efficiency,
                         hw.scaleout_bw * hw.scaleout_efficiency)
    latency = np.where(inside, hw.scaleup_latency, hw.scaleout_latency)
    return bandwidth, latency


def _all_reduce(size: FloatArray, group: FloatArray, bandwidth: FloatArray,
                latency: FloatArray) -> FloatArray:
    """curve.all_reduce_seconds per element (0 for a group of one)."""
    one_shot = 2 * latency + (group - 1) * size / bandwidth
    ring = 2 * (group - 1) * latency + 2 * (group - 1) / group * size / bandwidth
    return np.where(group == 1, 0.0, np.minimum(one_shot, ring))


def _blom_z(ep: FloatArray) -> FloatArray:
    """curve.expected_largest_normal per row (curve._busiest_share); 0 where the experts are
    not spread whole (ep 1 or less)."""
    out = np.zeros_like(ep)
    for value in np.unique(ep[ep > 1]):   # a handful of distinct group sizes
        out[ep == value] = expected_largest_normal(int(value))
    return out


@dataclass(frozen=True)
class _Rows:
    """What depends on the layout alone, one value per row (float64 columns)."""

    tp: FloatArray
    dp: FloatArray
    pp: FloatArray
    gpus: FloatArray
    total: FloatArray
    prefill_gpus: FloatArray
    spread: FloatArray        # ep > 1: whole experts spread over the group
    ep: FloatArray            # the group's GPUs (1 where the experts are split by TP)
    held: FloatArray          # experts per GPU of the group (spread rows)
    z: FloatArray
    shared_bytes: FloatArray  # shared weights per GPU per stage, bytes
    expert_bytes: FloatArray  # routed experts per GPU per stage, bytes (all of them)
    kv_shards: FloatArray


def _rows(llm: ServingLLM, layouts: Layouts, bytes_per_param: float) -> _Rows:
    tp, dp, pp = (layouts.tp.astype(float), layouts.dp.astype(float), layouts.pp.astype(float))
    ep = layouts.ep.astype(float)
    spread = (ep > 1) & llm.is_moe
    shards = np.where(layouts.ep > 0, ep, tp * dp)
    held = np.where(spread, llm.experts / np.maximum(ep, 1), 1.0)
    kv_shards = np.ones_like(tp) if llm.latent_kv else np.minimum(tp, llm.kv_heads)
    return _Rows(tp=tp, dp=dp, pp=pp, gpus=tp * dp * pp,
                 total=tp * dp * pp + layouts.prefill_gpus,
                 prefill_gpus=layouts.prefill_gpus.astype(float), spread=spread,
                 ep=np.where(spread, ep, 1.0), held=held,
                 z=_blom_z(np.where(spread, ep, 0.0)),
                 shared_bytes=llm.shared_params / tp / pp * bytes_per_param,
                 expert_bytes=llm.expert_params / shards / pp * bytes_per_param,
                 kv_shards=kv_shards)


def max_concurrency(llm: ServingLLM, layouts: Layouts, hw: ClusterSpec,
                    request: RequestShape, base: Deployment) -> IntArray:
    """curve.max_concurrency per row (0: the weights alone do not fit)."""
    r = _rows(llm, layouts, base.weights.bytes_per_param)
    free = usable_hbm(hw) - (r.shared_bytes + r.expert_bytes)
    per_sequence = (llm.cached_tokens(request.input_tokens + request.output_tokens)
                    * llm.kv_per_token_layer * base.kv_bytes / r.kv_shards / r.pp)
    limit = r.dp * np.minimum(np.floor_divide(np.maximum(free, 0.0), per_sequence),
                              base.max_batch)
    return np.where(free > 0, limit, 0).astype(np.int64)


def concurrency_grid(limit: IntArray) -> FloatArray:
    """curve.concurrencies per row as a matrix: 1, 2, 4, ... up to the limit, then the limit;
    NaN past the row's last concurrency (and a whole NaN row where the limit is 0)."""
    top = int(limit.max(initial=0))
    columns = int(math.log2(top)) + 2 if top >= 1 else 1
    powers = 2.0 ** np.arange(columns - 1, dtype=float)
    grid = np.full((len(limit), columns), np.nan)
    lim = limit.astype(float)[:, None]
    grid[:, :-1] = np.where(powers[None, :] <= lim, powers[None, :], np.nan)
    # The limit itself ends the curve unless it is a power of two already on it.
    is_power = (limit >= 1) & ((limit & (limit - 1)) == 0)
    grid[:, -1] = np.where((limit >= 1) & ~is_power, limit, np.nan)
    return grid


# Rows evaluated at once: their temporaries (rows x curve length floats) stay in cache.
CHUNK_ROWS = 2048


def throughput_at_target(llm: ServingLLM, layouts: Layouts, hw: ClusterSpec,
                         request: RequestShape, base: Deployment, k: ServingConstants,
                         e: EngineConstants, peak: float, target: float) -> FloatArray:
    """Each layout's output tokens/s per GPU at `target` tokens/s per user, as
    cost.at_target reads the scalar model's curve (NaN: the curve never reaches the target,
    or the weights do not fit)."""
    limit = max_concurrency(llm, layouts, hw, request, base)
    answer = np.full(len(layouts), np.nan)
    # Rows of one curve length at a time: a curve of 4 points is not computed 19 wide.
    length = np.where(limit > 0, np.floor(np.log2(np.maximum(limit, 1))).astype(np.int64) + 2,
                      0)
    # ... and aggregated rows apart from disaggregated ones: their points differ in kind.
    key = length * 2 + (layouts.prefill_gpus > 0)
    for group_key in np.unique(key[length > 0]):
        group = np.flatnonzero(key == group_key)
        for start in range(0, len(group), CHUNK_ROWS):
            rows = group[start:start + CHUNK_ROWS]
            r = _rows(llm, layouts.take(rows), base.weights.bytes_per_param)
            grid = concurrency_grid(limit[rows])
            step = _decode_step(llm, r, hw, request, base, k, e, peak, grid)
            prefill = _prefill(llm, r, hw, request, k, e, peak)
            per_gpu, per_user = _points(r, request, grid, step, prefill[:, None],
                                        disaggregated=bool(group_key % 2))
            answer[rows] = _at_target(per_gpu, per_user, target)
    return answer


def _decode_step(llm: ServingLLM, r: _Rows, hw: ClusterSpec, request: RequestShape,
                 base: Deployment, k: ServingConstants, e: EngineConstants, peak: float,
                 c: FloatArray) -> FloatArray:
    """curve.decode_work then curve.step_times, total seconds, per row and concurrency `c`.

    Every term but the experts a MoE's batch touches is affine in the concurrency, so each
    is two numbers per row (its part at no batch and its part per sequence) and a cell costs
    a few multiply-adds: memory = m0 + m1 c + (experts streamed at c), compute = f1 c,
    tensor parallelism = min(one-shot, ring), each a0 + a1 c, and the rest (per-layer and
    per-sequence overhead, expert dispatch, stage hand-offs) = l0 + l1 c."""
    memory_rate = hw.hbm_bw * k.decode_hbm_efficiency
    replicas = r.pp * r.dp                         # c / replicas = sequences a replica runs
    context = request.input_tokens + request.output_tokens / 2
    kv_sequence = (llm.cached_tokens(context) * llm.kv_per_token_layer * base.kv_bytes
                   / r.kv_shards / r.pp)
    m0 = r.shared_bytes * r.pp / memory_rate
    m1 = kv_sequence / r.dp / memory_rate
    experts = r.expert_bytes * r.pp / memory_rate
    attention = 4 * llm.cached_tokens(context) * llm.heads * llm.head_dim
    f1 = (2 * dense_equivalent_params(llm, k) + attention) / r.gpus / (
        peak * k.decode_compute_efficiency)
    # Two all-reduces per layer of a replica's activations (c / replicas x hidden) over TP.
    bandwidth, latency = _tier(r.tp, hw)
    size = llm.hidden * ACTIVATION_BYTES / replicas
    both = 2 * llm.layers * (r.tp > 1)
    shot0, shot1 = both * 2 * latency, both * (r.tp - 1) * size / bandwidth
    ring0 = both * 2 * (r.tp - 1) * latency
    ring1 = both * 2 * (r.tp - 1) / r.tp * size / bandwidth
    l0 = np.full_like(r.tp, llm.layers * layer_overhead(llm, k) * e.overhead_scale)
    l1 = llm.layers * k.token_overhead_s / replicas
    if llm.is_moe:  # dispatch and combine of each token's top-k copies over the group
        bandwidth, latency = _tier(r.tp * r.dp, hw)
        routed = 2 * llm.routed_layers * r.spread
        l0 = l0 + routed * latency + r.spread * llm.routed_layers * e.ep_layer_s
        l1 = l1 + routed * llm.top_k * llm.hidden * ACTIVATION_BYTES * (r.ep - 1) / r.ep \
            / (r.pp * r.tp * r.dp) / bandwidth
    if (r.pp > 1).any():  # the activations handed from stage to stage
        bandwidth, latency = _tier(r.gpus, hw)
        l0 = l0 + (r.pp - 1) * latency
        l1 = l1 + (r.pp - 1) * llm.hidden * ACTIVATION_BYTES / replicas / bandwidth

    def col(a: FloatArray) -> FloatArray:
        return a[:, None]

    def affine(zero: FloatArray, per: FloatArray) -> FloatArray:
        out = col(per) * c
        out += col(zero)
        return out

    step = affine(m0, m1)
    step += col(experts) * _touched(llm, r, c / col(r.pp)) if llm.is_moe else col(experts)
    np.maximum(step, col(f1) * c, out=step)
    step += np.minimum(affine(shot0, shot1), affine(ring0, ring1))
    step += affine(l0, l1)
    return step


def _touched(llm: ServingLLM, r: _Rows, tokens: FloatArray) -> FloatArray:
    """The share of a GPU's experts `tokens` tokens make it stream (curve._weights_read): those
    at least one token picks, on the busiest GPU of a spread group (curve._busiest_share)."""
    touched = -np.expm1(tokens * math.log1p(-llm.top_k / llm.experts))
    if not r.spread.any():
        return touched
    # z x sqrt(held x t (1 - t)) / held = (z / sqrt(held)) x sqrt(t (1 - t)).
    lean = (r.z / np.sqrt(r.held))[:, None]
    busiest = np.minimum(1.0, touched + lean * np.sqrt(touched * (1 - touched)))
    return np.where(r.spread[:, None], busiest, touched)


def _expert_parallel(llm: ServingLLM, r: _Rows, hw: ClusterSpec, tokens_per_gpu: FloatArray,
                     routed_layers: float) -> FloatArray:
    """curve._ep_seconds per row: dispatch and combine per MoE layer over the group's tier
    (0 where the experts are split by TP)."""
    bandwidth, latency = _tier(r.tp * r.dp, hw)
    size = tokens_per_gpu * llm.top_k * llm.hidden * ACTIVATION_BYTES * (r.ep - 1) / r.ep
    return np.where(r.spread, 2 * routed_layers * (latency + size / bandwidth), 0.0)


def _prefill(llm: ServingLLM, r: _Rows, hw: ClusterSpec, request: RequestShape,
             k: ServingConstants, e: EngineConstants, peak: float) -> FloatArray:
    """curve.prefill_work then curve.prefill_time per row: one request on a tp-wide replica."""
    n = float(request.input_tokens)
    attention = 2 * n * llm.cached_tokens(n / 2) * llm.heads * llm.head_dim
    flops = (2 * dense_equivalent_params(llm, k) * n + attention) / r.tp
    touched = _touched(llm, r, np.full((len(r.tp), 1), n))[:, 0] if llm.is_moe else 1.0
    streamed = r.shared_bytes + r.expert_bytes * touched
    bandwidth, latency = _tier(r.tp, hw)
    collectives = 2 * llm.layers * _all_reduce(np.full_like(r.tp, n * llm.hidden
                                                            * ACTIVATION_BYTES),
                                               r.tp, bandwidth, latency)
    if llm.is_moe:
        collectives = collectives + _expert_parallel(llm, r, hw, n / r.tp,
                                                     float(llm.routed_layers))
        collectives = collectives + np.where(r.spread, llm.routed_layers, 0.0) * e.ep_layer_s
    return np.maximum(flops / (peak * k.prefill_efficiency),
                      streamed / (hw.hbm_bw * k.decode_hbm_efficiency)) + collectives


def _points(r: _Rows, request: RequestShape, c: FloatArray, step: FloatArray,
            prefill: FloatArray, disaggregated: bool) -> tuple[FloatArray, FloatArray]:
    """curve._point per row and concurrency, every row aggregated or every row
    disaggregated: (tokens/s per GPU, tokens/s per user)."""
    out = float(request.output_tokens)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if disaggregated:
            # Decode GPUs only decode; the prefill pool serves prefill_gpus / tp requests at
            # once.
            pool = (r.prefill_gpus / r.tp * out)[:, None] / prefill
            return np.minimum(c / step, pool) / r.total[:, None], 1 / step
        cycle = c * (prefill / (r.dp * r.pp)[:, None]) + out * step
        tpot = np.where(c > 1, (cycle - prefill) / out, step)
        return c * out / cycle / r.gpus[:, None], 1 / tpot


def _at_target(per_gpu: FloatArray, per_user: FloatArray, target: float) -> FloatArray:
    """cost.at_target per row over its curve's points (NaN columns are no points: every
    comparison with them is false)."""
    faster = per_user >= target
    slower = per_user < target
    best = np.max(np.where(faster, per_gpu, -np.inf), axis=1)
    # The slowest point still fast enough and the fastest too slow: cost.at_target's
    # faster[-1] and slower[0] in its stable order, the last and the first of ties.
    columns = per_user.shape[1]
    above = columns - 1 - np.argmin(np.where(faster, per_user, np.inf)[:, ::-1], axis=1)
    below = np.argmax(np.where(slower, per_user, -np.inf), axis=1)
    rows = np.arange(len(per_user))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        a_user, b_user = per_user[rows, above], per_user[rows, below]
        a_gpu, b_gpu = per_gpu[rows, above], per_gpu[rows, below]
        share = np.log(target / a_user) / np.log(b_user / a_user)
        interpolated = np.exp(np.log(a_gpu) + share * (np.log(b_gpu) - np.log(a_gpu)))
    answer = np.where(slower.any(axis=1), np.maximum(interpolated, best), best)
    return np.where(faster.any(axis=1), answer, np.nan)
