"""Which layouts a serving option is searched over, which of them the measurements cover,
and which one it runs at: the serving side of "each option at its best layout".

The search keeps to the schemes the published measurements ran (data/measurements/
serving_points.yaml): aggregated serving (prefill and decode on the same GPUs), one pipeline
stage, and one model instance of 1, 2, 4, ... GPUs inside the option's scale-up domain, laid
out as one of

- tensor parallelism over the instance (`TP8`), the experts split by it;
- tensor parallelism with whole experts over the same GPUs (`TP8 x EP8`);
- data-parallel attention, a replica per GPU, with the experts split by TP or spread whole
  over the instance (`DP8`, `DP8 x EP8`).

Wider instances of those schemes (up to the whole domain: 72 GPUs of an NVL72) are searched
too, but no measurement ran one: they carry the widest band (`beyond_measured`). Pipeline
stages, disaggregated prefill and instances spanning NICs are outside the covered space: a
scenario pins one to see it (`layout: pinned`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from models.parallel_limits import serving_refusals
from models.serving.spec import Deployment, ServingLLM


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
        text += f" + {dep.prefill_gpus} prefill GPUs"
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


def instance_sizes(domain_gpus: int) -> list[int]:
    """1, 2, 4, ... within the scale-up domain, and the domain itself (72 on an NVL72)."""
    sizes, n = [], 1
    while n <= domain_gpus:
        sizes.append(n)
        n *= 2
    return sizes if sizes[-1] == domain_gpus else [*sizes, domain_gpus]


def candidates(llm: ServingLLM, base: Deployment, domain_gpus: int) -> list[Deployment]:
    """Every deployment of the searched schemes inside a scale-up domain of `domain_gpus`
    that an engine can run the model with (models/parallel_limits.py), with `base`'s engine,
    formats and batch limit. Whether the weights fit is the curve's to say."""
    found: list[Deployment] = []
    for n in instance_sizes(max(1, domain_gpus)):
        layouts = [(n, 1, None), (1, n, None)]
        if llm.is_moe:
            layouts += [(n, 1, n), (1, n, n)]
        for tp, dp, ep in layouts:
            if (tp, dp) == (1, 1) and ep is not None:
                continue  # one GPU: nothing to spread the experts over
            if serving_refusals(tp, ep or 1, llm.heads, llm.kv_heads, llm.latent_kv,
                                llm.experts):
                continue
            dep = replace(base, tp=tp, dp=dp, ep=ep, pp=1, prefill_gpus=0)
            if dep not in found:
                found.append(dep)
    return found


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
