"""What an input token and an output token each cost: the GPU-time of a request split between
its prefill (which reads the prompt) and its decode steps (which write the answer).

The public benchmarks charge every GPU-second to the output tokens (cost.usd_per_mtok). API
prices, and buyers, price input and output apart; a disaggregated deployment's prefill GPUs
and decode GPUs are even bought apart. The split here is that of the serving model's cycle:
at a concurrency, the share of the deployment's GPU-time spent in prefill.
"""

from __future__ import annotations

from dataclasses import dataclass

from models.c2c.spec import ClusterSpec
from models.serving.calibration import ServingConstants
from models.serving.cost import usd_per_mtok
from models.serving.curve import curve_point
from models.serving.spec import Deployment, RequestShape, ServingLLM


@dataclass(frozen=True)
class TokenCosts:
    """USD per million input tokens and per million output tokens; together they pay for the
    same GPU-time as every GPU-second charged to the output (`usd_per_mtok_all_out`)."""

    usd_per_mtok_in: float
    usd_per_mtok_out: float
    prefill_share: float


def prefill_share(llm: ServingLLM, dep: Deployment, hw: ClusterSpec, request: RequestShape,
                  concurrency: float, k: ServingConstants, peak: float) -> float:
    """The share of the deployment's GPU-time spent in prefill at `concurrency`: a
    disaggregated deployment's prefill GPUs over all of its GPUs; an aggregated one's prefill
    seconds over its whole cycle (curve.curve_point)."""
    if dep.disaggregated:
        return dep.prefill_gpus / dep.total_gpus
    batch = max(1, round(concurrency))
    point = curve_point(llm, dep, hw, request, batch, k, peak)
    prefill = batch * point.prefill_s / (dep.dp * dep.pp)
    cycle = prefill + request.output_tokens * point.step.total
    return prefill / cycle if cycle > 0 else 0.0


def token_costs(usd_per_gpu_hour: float, tok_s_per_gpu: float, request: RequestShape,
                share: float) -> TokenCosts:
    """Split the GPU-time behind `tok_s_per_gpu` output tokens per GPU-second: `share` of it
    to the request's input tokens, the rest to its output tokens."""
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"a prefill share is between 0 and 1, not {share}")
    all_out = usd_per_mtok(usd_per_gpu_hour, tok_s_per_gpu)
    per_input = request.output_tokens / request.input_tokens
    return TokenCosts(all_out * share * per_input, all_out * (1 - share), share)
