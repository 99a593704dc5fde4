"""The iteration-time model, vectorised: one numpy evaluation for many layouts.

T_iter = m * t_microbatch + bubble + exposed DP + optimizer, where t_microbatch is the
slowest stage's compute for one micro-batch plus its exposed TP, CP, EP and PP time
(docs/c2c-method.md#iteration-time). Link (unoverlapped) and exposed times are
kept apart per dimension and per fabric tier, which is what the C2C ratios are made of.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
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
    activation_bytes,
    activation_bytes_per_layer,
    offloaded_layers,
    parameters_per_gpu,
    recomputed_layers,
    state_bytes_of,
)
from models.c2c.spec import (
    LAYOUT_FIELDS,
    ClusterSpec,
    FloatArray,
    Framework,
    IntArray,
    Layouts,
    Precision,
    Recompute,
    TransformerSpec,
)
from models.c2c.stages import StageLayers, stage_layers

DIMENSIONS = ("tp", "cp", "pp", "dp", "ep")
# Every layout column but the ZeRO stage: layouts equal in these share all but the
# data-parallel traffic, the optimizer step and the state memory (`_ZeroFree`).
BUT_ZERO = tuple(name for name in LAYOUT_FIELDS if name != "zero")


@dataclass(frozen=True)
class Runs:
    """Rows of a Layouts grouped into runs of neighbours equal in some columns: what depends
    on those columns alone is computed once per run (on `firsts`) and expanded to the rows.
    The search enumerates ZeRO innermost, so its runs hold up to three layouts; rows in no
    particular order make runs of one, and then nothing is grouped or expanded."""

    first: npt.NDArray[np.intp] | None  # each run's first row; None: every row is its own run
    index: npt.NDArray[np.intp] | None  # each row's run
    count: int  # runs

    @classmethod
    def of(cls, lay: Layouts, names: tuple[str, ...]) -> Runs:
        n = len(lay)
        same = np.ones(max(n - 1, 0), dtype=bool)
        for name in names:
            column = getattr(lay, name)
            same &= column[1:] == column[:-1]
        if not same.any():
            return cls(None, None, n)
        starts = np.ones(n, dtype=bool)
        starts[1:] = ~same
        first = np.flatnonzero(starts)
        return cls(first, np.cumsum(starts, dtype=np.intp) - 1, len(first))

    def firsts(self, lay: Layouts) -> Layouts:
        return lay if self.first is None else lay.take(self.first)

    def expand(self, values: FloatArray) -> FloatArray:
        """Per-run values, one per row."""
        return values if self.index is None else values[self.index]

    def expand_time(self, time: TieredTime) -> TieredTime:
        return TieredTime(self.expand(time.scale_up), self.expand(time.scale_out))

    def index_of_row(self) -> npt.NDArray[np.intp]:
        return np.arange(self.count) if self.index is None else self.index


def layout_memory(model: TransformerSpec, fw: Framework, lay: Layouts) -> FloatArray:
    """Memory per GPU of each layout (memory.memory_bytes), the activations computed once
    per run of layouts that differ only in ZeRO: the same numbers, for the search's filter."""
    runs = Runs.of(lay, BUT_ZERO)
    shape = runs.firsts(lay)
    split = stage_layers(model, shape)
    dense, expert = parameters_per_gpu(model, shape, split)
    x = runs.expand
    return (state_bytes_of(x(dense), x(expert), x((shape.dp * shape.cp).astype(np.float64)),
                           x(shape.expert_dp.astype(np.float64)), lay.zero,
                           fw.grad_reduce_in_fp32)
            + x(activation_bytes(model, fw, shape, split)))


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
    Large arrays go through in cache-sized blocks (about 1.7x faster than one pass); the
    blocks are views of `lay`, and `lay` itself is what the result holds."""
    if len(lay) <= BLOCK:
        return _evaluate(model, hw, fw, lay, tokens)
    blocks = [_evaluate(model, hw, fw, _rows(lay, i, min(i + BLOCK, len(lay))), tokens)
              for i in range(0, len(lay), BLOCK)]
    return replace(concatenate(blocks, with_layouts=False), layouts=lay)


def _rows(lay: Layouts, start: int, stop: int) -> Layouts:
    """Rows start..stop of `lay`, as views (no copy)."""
    return Layouts(**{name: getattr(lay, name)[start:stop] for name in LAYOUT_FIELDS})


def concatenate(parts: list[Estimates], with_layouts: bool = True) -> Estimates:
    """Estimates of consecutive blocks of layouts, as one (`with_layouts` False: the caller
    has the layouts whole, and the result's are None until it sets them)."""
    def join(values: list[Any]) -> Any:
        first = values[0]
        if isinstance(first, np.ndarray):
            return np.concatenate(values)
        if isinstance(first, dict):
            return {k: TieredTime(np.concatenate([v[k].scale_up for v in values]),
                                  np.concatenate([v[k].scale_out for v in values]))
                    for k in first}
        if isinstance(first, Layouts) and with_layouts:
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


@dataclass(frozen=True)
class _ZeroFree:
    """Everything of an iteration that the ZeRO stage does not change, for layouts that
    differ at most in it. The search enumerates ZeRO innermost, so neighbouring layouts
    share all of this: it is computed once per run of them (`Runs`) and expanded, and only
    what ZeRO decides (data-parallel traffic, optimizer, state memory) is done per layout.
    Each number is made by the same operations as a per-layout pass: the results are equal."""

    m: FloatArray  # micro-batches per iteration
    gpus: FloatArray
    base: FloatArray  # m x per-micro-batch time + bubble: t_iter before DP and optimizer
    compute: FloatArray  # m x the slowest stage's compute
    bubble: FloatArray
    stage: _Stage
    link: dict[str, TieredTime]  # per iteration, DP aside
    exposed: dict[str, TieredTime]
    # FLOPs and activation memory: not made when only t_iter is asked for (a ranking)
    model_flops: FloatArray | None
    hw_flops: FloatArray | None
    activation: FloatArray | None  # bytes
    dense: FloatArray  # parameters on the busiest GPU, before sharding
    expert: FloatArray
    dp_shards: FloatArray  # the ranks the dense and the expert states shard over
    expert_shards: FloatArray
    # Data-parallel traffic per ZeRO regime: DDP's all-reduce, the distributed optimizer's
    # reduce-scatter (+ gather), FSDP's per micro-batch collectives.
    grads_ddp: TieredTime
    grads_sharded: TieredTime
    grads_fsdp: TieredTime
    gathered_sharded: TieredTime
    gathered_fsdp: TieredTime
    optimizer_sharded: FloatArray
    optimizer_whole: FloatArray


_DpTime = tuple[TieredTime, TieredTime, FloatArray]  # DP link, exposed, overlap slowdown


def iteration_times(model: TransformerSpec, hw: ClusterSpec, fw: Framework,
                    lay: Layouts) -> FloatArray:
    """evaluate(...).t_iter alone (the same numbers): what a search ranks by, without
    assembling the rest of the estimates for every layout."""
    return np.concatenate([_timing(model, hw, fw, _rows(lay, i, min(i + BLOCK, len(lay))),
                                   full=False)[-1]
                           for i in range(0, max(len(lay), 1), BLOCK)])


def _timing(model: TransformerSpec, hw: ClusterSpec, fw: Framework, lay: Layouts,
            full: bool = True) -> tuple[Runs, _ZeroFree, _DpTime, FloatArray, FloatArray]:
    """The runs, their ZeRO-free part, DP (link, exposed, slowdown), optimizer and t_iter."""
    runs = Runs.of(lay, BUT_ZERO)
    free = _zero_free(model, hw, fw, runs.firsts(lay), full)
    x = runs.expand
    dp = _dp(hw, fw, lay, free, runs)
    optimizer = np.where(lay.zero >= 1, x(free.optimizer_sharded), x(free.optimizer_whole))
    t_iter = x(free.base) + dp[1].total + dp[2] + optimizer
    return runs, free, dp, optimizer, t_iter


def _evaluate(model: TransformerSpec, hw: ClusterSpec, fw: Framework, lay: Layouts,
              tokens: float | None) -> Estimates:
    runs, free, (dp_link, dp_exposed, _), optimizer, t_iter = _timing(model, hw, fw, lay)
    x = runs.expand
    # made, as _timing was asked for the full estimates
    assert free.model_flops is not None and free.hw_flops is not None
    assert free.activation is not None
    t_compute = x(free.compute) + optimizer
    gpus = x(free.gpus)
    model_flops, hw_flops = x(free.model_flops), x(free.hw_flops)
    memory = (state_bytes_of(x(free.dense), x(free.expert), x(free.dp_shards),
                             x(free.expert_shards), lay.zero, fw.grad_reduce_in_fp32)
              + x(free.activation))
    link = {k: runs.expand_time(v) for k, v in free.link.items()}
    exposed = {k: runs.expand_time(v) for k, v in free.exposed.items()}
    exposed["pp"] = link["pp"]  # pipeline sends are never hidden
    flops_time = t_iter * gpus
    return Estimates(
        layouts=lay, t_iter=t_iter, t_compute=t_compute, t_bubble=x(free.bubble),
        link={**link, "dp": dp_link},
        exposed={**exposed, "dp": dp_exposed},
        model_flops_per_gpu=model_flops / flops_time,
        hw_flops_per_gpu=hw_flops / flops_time,
        mfu=model_flops / (flops_time * gemm_peak(hw, fw.precision)),
        memory_bytes=memory, fits=memory <= usable_memory(hw),
        time_to_train_s=None if tokens is None
        else tokens / (lay.global_batch * model.seq_len) * t_iter)


def _zero_free(model: TransformerSpec, hw: ClusterSpec, fw: Framework,
               lay: Layouts, full: bool = True) -> _ZeroFree:
    """The ZeRO-independent part of `_evaluate` for `lay` (whose zero column is ignored)."""
    m = (lay.global_batch // (lay.micro_batch * lay.dp)).astype(np.float64)
    layer = _layer(model, hw, fw, lay)
    split = stage_layers(model, lay)  # once: the stage's time, parameters and memory read it
    dense, expert = parameters_per_gpu(model, lay, split)
    stage = _stage(model, hw, fw, lay, layer, split)
    tp_exposed, tp_slowdown = _tp_exposed(stage, fw, lay, hw)
    cp_exposed, cp_slowdown = _cp_exposed(stage)
    ep_exposed, ep_slowdown = _ep_exposed(stage, fw)
    per_mb = (stage.compute + tp_exposed.total + tp_slowdown + cp_exposed.total + cp_slowdown
              + ep_exposed.total + ep_slowdown + stage.pp.total)
    bubble = (lay.pp - 1) / lay.interleave * per_mb
    model_flops, hw_flops = (_flops_per_iteration(model, hw, lay, layer) if full
                             else (None, None))
    expert_dp = lay.expert_dp
    dp_shards = (lay.dp * lay.cp).astype(np.float64)
    expert_shards = expert_dp.astype(np.float64)
    traffic = _dp_traffic(hw, fw, lay, m, (dense, expert), expert_dp, stage.layers)
    return _ZeroFree(
        m=m, gpus=lay.gpus.astype(np.float64), base=m * per_mb + bubble,
        compute=m * stage.compute, bubble=bubble, stage=stage,
        link={"tp": stage.tp.scaled(m), "cp": stage.cp.scaled(m), "pp": stage.pp.scaled(m),
              "ep": stage.ep.scaled(m)},
        exposed={"tp": tp_exposed.scaled(m), "cp": cp_exposed.scaled(m),
                 "ep": ep_exposed.scaled(m)},
        model_flops=model_flops, hw_flops=hw_flops,
        activation=activation_bytes(model, fw, lay, split, m=m) if full else None,
        dense=dense, expert=expert, dp_shards=dp_shards, expert_shards=expert_shards,
        **traffic,
        optimizer_sharded=_optimizer_seconds(hw, dense / (lay.dp * lay.cp) + expert / expert_dp),
        optimizer_whole=_optimizer_seconds(hw, dense / 1 + expert / 1))


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
        return _at_framework_rate(dense, fw)
    moe = layer_forward(model, hw, fw, lay, moe=True)
    share = model.moe_layers / model.layers
    return _at_framework_rate(LayerCompute(*(
        (1 - share) * getattr(dense, f) + share * getattr(moe, f)
        for f in LayerCompute.__dataclass_fields__)), fw)


def _framework_rate(fw: Framework) -> float:
    """The share of Megatron-Core's kernel rate the framework's kernels reach."""
    return cal.PYTORCH_KERNEL_EFFICIENCY if fw.pytorch_native else 1.0


def _at_framework_rate(layer: LayerCompute, fw: Framework) -> LayerCompute:
    """`layer`'s seconds at the framework's kernel rate (its FLOPs unchanged)."""
    rate = _framework_rate(fw)
    if rate == 1.0:
        return layer
    return replace(layer, gemm_s=layer.gemm_s / rate, attention_core_s=layer.attention_core_s
                   / rate, elementwise_s=layer.elementwise_s / rate,
                   score_elementwise_s=layer.score_elementwise_s / rate)


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
    logits = logits_forward(model, hw, lay)[0] / _framework_rate(fw)
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


def _dp_traffic(hw: ClusterSpec, fw: Framework, lay: Layouts, m: FloatArray,
                params: ParamsPerGpu, expert_dp: IntArray,
                layers: FloatArray) -> dict[str, TieredTime]:
    """Gradient and parameter traffic of data parallelism per iteration, link time, under
    each ZeRO regime (`_ZeroFree`'s grads_* and gathered_*; DDP gathers nothing). Dense
    weights sync over the dp x cp ranks (tp apart), expert weights over their expert_dp
    replicas (etp x ep apart).

    zero 0-2 (DDP, the distributed optimizer): gradients reduced once an iteration (zero 0:
    all-reduced; 1-2: reduce-scattered), parameters gathered once after the step (1-2).
    zero 3 (FSDP): every layer's parameters gathered before its forward and again before its
    backward, its gradients reduce-scattered after, every micro-batch: one collective per
    layer (each paying its ring's latency), over a layer's share of the stage's parameters."""
    dense, expert = params
    groups = ((lay.tp, lay.dp * lay.cp, dense),
              (lay.expert_tp * lay.ep, expert_dp, expert))
    per_layer = np.maximum(layers, 1.0)
    reduces, scatters, gathers, layer_scatters, layer_gathers = [], [], [], [], []
    for stride, n, count in groups:
        placed = placement(stride, n, hw)  # one group, five collectives
        grad_bytes = count * (float(cal.GRAD_REDUCE_BYTES) if fw.grad_reduce_in_fp32
                              else float(cal.BYTES_PER_ELEMENT))
        param_bytes = count * float(cal.BYTES_PER_ELEMENT)
        reduces.append(hierarchical("all_reduce", stride, n, grad_bytes, hw, placed))
        scatters.append(hierarchical("gather", stride, n, grad_bytes, hw, placed))
        gathers.append(hierarchical("gather", stride, n, param_bytes, hw, placed))
        layer_scatters.append(hierarchical("gather", stride, n, grad_bytes / per_layer, hw,
                                           placed).scaled(m * per_layer))
        layer_gathers.append(hierarchical("gather", stride, n, param_bytes / per_layer, hw,
                                          placed).scaled(2 * m * per_layer))
    return {"grads_ddp": reduces[0] + reduces[1],
            "grads_sharded": scatters[0] + scatters[1],
            "grads_fsdp": layer_scatters[0] + layer_scatters[1],
            "gathered_sharded": gathers[0] + gathers[1],
            "gathered_fsdp": layer_gathers[0] + layer_gathers[1]}


def _dp(hw: ClusterSpec, fw: Framework, lay: Layouts, free: _ZeroFree,
        runs: Runs) -> tuple[TieredTime, TieredTime, FloatArray]:
    """Data parallelism per iteration, per layout: link time, exposed time and overlap
    slowdown, for the layout's ZeRO stage (traffic: `_dp_traffic`).

    Overlapped, zero 0-2 reduce the gradients behind the last backward and gather the
    parameters behind the next forward. FSDP prefetches the next layer's gather behind this
    layer's compute, so only what one layer's compute cannot cover (and the first gather)
    is exposed."""
    fsdp = lay.zero >= 3
    # Each layout's regime picks its row of the stacked [DDP; sharded; FSDP] traffic.
    regime = (lay.zero >= 1).astype(np.intp) + fsdp
    pick = runs.index_of_row() + runs.count * regime
    nothing = np.zeros(runs.count)

    def choose(ddp: TieredTime, sharded: TieredTime, full: TieredTime) -> TieredTime:
        return TieredTime(np.concatenate((ddp.scale_up, sharded.scale_up, full.scale_up))[pick],
                          np.concatenate((ddp.scale_out, sharded.scale_out,
                                          full.scale_out))[pick])

    grads = choose(free.grads_ddp, free.grads_sharded, free.grads_fsdp)
    gathered = choose(TieredTime(nothing, nothing), free.gathered_sharded, free.gathered_fsdp)
    link = grads + gathered
    if not fw.dp_overlap:
        return link, link, np.zeros(len(lay))
    x, stage = runs.expand, free.stage
    exposed_once, slowdown_once = _hidden_behind(grads, x(stage.backward))
    exposed_step, slowdown_step = _hidden_behind(gathered, x(stage.forward))
    # FSDP: per layer and micro-batch, a gather behind the previous layer's forward, a gather
    # and a reduce-scatter behind its backward; the first layer's gather waits in full.
    m = x(free.m)
    layers = np.maximum(x(stage.layers), 1.0)
    calls = m * layers
    per_forward = gathered.scaled(0.5 / calls)
    per_backward = gathered.scaled(0.5 / calls) + grads.scaled(1.0 / calls)
    fwd_exposed, fwd_slow = _hidden_behind(per_forward, x(stage.layer_forward))
    bwd_exposed, bwd_slow = _hidden_behind(per_backward, x(stage.layer_backward))
    fsdp_exposed = (fwd_exposed + bwd_exposed).scaled(calls) + per_forward.scaled(m)
    fsdp_slowdown = (fwd_slow + bwd_slow) * calls + _fsdp2_copies(hw, fw, free, runs)
    exposed = _where(fsdp, fsdp_exposed, exposed_once + exposed_step)
    return link, exposed, np.where(fsdp, fsdp_slowdown, slowdown_once + slowdown_step)


def _fsdp2_copies(hw: ClusterSpec, fw: Framework, free: _ZeroFree, runs: Runs) -> FloatArray:
    """PyTorch FSDP2's copies around its collectives per iteration, on the compute stream:
    each layer's gathered BF16 parameters copied out of the all-gather buffer (read + write)
    before its forward and again before its backward (reshard after forward), and its BF16
    gradients copied into the reduce-scatter buffer in the reduce dtype. Zero unless
    `fw.pytorch_fsdp` (flat-buffer ZeRO-3 gathers in place)."""
    if not fw.pytorch_fsdp:
        return np.zeros(len(runs.expand(free.m)))
    grad = float(cal.GRAD_REDUCE_BYTES) if fw.grad_reduce_in_fp32 else float(cal.BYTES_PER_ELEMENT)
    per_param = 2 * 2 * cal.BYTES_PER_ELEMENT + cal.BYTES_PER_ELEMENT + grad
    params = runs.expand(free.dense + free.expert)
    return runs.expand(free.m) * params * per_param / (hw.hbm_bw * cal.HBM_EFFICIENCY)


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


def _optimizer_seconds(hw: ClusterSpec, local: FloatArray) -> FloatArray:
    """The optimizer step over `local` parameters (its shard of them) on one GPU."""
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
