"""Throughput per GPU against tokens/s per user as concurrency grows.

One instance of the model serves `concurrency` requests at once with continuous batching.
Each request is a prefill of its input (compute: FLOPs over the calibrated share of the
peak) and then one token per decode step; a decode step streams the weights it touches and
the batch's KV cache from HBM (memory: bytes over the calibrated share of HBM bandwidth),
does its FLOPs (at the decode share of the peak, fitted apart from prefill's: small-batch
decode GEMMs run nearer the peak than a prefill's share suggests), all-reduces twice per layer
across tensor parallelism (one-shot for the small messages of a decode step, as the engines'
custom all-reduce kernels do: the latency a batch-1 decode sees) and, with expert parallelism,
dispatches and combines each token's top-k copies across the expert group, each on the tier
its group lands on (the NVLink domain, or the NICs once the group is wider). In steady state
the instance cycles through every request once per `output_tokens` steps, so a user's time
per output token is the decode step plus the other users' prefills spread over it (for a
disaggregated deployment, prefill runs on GPUs of its own and the decode GPUs only decode).
The KV cache that fits in HBM beside the weights, and the engine's batch limit, bound the
concurrency.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

from models.c2c.spec import ClusterSpec
from models.serving.calibration import EngineConstants, ServingConstants, engine_constants
from models.serving.spec import Deployment, RequestShape, ServingLLM

ACTIVATION_BYTES = 2.0            # BF16 activations on the wire
USABLE_HBM_FRACTION = 0.90        # the engine's memory fraction (vLLM / SGLang default ~0.9)
RESERVED_BYTES = 4 * 2**30        # activations, CUDA graphs, the runtime
# The ledger stores a datasheet's "80 GB" of HBM as 80 x 10^9 bytes; HBM stacks come in binary
# sizes and the datasheets round them: the drivers report about 79.6 GiB on an "80 GB" H100,
# 140.4 GiB on a "141 GB" H200 and 179 GiB on a "180 GB" B200. The serving model reads the
# figure as GiB, the memory the engines actually have.
HBM_BYTES_PER_DATASHEET_BYTE = 2**30 / 1e9


@dataclass(frozen=True)
class StepTimes:
    """One decode step of the whole batch, seconds, by part."""

    memory: float
    compute: float
    tensor_parallel: float
    expert_parallel: float
    overhead: float
    pipeline: float = 0.0

    @property
    def total(self) -> float:
        return max(self.memory, self.compute) + self.tensor_parallel + \
            self.expert_parallel + self.overhead + self.pipeline


@dataclass(frozen=True)
class CurvePoint:
    concurrency: int
    tok_s_per_gpu: float          # output tokens/s per GPU (every GPU of the deployment)
    tok_s_per_user: float         # 1 / time per output token
    ttft_s: float
    tpot_s: float
    prefill_s: float              # one request's prefill on one replica
    step: StepTimes


def usable_hbm(hw: ClusterSpec) -> float:
    """HBM bytes the engine may use: the datasheet's GB read as GiB, times its fraction."""
    return hw.hbm_bytes * HBM_BYTES_PER_DATASHEET_BYTE * USABLE_HBM_FRACTION - RESERVED_BYTES


def _tier(group: int, hw: ClusterSpec) -> tuple[float, float]:
    """(bandwidth with efficiency, latency) of a group of `group` GPUs: NVLink inside the
    scale-up domain, the NICs beyond it."""
    if group <= hw.domain_gpus:
        return hw.scaleup_bw * hw.scaleup_efficiency, hw.scaleup_latency
    return hw.scaleout_bw * hw.scaleout_efficiency, hw.scaleout_latency


def all_reduce_seconds(size: float, group: int, hw: ClusterSpec) -> float:
    """One all-reduce of `size` bytes over `group` GPUs: the faster of a one-shot exchange
    (every GPU reads its peers' buffers: one hop's latency each way, (group - 1) x size bytes)
    and a ring (2 (group - 1) steps of latency, 2 (group - 1) / group x size bytes)."""
    if group == 1:
        return 0.0
    bandwidth, latency = _tier(group, hw)
    one_shot = 2 * latency + (group - 1) * size / bandwidth
    ring = 2 * (group - 1) * latency + 2 * (group - 1) / group * size / bandwidth
    return min(one_shot, ring)


def _tp_seconds(tokens: float, layers: float, llm: ServingLLM, dep: Deployment,
                hw: ClusterSpec) -> float:
    """Two all-reduces per layer of the tokens' activations across the TP group."""
    return 2 * layers * all_reduce_seconds(tokens * llm.hidden * ACTIVATION_BYTES, dep.tp, hw)


def _ep_seconds(tokens_per_gpu: float, routed_layers: float, llm: ServingLLM,
                dep: Deployment, hw: ClusterSpec) -> float:
    """Dispatch and combine per MoE layer: each token's top-k copies, the share bound for
    other GPUs of the expert group, over the group's tier. None without expert parallelism."""
    if not llm.is_moe or dep.ep is None or dep.ep == 1:
        return 0.0
    bandwidth, latency = _tier(dep.tp * dep.dp, hw)
    size = tokens_per_gpu * llm.top_k * llm.hidden * ACTIVATION_BYTES * (dep.ep - 1) / dep.ep
    return 2 * routed_layers * (latency + size / bandwidth)


def _kv_shards(llm: ServingLLM, dep: Deployment) -> int:
    """How many ways tensor parallelism splits the KV cache (a latent cache: not at all)."""
    return 1 if llm.latent_kv else min(dep.tp, llm.kv_heads)


def weight_bytes_per_gpu(llm: ServingLLM, dep: Deployment) -> float:
    """Weights resident on one GPU: the shared ones split by TP, the experts over their
    shards, each stage's layers by PP."""
    per_param = dep.weights.bytes_per_param
    return (llm.shared_params / dep.tp + llm.expert_params / dep.expert_shards) \
        / dep.pp * per_param


def kv_bytes_per_sequence(llm: ServingLLM, dep: Deployment, tokens: float) -> float:
    """One sequence's KV cache at `tokens` tokens on each GPU of its attention replica (a
    sliding-window layer keeps only its window)."""
    return (llm.cached_tokens(tokens) * llm.kv_per_token_layer * dep.kv_bytes
            / _kv_shards(llm, dep) / dep.pp)


def max_concurrency(llm: ServingLLM, dep: Deployment, hw: ClusterSpec,
                    request: RequestShape) -> int:
    """The most requests the instance holds at once: KV caches at full length beside the
    weights in the engine's share of HBM, and at most the engine's batch limit per attention
    replica (0: the weights alone do not fit)."""
    free = usable_hbm(hw) - weight_bytes_per_gpu(llm, dep)
    if free <= 0:
        return 0
    per_sequence = kv_bytes_per_sequence(llm, dep, request.input_tokens + request.output_tokens)
    return int(dep.dp * min(free // per_sequence, dep.max_batch))


def expected_largest_normal(n: int) -> float:
    """The expected largest of `n` standard normals, in standard deviations (Blom's
    approximation)."""
    return NormalDist().inv_cdf((n - 0.375) / (n + 0.25))


def _busiest_share(llm: ServingLLM, dep: Deployment, touched: float) -> float:
    """The share of its experts the busiest GPU of the expert group streams, when `touched` is
    the share at least one token picks. Split by tensor parallelism, every GPU holds a slice of
    every expert and all stream the same bytes. Spread whole over ep GPUs, each GPU's touched
    count is about binomial (its experts, `touched`), and the step waits for the GPU with the
    most: the mean plus the expected largest of ep standard normals (Blom's approximation) in
    standard deviations, at most all of them. At a small batch this is well above the mean
    (DeepSeek-R1 at 4 sequences on EP8: about 1.7 times), at a large one nearly the mean."""
    if dep.ep is None or dep.ep == 1:
        return touched
    held = llm.experts / dep.ep
    z = expected_largest_normal(dep.ep)
    spread = math.sqrt(held * touched * (1 - touched))
    return min(1.0, touched + z * spread / held)


def _weights_read(llm: ServingLLM, dep: Deployment, tokens: float) -> float:
    """Weight bytes one GPU streams for `tokens` tokens at once: its shared weights, and of a
    MoE's experts the share at least one of the tokens picks, 1 - (1 - top_k/experts)^tokens
    (on the busiest GPU of an expert-parallel group: _busiest_share)."""
    touched = 1.0
    if llm.is_moe:
        touched = _busiest_share(llm, dep, 1 - (1 - llm.top_k / llm.experts) ** tokens)
    return (llm.shared_params / dep.tp + llm.expert_params / dep.expert_shards * touched) \
        / dep.pp * dep.weights.bytes_per_param


def _attention_flops(llm: ServingLLM, context: float) -> float:
    """FLOPs of one new token's attention at `context` tokens (QK and PV, over the layers)."""
    return 4 * llm.cached_tokens(context) * llm.heads * llm.head_dim


# The kernels of a dense grouped-query-attention layer (ServingLLM.kernels_per_layer: QKV,
# attention, output, gate-up, down): the layer the per-layer overhead is stated for.
REFERENCE_KERNELS = 5


def layer_overhead(llm: ServingLLM, k: ServingConstants) -> float:
    """The fixed cost of one layer in a decode step: k.layer_overhead_s for a layer of
    REFERENCE_KERNELS kernels, of which the share k.kernel_share grows with the kernels the
    model's layer launches (DeepSeek's latent attention and shared expert: about twice a
    dense layer's) and the rest does not (scheduling, sampling, syncs spread over the
    layers). The fit sets the share per family."""
    per_kernel = llm.kernels_per_layer / REFERENCE_KERNELS
    return k.layer_overhead_s * (1 - k.kernel_share + k.kernel_share * per_kernel)


@dataclass(frozen=True)
class DecodeWork:
    """One decode step's work before the constants turn it into seconds: what depends only on
    the model, the deployment, the hardware and the batch (a fit computes it once a curve)."""

    streamed: float          # bytes one GPU streams (weights it touches, its KV cache), all stages
    flops: float             # FLOPs per GPU outside the routed experts, all stages
    tensor_parallel: float   # seconds of TP all-reduces
    expert_parallel: float   # seconds of EP dispatch and combine (bytes and link latency)
    ep_layers: float         # MoE layers that dispatch across an expert group (0 without EP)
    sequences: float         # sequences per attention replica (each micro-batch)
    pipeline: float          # seconds of stage-to-stage hand-offs
    expert_flops: float = 0.0   # FLOPs per GPU of the routed experts' grouped GEMMs


def _routed_active(llm: ServingLLM) -> float:
    """The routed experts' parameters one token reads (top_k of them): a MoE's active
    parameters less the shared ones; 0 for a dense model."""
    return llm.active_params - llm.shared_params if llm.is_moe else 0.0


def dense_equivalent_params(llm: ServingLLM, k: ServingConstants) -> float:
    """The parameters a token's GEMMs cost as if all were dense: the routed experts' count
    1 / k.expert_gemm_scale times (layout_array's rows use it; the curve splits the FLOPs)."""
    routed = _routed_active(llm)
    return llm.active_params - routed + routed / k.expert_gemm_scale


def decode_work(llm: ServingLLM, dep: Deployment, hw: ClusterSpec, request: RequestShape,
                concurrency: int) -> DecodeWork:
    """One decode step's work with `concurrency` sequences in the batch (mid-output on
    average). With pipeline parallelism the batch moves through the pp stages in pp
    micro-batches: each stage streams its weights once per micro-batch, and a token's step is
    the pp stages one after another."""
    micro = concurrency / dep.pp
    per_replica = micro / dep.dp
    context = request.input_tokens + request.output_tokens / 2
    weights = _weights_read(llm, dep, micro)
    kv = per_replica * kv_bytes_per_sequence(llm, dep, context)
    routed = _routed_active(llm)
    flops = micro * (2 * (llm.active_params - routed) + _attention_flops(llm, context)) / dep.gpus
    expert_flops = micro * 2 * routed / dep.gpus
    layers = llm.layers / dep.pp
    stages = dep.pp  # each stage's share, once per micro-batch: pp x (its layers) = all layers
    pipeline = 0.0
    if dep.pp > 1:  # the activations handed from stage to stage
        bandwidth, latency = _tier(dep.gpus, hw)
        pipeline = (dep.pp - 1) * (latency + per_replica * llm.hidden * ACTIVATION_BYTES
                                   / bandwidth)
    expert_parallel = _ep_seconds(micro / (dep.tp * dep.dp), llm.routed_layers / dep.pp, llm,
                                  dep, hw) * stages
    return DecodeWork(streamed=(weights + kv) * stages, flops=flops * stages,
                      tensor_parallel=_tp_seconds(per_replica, layers, llm, dep, hw) * stages,
                      expert_parallel=expert_parallel, ep_layers=_ep_layers(llm, dep),
                      sequences=per_replica, pipeline=pipeline,
                      expert_flops=expert_flops * stages)


def _ep_layers(llm: ServingLLM, dep: Deployment) -> float:
    """MoE layers whose tokens cross an expert group (each once a step, over the stages)."""
    return 0.0 if not llm.is_moe or dep.ep is None or dep.ep == 1 else llm.routed_layers


def step_times(work: DecodeWork, llm: ServingLLM, hw: ClusterSpec, k: ServingConstants,
               e: EngineConstants, peak: float) -> StepTimes:
    """The decode step's seconds: streaming at the family's share of HBM bandwidth, FLOPs at
    its decode share of the peak, the per-sequence cost; the fixed cost per layer scaled by
    the engine's overhead_scale; the engine's fixed cost per expert-parallel MoE layer beside
    the dispatch's bytes."""
    memory = work.streamed / (hw.hbm_bw * k.decode_hbm_efficiency)
    compute = (work.flops + work.expert_flops / k.expert_gemm_scale) / (
        peak * k.decode_compute_efficiency)
    overhead = llm.layers * (layer_overhead(llm, k) * e.overhead_scale
                             + work.sequences * k.token_overhead_s)
    return StepTimes(memory=memory, compute=compute, tensor_parallel=work.tensor_parallel,
                     expert_parallel=work.expert_parallel + work.ep_layers * e.ep_layer_s,
                     overhead=overhead, pipeline=work.pipeline)


def decode_step(llm: ServingLLM, dep: Deployment, hw: ClusterSpec, request: RequestShape,
                concurrency: int, k: ServingConstants, peak: float,
                e: EngineConstants | None = None) -> StepTimes:
    """One decode step with `concurrency` sequences in the batch, on the deployment's engine
    (`e`, else the engine's stored constants)."""
    return step_times(decode_work(llm, dep, hw, request, concurrency), llm, hw, k,
                      e or engine_constants(dep.engine, hw.arch), peak)


@dataclass(frozen=True)
class PrefillWork:
    """One request's prefill before the constants: FLOPs and bytes per GPU of its replica,
    the seconds of its collectives, and its expert-parallel MoE layers."""

    flops: float             # outside the routed experts
    streamed: float
    collectives: float
    ep_layers: float
    expert_flops: float = 0.0   # the routed experts' grouped GEMMs


def prefill_work(llm: ServingLLM, dep: Deployment, hw: ClusterSpec,
                 request: RequestShape) -> PrefillWork:
    """One request's prefill on one tp-wide replica (through its pp stages; the experts'
    share spread over the instance)."""
    n = request.input_tokens
    # Causal attention: on average each token attends to half the prompt (or its window).
    attention = 2 * n * llm.cached_tokens(n / 2) * llm.heads * llm.head_dim
    # A prompt's tokens pick (nearly) every expert: a MoE prefill streams all of a GPU's
    # weights, which for a model of few active parameters takes longer than its FLOPs.
    routed = _routed_active(llm)
    return PrefillWork(flops=(2 * (llm.active_params - routed) * n + attention) / dep.tp,
                       streamed=_weights_read(llm, dep, n),
                       collectives=_tp_seconds(n, llm.layers, llm, dep, hw)
                       + _ep_seconds(n / dep.tp, llm.routed_layers, llm, dep, hw),
                       ep_layers=_ep_layers(llm, dep), expert_flops=2 * routed * n / dep.tp)


def prefill_time(work: PrefillWork, hw: ClusterSpec, k: ServingConstants, e: EngineConstants,
                 peak: float) -> float:
    """A prefill's seconds: FLOPs over the calibrated peak or the weights it streams,
    whichever is longer, plus its collectives and the engine's fixed cost per EP layer."""
    flops = work.flops + work.expert_flops / k.expert_gemm_scale
    return max(flops / (peak * k.prefill_efficiency),
               work.streamed / (hw.hbm_bw * k.decode_hbm_efficiency)) \
        + work.collectives + work.ep_layers * e.ep_layer_s


def prefill_seconds(llm: ServingLLM, dep: Deployment, hw: ClusterSpec, request: RequestShape,
                    k: ServingConstants, peak: float, e: EngineConstants | None = None) -> float:
    """One request's prefill on one tp-wide replica, on the deployment's engine."""
    return prefill_time(prefill_work(llm, dep, hw, request), hw, k,
                        e or engine_constants(dep.engine, hw.arch), peak)


def kv_transfer_seconds(llm: ServingLLM, dep: Deployment, hw: ClusterSpec,
                        request: RequestShape) -> float:
    """A disaggregated request's KV cache from its prefill GPUs to its decode GPUs, over the
    tier the whole deployment spans."""
    bandwidth, latency = _tier(dep.total_gpus, hw)
    size = llm.cached_tokens(request.input_tokens) * llm.kv_per_token_layer * dep.kv_bytes
    return latency + size / (bandwidth * _kv_shards(llm, dep))


def _point(llm: ServingLLM, dep: Deployment, hw: ClusterSpec, request: RequestShape,
           concurrency: int, step: StepTimes, prefill: float) -> CurvePoint:
    if dep.disaggregated:
        # Decode GPUs only decode; the prefill pool serves prefill_gpus / tp requests at once.
        decode_rate = concurrency / step.total
        prefill_rate = dep.prefill_gpus / dep.tp / prefill * request.output_tokens
        rate = min(decode_rate, prefill_rate)
        return CurvePoint(
            concurrency=concurrency, tok_s_per_gpu=rate / dep.total_gpus,
            tok_s_per_user=1 / step.total,
            ttft_s=prefill + kv_transfer_seconds(llm, dep, hw, request) + step.total,
            tpot_s=step.total, prefill_s=prefill, step=step)
    # A cycle serves every request once: its prefill (on one replica of dp x pp) and its
    # share of output_tokens decode steps of the whole batch.
    cycle = concurrency * prefill / (dep.dp * dep.pp) + request.output_tokens * step.total
    tpot = (cycle - prefill) / request.output_tokens if concurrency > 1 else step.total
    return CurvePoint(
        concurrency=concurrency,
        tok_s_per_gpu=concurrency * request.output_tokens / cycle / dep.gpus,
        tok_s_per_user=1 / tpot, ttft_s=prefill + step.total, tpot_s=tpot,
        prefill_s=prefill, step=step)


def curve_point(llm: ServingLLM, dep: Deployment, hw: ClusterSpec, request: RequestShape,
                concurrency: int, k: ServingConstants, peak: float,
                e: EngineConstants | None = None) -> CurvePoint:
    engine = e or engine_constants(dep.engine, hw.arch)
    return _point(llm, dep, hw, request, concurrency,
                  decode_step(llm, dep, hw, request, concurrency, k, peak, engine),
                  prefill_seconds(llm, dep, hw, request, k, peak, engine))


def concurrencies(limit: int) -> list[int]:
    """1, 2, 4, ... up to `limit`, and `limit` itself."""
    if limit < 1:
        return []
    steps = [2**n for n in range(int(math.log2(limit)) + 1)]
    return steps if steps[-1] == limit else [*steps, limit]


@dataclass(frozen=True)
class CurveWork:
    """A configuration's curve before the constants: its prefill's and each concurrency's
    decode step's work. The constants only scale it, so a fit computes it once and tries
    constants on it (curve_points)."""

    llm: ServingLLM
    deployment: Deployment
    hw: ClusterSpec
    request: RequestShape
    prefill: PrefillWork
    steps: tuple[tuple[int, DecodeWork], ...]


def curve_work(llm: ServingLLM, dep: Deployment, hw: ClusterSpec,
               request: RequestShape) -> CurveWork:
    """The work as concurrency doubles up to what the KV cache and the engine's batch limit
    allow; no steps when the weights alone do not fit."""
    limit = max_concurrency(llm, dep, hw, request)
    return CurveWork(llm, dep, hw, request, prefill_work(llm, dep, hw, request),
                     tuple((c, decode_work(llm, dep, hw, request, c))
                           for c in concurrencies(limit)))


def curve_points(work: CurveWork, k: ServingConstants, peak: float,
                 e: EngineConstants | None = None) -> list[CurvePoint]:
    """The curve of `work` with the family's constants `k` and the engine's `e` (else the
    deployment's engine's stored constants)."""
    engine = e or engine_constants(work.deployment.engine, work.hw.arch)
    prefill = prefill_time(work.prefill, work.hw, k, engine, peak)
    return [_point(work.llm, work.deployment, work.hw, work.request, c,
                   step_times(w, work.llm, work.hw, k, engine, peak), prefill)
            for c, w in work.steps]


def serving_curve(llm: ServingLLM, dep: Deployment, hw: ClusterSpec, request: RequestShape,
                  k: ServingConstants, peak: float,
                  e: EngineConstants | None = None) -> list[CurvePoint]:
    """The curve as concurrency doubles up to what the KV cache and the engine's batch limit
    allow, on the deployment's engine (`e` overrides its constants); empty when the weights
    alone do not fit."""
    return curve_points(curve_work(llm, dep, hw, request), k, peak, e)
