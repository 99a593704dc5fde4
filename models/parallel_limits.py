"""Which tensor and expert parallel sizes the engines can run a model with at all, checked
where a scenario is read (before any estimate): one pure rule per engine family.

Training (Megatron-Core) shards the attention heads and the KV heads over TP and the routed
experts over EP evenly, so TP must divide both head counts and EP the experts (the same rules
models/c2c/layout_rules.py applies to a whole layout). Serving engines shard the heads the
same way, but replicate KV heads when TP exceeds them (vLLM: TP a multiple of the KV heads),
keep one latent KV per GPU for MLA, and spread the experts unevenly when EP does not divide
them (vLLM's determine_expert_map puts the remainder on the first ranks; SGLang adds redundant
experts), so serving only needs every EP rank to hold at least one expert.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Refusal:
    """A parallel size the engine cannot run: the layout key it names and why."""

    key: str  # "tp" or "ep"
    reason: str


def training_refusals(tp: int | None, ep: int | None, heads: int, kv_heads: int,
                      experts: int) -> list[Refusal]:
    """What Megatron-Core refuses of `tp` and `ep` (None: not given) for a model with
    `heads` attention heads, `kv_heads` KV heads and `experts` routed experts (1: dense)."""
    found = []
    if tp is not None and heads % tp:
        found.append(Refusal("tp", f"tp={tp} does not divide the {heads} attention heads"))
    elif tp is not None and kv_heads % tp:
        found.append(Refusal("tp", f"tp={tp} does not divide the {kv_heads} KV heads"))
    if ep is not None and experts % ep:
        found.append(Refusal("ep", f"ep={ep} does not divide the {experts} experts"
                                   if experts > 1 else
                                   f"ep={ep} on a dense model: it has no experts to spread"))
    return found


def serving_refusals(tp: int, ep: int, heads: int, kv_heads: int, latent_kv: bool,
                     experts: int, *, pp: int = 1, layers: int | None = None) -> list[Refusal]:
    """What a serving engine refuses of `tp`, `ep` and `pp` for a model with `heads`
    attention heads, `kv_heads` KV heads (one latent when `latent_kv`), `experts` routed
    experts (0: dense) and `layers` layers (None: not checked)."""
    found = []
    if layers is not None and pp > layers:
        found.append(Refusal("pp", f"pp={pp} is more than the model's {layers} layers: "
                                   f"{pp - layers} stages would hold none"))
    if not experts and ep > 1:
        found.append(Refusal("ep", f"ep={ep} on a dense model: it has no experts to spread"))
    if heads % tp:
        found.append(Refusal("tp", f"tp={tp} does not divide the {heads} attention heads"))
    elif not latent_kv and kv_heads % tp and tp % kv_heads:
        found.append(Refusal("tp", f"tp={tp} neither divides the {kv_heads} KV heads nor is "
                                   "a multiple of them (to replicate each)"))
    if experts and ep > experts:
        found.append(Refusal("ep", f"ep={ep} is more than the {experts} experts: "
                                   f"{ep - experts} GPUs would hold none"))
    return found
