"""What the C2C model is given: a transformer, a cluster's hardware, parallel layouts.

Every quantity is in SI base units (FLOP/s, bytes, bytes/s, seconds); parsing written
units ("312 TFLOP/s", "200 Gb/s") happens at the edge (pipelines/inputs/scenarios.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from enum import IntEnum

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]

# The largest count (layers, heads, widths, GPUs, batch sizes) a scenario may give: no model
# or cluster comes near, and it keeps the layout arithmetic (tp x pp, micro_batch x dp) within
# 64-bit integers.
MAX_COUNT = 10**9
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


class Precision(IntEnum):
    """The number format the matrix engines run the model's GEMMs in (attention and
    element-wise work stay in BF16). FP8 is per-tensor (delayed or current) scaling, MXFP8
    block scaling (32 values share a scale), FP4 NVFP4 block scaling."""

    BF16 = 0
    FP8 = 1
    MXFP8 = 2
    FP4 = 3

    @classmethod
    def parse(cls, text: str) -> Precision:
        try:
            return cls[text.strip().upper()]
        except KeyError as exc:
            raise ValueError(f"precision must be bf16, fp8, mxfp8 or fp4, not {text!r}") from exc

    @property
    def peak_metric(self) -> str:
        """The ledger metric holding a GPU's dense peak for this format."""
        return {Precision.BF16: "peak_dense_bf16", Precision.FP8: "peak_dense_fp8",
                Precision.MXFP8: "peak_dense_fp8", Precision.FP4: "peak_dense_fp4"}[self]


class Recompute(IntEnum):
    """Activation recomputation modes (Korthikanti et al. 2022)."""

    NONE = 0
    SELECTIVE = 1  # attention core only (QK^T, softmax, attention x V)
    FULL = 2  # whole block; only the block input is kept

    @classmethod
    def parse(cls, text: str) -> Recompute:
        try:
            return cls[text.strip().upper()]
        except KeyError as exc:
            raise ValueError(f"recompute must be none, selective or full, not {text!r}") from exc


@dataclass(frozen=True)
class TransformerSpec:
    """A decoder-only transformer: dense (GPT) or mixture-of-experts, MHA or GQA."""

    layers: int
    hidden: int
    heads: int
    seq_len: int
    vocab: int
    ffn: int | None = None  # FFN width; default 4 * hidden
    kv_heads: int | None = None  # GQA query groups; default = heads (MHA)
    swiglu: bool = False  # gated MLP: three FFN matrices instead of two
    experts: int = 1  # routed experts per MoE layer (1 = dense)
    top_k: int = 1
    moe_ffn: int | None = None  # expert FFN width; default = ffn
    moe_every: int = 1  # every n-th layer is MoE (when experts > 1)
    tied_embeddings: bool = True  # input and output embeddings share one matrix
    head_dim: int | None = None  # per-head width; default hidden / heads (Qwen3: 128 on 64 x 4096)
    first_dense_layers: int = 0  # the first k layers have a dense MLP (DeepSeek-V3: 3)
    shared_experts: int = 0  # experts every token goes through, beside the routed top_k
    shared_ffn: int | None = None  # the shared experts' FFN width in all; default count x moe_ffn

    def __post_init__(self) -> None:
        for name in ("layers", "hidden", "heads", "seq_len", "vocab", "experts", "top_k",
                     "moe_every"):
            if getattr(self, name) < 1:
                raise ValueError(f"model.{name} must be a positive integer")
        if self.head_dim is None and self.hidden % self.heads:
            raise ValueError(f"model.hidden ({self.hidden}) must be divisible by model.heads "
                             f"({self.heads}), or model.head_dim given")
        if self.heads % self.groups:
            raise ValueError(f"model.heads ({self.heads}) must be divisible by model.kv_heads "
                             f"({self.groups})")
        if self.top_k > self.experts:
            raise ValueError(f"model.top_k ({self.top_k}) exceeds model.experts "
                             f"({self.experts})")
        if self.first_dense_layers >= self.layers and self.is_moe:
            raise ValueError(f"model.first_dense_layers ({self.first_dense_layers}) leaves no "
                             f"MoE layer of the {self.layers}")
        if (self.shared_experts or self.shared_ffn) and not self.is_moe:
            raise ValueError("model.shared_experts needs routed experts (model.experts > 1)")

    @property
    def ffn_width(self) -> int:
        return self.ffn if self.ffn is not None else 4 * self.hidden

    @property
    def expert_ffn_width(self) -> int:
        return self.moe_ffn if self.moe_ffn is not None else self.ffn_width

    @property
    def shared_ffn_width(self) -> int:
        """The FFN width of all shared experts together (0 without them)."""
        if self.shared_ffn is not None:
            return self.shared_ffn
        return self.shared_experts * self.expert_ffn_width

    @property
    def groups(self) -> int:
        return self.kv_heads if self.kv_heads is not None else self.heads

    @property
    def kv_channels(self) -> int:
        """The width of one attention head (Megatron's kv_channels)."""
        return self.head_dim if self.head_dim is not None else self.hidden // self.heads

    @property
    def attention_width(self) -> int:
        """heads x head width: the query projection's output, the output projection's input."""
        return self.heads * self.kv_channels

    @property
    def is_moe(self) -> bool:
        return self.experts > 1

    @property
    def moe_layers(self) -> int:
        return (self.layers - self.first_dense_layers) // self.moe_every if self.is_moe else 0


@dataclass(frozen=True)
class ClusterSpec:
    """Per-GPU hardware figures, one direction for bandwidths, SI units.

    `*_efficiency` is the fraction of line rate a ring collective achieves (nccl-tests
    bus bandwidth / line rate); when a measured bus bandwidth is known, pass it as the
    bandwidth with efficiency 1.0. `gemm_peak_flops` is the dense peak of the precision the
    GEMMs run in (the BF16 peak unless FP8 or FP4); `arch` picks the compute efficiencies
    (models.c2c.calibration.COMPUTE_EFFICIENCY).
    """

    peak_flops: float  # dense BF16 FLOP/s per GPU
    hbm_bytes: float  # HBM capacity per GPU
    hbm_bw: float  # HBM bandwidth per GPU, bytes/s
    domain_gpus: int  # GPUs in one scale-up (NVLink) domain
    scaleup_bw: float  # scale-up bandwidth per GPU, one direction, bytes/s
    scaleout_bw: float  # scale-out bandwidth per GPU (NIC rate x NICs per GPU), bytes/s
    scaleup_efficiency: float
    scaleout_efficiency: float
    scaleup_latency: float  # alpha per ring step, seconds
    scaleout_latency: float
    gemm_peak_flops: float | None = None  # dense FLOP/s in the GEMM precision; None = BF16
    arch: str = "generic"  # ampere, hopper, blackwell; other names get the pooled efficiency
    # GPU <-> host memory, one direction, bytes/s: PCIe Gen5 x16 (64 GB/s) unless the GPU sits
    # on a Grace CPU (NVLink-C2C, 900 GB/s both ways shared by two GPUs: 225 GB/s each way).
    host_bw: float = 64e9

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, int | float) and value <= 0:
                raise ValueError(f"cluster {f.name} must be positive")

    @property
    def gemm_peak(self) -> float:
        return self.gemm_peak_flops if self.gemm_peak_flops is not None else self.peak_flops


@dataclass(frozen=True)
class Layout:
    """One parallel layout. `zero`: 0 = DDP, 1 = distributed optimizer, 2 = + sharded
    gradients, 3 = + sharded parameters (FSDP). `cp`: context parallelism (the sequence split
    over cp GPUs). `etp`: the experts' tensor-parallel size (0: the same as tp); the expert
    data-parallel size follows (tp x cp x dp / (etp x ep)). `first_stage_layers` /
    `last_stage_layers`: uneven pipelines (0: an even share); the other stages split the rest.
    `recompute_layers`: with full recompute, only this many layers of each stage are
    recomputed (Megatron's recompute_method "block"; 0: all). `offload_layers`: the
    activations of this many layers of each stage wait in host memory between forward and
    backward (Megatron's cpu_offloading_num_layers).
    """

    tp: int = 1
    pp: int = 1
    dp: int = 1
    ep: int = 1
    micro_batch: int = 1
    global_batch: int = 1
    interleave: int = 1
    sequence_parallel: bool = False
    recompute: Recompute = Recompute.NONE
    zero: int = 1
    cp: int = 1
    etp: int = 0
    first_stage_layers: int = 0
    last_stage_layers: int = 0
    recompute_layers: int = 0
    offload_layers: int = 0

    @property
    def gpus(self) -> int:
        return self.tp * self.pp * self.cp * self.dp

    @property
    def expert_tp(self) -> int:
        return self.etp or self.tp

    @property
    def expert_dp(self) -> int:
        """Data-parallel replicas of each expert: tp x cp x dp / (etp x ep)."""
        return self.tp * self.cp * self.dp // (self.expert_tp * self.ep)


LAYOUT_FIELDS = tuple(f.name for f in fields(Layout))


@dataclass(frozen=True)
class Layouts:
    """Many layouts as parallel numpy arrays: the unit the vectorised model evaluates."""

    tp: IntArray
    pp: IntArray
    dp: IntArray
    ep: IntArray
    micro_batch: IntArray
    global_batch: IntArray
    interleave: IntArray
    sequence_parallel: BoolArray
    recompute: IntArray
    zero: IntArray
    cp: IntArray
    etp: IntArray  # 0: the same as tp
    first_stage_layers: IntArray
    last_stage_layers: IntArray
    recompute_layers: IntArray  # 0: every layer (with full recompute)
    offload_layers: IntArray
    extra: Mapping[str, npt.NDArray[np.generic]] = field(default_factory=dict)

    @classmethod
    def of(cls, layouts: Iterable[Layout]) -> Layouts:
        items = list(layouts)
        columns = {name: np.array([getattr(x, name) for x in items]) for name in LAYOUT_FIELDS}
        columns["sequence_parallel"] = columns["sequence_parallel"].astype(bool)
        return cls(**{k: (v if k == "sequence_parallel" else v.astype(np.int64))
                      for k, v in columns.items()})

    def __len__(self) -> int:
        return len(self.tp)

    @property
    def gpus(self) -> IntArray:
        return self.tp * self.pp * self.cp * self.dp

    @property
    def expert_tp(self) -> IntArray:
        return np.where(self.etp > 0, self.etp, self.tp)

    @property
    def expert_dp(self) -> IntArray:
        """Data-parallel replicas of each expert (at least 1)."""
        return np.maximum(self.tp * self.cp * self.dp // (self.expert_tp * self.ep), 1)

    def layout(self, index: int) -> Layout:
        values = {name: getattr(self, name)[index].item() for name in LAYOUT_FIELDS}
        values["recompute"] = Recompute(values["recompute"])
        return Layout(**values)

    def take(self, index: npt.NDArray[np.intp]) -> Layouts:
        return Layouts(**{name: getattr(self, name)[index] for name in LAYOUT_FIELDS})


@dataclass(frozen=True)
class Framework:
    """Software choices that change time without changing the math being done."""

    flash_attention: bool = True  # fused attention: the s x s scores never reach HBM
    tp_overlap: bool = False  # TP collectives pipelined with their GEMMs (Megatron-Core)
    dp_overlap: bool = True  # gradient reduce / parameter gather behind backward / forward
    precision: Precision = Precision.BF16  # what the GEMMs run in
    dropout: bool = False  # dropout layers (and their masks); today's LLM pre-training has none
    # Gradients kept and reduced in fp32 (Megatron-LM 2022) or in bf16 (Megatron-Core's default
    # and NVIDIA's current performance recipes).
    grad_reduce_in_fp32: bool = False
    # MoE dispatch/combine of one micro-batch overlapped with another's compute (Megatron-Core
    # overlap_moe_expert_parallel_comm, the 1F1B all-to-all overlap).
    ep_overlap: bool = False
    # ZeRO-3 as PyTorch FSDP2 runs it (torchtitan, torchtune): parameters are sharded one by
    # one (DTensor), so every all-gather copies the gathered buffer out into the layer's
    # parameters and every reduce-scatter copies the gradients in (cast to the reduce dtype),
    # on the compute stream. False: flat-buffer ZeRO-3 (Megatron-FSDP, DeepSpeed), which
    # gathers and reduces in place.
    pytorch_fsdp: bool = True
    # The model runs in PyTorch's own modules (torchtitan, torchtune, Composer: eager norms,
    # activations and rotary embeddings, no Transformer Engine) rather than Megatron-Core's
    # fused kernels: its compute runs at calibration.PYTORCH_KERNEL_EFFICIENCY of the rate.
    pytorch_native: bool = False
