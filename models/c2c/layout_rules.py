"""Which parallel layouts Megatron-Core runs: one set of rules for a scenario's own layout
(`specledger estimate`), for the layouts the search enumerates (`sweep`), and for the message
naming the rule a layout breaks.

Each rule is one predicate written with arithmetic and `&` / `|` only, so the same code runs
on a `Layouts` (numpy masks, the sweep) and on one `Layout` (Python integers: exact, however
large the counts, for the scalar check and its message).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from models.c2c.spec import BoolArray, Framework, Layout, Layouts, TransformerSpec

AnyLayout = Layout | Layouts
Predicate = Callable[[TransformerSpec, Framework, Any], Any]  # bool, or a mask for Layouts
Reason = Callable[[TransformerSpec, Layout], str]


@dataclass(frozen=True)
class LayoutRule:
    """One constraint: what must hold, the scenario key it names, why it failed, and the
    layout fields it reads (so a search can apply it once those are known)."""

    field: str
    holds: Predicate
    reason: Reason
    reads: frozenset[str]


@dataclass(frozen=True)
class Violation:
    """A rule a layout breaks: the scenario key and the reason, as the error prints them."""

    field: str
    reason: str


def splits_evenly(layers: Any, stages: Any) -> Any:
    """Megatron splits the layers evenly over pp x interleave chunks, or counts the embedding
    and the loss as a layer each (account_for_embedding/loss_in_pipeline_split): 94 layers on
    PP8 x VP4 are 32 chunks of 3."""
    return (layers % stages == 0) | ((layers + 2) % stages == 0)


def _uneven(lay: AnyLayout) -> Any:
    return (lay.first_stage_layers > 0) | (lay.last_stage_layers > 0)


def _even(lay: AnyLayout) -> Any:
    """Not _uneven, written without `~` (on a Python bool it is bitwise: ~True == -2)."""
    return (lay.first_stage_layers == 0) & (lay.last_stage_layers == 0)


def _given_stages(lay: AnyLayout) -> Any:
    return (lay.first_stage_layers > 0) * 1 + (lay.last_stage_layers > 0) * 1


def _rest(m: TransformerSpec, lay: AnyLayout) -> Any:
    """Layers the given first and last stages leave for the others."""
    return m.layers - lay.first_stage_layers - lay.last_stage_layers


def _others(lay: AnyLayout) -> Any:
    return lay.pp - _given_stages(lay)


def _expert_group(lay: AnyLayout) -> Any:
    return lay.tp * lay.cp * lay.dp


def _micro_batches(lay: AnyLayout) -> Any:
    return lay.global_batch // (lay.micro_batch * lay.dp)


_STAGES = frozenset({"pp", "interleave", "first_stage_layers", "last_stage_layers"})

RULES: tuple[LayoutRule, ...] = (
    LayoutRule("parallel.tp",
               lambda m, fw, lay: m.heads % lay.tp == 0,
               lambda m, lay: f"tp={lay.tp} does not divide the {m.heads} attention heads",
               frozenset({"tp"})),
    LayoutRule("parallel.tp",
               lambda m, fw, lay: m.groups % lay.tp == 0,
               lambda m, lay: f"tp={lay.tp} does not divide the {m.groups} KV heads",
               frozenset({"tp"})),
    LayoutRule("parallel.pp",
               lambda m, fw, lay: _uneven(lay) | splits_evenly(m.layers, lay.pp * lay.interleave),
               lambda m, lay: (f"pp x interleave = {lay.pp * lay.interleave} divides neither the "
                               f"{m.layers} layers nor the layers + 2 (embedding and loss); give "
                               "parallel.first_stage_layers / last_stage_layers"),
               _STAGES),
    LayoutRule("parallel.first_stage_layers",
               lambda m, fw, lay: _even(lay) | (lay.pp > 1),
               lambda m, lay: "first_stage_layers / last_stage_layers need pp > 1",
               _STAGES),
    LayoutRule("parallel.first_stage_layers",
               lambda m, fw, lay: _even(lay) | ((_others(lay) > 0) & (_rest(m, lay) > 0))
               | ((_others(lay) <= 0) & (_rest(m, lay) == 0)),
               lambda m, lay: (f"first_stage_layers + last_stage_layers = "
                               f"{lay.first_stage_layers + lay.last_stage_layers} leave "
                               f"{_rest(m, lay)} of the {m.layers} layers for {_others(lay)} "
                               "other stages"),
               _STAGES),
    LayoutRule("parallel.global_batch",
               lambda m, fw, lay: lay.global_batch % (lay.micro_batch * lay.dp) == 0,
               lambda m, lay: (f"global_batch {lay.global_batch} is not a multiple of "
                               f"micro_batch x dp = {lay.micro_batch * lay.dp}"),
               frozenset({"global_batch", "micro_batch", "dp"})),
    LayoutRule("parallel.ep",
               lambda m, fw, lay: m.experts % lay.ep == 0,
               lambda m, lay: f"ep={lay.ep} does not divide the {m.experts} experts",
               frozenset({"ep"})),
    LayoutRule("parallel.ep",
               lambda m, fw, lay: _expert_group(lay) % (lay.expert_tp * lay.ep) == 0,
               lambda m, lay: (f"etp x ep = {lay.expert_tp * lay.ep} does not divide "
                               f"tp x cp x dp = {_expert_group(lay)}"),
               frozenset({"tp", "cp", "dp", "etp", "ep"})),
    LayoutRule("parallel.etp",
               lambda m, fw, lay: (m.expert_ffn_width % lay.expert_tp == 0) | (not m.is_moe),
               lambda m, lay: (f"etp={lay.expert_tp} does not divide the experts' FFN width "
                               f"{m.expert_ffn_width}"),
               frozenset({"tp", "etp"})),
    LayoutRule("parallel.cp",
               lambda m, fw, lay: (lay.cp == 1) | (m.seq_len % (2 * lay.cp) == 0),
               lambda m, lay: (f"cp={lay.cp}: the sequence of {m.seq_len} does not split into "
                               "2 x cp chunks"),
               frozenset({"cp"})),
    LayoutRule("parallel.cp",
               lambda m, fw, lay: (lay.cp == 1) | fw.flash_attention,
               lambda m, lay: ("context parallelism needs the fused attention kernel "
                               "(framework.flash_attention)"),
               frozenset({"cp"})),
    LayoutRule("parallel.interleave",
               lambda m, fw, lay: (lay.interleave == 1) | (
                   (lay.pp > 1) & (_micro_batches(lay) % lay.pp == 0)),
               lambda m, lay: ("interleaving needs pp > 1 and a number of micro-batches "
                               "divisible by pp"),
               frozenset({"interleave", "pp", "global_batch", "micro_batch", "dp"})),
)

# Every field some rule reads: a search may cross the valid layouts with the other fields
# (sequence parallelism, recompute, ZeRO, ...) afterwards without checking again.
READS = frozenset().union(*(rule.reads for rule in RULES))


def valid(model: TransformerSpec, fw: Framework, lay: Layouts) -> BoolArray:
    """Which layouts meet every rule (dp >= 1 and micro_batch >= 1 assumed)."""
    ok = np.ones(len(lay), dtype=bool)
    for rule in RULES:
        ok &= rule.holds(model, fw, lay)
    return ok


def violations(model: TransformerSpec, fw: Framework, layout: Layout,
               known: frozenset[str] | None = None) -> list[Violation]:
    """The rules `layout` breaks, in order, each with its key and reason. With `known`, only
    the rules that read nothing else (a search's fixed choices)."""
    return [Violation(rule.field, rule.reason(model, layout)) for rule in RULES
            if (known is None or rule.reads <= known) and not rule.holds(model, fw, layout)]
