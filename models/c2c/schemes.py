"""Parallel schemes: which layouts the C2C model's calibration covers, and which scheme a layout
belongs to.

A best-layout search must not pick the model's blind spots: a layout whose scheme no
calibration run exercises (ZeRO-3 at a scale no FSDP run reached, tensor parallelism across
scale-up domains, a pipeline deeper than any measured one) is exactly where the model may be
optimistic, and a search rewards optimism. So the default search keeps to the covered space,
derived from the calibration runs themselves (not from constants), and every layout carries
the scheme it belongs to and whether it is covered.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from models.c2c.measured_runs import MeasuredRun
from models.c2c.spec import ClusterSpec, Layout

# A setting is covered up to the largest value at least this many calibration runs reach:
# one run at a value is an anecdote, not a fit.
MIN_RUNS = 3
# ZeRO stages of Megatron's own recipes: 0 (DDP) and 1 (distributed optimizer). 2 is not used
# by any published recipe; 3 is FSDP, covered only up to the scale its runs reach.
RECIPE_ZERO = (0, 1)
FSDP = 3

ChoiceLimit = Callable[[dict[str, list[int]]], dict[str, list[int]]]


@dataclass(frozen=True)
class CoveredSpace:
    """The largest value of each parallel setting that at least MIN_RUNS calibration runs
    reach, and the largest GPU count at which FSDP (ZeRO-3) was measured that often (0: never).
    FSDP alone is bounded by scale: its per-layer parameter all-gathers turn latency-bound as
    the data-parallel group grows, which a small-scale fit cannot see; the DP all-reduce of the
    other schemes moves the same bytes per GPU at any scale."""

    max_tp: int
    max_pp: int
    max_cp: int
    max_ep: int
    fsdp_max_gpus: int
    runs: int

    def describe(self) -> str:
        fsdp = (f"ZeRO-3 (FSDP) up to {self.fsdp_max_gpus:,} GPUs" if self.fsdp_max_gpus
                else "no ZeRO-3 (FSDP)")
        return (f"TP <= {self.max_tp} inside one scale-up domain, PP <= {self.max_pp}, "
                f"CP <= {self.max_cp}, EP <= {self.max_ep}, ZeRO-0/1, {fsdp} "
                f"(settings at least {MIN_RUNS} of the {self.runs} calibration runs reach)")


def _reached(values: Iterable[int]) -> int:
    """The largest value at least MIN_RUNS of `values` reach or exceed (0 when too few)."""
    ranked = sorted(values, reverse=True)
    return ranked[MIN_RUNS - 1] if len(ranked) >= MIN_RUNS else 0


def covered_space(runs: Iterable[MeasuredRun]) -> CoveredSpace:
    """The space the calibration runs cover (see CoveredSpace)."""
    runs = list(runs)
    recipe = [r for r in runs if not r.fsdp] or runs
    return CoveredSpace(
        max_tp=max(_reached(r.tp for r in recipe), 1),
        max_pp=max(_reached(r.pp for r in recipe), 1),
        max_cp=max(_reached(r.cp for r in recipe), 1),
        max_ep=max(_reached(r.ep for r in recipe), 1),
        fsdp_max_gpus=_reached(r.gpus for r in runs if r.fsdp),
        runs=len(runs))


@dataclass(frozen=True)
class Scheme:
    """The parallel scheme of one layout, in words, and why the calibration does not cover it
    (empty when it does)."""

    name: str
    uncovered: tuple[str, ...] = ()

    @property
    def covered(self) -> bool:
        return not self.uncovered


def scheme_name(layout: Layout, domain_gpus: int) -> str:
    """"TP8 x PP8 x DP48, ZeRO-1, TP inside the scale-up domain" and the like."""
    parts = [f"TP{layout.tp}"]
    parts += [f"PP{layout.pp}"] if layout.pp > 1 else []
    parts += [f"CP{layout.cp}"] if layout.cp > 1 else []
    parts += [f"EP{layout.ep}"] if layout.ep > 1 else []
    parts.append(f"DP{layout.dp}")
    zero = {0: "DDP", 1: "ZeRO-1 (distributed optimizer)", 2: "ZeRO-2",
            3: "ZeRO-3 (FSDP)"}[layout.zero]
    where = ("TP inside one scale-up domain" if _tp_inside(layout.tp, domain_gpus)
             else "TP across scale-up domains")
    return f"{' x '.join(parts)}, {zero}, {where}"


def _tp_inside(tp: int, domain_gpus: int) -> bool:
    return tp <= domain_gpus and domain_gpus % tp == 0


def scheme_of(layout: Layout, hw: ClusterSpec, space: CoveredSpace) -> Scheme:
    """The layout's scheme and every way it leaves the covered space."""
    why: list[str] = []
    if not _tp_inside(layout.tp, hw.domain_gpus):
        why.append(f"TP{layout.tp} spans scale-up domains of {hw.domain_gpus} GPUs")
    if layout.tp > space.max_tp:
        why.append(f"TP{layout.tp} is above TP{space.max_tp}, the largest the calibration "
                   "runs use")
    for name, value, limit in (("PP", layout.pp, space.max_pp), ("CP", layout.cp, space.max_cp),
                               ("EP", layout.ep, space.max_ep)):
        if value > limit:
            why.append(f"{name}{value} is above {name}{limit}, the largest the calibration "
                       "runs use")
    if layout.zero == FSDP and layout.gpus > space.fsdp_max_gpus:
        why.append(f"ZeRO-3 (FSDP) on {layout.gpus:,} GPUs; the calibration's FSDP runs reach "
                   f"{space.fsdp_max_gpus:,}" if space.fsdp_max_gpus
                   else "ZeRO-3 (FSDP), which no calibration run uses")
    elif layout.zero not in (*RECIPE_ZERO, FSDP):
        why.append(f"ZeRO-{layout.zero}, which no calibration run uses")
    return Scheme(scheme_name(layout, hw.domain_gpus), tuple(why))


def covered_choices(space: CoveredSpace, hw: ClusterSpec, gpus: int) -> ChoiceLimit:
    """A filter of a search's candidate values (models.c2c.sweep.layout_choices) down to the
    covered space: every rule of scheme_of that one dimension decides alone."""
    zero = (*RECIPE_ZERO, FSDP) if gpus <= space.fsdp_max_gpus else RECIPE_ZERO
    keep: Mapping[str, Callable[[int], bool]] = {
        "tp": lambda v: v <= space.max_tp and _tp_inside(v, hw.domain_gpus),
        "pp": lambda v: v <= space.max_pp,
        "cp": lambda v: v <= space.max_cp,
        "ep": lambda v: v <= space.max_ep,
        "zero": lambda v: v in zero,
    }

    def limit(choices: dict[str, list[int]]) -> dict[str, list[int]]:
        return {name: [v for v in values if keep[name](v)] if name in keep else values
                for name, values in choices.items()}
    return limit
