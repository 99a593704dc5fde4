"""The shape of the published training runs the C2C model is calibrated on: NVIDIA's NeMo and
Megatron-Bridge performance summaries.

The runs themselves are data, with their provenance (each table's title, commit-pinned URL and
date; each architecture's config): data/measurements/training_runs.yaml, read by
pipelines/inputs/measurements.py into a TrainingRuns. This module holds only the types and
what follows from them, so the model's validation takes the runs as an argument.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date


@dataclass(frozen=True)
class Architecture:
    """The shape of a decoder-only transformer, as far as its cost is concerned."""

    name: str  # e.g. "LLAMA3_70B"
    layers: int
    hidden: int
    heads: int
    kv_heads: int  # query groups (GQA); = heads for MHA
    head_dim: int  # per-head width (may differ from hidden // heads, e.g. Qwen3)
    ffn: int  # dense MLP width
    swiglu: bool  # gated MLP (three matrices) vs two-matrix MLP (GELU / squared ReLU)
    vocab: int
    tied_embeddings: bool
    experts: int = 1  # routed experts per MoE layer (1 = dense)
    top_k: int = 1
    moe_ffn: int | None = None  # routed expert FFN width
    first_dense_layers: int = 0  # leading layers with a dense MLP instead of experts
    shared_experts: int = 0
    shared_ffn: int | None = None  # total FFN width of the shared experts
    source: str = ""  # URL of the config it was read from (Hugging Face config.json or the paper)


@dataclass(frozen=True)
class MeasuredRun:
    """One published pre-training measurement (one precision of one table row)."""

    source: str  # key of a Source
    system: str  # "DGX-H100", "DGX-B200", "DGX-B300", "DGX-GB200", "DGX-GB300"
    model: str  # name of an Architecture
    gpus: int
    precision: str  # "bf16" | "fp8" | "mxfp8" | "fp4"
    global_batch: int
    micro_batch: int
    seq_len: int
    fsdp: bool
    tp: int
    pp: int
    cp: int
    vp: int  # virtual pipeline stages
    ep: int
    tokens_per_s_per_gpu: float  # as published (an int where the table gives one)
    model_tflops_per_gpu: float | None  # as published (None when the cell is empty)
    # The training stack: "megatron" (Megatron-Core / NeMo / Megatron-Bridge with Transformer
    # Engine; FSDP there is Megatron-FSDP's flat buffers) or "pytorch" (PyTorch's own modules
    # and FSDP2, as torchtitan runs them).
    framework: str = "megatron"
    recompute: str = "none"  # activation recomputation: none | selective | full
    grad_reduce_in_fp32: bool = False  # gradients reduced in fp32 (FSDP2's reduce_dtype)


@dataclass(frozen=True)
class Source:
    """A published performance table, pinned to the revision the rows were read from."""

    key: str
    title: str
    url: str
    published_on: date  # the release / page date as best known


@dataclass(frozen=True)
class RecipeSettings:
    """What one run's recipe sets beyond the published table's columns, where it changes time or
    memory, for the recipe of `system`, `model` and `precision`; used only when the recipe's
    layout (tp, pp, cp, vp, ep, micro-batch, FSDP) is the run's own."""

    system: str
    model: str
    precision: str
    recipe: str  # the function in Megatron-Bridge's src/megatron/bridge/perf_recipes/...
    layout: tuple[int, int, int, int, int, int, bool]  # tp, pp, cp, vp, ep, micro_batch, fsdp
    offload_layers: int = 0  # cpu_offloading_num_layers (activations only)
    ep_overlap: bool = False  # overlap_moe_expert_parallel_comm / moe_a2a_overlap


@dataclass(frozen=True)
class TrainingRuns:
    """The published tables, the architectures their runs use, the recipes' extra settings
    and the runs, oldest release first. Tuples, so a set of runs can key a cache."""

    sources: tuple[Source, ...]
    architectures: tuple[Architecture, ...]
    recipes: tuple[RecipeSettings, ...]
    runs: tuple[MeasuredRun, ...]

    def source(self, key: str) -> Source:
        return next(s for s in self.sources if s.key == key)

    def architecture(self, name: str) -> Architecture:
        return next(a for a in self.architectures if a.name == name)

    def recipe_settings(self, run: MeasuredRun) -> RecipeSettings | None:
        """The recipe settings of a run, when its recipe's layout is the run's."""
        layout = (run.tp, run.pp, run.cp, run.vp, run.ep, run.micro_batch, run.fsdp)
        return next((r for r in self.recipes
                     if (r.system, r.model, r.precision) == (run.system, run.model,
                                                             run.precision)
                     and r.layout == layout), None)
