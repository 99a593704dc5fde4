"""Throughput per GPU against tokens/s per user as concurrency grows.

One instance of the model serves `concurrency` requests at once with continuous batching.
Each request is a prefill of its input (compute: FLOPs over the calibrated share of the
peak) and then one token per decode step; a decode step streams the weights it touches and
the batch's KV cache from HBM (memory: bytes over the calibrated share of HBM bandwidth),
does its FLOPs, all-reduces twice per layer across tensor parallelism and, for a MoE,
dispatches and combines each token's top-k copies across expert parallelism, each on the
tier its group lands on (the NVLink domain, or the NICs once the group is wider). In steady
state the instance cycles through every request once per `output_tokens` steps, so a
user's time per output token is the decode step plus the other users' prefills spread over
it. The KV cache that fits in HBM beside the weights bounds the concurrency.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from models.c2c.spec import ClusterSpec
from models.serving.calibration import ServingConstants
from models.serving.spec import Deployment, RequestShape, ServingLLM

ACTIVATION_BYTES = 2.0            # BF16 activations on the wire
USABLE_HBM_FRACTION = 0.90        # the engine's memory fraction (vLLM / SGLang default ~0.9)
RESERVED_BYTES = 4 * 2**30        # activations, CUDA graphs, the runtime


@dataclass(frozen=True)
class StepTimes:
    """One decode step of the whole batch, seconds, by part."""

    memory: float
    compute: float
    tensor_parallel: float
    expert_parallel: float
    overhead: float

    @property
    def total(self) -> float:
        return max(self.memory, self.compute) + self.tensor_parallel + \
            self.expert_parallel + self.overhead


@dataclass(frozen=True)
class CurvePoint:
    concurrency: int
    tok_s_per_gpu: float          # output tokens/s per GPU
    tok_s_per_user: float         # 1 / time per output token
    ttft_s: float
    tpot_s: float
    prefill_s: float              # one request's prefill on the instance
    step: StepTimes


def _tier(group: int, hw: ClusterSpec) -> tuple[float, float]:
    """(bandwidth with efficiency, latency) of a group of `group` GPUs: NVLink inside the
    scale-up domain, the NICs beyond it."""
    if group <= hw.domain_gpus:
        return hw.scaleup_bw * hw.scaleup_efficiency, hw.scaleup_latency
    return hw.scaleout_bw * hw.scaleout_efficiency, hw.scaleout_latency


def _tp_seconds(tokens: float, llm: ServingLLM, dep: Deployment, hw: ClusterSpec) -> float:
    """Two ring all-reduces per layer of the tokens' activations across the TP group."""
    if dep.tp == 1:
        return 0.0
    bandwidth, latency = _tier(dep.tp, hw)
    size = tokens * llm.hidden * ACTIVATION_BYTES
    per_reduce = 2 * (dep.tp - 1) * latency + 2 * (dep.tp - 1) / dep.tp * size / bandwidth
    return 2 * llm.layers * per_reduce


def _ep_seconds(tokens_per_gpu: float, llm: ServingLLM, dep: Deployment,
                hw: ClusterSpec) -> float:
    """Dispatch and combine per MoE layer: each token's top-k copies, the share bound for
    other GPUs of the expert group, over the group's tier."""
    if not llm.is_moe or dep.ep == 1:
        return 0.0
    bandwidth, latency = _tier(dep.gpus, hw)
    size = tokens_per_gpu * llm.top_k * llm.hidden * ACTIVATION_BYTES * (dep.ep - 1) / dep.ep
    return 2 * llm.routed_layers * (latency + size / bandwidth)


def _kv_shards(llm: ServingLLM, dep: Deployment) -> int:
    """How many ways tensor parallelism splits the KV cache (a latent cache: not at all)."""
    return 1 if llm.latent_kv else min(dep.tp, llm.kv_heads)


def weight_bytes_per_gpu(llm: ServingLLM, dep: Deployment) -> float:
    """Weights resident on one GPU: the shared ones split by TP, the experts by EP."""
    per_param = dep.weights.bytes_per_param
    return (llm.shared_params / dep.tp + llm.expert_params / dep.ep) * per_param


def kv_bytes_per_sequence(llm: ServingLLM, dep: Deployment, tokens: int) -> float:
    """One sequence's KV cache of `tokens` tokens on each GPU of its attention replica."""
    return tokens * llm.layers * llm.kv_per_token_layer * dep.kv_bytes / _kv_shards(llm, dep)


def max_concurrency(llm: ServingLLM, dep: Deployment, hw: ClusterSpec,
                    request: RequestShape) -> int:
    """The most requests the instance holds at once: KV caches at full length beside the
    weights in the engine's share of HBM (0: the weights alone do not fit)."""
    free = hw.hbm_bytes * USABLE_HBM_FRACTION - RESERVED_BYTES - weight_bytes_per_gpu(llm, dep)
    if free <= 0:
        return 0
    per_sequence = kv_bytes_per_sequence(llm, dep, request.input_tokens + request.output_tokens)
    return int(dep.dp * (free // per_sequence))


def decode_step(llm: ServingLLM, dep: Deployment, hw: ClusterSpec, request: RequestShape,
                concurrency: int, k: ServingConstants, peak: float) -> StepTimes:
    """One decode step with `concurrency` sequences in the batch (mid-output on average)."""
    per_replica = concurrency / dep.dp
    context = request.input_tokens + request.output_tokens / 2
    touched = 1.0
    if llm.is_moe:  # the share of a GPU's experts at least one of the batch's tokens picks
        touched = 1 - (1 - llm.top_k / llm.experts) ** concurrency
    per_param = dep.weights.bytes_per_param
    weights = (llm.shared_params / dep.tp + llm.expert_params / dep.ep * touched) * per_param
    kv = per_replica * kv_bytes_per_sequence(llm, dep, round(context))
    memory = (weights + kv) / (hw.hbm_bw * k.decode_hbm_efficiency)
    attention = 4 * llm.layers * context * llm.heads * llm.head_dim
    flops = concurrency * (2 * llm.active_params + attention) / dep.gpus
    compute = flops / (peak * k.prefill_efficiency)
    return StepTimes(memory=memory, compute=compute,
                     tensor_parallel=_tp_seconds(per_replica, llm, dep, hw),
                     expert_parallel=_ep_seconds(concurrency / dep.gpus, llm, dep, hw),
                     overhead=llm.layers * k.layer_overhead_s)


def prefill_seconds(llm: ServingLLM, dep: Deployment, hw: ClusterSpec, request: RequestShape,
                    k: ServingConstants, peak: float) -> float:
    """One request's prefill on its attention replica (tp GPUs; the experts' share spread
    over the instance): FLOPs over the calibrated peak, plus its collectives."""
    n = request.input_tokens
    attention = 2 * llm.layers * n * n * llm.heads * llm.head_dim   # causal: half of 4 n^2
    flops = 2 * llm.active_params * n + attention
    compute = flops / (dep.tp * peak * k.prefill_efficiency)
    return compute + _tp_seconds(n, llm, dep, hw) + _ep_seconds(n / dep.tp, llm, dep, hw)


def curve_point(llm: ServingLLM, dep: Deployment, hw: ClusterSpec, request: RequestShape,
                concurrency: int, k: ServingConstants, peak: float) -> CurvePoint:
    step = decode_step(llm, dep, hw, request, concurrency, k, peak)
    prefill = prefill_seconds(llm, dep, hw, request, k, peak)
    # A cycle serves every request once: its prefill (on one replica of dp) and its share
    # of output_tokens decode steps of the whole batch.
    cycle = concurrency * prefill / dep.dp + request.output_tokens * step.total
    tpot = (cycle - prefill) / request.output_tokens if concurrency > 1 else step.total
    return CurvePoint(
        concurrency=concurrency,
        tok_s_per_gpu=concurrency * request.output_tokens / cycle / dep.gpus,
        tok_s_per_user=1 / tpot, ttft_s=prefill + step.total, tpot_s=tpot,
        prefill_s=prefill, step=step)


def concurrencies(limit: int) -> list[int]:
    """1, 2, 4, ... up to `limit`, and `limit` itself."""
    if limit < 1:
        return []
    steps = [2**n for n in range(int(math.log2(limit)) + 1)]
    return steps if steps[-1] == limit else [*steps, limit]


def serving_curve(llm: ServingLLM, dep: Deployment, hw: ClusterSpec, request: RequestShape,
                  k: ServingConstants, peak: float,
                  cap: int | None = None) -> list[CurvePoint]:
    """The curve as concurrency doubles up to what the KV cache allows (and at most `cap`);
    empty when the weights alone do not fit."""
    limit = max_concurrency(llm, dep, hw, request)
    if cap is not None:
        limit = min(limit, cap)
    return [curve_point(llm, dep, hw, request, c, k, peak) for c in concurrencies(limit)]
