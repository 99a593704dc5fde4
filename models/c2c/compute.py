"""Compute: FLOPs of one transformer layer per GPU and the time they take.

Shapes come from the layout (micro-batch, TP, sequence parallelism), so the efficiency a
GEMM reaches follows from its size, not from the configuration's name.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from models.c2c import calibration as cal
from models.c2c.spec import ClusterSpec, FloatArray, Framework, Layouts, Recompute, TransformerSpec


@dataclass(frozen=True)
class LayerCompute:
    """Per layer, per micro-batch, per GPU: seconds and FLOPs of one forward pass."""

    gemm_s: FloatArray  # all matrix-engine work (projections, MLP, attention core)
    attention_core_s: FloatArray  # the part of gemm_s in QK^T and attention x V
    elementwise_s: FloatArray  # layer norms, dropouts, residuals, activation functions
    score_elementwise_s: FloatArray  # softmax + dropout on the s x s scores (unfused only)
    flops: FloatArray  # model FLOPs (no recompute, causal mask not skipped)


def gemm_seconds(rows: FloatArray, inner: FloatArray, cols: FloatArray,
                 hw: ClusterSpec, calls: FloatArray | float = 1.0) -> FloatArray:
    """Time of `calls` GEMMs of (rows x inner) @ (inner x cols), compute + memory + launch."""
    flops = 2.0 * rows * inner * cols
    moved = cal.BYTES_PER_ELEMENT * (rows * inner + inner * cols + rows * cols)
    return calls * (flops / (hw.peak_flops * cal.GEMM_COMPUTE_EFFICIENCY)
                    + moved / (hw.hbm_bw * cal.HBM_EFFICIENCY) + cal.KERNEL_OVERHEAD_S)


def layer_forward(model: TransformerSpec, hw: ClusterSpec, fw: Framework, lay: Layouts,
                  moe: bool) -> LayerCompute:
    """One layer's forward pass for one micro-batch on one GPU (dense or MoE MLP)."""
    b = lay.micro_batch.astype(np.float64)
    t = lay.tp.astype(np.float64)
    s, h, heads = float(model.seq_len), float(model.hidden), float(model.heads)
    tokens = b * s
    kv = 2.0 * model.groups * model.head_dim
    qkv = gemm_seconds(tokens, np.full_like(b, h), (h + kv) / t, hw)
    out = gemm_seconds(tokens, h / t, np.full_like(b, h), hw)
    core, core_flops = _attention_core(model, hw, fw, b, t)
    mlp, mlp_flops, ffn_elements = _mlp(model, hw, b, t, moe)
    proj_flops = 2.0 * tokens * h * (h + kv) / t + 2.0 * tokens * h * h / t
    hidden_elements = tokens * h / np.where(lay.sequence_parallel, t, 1.0)
    ffn_passes = cal.FFN_PASSES_SWIGLU if model.swiglu else cal.FFN_PASSES_GELU
    elementwise = _hbm_seconds(cal.HIDDEN_PASSES * hidden_elements
                               + ffn_passes * ffn_elements, hw) \
        + cal.ELEMENTWISE_KERNELS_PER_LAYER * cal.KERNEL_OVERHEAD_S
    scores = np.zeros_like(b) if fw.flash_attention else cal.SCORE_PASSES * b * heads * s * s / t
    return LayerCompute(gemm_s=qkv + out + core + mlp, attention_core_s=core,
                        elementwise_s=elementwise, score_elementwise_s=_hbm_seconds(scores, hw),
                        flops=proj_flops + core_flops + mlp_flops)


def _attention_core(model: TransformerSpec, hw: ClusterSpec, fw: Framework, b: FloatArray,
                    t: FloatArray) -> tuple[FloatArray, FloatArray]:
    """QK^T and attention x V: model FLOPs count the full s x s; a fused causal kernel
    skips the masked half, an unfused one writes the scores to HBM."""
    s, d = float(model.seq_len), float(model.head_dim)
    batch = b * model.heads / t
    flops = 4.0 * b * s * s * model.hidden / t
    if fw.flash_attention:
        moved = cal.BYTES_PER_ELEMENT * 4.0 * batch * s * d
        seconds = (0.5 * flops / (hw.peak_flops * cal.FUSED_ATTENTION_EFFICIENCY)
                   + moved / (hw.hbm_bw * cal.HBM_EFFICIENCY) + cal.KERNEL_OVERHEAD_S)
        return seconds, flops
    seconds = 2.0 * batch * (2.0 * s * d * s / (hw.peak_flops * cal.GEMM_COMPUTE_EFFICIENCY)
                             + cal.BYTES_PER_ELEMENT * (2 * s * d + s * s)
                             / (hw.hbm_bw * cal.HBM_EFFICIENCY)) + 2 * cal.KERNEL_OVERHEAD_S
    return seconds, flops


def _mlp(model: TransformerSpec, hw: ClusterSpec, b: FloatArray, t: FloatArray,
         moe: bool) -> tuple[FloatArray, FloatArray, FloatArray]:
    """The MLP (or the local experts as one grouped GEMM): seconds, FLOPs, activation size."""
    h = float(model.hidden)
    width = float(model.expert_ffn_width if moe else model.ffn_width)
    tokens = b * model.seq_len * (model.top_k if moe else 1)
    up = 2.0 if model.swiglu else 1.0  # gate and up projections fused into one GEMM
    seconds = (gemm_seconds(tokens, np.full_like(b, h), up * width / t, hw)
               + gemm_seconds(tokens, width / t, np.full_like(b, h), hw))
    flops = 2.0 * tokens * h * width * (up + 1.0) / t
    return seconds, flops, tokens * width / t


def _hbm_seconds(elements: FloatArray, hw: ClusterSpec) -> FloatArray:
    return cal.BYTES_PER_ELEMENT * elements / (hw.hbm_bw * cal.HBM_EFFICIENCY)


def logits_forward(model: TransformerSpec, hw: ClusterSpec, lay: Layouts) -> tuple[
        FloatArray, FloatArray]:
    """The output layer on the last stage: seconds and FLOPs of its forward pass."""
    b = lay.micro_batch.astype(np.float64)
    t = lay.tp.astype(np.float64)
    tokens = b * model.seq_len
    seconds = gemm_seconds(tokens, np.full_like(b, float(model.hidden)), model.vocab / t, hw)
    # Cross-entropy reads the logits in fp32 a few times (forward and its gradient).
    loss = cal.LOSS_BYTES_PER_LOGIT * tokens * model.vocab / t / (hw.hbm_bw * cal.HBM_EFFICIENCY)
    return seconds + loss / 3, 2.0 * tokens * model.hidden * model.vocab / t


def recompute_seconds(layer: LayerCompute, mode: FloatArray) -> FloatArray:
    """Extra forward work per layer in backward: all of it (full) or the attention core."""
    forward = layer.gemm_s + layer.elementwise_s + layer.score_elementwise_s
    selective = layer.attention_core_s + layer.score_elementwise_s
    return np.where(mode == Recompute.FULL, forward,
                    np.where(mode == Recompute.SELECTIVE, selective, 0.0))
