"""The iteration-time model, vectorised: one numpy evaluation for many layouts.

T_iter = m * t_microbatch + bubble + exposed DP + optimizer, where t_microbatch is the
slowest stage's compute for one micro-batch plus its exposed TP, CP, EP and PP time
(docs/c2c-method.md#iteration-time). Link (unoverlapped) and exposed times are
kept apart per dimension and per fabric tier, which is what the C2C ratios are made of.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from models.c2c import calibration as cal
from models.c2c.classify import c2c_class, recommended_fabric
from models.c2c.collectives import (
    Placement,
    TieredTime,
    all_to_all,
    hierarchical,
    p2p,
    placement,
    tiers,
)
from models.c2c.compute import (
    LayerCompute,
    layer_forward,
    local_tokens,
    logits_forward,
    recompute_seconds,
)
from models.c2c.memory import (
    ParamsPerGpu,
    activation_bytes_per_layer,
    memory_bytes,
    offloaded_layers,
    parameters_per_gpu,
    recomputed_layers,
)
from models.c2c.spec import (
    LAYOUT_FIELDS,
    ClusterSpec,
    FloatArray,
    Framework,
    Layouts,
    Precision,
    Recompute,
    TransformerSpec,
)
from models.c2c.stages import StageLayers, stage_layers

DIMENSIONS = ("tp", "cp", "pp", "dp", "ep")


@dataclass(frozen=True)
class Estimates:
    """Per-layout results (arrays aligned with `layouts`); seconds per iteration."""

    layouts: Layouts
    t_iter: FloatArray
    t_compute: FloatArray
    t_bubble: FloatArray
    link: dict[str, TieredTime]
    exposed: dict[str, TieredTime]
    model_flops_per_gpu: FloatArray  # FLOP/s per GPU counting model FLOPs only
    hw_flops_per_gpu: FloatArray  # ... counting recomputation too
    mfu: FloatArray
    memory_bytes: FloatArray
    fits: npt.NDArray[np.bool_]
    time_to_train_s: FloatArray | None

    @property
    def c2c_scale_up(self) -> FloatArray:
        return sum((e.scale_up for e in self.exposed.values()), np.zeros_like(self.t_iter)) \
            / self.t_compute

    @property
    def c2c_scale_out(self) -> FloatArray:
        return sum((e.scale_out for e in self.exposed.values()), np.zeros_like(self.t_iter)) \
            / self.t_compute

    @property
    def c2c(self) -> FloatArray:
        return self.c2c_scale_up + self.c2c_scale_out

    @property
    def c2c_link(self) -> FloatArray:
        return sum((e.total for e in self.link.values()), np.zeros_like(self.t_iter)) \
            / self.t_compute

    @property
    def c2c_class(self) -> npt.NDArray[np.str_]:
        return c2c_class(self.c2c)

    @property
    def recommended_fabric(self) -> npt.NDArray[np.str_]:
        return recommended_fabric(self.c2c_scale_up, self.c2c_scale_out,
                                  self.layouts.tp * self.layouts.ep)



@dataclass(frozen=True)
class _Stage:
    """Per micro-batch on the slowest stage."""

    compute: FloatArray
    forward: FloatArray
    backward: FloatArray
    gemm: FloatArray
    layers: FloatArray  # its layers
    layer_forward: FloatArray  # one of its layers, forward (the FSDP prefetch window)
    layer_backward: FloatArray
    tp: TieredTime
    cp: TieredTime
    attention: FloatArray  # attention core, forward + backward: what CP's exchange hides behind
    ep: TieredTime
    pp: TieredTime


BLOCK = 16_384  # rows per numpy pass: large enough to amortise, small enough for the cache


def evaluate(model: TransformerSpec, hw: ClusterSpec, fw: Framework, lay: Layouts,
             tokens: float | None = None) -> Estimates:
    """Evaluate every layout in `lay` for `model` on `hw`; see the module docstring.
    Large arrays go through in cache-sized blocks (about 1.7x faster than one pass)."""
    if len(lay) <= BLOCK:
        return _evaluate(model, hw, fw, lay, tokens)
    blocks = [_evaluate(model, hw, fw, lay.take(np.arange(i, min(i + BLOCK, len(lay)))),
                        tokens) for i in range(0, len(lay), BLOCK)]
    return concatenate(blocks)


def concatenate(parts: list[Estimates]) -> Estimates:
    """Estimates of consecutive blocks of layouts, as one."""
    def join(values: list[Any]) -> Any:
        first = values[0]
        if isinstance(first, np.ndarray):
            return np.concatenate(values)
        if isinstance(first, dict):
            return {k: TieredTime(np.concatenate([v[k].scale_up for v in values]),
                                  np.concatenate([v[k].scale_out for v in values]))
                    for k in first}
        if isinstance(first, Layouts):
            return Layouts(**{n: np.concatenate([getattr(v, n) for v in values])
                              for n in LAYOUT_FIELDS})
        return None
    return Estimates(**{name: join([getattr(p, name) for p in parts])
                        for name in Estimates.__dataclass_fields__})


def take(estimates: Estimates, index: npt.NDArray[np.intp]) -> Estimates:
    """The estimates of a subset of layouts, in `index` order."""
    def pick(value: Any) -> Any:
        if isinstance(value, np.ndarray):
            return value[index]
        if isinstance(value, dict):
            return {k: TieredTime(v.scale_up[index], v.scale_out[index])
                    for k, v in value.items()}
        if isinstance(value, Layouts):
            return value.take(index)
        return value
    return Estimates(**{name: pick(getattr(estimates, name))
                        for name in Estimates.__dataclass_fields__})


def _evaluate(model: TransformerSpec, hw: ClusterSpec, fw: Framework, lay: Layouts,
              tokens: float | None) -> Estimates:
    m = (lay.global_batch // (lay.micro_batch * lay.dp)).astype(np.float64)
    layer = _layer(model, hw, fw, lay)
    split = stage_layers(model, lay)  # once: the stage's time, parameters and memory read it
    params = parameters_per_gpu(model, lay, split)
    stage = _stage(model, hw, fw, lay, layer, split)
    tp_exposed, tp_slowdown = _tp_exposed(stage, fw, lay, hw)
    cp_exposed, cp_slowdown = _cp_exposed(stage)
    ep_exposed, ep_slowdown = _ep_exposed(stage, fw)
    per_mb = (stage.compute + tp_exposed.total + tp_slowdown + cp_exposed.total + cp_slowdown
              + ep_exposed.total + ep_slowdown + stage.pp.total)
    bubble = (lay.pp - 1) / lay.interleave * per_mb
    dp_link, dp_exposed, dp_slowdown = _dp(model, hw, fw, lay, stage, m, params)
    optimizer = _optimizer_seconds(hw, lay, params)
    t_iter = m * per_mb + bubble + dp_exposed.total + dp_slowdown + optimizer
    t_compute = m * stage.compute + optimizer
    model_flops, hw_flops = _flops_per_iteration(model, hw, lay, layer)
    gpus = lay.gpus.astype(np.float64)
    memory = memory_bytes(model, fw, lay, params, split)
    return Estimates(
        layouts=lay, t_iter=t_iter, t_compute=t_compute, t_bubble=bubble,
        link={"tp": stage.tp.scaled(m), "cp": stage.cp.scaled(m), "pp": stage.pp.scaled(m),
              "dp": dp_link, "ep": stage.ep.scaled(m)},
        exposed={"tp": tp_exposed.scaled(m), "cp": cp_exposed.scaled(m),
                 "pp": stage.pp.scaled(m), "dp": dp_exposed, "ep": ep_exposed.scaled(m)},
        model_flops_per_gpu=model_flops / (t_iter * gpus),
        hw_flops_per_gpu=hw_flops / (t_iter * gpus),
        mfu=model_flops / (t_iter * gpus * gemm_peak(hw, fw.precision)),
        memory_bytes=memory, fits=memory <= usable_memory(hw),
        time_to_train_s=None if tokens is None
        else tokens / (lay.global_batch * model.seq_len) * t_iter)


def gemm_peak(hw: ClusterSpec, precision: Precision) -> float:
    """The dense peak the GEMMs run at in `precision` (MFU is measured against it)."""
    return hw.peak_flops if precision == Precision.BF16 else hw.gemm_peak


def usable_memory(hw: ClusterSpec) -> float:
    """HBM a framework can fill: the usable fraction of capacity, less a fixed reserve."""
    return hw.hbm_bytes * cal.USABLE_HBM_FRACTION - cal.HBM_RESERVE_BYTES


def _layer(model: TransformerSpec, hw: ClusterSpec, fw: Framework,
           lay: Layouts) -> LayerCompute:
    """One average layer: dense, or the dense/MoE mix of a model with MoE layers."""
    dense = layer_forward(model, hw, fw, lay, moe=False)
    if not model.is_moe:
        return dense
    moe = layer_forward(model, hw, fw, lay, moe=True)
    share = model.moe_layers / model.layers
    return LayerCompute(*((1 - share) * getattr(dense, f) + share * getattr(moe, f)
                          for f in LayerCompute.__dataclass_fields__))


def _stage(model: TransformerSpec, hw: ClusterSpec, fw: Framework, lay: Layouts,
           layer: LayerCompute, split: StageLayers) -> _Stage:
    """Compute and per-micro-batch communication of the slowest stage: the last one (it holds
    the logits) or, with uneven stages, whichever does more."""
    forward = layer.gemm_s + layer.elementwise_s + layer.score_elementwise_s
    # Backward is two GEMMs per forward GEMM; a fused attention kernel also recomputes.
    backward = 2 * forward + (0.5 * layer.attention_core_s if fw.flash_attention else 0.0)
    mode = np.where(fw.flash_attention & (lay.recompute == Recompute.SELECTIVE),
                    Recompute.NONE, lay.recompute)
    full_share = _full_recompute_share(model, lay)
    tp_group = placement(np.ones_like(lay.tp), lay.tp, hw)  # TP's and PP's regather's
    extra = recompute_seconds(layer, mode) * np.where(mode == Recompute.FULL, full_share, 1.0)
    logits, _ = logits_forward(model, hw, lay)
    per_layer = forward + backward + extra
    other = np.maximum(split.first, split.middle)
    last_is_slowest = split.last * per_layer + 3 * logits >= other * per_layer
    layers = np.where(last_is_slowest, split.last, other)
    with_logits = np.where(last_is_slowest, 1.0, 0.0)
    offload = _offload_exposed(model, hw, fw, lay, layers, forward, backward + extra)
    compute = layers * per_layer + 3 * logits * with_logits + offload
    attention = layer.attention_core_s * (2.5 if fw.flash_attention else 3.0)
    return _Stage(compute=compute, forward=layers * forward + logits * with_logits,
                  backward=layers * (backward + extra) + 2 * logits * with_logits,
                  gemm=layers * layer.gemm_s * (3 + (mode == Recompute.FULL) * full_share),
                  layers=layers, layer_forward=forward, layer_backward=backward + extra,
                  tp=_tp_link(model, hw, lay, tp_group).scaled(layers),
                  cp=_cp_link(model, hw, lay).scaled(layers),
                  attention=layers * attention,
                  ep=_ep_link(model, hw, lay).scaled(layers * model.moe_layers / model.layers),
                  pp=_pp_link(model, hw, lay, tp_group))


def _full_recompute_share(model: TransformerSpec, lay: Layouts) -> FloatArray:
    """The share of a stage's layers full recompute covers (1 unless limited to a block)."""
    if not lay.recompute_layers.any():  # the sweep's case: no block limit, skip the split
        return np.ones(len(lay))
    layers = stage_layers(model, lay).most
    return np.divide(recomputed_layers(layers, lay), layers, out=np.ones_like(layers),
                     where=(layers > 0) & (lay.recompute == Recompute.FULL))


def _offload_exposed(model: TransformerSpec, hw: ClusterSpec, fw: Framework, lay: Layouts,
                     layers: FloatArray, forward: FloatArray,
                     backward: FloatArray) -> FloatArray:
    """Per micro-batch, what activation offloading adds: each offloaded layer's saved
    tensors go to host memory behind the next layer's forward and come back behind the
    previous layer's backward; a copy longer than the compute it hides behind shows."""
    if not lay.offload_layers.any():
        return np.zeros(len(lay))
    copy = activation_bytes_per_layer(model, fw, lay) / hw.host_bw
    exposed = np.maximum(copy - forward, 0.0) + np.maximum(copy - backward, 0.0)
    return offloaded_layers(layers, lay) * exposed


def _tp_link(model: TransformerSpec, hw: ClusterSpec, lay: Layouts,
             group: Placement) -> TieredTime:
    """One layer, one micro-batch: 4 all-reduces, or with SP 4 all-gathers + 4
    reduce-scatters + 2 all-gathers redone in backward; full recompute repeats forward's."""
    size = local_tokens(model, lay) * model.hidden * float(cal.BYTES_PER_ELEMENT)
    one = np.ones_like(lay.tp)
    full = np.where(lay.recompute == Recompute.FULL, _full_recompute_share(model, lay), 0.0)
    all_reduce = hierarchical("all_reduce", one, lay.tp, size, hw, group).scaled(4 + 2 * full)
    gathers = hierarchical("gather", one, lay.tp, size, hw, group).scaled(10 + 4 * full)
    return _where(lay.sequence_parallel, gathers, all_reduce)


def _cp_link(model: TransformerSpec, hw: ClusterSpec, lay: Layouts) -> TieredTime:
    """One layer, one micro-batch: context parallelism's ring passes every rank's keys and
    values round the cp ranks (ranks tp apart) in forward, and again with their gradients in
    backward: three passes of a (cp-1)/cp share of the gathered K and V."""
    if (lay.cp == 1).all():  # no ring (the sweep of a short sequence): exactly zero
        return _no_time(lay)
    kv = (local_tokens(model, lay) * 2.0 * model.groups * model.kv_channels / lay.tp
          * float(cal.BYTES_PER_ELEMENT))
    return hierarchical("gather", lay.tp, lay.cp, kv * lay.cp, hw).scaled(3.0)


def _ep_link(model: TransformerSpec, hw: ClusterSpec, lay: Layouts) -> TieredTime:
    """One MoE layer, one micro-batch: dispatch + combine, forward and backward, over the ep
    ranks (etp apart)."""
    if (lay.ep == 1).all():  # no all-to-all (a dense model): exactly zero
        return _no_time(lay)
    tokens = local_tokens(model, lay) / np.where(lay.sequence_parallel, lay.tp, 1)
    size = tokens * model.top_k * model.hidden * float(cal.BYTES_PER_ELEMENT)
    full = np.where(lay.recompute == Recompute.FULL, _full_recompute_share(model, lay), 0.0)
    return all_to_all(lay.expert_tp, lay.ep, size, hw).scaled(4 + 2 * full)


def _pp_link(model: TransformerSpec, hw: ClusterSpec, lay: Layouts,
             tp_group: Placement) -> TieredTime:
    """One micro-batch: a send forward and one backward per model chunk. Across domains
    Megatron's scatter/gather sends 1/t of the activation per GPU over the NICs and
    all-gathers it over NVLink (Narayanan et al. 2021, section 4.1)."""
    up, out = tiers(hw)
    size = local_tokens(model, lay) * model.hidden * float(cal.BYTES_PER_ELEMENT)
    shard = size / lay.tp
    count = np.where(lay.pp > 1, 2.0 * lay.interleave, 0.0)
    crosses = lay.gpus > hw.domain_gpus
    regather = np.where(lay.sequence_parallel, 0.0,
                        hierarchical("gather", np.ones_like(lay.tp), lay.tp, size, hw,
                                     tp_group).scale_up)
    inside = count * p2p(np.where(lay.sequence_parallel, shard, size), up)
    return TieredTime(np.where(crosses, count * regather, inside),
                      np.where(crosses, count * p2p(shard, out), 0.0))


def _tp_exposed(stage: _Stage, fw: Framework, lay: Layouts,
                hw: ClusterSpec) -> tuple[TieredTime, FloatArray]:
    """Exposed TP time per micro-batch, and the compute slowdown from overlapping it.
    Overlapped TP is pipelined in t chunks with its GEMMs: one chunk stays exposed."""
    link = stage.tp.total
    if not fw.tp_overlap:
        return stage.tp, np.zeros_like(link)
    hidden = np.minimum(link, stage.gemm) * (1 - 1 / np.maximum(lay.tp, 1))
    exposed = link - hidden
    share = np.divide(exposed, link, out=np.zeros_like(link), where=link > 0)
    slowdown = _slowdown(stage.tp, hidden, link)
    return stage.tp.scaled(share), slowdown


def _cp_exposed(stage: _Stage) -> tuple[TieredTime, FloatArray]:
    """CP's ring runs beside the attention kernels, one chunk ahead: what attention cannot
    cover stays exposed, and the covered part slows the attention it shares SMs with."""
    link = stage.cp.total
    hidden = np.minimum(link, stage.attention)
    share = np.divide(link - hidden, link, out=np.zeros_like(link), where=link > 0)
    return stage.cp.scaled(share), _slowdown(stage.cp, hidden, link)


def _ep_exposed(stage: _Stage, fw: Framework) -> tuple[TieredTime, FloatArray]:
    """With EP overlap (Megatron's overlap_moe_expert_parallel_comm), one micro-batch's
    dispatch and combine run beside another's forward or backward: what that compute cannot
    cover stays exposed, and the covered part slows it. Without, all of it is exposed."""
    link = stage.ep.total
    if not fw.ep_overlap:
        return stage.ep, np.zeros_like(link)
    hidden = np.minimum(link, stage.compute)
    share = np.divide(link - hidden, link, out=np.zeros_like(link), where=link > 0)
    return stage.ep.scaled(share), _slowdown(stage.ep, hidden, link)


def _slowdown(link: TieredTime, hidden: FloatArray, total: FloatArray) -> FloatArray:
    """Compute lost to SMs shared with `hidden` seconds of overlapped communication."""
    up_share = np.divide(link.scale_up, total, out=np.zeros_like(total), where=total > 0)
    return hidden * (up_share * cal.OVERLAP_SLOWDOWN_SCALEUP
                     + (1 - up_share) * cal.OVERLAP_SLOWDOWN_SCALEOUT)


def _dp(model: TransformerSpec, hw: ClusterSpec, fw: Framework, lay: Layouts, stage: _Stage,
        m: FloatArray, params: ParamsPerGpu) -> tuple[TieredTime, TieredTime, FloatArray]:
    """Gradient and parameter traffic of data parallelism per iteration: link time,
    exposed time and overlap slowdown. Dense weights sync over the dp x cp ranks (tp apart),
    expert weights over their expert_dp replicas (etp x ep apart).

    zero 0-2 (DDP, the distributed optimizer): gradients reduced once an iteration behind the
    last backward, parameters gathered once after the step, behind the next forward.
    zero 3 (FSDP): every layer's parameters gathered before its forward and again before its
    backward, its gradients reduce-scattered after, every micro-batch; the next layer's
    gather is prefetched behind this layer's compute, so only what one layer's compute
    cannot cover (and the first gather) is exposed."""
    dense, expert = params
    groups = ((lay.tp, lay.dp * lay.cp, dense),
              (lay.expert_tp * lay.ep, lay.expert_dp, expert))
    zero = 0 * m
    grads, gathered = TieredTime(zero, zero), TieredTime(zero, zero)
    for stride, n, count in groups:
        placed = placement(stride, n, hw)  # one group, three collectives
        grad_bytes = count * (float(cal.GRAD_REDUCE_BYTES) if fw.grad_reduce_in_fp32
                              else float(cal.BYTES_PER_ELEMENT))
        param_bytes = count * float(cal.BYTES_PER_ELEMENT)
        reduce = hierarchical("all_reduce", stride, n, grad_bytes, hw, placed)
        scatter = hierarchical("gather", stride, n, grad_bytes, hw, placed)
        gather = hierarchical("gather", stride, n, param_bytes, hw, placed)
        fsdp = lay.zero >= 3
        grads = grads + _where(fsdp, scatter.scaled(m), _where(lay.zero >= 1, scatter, reduce))
        gathered = gathered + gather.scaled(np.where(fsdp, 2 * m,
                                                     np.where(lay.zero >= 1, 1.0, 0.0)))
    link = grads + gathered
    if not fw.dp_overlap:
        return link, link, zero
    exposed_once, slowdown_once = _hidden_behind(grads, stage.backward)
    exposed_step, slowdown_step = _hidden_behind(gathered, stage.forward)
    # FSDP: per layer and micro-batch, a gather behind the previous layer's forward, a gather
    # and a reduce-scatter behind its backward; the first layer's gather waits in full.
    layers = np.maximum(stage.layers, 1.0)
    calls = m * layers
    per_forward = gathered.scaled(0.5 / calls)
    per_backward = gathered.scaled(0.5 / calls) + grads.scaled(1.0 / calls)
    fwd_exposed, fwd_slow = _hidden_behind(per_forward, stage.layer_forward)
    bwd_exposed, bwd_slow = _hidden_behind(per_backward, stage.layer_backward)
    fsdp_exposed = (fwd_exposed + bwd_exposed).scaled(calls) + per_forward.scaled(m)
    fsdp_slowdown = (fwd_slow + bwd_slow) * calls
    fsdp = lay.zero >= 3
    exposed = _where(fsdp, fsdp_exposed, exposed_once + exposed_step)
    return link, exposed, np.where(fsdp, fsdp_slowdown, slowdown_once + slowdown_step)


def _hidden_behind(link: TieredTime, window: FloatArray) -> tuple[TieredTime, FloatArray]:
    """`link` overlapped with `window` seconds of compute: its exposed part, and the compute
    slowdown of the part hidden."""
    total = link.total
    hidden = np.minimum(total, window)
    share = np.divide(total - hidden, total, out=np.zeros_like(total), where=total > 0)
    return link.scaled(share), _slowdown(link, hidden, total)


def _no_time(lay: Layouts) -> TieredTime:
    zero = np.zeros(len(lay))
    return TieredTime(zero, zero)


def _where(condition: npt.NDArray[np.bool_], a: TieredTime, b: TieredTime) -> TieredTime:
    return TieredTime(np.where(condition, a.scale_up, b.scale_up),
                      np.where(condition, a.scale_out, b.scale_out))


def _optimizer_seconds(hw: ClusterSpec, lay: Layouts, params: ParamsPerGpu) -> FloatArray:
    dense, expert = params
    sharded = lay.zero >= 1
    local = (dense / np.where(sharded, lay.dp * lay.cp, 1)
             + expert / np.where(sharded, lay.expert_dp, 1))
    return local * cal.OPTIMIZER_BYTES_PER_PARAM / (hw.hbm_bw * cal.HBM_EFFICIENCY)


def _flops_per_iteration(model: TransformerSpec, hw: ClusterSpec, lay: Layouts,
                         average: LayerCompute) -> tuple[FloatArray, FloatArray]:
    """(model, hardware) FLOPs of one iteration over all GPUs; hardware adds recompute."""
    shards = (lay.tp * lay.cp).astype(np.float64)  # one micro-batch's work is split over these
    layer = average.flops * shards
    _, logits = logits_forward(model, hw, lay)
    sequences_per_mb = lay.global_batch / lay.micro_batch
    forward = (model.layers * layer + logits * shards) * sequences_per_mb
    core = 4.0 * lay.micro_batch * model.seq_len ** 2 * model.attention_width * model.layers \
        * sequences_per_mb
    extra = np.where(lay.recompute == Recompute.FULL,
                     (forward - logits * shards * sequences_per_mb)
                     * _full_recompute_share(model, lay),
                     np.where(lay.recompute == Recompute.SELECTIVE, core, 0.0))
    return 3 * forward, 3 * forward + extra
