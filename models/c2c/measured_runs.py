"""Published training throughputs the C2C model is calibrated on: NVIDIA's NeMo and Megatron-Bridge
performance summaries.

NVIDIA publishes, with each NeMo Framework container release, a table of pre-training benchmarks
run with its own performance recipes on DGX systems (H100, B200, B300, GB200, GB300): for every
model the GPU count, numeric precision, global and micro batch, sequence length, the parallel
layout (FSDP, TP, PP, CP, virtual pipeline stages, EP) and the measured throughput. Throughput is
reported as tokens per second per GPU (the quantity we fit against), next to NVIDIA's own "model
TFLOP/s per GPU", which is a derived figure computed from its FLOP formula and kept here only for
cross-checking. The MoE entries (Qwen3) are run with the router forced to balance tokens evenly
across experts and without dropping tokens, so they measure an idealised, perfectly balanced
expert load rather than the imbalance a learned router would produce. The rows below are
transcribed by hand from the pages cited in SOURCES; the architectures they use are in
ARCHITECTURES, read from the models' public configs.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Final


@dataclass(frozen=True)
class Architecture:
    """The shape of a decoder-only transformer, as far as its cost is concerned."""

    name: str  # key in ARCHITECTURES, e.g. "LLAMA3_70B"
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

    source: str  # key into SOURCES
    system: str  # "DGX-H100", "DGX-B200", "DGX-B300", "DGX-GB200", "DGX-GB300"
    model: str  # key into ARCHITECTURES
    gpus: int
    # "bf16" | "fp8" (per-tensor scaling: "FP8-CS", "FP8") | "mxfp8" ("FP8-MX", "MXFP8")
    # | "fp4" ("NVFP4")
    precision: str
    global_batch: int
    micro_batch: int
    seq_len: int
    fsdp: bool  # FSDP column: 1 or a size > 1 means FSDP is on; 0 means not
    tp: int
    pp: int
    cp: int
    vp: int  # virtual pipeline stages; "n/a" -> 1
    ep: int  # "n/a" -> 1
    tokens_per_s_per_gpu: float
    model_tflops_per_gpu: float | None  # as published (None when the cell is empty)


@dataclass(frozen=True)
class Source:
    """A published performance table, pinned to the revision the rows were read from."""

    key: str
    title: str
    url: str
    published_on: date  # the release / page date as best known (see the comment on each entry)


# Commit of NVIDIA-NeMo/Megatron-Bridge whose performance-summary archive page was transcribed.
_MB_COMMIT: Final = "067f987df03b8355b03192d88d70f1709fedf51a"
_MB_ARCHIVE_URL: Final = (
    "https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/"
    f"{_MB_COMMIT}/docs/performance-summary-archive.md"
)

# The tables, keyed by a short name. Megatron-Bridge sources are dated by the commit that first
# added the release's section to the performance-summary pages (`git log -S "<release> NeMo
# Container"`); later commits revised some numbers, and the rows below are the revised ones as of
# _MB_COMMIT.
SOURCES: Final[dict[str, Source]] = {
    s.key: s
    for s in (
        # Dated by the NeMo commit that first published the 24.07 table (4c73f77, 2024-08-14,
        # "24.07 perf (#10094)"). The pinned commit below (a side branch, 2024-11-09) still
        # carries that first version; on NeMo's main branch the numbers were re-measured on
        # 2024-08-21 ("vboost") and 2024-09-09, differing by a few percent. Rows are from the
        # pinned version.
        Source(
            key="nemo-24.07",
            title="NeMo Framework performance summary, 24.07 container, DGX-H100, FP8",
            url=(
                "https://github.com/NVIDIA/NeMo/blob/070a0bb168d405d653b9734c0017cf5078e77c0d/"
                "docs/source/performance/performance_summary.md"
            ),
            published_on=date(2024, 8, 14),
        ),
        # First added 2025-12-04 (97ad8cc, "Added 25.11 starter pack"). The GB300 and GB200 rows
        # were replaced by new runs on 2025-12-09 (1804c07), a malformed H100 Qwen3-235B row was
        # fixed on 2025-12-10 (5776a6d) and FSDP cells "1" became the shard size on 2026-03-21.
        Source(
            key="megatron-bridge-25.11",
            title="Megatron-Bridge performance summary (archive), 25.11 NeMo container",
            url=_MB_ARCHIVE_URL,
            published_on=date(2025, 12, 4),
        ),
        # First added 2026-05-16 (17a381f, "2604_patch_perf_summary"); every number was
        # re-measured on 2026-05-27 (21d102f, "26.04.01_perf_summary"), which is what is
        # transcribed here.
        Source(
            key="megatron-bridge-26.04.01",
            title="Megatron-Bridge performance summary (archive), 26.04.01 NeMo container",
            url=_MB_ARCHIVE_URL,
            published_on=date(2026, 5, 16),
        ),
    )
}

_HF: Final = "https://huggingface.co"
_LAUNCHER: Final = "https://github.com/NVIDIA/NeMo-Framework-Launcher/blob"

# Architectures of every model that has a run below, plus a few standard models the brief asked
# for that have no row in the selected tables (Nemotron-4 15B, Mixtral 8x7B / 8x22B).
ARCHITECTURES: Final[dict[str, Architecture]] = {
    a.name: a
    for a in (
        # --- Llama 3 / 3.1 (SwiGLU, GQA with 8 KV heads, untied embeddings).
        Architecture(
            name="LLAMA3_8B", layers=32, hidden=4096, heads=32, kv_heads=8, head_dim=128,
            ffn=14336, swiglu=True, vocab=128256, tied_embeddings=False,
            source=f"{_HF}/meta-llama/Meta-Llama-3-8B/blob/main/config.json",
        ),
        Architecture(
            name="LLAMA3_70B", layers=80, hidden=8192, heads=64, kv_heads=8, head_dim=128,
            ffn=28672, swiglu=True, vocab=128256, tied_embeddings=False,
            source=f"{_HF}/meta-llama/Meta-Llama-3-70B/blob/main/config.json",
        ),
        Architecture(
            name="LLAMA3.1_405B", layers=126, hidden=16384, heads=128, kv_heads=8, head_dim=128,
            ffn=53248, swiglu=True, vocab=128256, tied_embeddings=False,
            source=f"{_HF}/meta-llama/Llama-3.1-405B/blob/main/config.json",
        ),
        # --- Llama 2 (SwiGLU, 32000-token vocabulary, untied; only 70B uses GQA).
        Architecture(
            name="LLAMA2_7B", layers=32, hidden=4096, heads=32, kv_heads=32, head_dim=128,
            ffn=11008, swiglu=True, vocab=32000, tied_embeddings=False,
            source=f"{_HF}/meta-llama/Llama-2-7b-hf/blob/main/config.json",
        ),
        Architecture(
            name="LLAMA2_13B", layers=40, hidden=5120, heads=40, kv_heads=40, head_dim=128,
            ffn=13824, swiglu=True, vocab=32000, tied_embeddings=False,
            source=f"{_HF}/meta-llama/Llama-2-13b-hf/blob/main/config.json",
        ),
        Architecture(
            name="LLAMA2_70B", layers=80, hidden=8192, heads=64, kv_heads=8, head_dim=128,
            ffn=28672, swiglu=True, vocab=32000, tied_embeddings=False,
            source=f"{_HF}/meta-llama/Llama-2-70b-hf/blob/main/config.json",
        ),
        # --- GPT-3 family as NeMo trains it: MHA, GELU MLP of width 4 x hidden, tied embeddings
        # (NeMo's GPT default). Vocabulary: 51200, the value NeMo's own model-FLOP accounting
        # uses for "gpt3" (LLM_VOCAB_SIZE_MAP in nemo/collections/common/parts/
        # perf_metrics_utils.py), so it matches the published TFLOP/s column. The embedding
        # actually instantiated is the 50257-token GPT-2 BPE padded to a multiple of 128 x TP:
        # 50304 at TP1, 50432 at TP2, 50688 at TP4 (within 2% of 51200).
        Architecture(
            name="GPT3_5B", layers=24, hidden=4096, heads=32, kv_heads=32, head_dim=128,
            ffn=16384, swiglu=False, vocab=51200, tied_embeddings=True,
            source=(
                f"{_LAUNCHER}/00af8f261f73a3eda179c4e67a467d61792f54d3/"
                "launcher_scripts/conf/training/gpt3/5b.yaml"
            ),
        ),
        Architecture(
            name="GPT3_20B", layers=44, hidden=6144, heads=48, kv_heads=48, head_dim=128,
            ffn=24576, swiglu=False, vocab=51200, tied_embeddings=True,
            source=(
                f"{_LAUNCHER}/056a90edf9140a32bfd39652509244e7db055651/"
                "launcher_scripts/conf/training/gpt3/20b.yaml"
            ),
        ),
        # Shape from the GPT-3 paper (Table 2.1); NeMo's 175B recipe uses the same shape.
        Architecture(
            name="GPT3_175B", layers=96, hidden=12288, heads=96, kv_heads=96, head_dim=128,
            ffn=49152, swiglu=False, vocab=51200, tied_embeddings=True,
            source="https://arxiv.org/abs/2005.14165",
        ),
        # --- Nemotron (squared-ReLU two-matrix MLP, 256000-token SentencePiece vocabulary,
        # untied). Nemotron-3 8B / 22B are MHA and come from NeMo's launcher recipes (the 22B
        # has no public checkpoint); Nemotron-4 uses GQA with 8 KV heads.
        Architecture(
            name="NEMOTRON3_8B", layers=32, hidden=4096, heads=32, kv_heads=32, head_dim=128,
            ffn=16384, swiglu=False, vocab=256000, tied_embeddings=False,
            source=(
                f"{_LAUNCHER}/089b90e6849fa1edb438d3ee750cf229f44e7955/"
                "launcher_scripts/conf/training/nemotron/nemotron_8b.yaml"
            ),
        ),
        Architecture(
            name="NEMOTRON3_22B", layers=40, hidden=6144, heads=48, kv_heads=48, head_dim=128,
            ffn=24576, swiglu=False, vocab=256000, tied_embeddings=False,
            source=(
                f"{_LAUNCHER}/089b90e6849fa1edb438d3ee750cf229f44e7955/"
                "launcher_scripts/conf/training/nemotron/nemotron_22b.yaml"
            ),
        ),
        Architecture(
            name="NEMOTRON4_15B", layers=32, hidden=6144, heads=48, kv_heads=8, head_dim=128,
            ffn=24576, swiglu=False, vocab=256000, tied_embeddings=False,
            source="https://arxiv.org/abs/2402.16819",
        ),
        # head_dim 192 = 18432 / 96; FFN width from NeMo's Nemotron4Config340B.
        Architecture(
            name="NEMOTRON4_340B", layers=96, hidden=18432, heads=96, kv_heads=8, head_dim=192,
            ffn=73728, swiglu=False, vocab=256000, tied_embeddings=False,
            source="https://arxiv.org/abs/2406.11704",
        ),
        # --- Qwen3 MoE: every layer is MoE (128 routed experts, top-8, no shared expert); the
        # dense intermediate_size in the config is unused but recorded as `ffn`. head_dim 128
        # is wider than hidden // heads (64).
        Architecture(
            name="Qwen3_30B_a3B", layers=48, hidden=2048, heads=32, kv_heads=4, head_dim=128,
            ffn=6144, swiglu=True, vocab=151936, tied_embeddings=False,
            experts=128, top_k=8, moe_ffn=768,
            source=f"{_HF}/Qwen/Qwen3-30B-A3B/blob/main/config.json",
        ),
        Architecture(
            name="Qwen3_235B_a22B", layers=94, hidden=4096, heads=64, kv_heads=4, head_dim=128,
            ffn=12288, swiglu=True, vocab=151936, tied_embeddings=False,
            experts=128, top_k=8, moe_ffn=1536,
            source=f"{_HF}/Qwen/Qwen3-235B-A22B/blob/main/config.json",
        ),
        # --- Mixtral: every layer is MoE with 8 full-width SwiGLU experts, top-2.
        Architecture(
            name="MIXTRAL_8X7B", layers=32, hidden=4096, heads=32, kv_heads=8, head_dim=128,
            ffn=14336, swiglu=True, vocab=32000, tied_embeddings=False,
            experts=8, top_k=2, moe_ffn=14336,
            source=f"{_HF}/mistralai/Mixtral-8x7B-v0.1/blob/main/config.json",
        ),
        Architecture(
            name="MIXTRAL_8X22B", layers=56, hidden=6144, heads=48, kv_heads=8, head_dim=128,
            ffn=16384, swiglu=True, vocab=32768, tied_embeddings=False,
            experts=8, top_k=2, moe_ffn=16384,
            source=f"{_HF}/mistralai/Mixtral-8x22B-v0.1/blob/main/config.json",
        ),
    )
}

# One table row, minus its source: system, model, gpus, precision, global_batch, micro_batch,
# seq_len, fsdp, tp, pp, cp, vp, ep, tokens/s/GPU, model TFLOP/s/GPU (MeasuredRun field order).
_Row = tuple[
    str, str, int, str, int, int, int, bool, int, int, int, int, int, float, float | None
]


def _table(source: str, *rows: _Row) -> tuple[MeasuredRun, ...]:
    """Tag every row of one published table with its source key."""
    return tuple(MeasuredRun(source, *row) for row in rows)


# NeMo 24.07, DGX-H100. The table has no precision, FSDP or EP column: the text above it says
# every row is FP8 (in 24.07, Transformer Engine's per-tensor delayed scaling) -> "fp8"; no
# FSDP; dense -> ep 1.
# Pre-training rows only (the SFT / LoRA table below it is left out).
# skipped: none (all 12 pre-training rows are well formed).
_NEMO_24_07: Final = _table(
    "nemo-24.07",
    ("DGX-H100", "GPT3_5B", 64, "fp8", 2048, 4, 2048, False, 1, 1, 1, 1, 1, 22521, 736),
    ("DGX-H100", "GPT3_20B", 64, "fp8", 256, 2, 2048, False, 2, 1, 1, 1, 1, 5851, 750),
    ("DGX-H100", "GPT3_175B", 128, "fp8", 256, 1, 2048, False, 4, 8, 1, 6, 1, 726, 782),
    # The TFLOP/s cell of this row links to NVIDIA's MLPerf Training submission.
    ("DGX-H100", "GPT3_175B", 512, "fp8", 2048, 2, 2048, False, 4, 8, 1, 6, 1, 782, 842),
    ("DGX-H100", "LLAMA2_7B", 8, "fp8", 128, 1, 4096, False, 1, 1, 1, 1, 1, 16847, 776),
    ("DGX-H100", "LLAMA2_13B", 16, "fp8", 128, 1, 4096, False, 1, 4, 1, 10, 1, 8646, 754),
    ("DGX-H100", "LLAMA2_70B", 64, "fp8", 128, 1, 4096, False, 4, 4, 1, 20, 1, 1707, 759),
    ("DGX-H100", "NEMOTRON3_8B", 64, "fp8", 256, 4, 4096, False, 2, 1, 1, 1, 1, 12701, 653),
    ("DGX-H100", "NEMOTRON3_22B", 64, "fp8", 256, 2, 4096, False, 2, 4, 1, 10, 1, 4256, 554),
    ("DGX-H100", "NEMOTRON4_340B", 128, "fp8", 32, 1, 4096, False, 8, 8, 1, 12, 1, 322, 678),
    ("DGX-H100", "LLAMA3_8B", 8, "fp8", 128, 1, 8192, False, 1, 1, 2, 1, 1, 12036, 697),
    ("DGX-H100", "LLAMA3_70B", 64, "fp8", 128, 1, 8192, False, 4, 4, 2, 5, 1, 1533, 738),
)

# Megatron-Bridge 25.11 (one table per system, with a GA column not kept here). A cell such as
# "37556 (36108)" under precision "FP8-CS (FP8-MX)" is two runs, FP8-CS first; columns without a
# parenthesis are shared. Left out by scope: DeepSeekV3 and GPT OSS 120B rows.
# skipped: none (the one malformed row of the first version, H100 Qwen3_235B with its GBS cell
# missing, was fixed upstream on 2025-12-10 and is transcribed in its fixed form).
# DGX-B200 has no LLAMA3_70B row here, and neither does the older 25.09 table, so no older
# release is added for it. Rows of 126-layer LLAMA3.1_405B and 94-layer Qwen3_235B_a22B have
# PP x VP not dividing the layer count: the recipes split the pipeline unevenly.
_MB_25_11: Final = _table(
    "megatron-bridge-25.11",
    # DGX-GB300
    ("DGX-GB300", "LLAMA3_8B", 8, "fp8", 128, 2, 8192, False, 1, 1, 1, 1, 1, 37556, 1933),
    ("DGX-GB300", "LLAMA3_8B", 8, "mxfp8", 128, 2, 8192, False, 1, 1, 1, 1, 1, 36108, 1858),
    ("DGX-GB300", "LLAMA3_70B", 64, "fp8", 256, 2, 8192, True, 1, 1, 1, 1, 1, 4520, 2030),
    ("DGX-GB300", "LLAMA3.1_405B", 256, "fp8", 1536, 1, 8192, False, 2, 8, 2, 4, 1, 999, 2522),
    ("DGX-GB300", "Qwen3_30B_a3B", 8, "mxfp8", 512, 4, 4096, False, 1, 1, 1, 1, 8, 28934, 666),
    # Kept as published, though its GA cell (32) disagrees with GBS / (MBS x DP) = 64.
    ("DGX-GB300", "Qwen3_235B_a22B", 256, "bf16", 8192, 2, 4096, False, 1, 4, 1, 12, 16, 6131,
     907),
    # DGX-GB200
    ("DGX-GB200", "LLAMA3_8B", 8, "fp8", 128, 2, 8192, False, 1, 1, 1, 1, 1, 31508, 1622),
    ("DGX-GB200", "LLAMA3_8B", 8, "mxfp8", 128, 2, 8192, False, 1, 1, 1, 1, 1, 29789, 1533),
    ("DGX-GB200", "LLAMA3_70B", 64, "fp8", 256, 2, 8192, True, 1, 1, 1, 1, 1, 4312, 1937),
    ("DGX-GB200", "LLAMA3.1_405B", 256, "fp8", 1536, 1, 8192, False, 4, 16, 1, 4, 1, 813, 2053),
    ("DGX-GB200", "Qwen3_30B_a3B", 8, "mxfp8", 512, 4, 4096, False, 1, 1, 1, 1, 8, 23766, 547),
    ("DGX-GB200", "Qwen3_235B_a22B", 256, "bf16", 8192, 1, 4096, False, 1, 8, 1, 3, 32, 4916,
     728),
    # DGX-B200
    ("DGX-B200", "LLAMA3_8B", 8, "fp8", 128, 2, 8192, False, 1, 1, 1, 1, 1, 30624, 1576),
    ("DGX-B200", "LLAMA3_8B", 8, "mxfp8", 128, 2, 8192, False, 1, 1, 1, 1, 1, 29521, 1519),
    ("DGX-B200", "LLAMA3.1_405B", 128, "fp8", 64, 1, 8192, False, 4, 8, 2, 8, 1, 661, 1667),
    ("DGX-B200", "LLAMA3.1_405B", 128, "mxfp8", 64, 1, 8192, False, 4, 8, 2, 8, 1, 624, 1576),
    ("DGX-B200", "Qwen3_30B_a3B", 8, "mxfp8", 512, 1, 4096, False, 1, 1, 1, 1, 8, 9299, 214),
    ("DGX-B200", "Qwen3_235B_a22B", 64, "mxfp8", 1024, 1, 4096, False, 1, 8, 1, 2, 8, 3269, 484),
    # DGX-H100 (the 8B row uses FSDP over all 8 GPUs)
    ("DGX-H100", "LLAMA3_8B", 8, "fp8", 128, 1, 8192, True, 1, 1, 1, 1, 1, 14451, 744),
    ("DGX-H100", "LLAMA3_70B", 64, "fp8", 128, 1, 8192, False, 4, 8, 1, 5, 1, 1602, 719),
    ("DGX-H100", "LLAMA3.1_405B", 1024, "fp8", 512, 1, 8192, False, 8, 8, 2, 8, 1, 292, 737),
    ("DGX-H100", "Qwen3_30B_a3B", 16, "fp8", 512, 2, 4096, False, 1, 2, 1, 24, 8, 5275, 121),
    ("DGX-H100", "Qwen3_235B_a22B", 256, "fp8", 2048, 1, 4096, False, 2, 8, 1, 4, 32, 1575, 233),
)

# Megatron-Bridge 26.04.01 (one table per model, precision column "FP8" / "MXFP8" / "NVFP4").
# All LLAMA and Qwen3 rows; left out by scope: DeepSeekV3, GPT OSS 120B, Kimi K2 and the hybrid
# Mamba Nemotron_3_Nano / Nemotron_3_Super. Uneven pipeline splits as in 25.11.
# skipped: none (no malformed rows).
_MB_26_04_01: Final = _table(
    "megatron-bridge-26.04.01",
    # LLAMA3_70B
    ("DGX-GB300", "LLAMA3_70B", 64, "fp8", 256, 2, 8192, True, 1, 1, 1, 1, 1, 5248, 2348),
    ("DGX-GB300", "LLAMA3_70B", 64, "mxfp8", 256, 1, 8192, False, 1, 4, 1, 5, 1, 4864, 2186),
    ("DGX-GB300", "LLAMA3_70B", 64, "fp4", 256, 1, 8192, False, 1, 4, 1, 5, 1, 7296, 3253),
    ("DGX-GB200", "LLAMA3_70B", 64, "fp8", 256, 2, 8192, True, 1, 1, 1, 1, 1, 4224, 1892),
    ("DGX-GB200", "LLAMA3_70B", 64, "mxfp8", 256, 1, 8192, False, 2, 4, 1, 5, 1, 3712, 1664),
    ("DGX-GB200", "LLAMA3_70B", 64, "fp4", 256, 1, 8192, False, 2, 4, 1, 5, 1, 4864, 2202),
    ("DGX-H100", "LLAMA3_70B", 64, "fp8", 256, 1, 8192, False, 4, 8, 1, 5, 1, 1664, 731),
    # LLAMA3.1_405B
    ("DGX-GB300", "LLAMA3.1_405B", 256, "fp8", 1536, 1, 8192, False, 4, 8, 1, 4, 1, 1024, 2617),
    ("DGX-GB300", "LLAMA3.1_405B", 256, "mxfp8", 1536, 1, 8192, False, 2, 8, 2, 4, 1, 960, 2453),
    ("DGX-GB300", "LLAMA3.1_405B", 256, "fp4", 1536, 1, 8192, False, 4, 8, 1, 4, 1, 1440, 3653),
    ("DGX-GB200", "LLAMA3.1_405B", 256, "fp8", 1536, 1, 8192, False, 4, 16, 1, 4, 1, 864, 2144),
    ("DGX-GB200", "LLAMA3.1_405B", 256, "mxfp8", 1536, 1, 8192, False, 4, 16, 1, 8, 1, 800,
     1994),
    ("DGX-GB200", "LLAMA3.1_405B", 256, "fp4", 1536, 1, 8192, False, 4, 16, 1, 8, 1, 1184, 2960),
    ("DGX-H100", "LLAMA3.1_405B", 1024, "fp8", 1536, 1, 8192, False, 8, 8, 2, 8, 1, 328, 827),
    # Qwen3_30B_a3B
    ("DGX-GB300", "Qwen3_30B_a3B", 8, "mxfp8", 512, 8, 4096, False, 1, 1, 1, 1, 8, 31744, 729),
    ("DGX-GB200", "Qwen3_30B_a3B", 8, "mxfp8", 512, 4, 4096, False, 1, 1, 1, 1, 8, 26112, 599),
    ("DGX-B300", "Qwen3_30B_a3B", 8, "mxfp8", 512, 8, 4096, False, 1, 1, 1, 1, 8, 30720, 704),
    ("DGX-B200", "Qwen3_30B_a3B", 8, "mxfp8", 512, 4, 4096, False, 1, 1, 1, 1, 8, 27136, 619),
    ("DGX-H100", "Qwen3_30B_a3B", 16, "fp8", 1024, 1, 4096, False, 1, 1, 1, 1, 16, 8960, 206),
    # Qwen3_235B_a22B
    ("DGX-GB300", "Qwen3_235B_a22B", 256, "mxfp8", 8192, 2, 4096, False, 1, 4, 1, 12, 32, 6944,
     1029),
    ("DGX-GB200", "Qwen3_235B_a22B", 256, "mxfp8", 8192, 1, 4096, False, 1, 8, 1, 3, 32, 5680,
     840),
    ("DGX-B300", "Qwen3_235B_a22B", 256, "mxfp8", 8192, 2, 4096, False, 1, 8, 1, 1, 8, 5936,
     878),
    ("DGX-B200", "Qwen3_235B_a22B", 256, "mxfp8", 8192, 1, 4096, False, 1, 8, 1, 1, 8, 3776,
     560),
    ("DGX-H100", "Qwen3_235B_a22B", 256, "fp8", 8192, 1, 4096, False, 2, 8, 1, 4, 32, 1712, 253),
)

# Every measured run, oldest release first. Other Megatron-Bridge releases in the archive
# (25.09, 26.02, 26.02.01, 26.04, 26.06, 26.06.01) and the current page (26.08) are largely
# reruns of the same layouts and are deliberately not transcribed.
RUNS: Final[tuple[MeasuredRun, ...]] = _NEMO_24_07 + _MB_25_11 + _MB_26_04_01


@dataclass(frozen=True)
class RecipeSettings:
    """What a run's recipe sets beyond the published table's columns, where it changes time or
    memory: read from the recipe function of that system, model and precision in
    Megatron-Bridge's `perf_recipes` (at _MB_COMMIT), and used only when the recipe's layout
    (tp, pp, cp, vp, ep, micro-batch, FSDP) is the run's own."""

    recipe: str  # the function in src/megatron/bridge/perf_recipes/...
    layout: tuple[int, int, int, int, int, int, bool]  # tp, pp, cp, vp, ep, micro_batch, fsdp
    offload_layers: int = 0  # cpu_offloading_num_layers (activations only)
    ep_overlap: bool = False  # overlap_moe_expert_parallel_comm / moe_a2a_overlap


_RECIPES_URL: Final = (
    f"https://github.com/NVIDIA-NeMo/Megatron-Bridge/tree/{_MB_COMMIT}/"
    "src/megatron/bridge/perf_recipes"
)
RECIPES: Final[dict[tuple[str, str, str], RecipeSettings]] = {
    ("DGX-GB200", "LLAMA3_70B", "fp8"): RecipeSettings(
        "llama/gb200/llama3.py: llama3_70b_pretrain_64gpu_gb200_fp8cs_config",
        (1, 1, 1, 1, 1, 2, True), offload_layers=40),
    ("DGX-GB300", "LLAMA3_70B", "fp8"): RecipeSettings(
        "llama/gb300/llama3.py: llama3_70b_pretrain_64gpu_gb300_fp8cs_config",
        (1, 1, 1, 1, 1, 2, True), offload_layers=20),
    ("DGX-H100", "Qwen3_235B_a22B", "fp8"): RecipeSettings(
        "qwen/h100/qwen3_moe.py: qwen3_235b_a22b_pretrain_256gpu_h100_fp8cs_config",
        (2, 8, 1, 4, 32, 1, False), ep_overlap=True),
}


def recipe_settings(run: MeasuredRun) -> RecipeSettings | None:
    """The recipe settings of a run, when its recipe's layout is the run's."""
    found = RECIPES.get((run.system, run.model, run.precision))
    layout = (run.tp, run.pp, run.cp, run.vp, run.ep, run.micro_batch, run.fsdp)
    return found if found is not None and found.layout == layout else None
