"""Compute: FLOPs of one transformer layer per GPU and the time they take.

Shapes come from the layout (micro-batch, TP, CP, expert TP, sequence parallelism), so the
efficiency a GEMM reaches follows from its size, not from the configuration's name. The
GEMMs run in the layout's precision at the architecture's efficiency for it; attention and
the output layer stay in BF16 (as Transformer Engine runs them).
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


@dataclass(frozen=True)
class Rates:
    """What one GPU does per second in a precision: FLOP/s of its GEMMs and of fused
    attention, bytes/s of HBM, bytes per GEMM operand element and per cast element."""

    gemm_flops: float
    attention_flops: float
    hbm: float
    operand_bytes: float
    quantize_bytes: float

    @classmethod
    def of(cls, hw: ClusterSpec, fw: Framework, *, bf16: bool = False) -> Rates:
        """The GEMM rates of `fw.precision` on `hw` (BF16's when `bf16`)."""
        precision = cal.Precision.BF16 if bf16 else fw.precision
        peak = hw.peak_flops if precision == cal.Precision.BF16 else hw.gemm_peak
        return cls(gemm_flops=peak * cal.gemm_efficiency(hw.arch, precision),
                   attention_flops=hw.peak_flops * cal.attention_efficiency(hw.arch),
                   hbm=hw.hbm_bw * cal.HBM_EFFICIENCY,
                   operand_bytes=cal.OPERAND_BYTES[precision],
                   quantize_bytes=cal.QUANTIZE_BYTES[precision])


def gemm_seconds(rows: FloatArray, inner: FloatArray, cols: FloatArray, rates: Rates,
                 calls: FloatArray | float = 1.0) -> FloatArray:
    """Time of `calls` GEMMs of (rows x inner) @ (inner x cols): compute + memory (operands
    in the GEMM precision, the output in BF16, the activation's cast) + launch."""
    flops = 2.0 * rows * inner * cols
    moved = (rates.operand_bytes * (rows * inner + inner * cols)
             + cal.BYTES_PER_ELEMENT * rows * cols + rates.quantize_bytes * rows * inner)
    return calls * (flops / rates.gemm_flops + moved / rates.hbm + cal.KERNEL_OVERHEAD_S)


def local_tokens(model: TransformerSpec, lay: Layouts) -> FloatArray:
    """Tokens of one micro-batch on one GPU's context-parallel share of the sequence."""
    return lay.micro_batch * (model.seq_len / lay.cp.astype(np.float64))


def layer_forward(model: TransformerSpec, hw: ClusterSpec, fw: Framework, lay: Layouts,
                  moe: bool) -> LayerCompute:
    """One layer's forward pass for one micro-batch on one GPU (dense or MoE MLP)."""
    rates = Rates.of(hw, fw)
    t = lay.tp.astype(np.float64)
    tokens = local_tokens(model, lay)
    h = float(model.hidden)
    width, kv = float(model.attention_width), 2.0 * model.groups * model.kv_channels
    qkv = gemm_seconds(tokens, np.full_like(t, h), (width + kv) / t, rates)
    out = gemm_seconds(tokens, width / t, np.full_like(t, h), rates)
    core, core_flops = _attention_core(model, hw, fw, lay)
    mlp, mlp_flops, ffn_elements = _mlp(model, rates, lay, tokens, moe)
    proj_flops = 2.0 * tokens * h * (width + kv) / t + 2.0 * tokens * width * h / t
    hidden_elements = tokens * h / np.where(lay.sequence_parallel, t, 1.0)
    ffn_passes = cal.FFN_PASSES_SWIGLU if model.swiglu else cal.FFN_PASSES_GELU
    elementwise = _hbm_seconds(cal.HIDDEN_PASSES * hidden_elements
                               + ffn_passes * ffn_elements, hw) \
        + cal.ELEMENTWISE_KERNELS_PER_LAYER * cal.KERNEL_OVERHEAD_S
    if moe:
        elementwise = elementwise + _routing(model, Rates.of(hw, fw, bf16=True), lay, tokens)
    scores = (np.zeros_like(t) if fw.flash_attention
              else cal.SCORE_PASSES * tokens * model.heads * model.seq_len / t)
    return LayerCompute(gemm_s=qkv + out + core + mlp, attention_core_s=core,
                        elementwise_s=elementwise, score_elementwise_s=_hbm_seconds(scores, hw),
                        flops=proj_flops + core_flops + mlp_flops)


def _attention_core(model: TransformerSpec, hw: ClusterSpec, fw: Framework,
                    lay: Layouts) -> tuple[FloatArray, FloatArray]:
    """QK^T and attention x V in BF16: each context-parallel rank's queries against the whole
    sequence. Model FLOPs count the full s x s; a fused causal kernel skips the masked half,
    an unfused one writes the scores to HBM."""
    t = lay.tp.astype(np.float64)
    s, d = float(model.seq_len), float(model.kv_channels)
    queries = local_tokens(model, lay)
    heads = model.heads / t
    flops = 4.0 * queries * s * model.attention_width / t
    if fw.flash_attention:
        moved = cal.BYTES_PER_ELEMENT * 4.0 * heads * queries * d
        seconds = (0.5 * flops / (hw.peak_flops * cal.attention_efficiency(hw.arch))
                   + moved / (hw.hbm_bw * cal.HBM_EFFICIENCY) + cal.KERNEL_OVERHEAD_S)
        return seconds, flops
    batch = lay.micro_batch * heads
    rows = queries / lay.micro_batch
    bf16 = cal.gemm_efficiency(hw.arch, cal.Precision.BF16)
    seconds = 2.0 * batch * (2.0 * rows * d * s / (hw.peak_flops * bf16)
                             + cal.BYTES_PER_ELEMENT * (rows * d + s * d + rows * s)
                             / (hw.hbm_bw * cal.HBM_EFFICIENCY)) + 2 * cal.KERNEL_OVERHEAD_S
    return seconds, flops


def _mlp(model: TransformerSpec, rates: Rates, lay: Layouts, tokens: FloatArray,
         moe: bool) -> tuple[FloatArray, FloatArray, FloatArray]:
    """The MLP, or the routed experts (one grouped GEMM over the local experts) plus the
    shared experts: seconds, FLOPs, activation elements. Balanced routing: each GPU's expert
    work is its tokens x top_k over tp, whatever ep and etp are; etp shapes the GEMMs."""
    h = float(model.hidden)
    t = lay.tp.astype(np.float64)
    up = 2.0 if model.swiglu else 1.0  # gate and up projections fused into one GEMM

    def dense(width: float, rows: FloatArray, split: FloatArray) -> tuple[FloatArray, FloatArray]:
        seconds = (gemm_seconds(rows, np.full_like(t, h), up * width / split, rates)
                   + gemm_seconds(rows, width / split, np.full_like(t, h), rates))
        return seconds, 2.0 * rows * h * width * (up + 1.0) / split

    if not moe:
        seconds, flops = dense(float(model.ffn_width), tokens, t)
        return seconds, flops, tokens * model.ffn_width / t
    etp = lay.expert_tp.astype(np.float64)
    routed_rows = tokens * model.top_k * etp / t
    seconds, flops = dense(float(model.expert_ffn_width), routed_rows, etp)
    elements = tokens * model.top_k * model.expert_ffn_width / t
    if model.shared_ffn_width:
        shared_s, shared_flops = dense(float(model.shared_ffn_width), tokens, t)
        seconds, flops = seconds + shared_s, flops + shared_flops
        elements = elements + tokens * model.shared_ffn_width / t
    return seconds, flops, elements


def _routing(model: TransformerSpec, bf16: Rates, lay: Layouts,
             tokens: FloatArray) -> FloatArray:
    """Seconds of a MoE layer's routing on one GPU, forward: the router GEMM (BF16; over all
    the GPU's tokens unless sequence parallelism splits them over TP), its fp32 scores, and
    the permutation of the tokens' top-k copies to their experts and back. Not model FLOPs
    (the published MFU formulas leave the router out)."""
    t = lay.tp.astype(np.float64)
    rows = tokens / np.where(lay.sequence_parallel, t, 1.0)
    router = gemm_seconds(rows, np.full_like(t, float(model.hidden)),
                          np.full_like(t, float(model.experts)), bf16)
    moved = (cal.ROUTER_SCORE_PASSES * 4.0 * rows * model.experts
             + cal.PERMUTE_PASSES * cal.BYTES_PER_ELEMENT * rows * model.top_k * model.hidden)
    return router + moved / bf16.hbm + cal.MOE_KERNELS_PER_LAYER * cal.KERNEL_OVERHEAD_S


def _hbm_seconds(elements: FloatArray, hw: ClusterSpec) -> FloatArray:
    return cal.BYTES_PER_ELEMENT * elements / (hw.hbm_bw * cal.HBM_EFFICIENCY)


def logits_forward(model: TransformerSpec, hw: ClusterSpec, lay: Layouts) -> tuple[
        FloatArray, FloatArray]:
    """The output layer (BF16) on the last stage: seconds and FLOPs of its forward pass."""
    t = lay.tp.astype(np.float64)
    tokens = local_tokens(model, lay)
    rates = Rates.of(hw, Framework(), bf16=True)
    seconds = gemm_seconds(tokens, np.full_like(t, float(model.hidden)), model.vocab / t, rates)
    # Cross-entropy reads the logits in fp32 a few times (forward and its gradient).
    loss = cal.LOSS_BYTES_PER_LOGIT * tokens * model.vocab / t / rates.hbm
    return seconds + loss / 3, 2.0 * tokens * model.hidden * model.vocab / t


def recompute_seconds(layer: LayerCompute, mode: FloatArray) -> FloatArray:
    """Extra forward work per layer in backward: all of it (full) or the attention core."""
    forward = layer.gemm_s + layer.elementwise_s + layer.score_elementwise_s
    selective = layer.attention_core_s + layer.score_elementwise_s
    return np.where(mode == Recompute.FULL, forward,
                    np.where(mode == Recompute.SELECTIVE, selective, 0.0))
