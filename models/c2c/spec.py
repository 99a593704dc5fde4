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

    def __post_init__(self) -> None:
        for name in ("layers", "hidden", "heads", "seq_len", "vocab", "experts", "top_k",
                     "moe_every"):
            if getattr(self, name) < 1:
                raise ValueError(f"model.{name} must be a positive integer")
        if self.hidden % self.heads:
            raise ValueError(f"model.hidden ({self.hidden}) must be divisible by model.heads "
                             f"({self.heads})")
        if self.heads % self.groups:
            raise ValueError(f"model.heads ({self.heads}) must be divisible by model.kv_heads "
                             f"({self.groups})")
        if self.top_k > self.experts:
            raise ValueError(f"model.top_k ({self.top_k}) exceeds model.experts "
                             f"({self.experts})")

    @property
    def ffn_width(self) -> int:
        return self.ffn if self.ffn is not None else 4 * self.hidden

    @property
    def expert_ffn_width(self) -> int:
        return self.moe_ffn if self.moe_ffn is not None else self.ffn_width

    @property
    def groups(self) -> int:
        return self.kv_heads if self.kv_heads is not None else self.heads

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    @property
    def is_moe(self) -> bool:
        return self.experts > 1

    @property
    def moe_layers(self) -> int:
        return self.layers // self.moe_every if self.is_moe else 0


@dataclass(frozen=True)
class ClusterSpec:
    """Per-GPU hardware figures, one direction for bandwidths, SI units.

    `*_efficiency` is the fraction of line rate a ring collective achieves (nccl-tests
    bus bandwidth / line rate); when a measured bus bandwidth is known, pass it as the
    bandwidth with efficiency 1.0.
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

    def __post_init__(self) -> None:
        for f in fields(self):
            if getattr(self, f.name) <= 0:
                raise ValueError(f"cluster {f.name} must be positive")


@dataclass(frozen=True)
class Layout:
    """One parallel layout. `zero`: 0 = DDP, 1 = distributed optimizer, 2 = + sharded
    gradients, 3 = + sharded parameters (FSDP)."""

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

    @property
    def gpus(self) -> int:
        return self.tp * self.pp * self.dp


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
        return self.tp * self.pp * self.dp

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
