"""The models people ask about, as their published configurations give them."""

from __future__ import annotations

from dataclasses import fields
from typing import Final

from models.serving.spec import ServingLLM

PRESETS: Final[dict[str, ServingLLM]] = {
    # config.json of meta-llama/Llama-3.3-70B-Instruct (the 3.1 70B shape): 80 layers,
    # hidden 8192, 64 heads, 8 KV heads of 128; 70.6 B parameters.
    "llama-3.3-70b": ServingLLM(
        "llama-3.3-70b", layers=80, hidden=8192, heads=64, kv_heads=8, head_dim=128,
        total_params=70.6e9, active_params=70.6e9,
        source="huggingface.co/meta-llama/Llama-3.3-70B-Instruct config.json"),
    # config.json of meta-llama/Llama-3.1-70B-Instruct: the same shape as 3.3's (3.3 is a
    # post-training of it), kept apart because the measured points name it.
    "llama-3.1-70b": ServingLLM(
        "llama-3.1-70b", layers=80, hidden=8192, heads=64, kv_heads=8, head_dim=128,
        total_params=70.6e9, active_params=70.6e9,
        source="huggingface.co/meta-llama/Llama-3.1-70B-Instruct config.json"),
    # config.json of meta-llama/Llama-2-70b-hf (MLPerf Inference's llama2-70b): 80 layers,
    # hidden 8192, 64 heads, 8 KV heads of 128 (grouped-query attention), a 32,000-token
    # vocabulary; 69.0 B parameters.
    "llama-2-70b": ServingLLM(
        "llama-2-70b", layers=80, hidden=8192, heads=64, kv_heads=8, head_dim=128,
        total_params=69.0e9, active_params=69.0e9,
        source="huggingface.co/meta-llama/Llama-2-70b-hf config.json"),
    # config.json of deepseek-ai/DeepSeek-R1 (the V3 shape): 61 layers of which the first 3
    # dense, hidden 7168, 128 heads; MLA with a 512-wide latent + 64 RoPE dims cached per
    # token and layer; 256 routed experts, top-8, one shared; 671 B parameters, 37 B active.
    "deepseek-r1": ServingLLM(
        "deepseek-r1", layers=61, hidden=7168, heads=128, kv_heads=128, head_dim=128,
        total_params=671e9, active_params=37e9, experts=256, top_k=8, moe_layers=58,
        shared_experts=1,
        kv_elements=576, latent_kv=True,
        source="huggingface.co/deepseek-ai/DeepSeek-R1 config.json; DeepSeek-V3 report"),
    # openai/gpt-oss-120b model card: 36 layers, hidden 2880, 64 query heads and 8 KV heads
    # of 64, 128 experts top-4; 116.8 B parameters, 5.1 B active. config.json layer_types:
    # sliding_attention and full_attention alternate (18 each), sliding_window 128.
    "gpt-oss-120b": ServingLLM(
        "gpt-oss-120b", layers=36, hidden=2880, heads=64, kv_heads=8, head_dim=64,
        total_params=116.8e9, active_params=5.13e9, experts=128, top_k=4,
        sliding_window=128, sliding_layers=18,
        source="huggingface.co/openai/gpt-oss-120b model card and config.json"),
}


def same_shape(a: ServingLLM, b: ServingLLM) -> bool:
    """Whether two models do the same work per token: every field of their shape alike but
    the name and where it comes from (Llama 3.3 70B and Llama 3.1 70B)."""
    return all(getattr(a, f.name) == getattr(b, f.name) for f in fields(ServingLLM)
               if f.name not in ("name", "source"))
