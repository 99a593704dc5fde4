"""What the serving model reads: the LLM's shape, the weight and KV-cache formats, how one
model instance is spread over GPUs, and the request shape."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property


class WeightFormat(StrEnum):
    """Weight precision: bytes per parameter (block scales included) and the peak it runs at."""

    BF16 = "bf16"
    FP8 = "fp8"
    FP4 = "fp4"        # NVFP4 / MXFP4: 4-bit values, one scale byte per 16 or 32

    @property
    def bytes_per_param(self) -> float:
        return _BYTES_PER_PARAM[self]


_BYTES_PER_PARAM: dict[WeightFormat, float] = {WeightFormat.BF16: 2.0, WeightFormat.FP8: 1.0,
                                               WeightFormat.FP4: 0.5625}


@dataclass(frozen=True)
class ServingLLM:
    """A decoder-only transformer as inference sees it.

    `total_params` are every weight (all experts); `active_params` those one token reads
    (the routed experts' share top_k / experts, plus everything else). A dense model has
    experts == 0 and active == total. `kv_elements` is the KV cache per token per layer in
    elements: 2 x kv_heads x head_dim for grouped-query attention, the latent width for
    multi-head latent attention (DeepSeek: 512 + 64), which tensor parallelism cannot split.
    """

    name: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    total_params: float
    active_params: float
    experts: int = 0
    top_k: int = 0
    moe_layers: int = 0
    shared_experts: int = 0             # experts every token runs beside its top_k (DeepSeek: 1)
    kv_elements: int | None = None      # None: 2 x kv_heads x head_dim
    latent_kv: bool = False             # MLA: the cache is one latent, replicated across TP
    sliding_window: int = 0             # tokens a sliding-window layer attends to (0: none)
    sliding_layers: int = 0             # how many of the layers use the sliding window
    source: str = ""                    # where the shape comes from (a model card, a config)

    def __post_init__(self) -> None:
        if min(self.layers, self.hidden, self.heads, self.kv_heads, self.head_dim) <= 0:
            raise ValueError(f"{self.name}: layers, hidden, heads, kv_heads and head_dim "
                             "must be positive")
        if self.heads % self.kv_heads:
            raise ValueError(f"{self.name}: kv_heads ({self.kv_heads}) must divide heads "
                             f"({self.heads}): each KV head serves as many query heads")
        if not 0 < self.active_params <= self.total_params:
            raise ValueError(f"{self.name}: active_params must be in (0, total_params]")
        if self.experts and not 0 < self.top_k <= self.experts:
            raise ValueError(f"{self.name}: top_k must be in 1..experts")
        if not 0 <= self.sliding_layers <= self.layers or self.sliding_window < 0:
            raise ValueError(f"{self.name}: sliding_layers must be in 0..layers and "
                             "sliding_window at least 0")
        if self.sliding_layers and not self.sliding_window:
            raise ValueError(f"{self.name}: sliding_layers given without a sliding_window")

    @property
    def is_moe(self) -> bool:
        return self.experts > 0

    @cached_property
    def expert_params(self) -> float:
        """The routed experts' weights, all of them: total - active = experts' share not read,
        i.e. expert_params x (1 - top_k / experts)."""
        if not self.is_moe:
            return 0.0
        return (self.total_params - self.active_params) / (1 - self.top_k / self.experts)

    @cached_property
    def shared_params(self) -> float:
        """Every weight outside the routed experts (attention, dense layers, shared experts,
        embeddings): each token reads all of them."""
        return self.total_params - self.expert_params

    @property
    def kv_per_token_layer(self) -> int:
        return self.kv_elements or 2 * self.kv_heads * self.head_dim

    @property
    def routed_layers(self) -> int:
        return self.moe_layers or (self.layers if self.is_moe else 0)

    @cached_property
    def kernels_per_layer(self) -> float:
        """The GEMMs and attention kernels one decode step launches per layer, on average over
        the layers: each costs a fixed time at a small batch whatever its size (launch, the
        tail of a wave, its sync), so a step of a model with more of them is slower at batch 1
        than its bytes say. Attention: a fused QKV projection, the attention kernel and the
        output projection; multi-head latent attention (DeepSeek) has the query down and up
        projections, the KV down projection, the absorbed key and value products, the
        attention kernel and the output projection. A dense MLP: fused gate-up and down; a
        MoE layer: the router, the experts' grouped gate-up and down, and two per shared
        expert."""
        attention = 7 if self.latent_kv else 3
        moe = 3 + 2 * self.shared_experts
        dense_layers = self.layers - self.routed_layers
        return attention + (self.routed_layers * moe + dense_layers * 2) / self.layers

    def cached_tokens(self, context: float) -> float:
        """Token-layers of KV cache a sequence of `context` tokens holds: every token on the
        full-attention layers, at most `sliding_window` on the sliding ones (gpt-oss
        alternates 128-token windows with full layers, and the engines keep only the window)."""
        full = self.layers - self.sliding_layers
        return full * context + self.sliding_layers * min(context, self.sliding_window)


# The engine's limit on the sequences one attention replica runs at once when a scenario
# does not set it: TensorRT-LLM's default max_batch_size (2,048); vLLM's max_num_seqs and
# SGLang's max_running_requests are set as high in the published high-throughput runs. The KV
# cache that fits usually binds first.
DEFAULT_MAX_BATCH = 2048
# The serving engines the model has terms for (models.serving.calibration.ENGINES): SGLang,
# TensorRT-LLM, vLLM, AMD's ATOM. A scenario that does not name one runs on SGLang, the
# reference engine the family constants describe (measured on every GPU family).
ENGINES = ("sglang", "trt", "vllm", "atom")
DEFAULT_ENGINE = "sglang"


@dataclass(frozen=True)
class Deployment:
    """One model instance: tensor parallelism within each attention replica, `dp` attention
    replicas (data-parallel attention), `pp` pipeline stages, and for a MoE the experts.

    `ep` None (the default of vLLM, SGLang and TensorRT-LLM): the experts are split across the
    instance's GPUs by tensor parallelism: each GPU holds a slice of every expert, and the
    tensor-parallel all-reduce combines them (no all-to-all). `ep` given: whole experts are
    spread over `ep` GPUs and each token's top-k copies are dispatched and combined across
    them. `max_batch` is the engine's limit on running sequences per attention replica.
    `prefill_gpus` > 0 is a disaggregated deployment: prefill runs on that many GPUs of its
    own (in tp-wide replicas), the instance's GPUs only decode, and each request's KV cache
    crosses the fabric once. `engine` is the serving engine (ENGINES), whose own terms the
    model adds. The instance has tp x dp x pp GPUs (plus the prefill GPUs)."""

    tp: int = 1
    dp: int = 1
    ep: int | None = None
    pp: int = 1
    weights: WeightFormat = WeightFormat.FP8
    kv_bytes: float = 1.0           # FP8 KV cache; 2 for BF16
    max_batch: int = DEFAULT_MAX_BATCH
    prefill_gpus: int = 0
    engine: str = DEFAULT_ENGINE

    def __post_init__(self) -> None:
        if min(self.tp, self.dp, self.pp, self.max_batch) < 1:
            raise ValueError("tp, dp, pp and max_batch must be at least 1")
        if self.ep is not None and self.ep < 1:
            raise ValueError("ep must be at least 1")
        if self.ep is not None and self.ep > self.tp * self.dp:
            raise ValueError(f"ep {self.ep} exceeds the instance's {self.tp * self.dp} GPUs "
                             "(tp x dp)")
        if self.kv_bytes <= 0:
            raise ValueError("kv_bytes must be positive")
        if self.engine not in ENGINES:
            raise ValueError(f"engine {self.engine!r} is not one of {', '.join(ENGINES)}")
        if self.prefill_gpus < 0 or self.prefill_gpus % self.tp:
            raise ValueError(f"prefill_gpus must be 0 or a multiple of tp ({self.tp})")

    @property
    def gpus(self) -> int:
        """The decode instance's GPUs (all of them for aggregated serving)."""
        return self.tp * self.dp * self.pp

    @property
    def total_gpus(self) -> int:
        """Every GPU the deployment takes: the instance and its prefill GPUs."""
        return self.gpus + self.prefill_gpus

    @property
    def expert_shards(self) -> int:
        """How many ways each stage's routed experts are split: over ep GPUs, else (the
        engines' default) over every GPU of the stage by tensor parallelism."""
        return self.ep if self.ep is not None else self.tp * self.dp

    @property
    def disaggregated(self) -> bool:
        return self.prefill_gpus > 0


@dataclass(frozen=True)
class RequestShape:
    input_tokens: int
    output_tokens: int

    def __post_init__(self) -> None:
        if self.input_tokens < 1 or self.output_tokens < 1:
            raise ValueError("input_tokens and output_tokens must be at least 1")
