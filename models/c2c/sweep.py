"""Search every valid parallel layout for a model on a GPU count and global batch.

Enumeration is a numpy cartesian product with masks, evaluation is one call of the
vectorised model, ranking is an argsort: no Python loop per configuration.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from models.c2c import layout_rules
from models.c2c.estimate import (
    BLOCK,
    Estimates,
    concatenate,
    evaluate,
    iteration_times,
    layout_memory,
    take,
    usable_memory,
)
from models.c2c.layout_rules import READS, splits_evenly, violations
from models.c2c.schemes import ChoiceLimit
from models.c2c.spec import (
    LAYOUT_FIELDS,
    ClusterSpec,
    Framework,
    IntArray,
    Layout,
    Layouts,
    Recompute,
    TransformerSpec,
)

# Measured peak of enumerate_layouts (tracemalloc, GPT-3 and a 64-expert MoE on 1,024 GPUs,
# 51,840 and 1,064,448 candidates, with cp, etp and the stage columns): 153-157 bytes per
# candidate layout, before the divisibility rules. Evaluating the layouts that pass them costs
# about 700 bytes more each.
ENUMERATION_BYTES_PER_LAYOUT = 220


class NoValidLayout(ValueError):
    """No layout satisfies the constraints; the message names the one that failed."""


class TooManyLayouts(ValueError):
    """The search would enumerate more candidate layouts than its limit: refused before any
    array is allocated. `choices` is how many values each dimension may take."""

    def __init__(self, count: int, limit: int, choices: Mapping[str, int]) -> None:
        shown = " x ".join(f"{name} {n:,}" for name, n in choices.items())
        super().__init__(
            f"the search asks for {count:,} candidate layouts ({shown}), more than the limit "
            f"of {limit:,} (about {ENUMERATION_BYTES_PER_LAYOUT} bytes of arrays each, "
            f"{count * ENUMERATION_BYTES_PER_LAYOUT / 2**30:,.1f} GiB here)")
        self.count, self.limit, self.choices = count, limit, dict(choices)


@dataclass(frozen=True)
class SweepResult:
    evaluated: int  # layouts that passed the divisibility rules and were evaluated
    valid: int  # ... of which fit in memory
    best: Estimates  # the top layouts, fastest first
    ranked_by: str
    # Where each best layout sits in the full enumeration (ties rank by it, so a search split
    # into shares ranks exactly as the whole), and the least memory any evaluated layout needs.
    index: npt.NDArray[np.intp] | None = None
    smallest_memory_bytes: float = float("inf")


def divisors(n: int) -> list[int]:
    """The divisors of n, ascending; O(sqrt n), so a count near a billion costs milliseconds."""
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted({*small, *(n // d for d in small)})


# Context parallelism is searched down to chunks of this many tokens: shorter chunks leave the
# attention kernel too little work to hide the ring behind.
MIN_CP_CHUNK = 2048
# Expert tensor parallelism is searched up to this size (an 8-GPU board's NVLink domain).
MAX_ETP = 8
# Interleaved model chunks per stage are searched up to this many.
MAX_INTERLEAVE = 8


def candidate_values(model: TransformerSpec, fw: Framework, gpus: int,
                     global_batch: int) -> dict[str, list[int]]:
    """The values each dimension may take before the joint rules (layout_rules) are applied:
    only values some layout could pass them with, within the search's limits. With fused
    attention, selective recompute is what the kernel already does; context parallelism
    needs the fused kernel (and a sequence that splits into two chunks a rank)."""
    modes = [r for r in Recompute if not (fw.flash_attention and r == Recompute.SELECTIVE)]
    # pp x interleave must split the layers (or layers + 2), so each of them must alone.
    splits = [d for d in divisors(gpus) if splits_evenly(model.layers, d)]
    return {
        "tp": [d for d in divisors(gpus) if model.heads % d == 0 and model.groups % d == 0],
        "pp": splits,
        "cp": [c for c in divisors(gpus) if c == 1 or (
            fw.flash_attention and model.seq_len % (2 * c) == 0
            and model.seq_len // c >= MIN_CP_CHUNK)],
        "ep": [d for d in divisors(model.experts) if gpus % d == 0] if model.is_moe else [1],
        "etp": ([d for d in divisors(gpus) if d <= MAX_ETP and model.expert_ffn_width % d == 0]
                if model.is_moe else [0]),
        "micro_batch": divisors(global_batch),
        "interleave": [v for v in range(1, MAX_INTERLEAVE + 1) if splits_evenly(model.layers, v)],
        "sequence_parallel": [0, 1],
        "recompute": [int(r) for r in modes],
        "zero": [0, 1, 3],
        "first_stage_layers": [0],
        "last_stage_layers": [0],
        "recompute_layers": [0],
        "offload_layers": [0],
    }


def layout_choices(model: TransformerSpec, fw: Framework, gpus: int, global_batch: int,
                   fixed: Mapping[str, int | bool] | None = None,
                   limit: ChoiceLimit | None = None) -> dict[str, list[int]]:
    """The values each dimension may take, within `limit` (e.g. the space the calibration
    covers, models.c2c.schemes), with `fixed` dimensions held."""
    choices = candidate_values(model, fw, gpus, global_batch)
    if limit is not None:
        choices = limit(choices)
    if any(int((fixed or {}).get(n, 0)) > 0 for n in ("first_stage_layers", "last_stage_layers")):
        # Uneven stages given: any pp x interleave splits what they leave.
        choices["pp"] = divisors(gpus)
        choices["interleave"] = list(range(1, MAX_INTERLEAVE + 1))
    for name, value in (fixed or {}).items():
        if name in choices:  # dp is not enumerated: it follows from gpus / (tp x pp)
            choices[name] = [int(value)]
    return choices


def check_layout_count(choices: Mapping[str, list[int]], max_layouts: int | None) -> int:
    """How many candidate layouts `choices` make (cheap: no array is allocated); raises
    TooManyLayouts beyond `max_layouts` (None: no limit)."""
    count = math.prod(len(values) for values in choices.values())
    if max_layouts is not None and count > max_layouts:
        raise TooManyLayouts(count, max_layouts, {k: len(v) for k, v in choices.items()})
    return count


def enumerate_layouts(model: TransformerSpec, fw: Framework, gpus: int, global_batch: int,
                      fixed: Mapping[str, int | bool] | None = None, *,
                      max_layouts: int | None = None, limit: ChoiceLimit | None = None) -> Layouts:
    """Every layout that tiles `gpus` and meets Megatron's rules (layout_rules), with `fixed`
    dimensions held. The candidates are counted first and refused beyond `max_layouts`
    (TooManyLayouts): memory is at most about ENUMERATION_BYTES_PER_LAYOUT per candidate.

    The shapes the rules read (tp, pp, cp, ep, etp, micro-batch, interleave, stages) are
    enumerated and checked first; only the valid ones are crossed with the settings no rule
    reads (sequence parallelism, recompute, ZeRO), so most candidates never become arrays."""
    choices = layout_choices(model, fw, gpus, global_batch, fixed, limit)
    check_layout_count(choices, max_layouts)
    shapes = _shapes(model, fw, gpus, global_batch, choices)
    if fixed and "dp" in fixed:
        shapes = {n: c[shapes["dp"] == int(fixed["dp"])] for n, c in shapes.items()}
    settings = _grid({n: v for n, v in choices.items() if n not in shapes})
    # Search pruning, not validity: these settings change nothing where they apply alone.
    # Decided on the shapes x settings table, so only the layouts kept are ever built.
    keep = (settings["sequence_parallel"][None, :] == 0) | (shapes["tp"][:, None] > 1)
    keep &= (settings["zero"][None, :] == 0) | (shapes["dp"][:, None] > 1)
    shape_row, setting_row = np.nonzero(keep)  # row-major: shapes outer, settings inner
    cols = {**{n: c[shape_row] for n, c in shapes.items()},
            **{n: c[setting_row] for n, c in settings.items()}}
    return Layouts(**{**{n: cols[n] for n in LAYOUT_FIELDS},
                      "sequence_parallel": cols["sequence_parallel"].astype(bool)})


def _grid(choices: Mapping[str, list[int]]) -> dict[str, IntArray]:
    """The cartesian product of `choices`, one column each, the last name varying fastest."""
    grids = np.meshgrid(*[np.asarray(v, dtype=np.int64) for v in choices.values()],
                        indexing="ij")
    return {n: g.ravel() for n, g in zip(choices, grids, strict=True)}


def _shapes(model: TransformerSpec, fw: Framework, gpus: int, global_batch: int,
            choices: Mapping[str, list[int]]) -> dict[str, IntArray]:
    """The candidate shapes that tile `gpus` (dp = gpus / (tp x pp x cp), at least 1) and meet
    every layout rule, as columns (dp and global_batch included)."""
    shape_names = [n for n in choices if n in READS]
    cols = _grid({n: choices[n] for n in shape_names})
    cells = cols["tp"] * cols["pp"] * cols["cp"]
    tiles = (cells <= gpus) & (gpus % cells == 0)
    cols = {n: c[tiles] for n, c in cols.items()}
    cols["dp"] = gpus // (cols["tp"] * cols["pp"] * cols["cp"])
    cols["global_batch"] = np.full_like(cols["tp"], global_batch)
    ok = layout_rules.valid(model, fw, _shape_layouts(cols))
    return {n: c[ok] for n, c in cols.items()}


def _shape_layouts(cols: Mapping[str, IntArray]) -> Layouts:
    """Shape columns as Layouts for the rules; the fields no rule reads are left at zero."""
    zeros = np.zeros_like(cols["tp"])
    values = {name: cols.get(name, zeros) for name in LAYOUT_FIELDS}
    return Layouts(**{**values, "sequence_parallel": zeros.astype(bool)})


def sweep(model: TransformerSpec, hw: ClusterSpec, fw: Framework, gpus: int,
          global_batch: int, *, fixed: Mapping[str, int | bool] | None = None,
          top: int = 5, tokens: float | None = None,
          max_layouts: int | None = None, limit: ChoiceLimit | None = None) -> SweepResult:
    """Evaluate every valid layout (within `limit`) and return the `top` fastest that fit in
    memory."""
    share = sweep_share(model, hw, fw, gpus, global_batch, fixed=fixed, top=top, tokens=tokens,
                        max_layouts=max_layouts, limit=limit)
    return merge_shares([share], hw, top)


def sweep_share(model: TransformerSpec, hw: ClusterSpec, fw: Framework, gpus: int,
                global_batch: int, *, fixed: Mapping[str, int | bool] | None = None,
                top: int = 5, tokens: float | None = None, part: int = 0,
                parts: int = 1, max_layouts: int | None = None,
                limit: ChoiceLimit | None = None) -> SweepResult:
    """One share of the search: every `parts`-th valid layout from the `part`-th (strided, so
    shares of one search cost about the same), ranked; `merge_shares` joins the shares. A
    share may hold no layout that fits; only the merged search must."""
    if not 0 <= part < parts:
        raise ValueError(f"part {part} is not one of {parts} parts")
    layouts = enumerate_layouts(model, fw, gpus, global_batch, fixed, max_layouts=max_layouts,
                                limit=limit)
    if len(layouts) == 0:
        raise NoValidLayout(_why_empty(model, fw, gpus, global_batch, fixed))
    index = np.arange(part, len(layouts), parts)
    mine = layouts if parts == 1 else layouts.take(index)
    # Only a layout that fits can rank, so the time model runs on those alone (memory is a
    # small part of it, and the same arithmetic evaluate() uses: the numbers are the same).
    memory = layout_memory(model, fw, mine)
    fitting = np.flatnonzero(memory <= usable_memory(hw))
    candidates = mine.take(fitting)
    if len(candidates) <= BLOCK:  # one pass: estimate them all, keep the top
        estimates = evaluate(model, hw, fw, candidates, tokens)
        ranked = fastest(estimates.t_iter, top)
        best = take(estimates, ranked)
    else:
        # Ranking needs t_iter alone; the full estimates are made for the `top` layouts only
        # (elementwise arithmetic: a layout's numbers do not depend on the others evaluated).
        ranked = fastest(iteration_times(model, hw, fw, candidates), top)
        best = evaluate(model, hw, fw, candidates.take(ranked), tokens)
    smallest = float(memory.min()) if len(index) else float("inf")
    return SweepResult(evaluated=len(index), valid=int(fitting.size), best=best,
                       ranked_by="t_iter_s", index=index[fitting[ranked]],
                       smallest_memory_bytes=smallest)


def fastest(t_iter: npt.NDArray[np.float64], top: int) -> npt.NDArray[np.intp]:
    """np.argsort(t_iter, kind="stable")[:top] (ties by position), without sorting them all:
    only the times up to the top-th smallest are sorted."""
    if len(t_iter) <= top or top <= 0:
        return np.argsort(t_iter, kind="stable")[:max(top, 0)]
    cutoff = np.partition(t_iter, top - 1)[top - 1]
    if np.isnan(cutoff):  # fewer than `top` numbers: argsort puts the NaNs last, in order
        return np.argsort(t_iter, kind="stable")[:top]
    near = np.flatnonzero(t_iter <= cutoff)  # in position order, so stable keeps ties so
    return near[np.argsort(t_iter[near], kind="stable")][:top]


def merge_shares(shares: list[SweepResult], hw: ClusterSpec, top: int = 5) -> SweepResult:
    """The whole search's result from its shares: the `top` fastest of all, ties by position
    in the enumeration, exactly as one unsplit search ranks them."""
    best = concatenate([s.best for s in shares])
    index = np.concatenate([s.index for s in shares if s.index is not None])
    valid = sum(s.valid for s in shares)
    smallest = min(s.smallest_memory_bytes for s in shares)
    if valid == 0:
        raise NoValidLayout(f"no layout fits in memory: the smallest needs "
                            f"{smallest / 2**30:.1f} GiB per GPU, the GPU has "
                            f"{hw.hbm_bytes / 2**30:.1f} GiB")
    order = np.lexsort((index, best.t_iter))[:top]
    return SweepResult(evaluated=sum(s.evaluated for s in shares), valid=valid,
                       best=take(best, order), ranked_by="t_iter_s", index=index[order],
                       smallest_memory_bytes=smallest)


def _why_empty(model: TransformerSpec, fw: Framework, gpus: int, global_batch: int,
               fixed: Mapping[str, int | bool] | None) -> str:
    """Why a search found no layout: the first layout rule its fixed choices break alone, or
    else that no GPU split divides the batch."""
    fixed = dict(fixed or {})
    held = {name: int(value) for name, value in fixed.items() if name in LAYOUT_FIELDS}
    known = frozenset(held) | {"global_batch"}
    for broken in violations(model, fw, Layout(**{**held, "global_batch": global_batch}),
                             known):
        return f"{broken.field}: {broken.reason}"
    return (f"no (tp, pp, dp) with tp x pp x dp = {gpus} GPUs divides global_batch "
            f"{global_batch} into whole micro-batches under the fixed choices {fixed}")
