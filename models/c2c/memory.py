"""Memory per GPU: weights, gradients and optimizer states by ZeRO stage, activations by
recompute mode (Korthikanti et al. 2022, generalised to GQA, SwiGLU and MoE)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from models.c2c.spec import (
    FloatArray,
    Framework,
    IntArray,
    Layouts,
    Precision,
    Recompute,
    TransformerSpec,
)
from models.c2c.stages import StageLayers, stage_layers

# Bytes per parameter, and which of them each ZeRO stage shards over data parallelism
# (Megatron's dist_optimizer.md): bf16 weights (2); gradients reduced in fp32 (4) with Adam's
# fp32 master weights and two moments (12), plain 18 and distributed 6 + 12/d; or gradients
# in bf16 (2), the optimizer then also keeping fp32 main gradients (16), distributed 4 + 16/d.
_WEIGHT = 2.0
_GRAD = {True: 4.0, False: 2.0}
_OPTIMIZER = {True: 12.0, False: 16.0}

ParamsPerGpu = tuple[FloatArray, FloatArray]  # (dense, expert) on the busiest GPU


def layer_parameters(model: TransformerSpec) -> tuple[float, float]:
    """(attention + norms, one dense MLP) parameters of one layer."""
    h = model.hidden
    kv = 2 * model.groups * model.kv_channels
    attention = h * (model.attention_width + kv) + model.attention_width * h + 4 * h
    up = 2 if model.swiglu else 1
    return float(attention), float((up + 1) * h * model.ffn_width)


def expert_parameters(model: TransformerSpec) -> float:
    up = 2 if model.swiglu else 1
    return float((up + 1) * model.hidden * model.expert_ffn_width)


def shared_parameters(model: TransformerSpec) -> float:
    """The shared experts' parameters in one MoE layer (replicated like a dense MLP)."""
    up = 2 if model.swiglu else 1
    return float((up + 1) * model.hidden * model.shared_ffn_width)


def total_parameters(model: TransformerSpec) -> float:
    """All parameters, embeddings included (untied embeddings count twice)."""
    attention, mlp = layer_parameters(model)
    dense_layers = model.layers - model.moe_layers
    experts = model.moe_layers * (model.experts * expert_parameters(model)
                                  + shared_parameters(model) + model.hidden * model.experts)
    embeddings = model.vocab * model.hidden * (1 if model.tied_embeddings else 2)
    return (model.layers * attention + dense_layers * mlp + experts + embeddings
            + model.seq_len * model.hidden)


def parameters_per_gpu(model: TransformerSpec, lay: Layouts,
                       split: StageLayers | None = None) -> ParamsPerGpu:
    """(dense, expert) parameters held by the busiest GPU before data-parallel sharding.

    The stage with the most layers counts; the first stage also holds the embedding.
    `split`: the layouts' stage_layers, when the caller has them."""
    attention, mlp = layer_parameters(model)
    layers = (split if split is not None else stage_layers(model, lay)).most
    moe_share = model.moe_layers / model.layers
    t = lay.tp.astype(np.float64)
    # The first stage holds the input embedding, the last the output layer: one GPU holds
    # both when untied embeddings meet a single stage.
    both = (not model.tied_embeddings) & (lay.pp == 1)
    embeddings = model.vocab * model.hidden * np.where(both, 2.0, 1.0) \
        + model.seq_len * model.hidden
    dense = (layers * (attention + (1 - moe_share) * mlp
                       + moe_share * shared_parameters(model)) + embeddings) / t
    experts_local = model.experts / lay.ep.astype(np.float64)
    expert = layers * moe_share * experts_local * expert_parameters(model) / lay.expert_tp
    return dense, expert


def state_bytes(model: TransformerSpec, lay: Layouts, params: ParamsPerGpu | None = None,
                grads_in_fp32: bool = True) -> FloatArray:
    """Weights, gradients and optimizer states per GPU for the layout's ZeRO stage, with the
    gradients kept and reduced in fp32 or in bf16 (Framework.grad_reduce_in_fp32)."""
    dense, expert = params if params is not None else parameters_per_gpu(model, lay)
    # The distributed optimizer and FSDP shard over the data- and context-parallel ranks
    # (they hold the same weights); experts over their own data-parallel replicas.
    return state_bytes_of(dense, expert, (lay.dp * lay.cp).astype(np.float64),
                          lay.expert_dp.astype(np.float64), lay.zero, grads_in_fp32)


def state_bytes_of(dense: FloatArray, expert: FloatArray, dp_shards: FloatArray,
                   expert_shards: FloatArray, zero: IntArray,
                   grads_in_fp32: bool) -> FloatArray:
    """state_bytes from its parts: (dense, expert) parameters, the ranks each shards over."""
    def per_param(shards: FloatArray) -> FloatArray:
        weight = np.where(zero >= 3, _WEIGHT / shards, _WEIGHT)
        grad, optimizer = _GRAD[grads_in_fp32], _OPTIMIZER[grads_in_fp32]
        grad = np.where(zero >= 2, grad / shards, grad)
        return weight + grad + np.where(zero >= 1, optimizer / shards, optimizer)

    return dense * per_param(dp_shards) + expert * per_param(expert_shards)


def activation_bytes_per_layer(model: TransformerSpec, fw: Framework,
                               lay: Layouts) -> FloatArray:
    """Activations one layer keeps for backward, per micro-batch, in bytes per s x b x h
    (Korthikanti eq. 1-6: 34 = 10 replicated across TP + 24 sharded, for GPT with dropout and
    BF16), rebuilt term by term so GQA, head width, SwiGLU, top-k, shared experts, dropout
    and FP8 scale it. Context parallelism splits the sequence, so everything by cp.

    Replicated: the two norms' inputs (2 + 2), the QKV and first MLP GEMMs' inputs (saved in
    the GEMM precision: 2 bytes in BF16, 1 in FP8, as Transformer Engine keeps them) and,
    with dropout, its two masks (1 + 1). Sharded: Q (2 x width), K and V, the output
    projection's input (width, in the GEMM precision), the first MLP GEMM's output (2 x ffn,
    twice for SwiGLU's gate) and the second's input (ffn, in the GEMM precision)."""
    sbh = lay.micro_batch * (model.seq_len / lay.cp.astype(np.float64)) * float(model.hidden)
    t = lay.tp.astype(np.float64)
    sp = lay.sequence_parallel
    saved = 2.0 if fw.precision == Precision.BF16 else 1.0  # a GEMM input kept for backward
    width = model.attention_width / model.hidden
    kv_share = model.groups * model.kv_channels / model.hidden
    moe_share = model.moe_layers / model.layers
    routed = model.expert_ffn_width * model.top_k + model.shared_ffn_width
    ffn = (moe_share * routed + (1 - moe_share) * model.ffn_width) / model.hidden
    fc1_out = 2.0 * ffn * (2.0 if model.swiglu else 1.0)
    sharded = 2 * width + 4 * kv_share + saved * width + fc1_out + saved * ffn
    replicated = 4.0 + 2 * saved + (2.0 if fw.dropout else 0.0)
    scores = 5.0 * model.heads * model.seq_len / model.hidden
    replicated = np.where(sp, replicated / t, replicated)
    keep_scores = (lay.recompute == Recompute.NONE) & (not fw.flash_attention)
    per_layer = sbh * (replicated + sharded / t + np.where(keep_scores, scores / t, 0.0))
    checkpoint = 2.0 * sbh / np.where(sp, t, 1.0)
    return np.where(lay.recompute == Recompute.FULL, checkpoint, per_layer)


def recomputed_layers(layers: FloatArray, lay: Layouts) -> FloatArray:
    """Layers of a stage that full recompute covers: all, or the block it is limited to."""
    full = lay.recompute == Recompute.FULL
    block = np.where(lay.recompute_layers > 0, np.minimum(lay.recompute_layers, layers), layers)
    return np.where(full, block, 0.0)


def offloaded_layers(layers: FloatArray, lay: Layouts) -> FloatArray:
    """Layers of a stage whose activations wait in host memory (at most the stage's)."""
    return np.minimum(lay.offload_layers.astype(np.float64), layers)


def activation_bytes(model: TransformerSpec, fw: Framework, lay: Layouts,
                     split: StageLayers | None = None,
                     m: FloatArray | None = None) -> FloatArray:
    """Activations on the first stage, the fullest: min(m, p) micro-batches in flight over
    its layers, x (1 + (p-1)/(v p)) with interleaving; full recompute also needs one
    layer's working set while it recomputes. A recomputed layer keeps only its input; an
    offloaded layer keeps nothing on the GPU. `m`: the micro-batches, when the caller has them."""
    if m is None:
        m = lay.global_batch // (lay.micro_batch * lay.dp)
    p = lay.pp.astype(np.float64)
    in_flight = np.minimum(m, lay.pp) * (1 + np.where(lay.interleave > 1,
                                                       (p - 1) / (lay.interleave * p), 0.0))
    split = split if split is not None else stage_layers(model, lay)
    layers = split.first
    # With the embedding in the split, the first stage's first chunk holds one layer fewer:
    # of the micro-batches in flight, those in their first chunk (min(m, p), and p - 1 more
    # with interleaving) keep one layer less than the stage's average suggests.
    in_flight_layers = layers * in_flight
    if split.embedded.any():
        first_chunk = np.minimum(m, lay.pp) * (1 + np.where(lay.interleave > 1, (p - 1) / p,
                                                            0.0))
        in_flight_layers = np.where(split.embedded, (layers + 1) * in_flight - first_chunk,
                                    in_flight_layers)
    working = activation_bytes_per_layer(
        model, fw, replace(lay, recompute=np.zeros_like(lay.recompute)))
    checkpointed = activation_bytes_per_layer(model, fw, lay)
    full = lay.recompute == Recompute.FULL
    per_layer = checkpointed  # every layer recomputed alike, or none (the sweep's case)
    if lay.recompute_layers.any() or lay.offload_layers.any():
        recomputed = recomputed_layers(layers, lay)
        # The offloaded layers are taken from those that keep everything (Megatron offloads
        # the saved tensors, which a recomputed layer barely has).
        kept = np.maximum(layers - recomputed - offloaded_layers(layers, lay), 0.0)
        total = checkpointed * recomputed + np.where(full, working, checkpointed) * kept
        per_layer = np.divide(total, layers, out=np.zeros_like(total), where=layers > 0)
    return per_layer * in_flight_layers + np.where(full, working, 0.0)


def memory_bytes(model: TransformerSpec, fw: Framework, lay: Layouts,
                 params: ParamsPerGpu | None = None,
                 split: StageLayers | None = None) -> FloatArray:
    return (state_bytes(model, lay, params, fw.grad_reduce_in_fp32)
            + activation_bytes(model, fw, lay, split))
