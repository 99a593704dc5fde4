"""Which layouts a serving option is searched over, which of them the measurements cover,
and which one it runs at: the serving side of "each option at its best layout".

The search tries every layout of the option's hardware an engine can run the model with
(models/parallel_limits.py), up to two scale-up domains (SPAN_DOMAINS: a model too big for
one HGX node spans two, over the NICs): tensor parallelism, data-parallel attention replicas,
whole experts spread over the instance, pipeline stages, and a disaggregated prefill pool of
tp-wide replicas beside the decode instance. Its sizes double from 1 (and end at the domain
itself: 72 on an NVL72). Replicas of an instance cost and earn the same per GPU, so an
option's cost per token is its instance's.

Only some of those layouts were measured (data/measurements/serving_points.yaml): aggregated
serving, one pipeline stage, one instance inside the domain as TP (`TP8`), TP with whole
experts (`TP8 x EP8`), or data-parallel attention with the experts split or spread (`DP8`,
`DP8 x EP8`), up to the largest instance of each scheme a measurement ran (Coverage). Every
other layout carries the widest band (calibration.UNCALIBRATED_BAND), and the choice ranks by
the band's low end (best): a layout the model is less sure of must be better by as much as
it is less sure, so a search finds the hardware's strengths rather than the model's errors.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np

from models.parallel_limits import serving_refusals
from models.serving.layout_array import Layouts
from models.serving.spec import Deployment, ServingLLM

# How many scale-up domains one deployment may span: two HGX nodes hold what one cannot
# (DeepSeek-R1 in FP8 on H100s), and two NVL72 racks are the widest disaggregated runs
# published (InferenceX's GB200 rows).
SPAN_DOMAINS: Final = 2


def layout_label(dep: Deployment) -> str:
    """The deployment as page 1 prints it: "TP8", "DP8 x EP8", "TP2 x DP4 x PP2 + 8 prefill
    GPUs" (each factor of 1 left out; at least "TP1")."""
    parts = [f"TP{dep.tp}"] if dep.tp > 1 or dep.dp == 1 else []
    if dep.dp > 1:
        parts.append(f"DP{dep.dp}")
    if dep.ep is not None and dep.ep > 1:
        parts.append(f"EP{dep.ep}")
    if dep.pp > 1:
        parts.append(f"PP{dep.pp}")
    text = " x ".join(parts)
    if dep.prefill_gpus:
        noun = "GPU" if dep.prefill_gpus == 1 else "GPUs"
        text += f" + {dep.prefill_gpus} prefill {noun}"
    return text


def scheme(dep: Deployment) -> str | None:
    """The measured scheme a deployment is of ("tp", "tp-ep", "dp", "dp-ep"), or None when it
    is outside the covered space (pipeline stages, disaggregated, mixed TP x DP)."""
    if dep.pp > 1 or dep.disaggregated or (dep.tp > 1 and dep.dp > 1):
        return None
    spread = dep.ep is not None and dep.ep > 1
    if dep.dp > 1:
        return "dp-ep" if spread else "dp"
    return "tp-ep" if spread else "tp"


@dataclass(frozen=True)
class Coverage:
    """The largest instance (GPUs) the measurements ran of each scheme."""

    largest: dict[str, int]

    def covers(self, dep: Deployment) -> bool:
        """Whether a measurement ran the deployment's scheme at its size or wider."""
        kind = scheme(dep)
        return kind is not None and dep.gpus <= self.largest.get(kind, 0)

    def covers_rows(self, layouts: Layouts) -> np.ndarray:
        """covers() per row of `layouts` (a boolean array)."""
        tp, dp, ep, pp = layouts.tp, layouts.dp, layouts.ep, layouts.pp
        mixed = (pp > 1) | (layouts.prefill_gpus > 0) | ((tp > 1) & (dp > 1))
        spread = ep > 1
        largest = np.select([(dp > 1) & spread, dp > 1, spread],
                            [self.largest.get("dp-ep", 0), self.largest.get("dp", 0),
                             self.largest.get("tp-ep", 0)], self.largest.get("tp", 0))
        return ~mixed & (layouts.gpus <= largest)

    def describe(self, dep: Deployment) -> str:
        """Why a deployment is outside the covered space, in words."""
        kind = scheme(dep)
        if kind is None:
            return ("outside the measured layouts (pipeline stages, disaggregated prefill or "
                    "mixed TP x DP: no measurement ran one)")
        return (f"an instance of {dep.gpus} GPUs, wider than any measured one of its scheme "
                f"({self.largest.get(kind, 0)} GPUs)")


def coverage(layouts: Iterable[Deployment]) -> Coverage:
    """The coverage of the measured deployments `layouts`."""
    largest: dict[str, int] = {}
    for dep in layouts:
        kind = scheme(dep)
        if kind is not None:
            largest[kind] = max(largest.get(kind, 0), dep.gpus)
    return Coverage(largest)


def instance_sizes(domain_gpus: int, reach: int | None = None) -> list[int]:
    """1, 2, 4, ... up to `reach` GPUs (the domain by default), and the domain itself (72 on
    an NVL72) when it is not one of them."""
    reach = domain_gpus if reach is None else reach
    sizes, n = [], 1
    while n <= reach:
        sizes.append(n)
        n *= 2
    return sorted({*sizes, domain_gpus}) if domain_gpus <= reach else sizes


def candidates(llm: ServingLLM, domain_gpus: int) -> Layouts:
    """Every layout of the searched space (the module's docstring) that an engine can run
    the model with, on at most SPAN_DOMAINS scale-up domains of `domain_gpus` GPUs: tp, dp
    and pp of instance_sizes, the experts split by TP or spread over the whole instance, and
    no prefill pool or one of tp, 2 tp, 4 tp, ... GPUs. Whether the weights fit is the
    curve's to say; the formats, batch limit and engine are the scenario's (Layouts)."""
    reach = SPAN_DOMAINS * max(1, domain_gpus)
    sizes = instance_sizes(max(1, domain_gpus), reach)
    rows: list[tuple[int, int, int, int, int]] = []
    for tp in sizes:
        for dp in sizes:
            for pp in (p for p in sizes if p <= llm.layers and tp * dp * p <= reach):
                spreads = [0]
                if llm.is_moe and tp * dp > 1:
                    spreads.append(tp * dp)
                for ep in spreads:
                    if serving_refusals(tp, ep or 1, llm.heads, llm.kv_heads, llm.latent_kv,
                                        llm.experts, pp=pp, layers=llm.layers):
                        continue
                    prefill = 0
                    while tp * dp * pp + prefill <= reach:
                        rows.append((tp, dp, ep, pp, prefill))
                        prefill = tp if prefill == 0 else 2 * prefill
    columns = np.asarray(rows, dtype=np.int64).reshape(-1, 5).T
    return Layouts(*columns)


@dataclass(frozen=True)
class Evaluated:
    """One layout's answer at the target: output tokens/s per GPU (None: the curve never
    reaches the target, or the weights do not fit) and its band (low, high) of measured /
    predicted throughput."""

    deployment: Deployment
    tok_s_per_gpu: float | None
    band: tuple[float, float]

    @property
    def assured(self) -> float:
        """The throughput the band's low end still gives: what the choice ranks by."""
        return 0.0 if self.tok_s_per_gpu is None else self.tok_s_per_gpu * self.band[0]


def best(evaluated: Sequence[Evaluated]) -> Evaluated | None:
    """The layout to run: the most output tokens/s per GPU at the target at the low end of its
    band (a measured curve's is the curve; a layout the model is less sure of must be better
    by as much as it is less sure), then the most at the estimate, then the fewest GPUs.
    Every layout of one option costs the same per GPU-hour, so this is also the cheapest per
    token. None: no layout reaches the target."""
    reached = [e for e in evaluated if e.tok_s_per_gpu is not None]
    if not reached:
        return None
    return max(reached, key=lambda e: (e.assured, e.tok_s_per_gpu, -e.deployment.total_gpus))
