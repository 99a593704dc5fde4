"""The serving model on measurements of one phase alone: a disaggregated deployment's prefill
pool or its decode pool run flat out, the other phase assumed unlimited (LMSYS's SGLang
large-scale EP posts on H100 and GB200 NVL72, vLLM's wide-EP GB200 post). Such a figure is
one number, not a curve, so the model is read the same way:

- prefill: the pool's input tokens/s per GPU with every attention replica prefilling, one
  request after another (the rate the model's curve charges a request's prefill at):
  input tokens x replicas / (one prefill's seconds x the pool's GPUs);
- decode: the pool's output tokens/s per GPU with `batch` sequences in each attention
  replica's batch, at the request's context: sequences / (one decode step's seconds x the
  pool's GPUs). A post that does not state its batch measured at saturation ("decode
  saturated", "batch chosen to fill the KV cache"): the batch is then as many sequences as
  the model's KV budget holds (models.serving.curve.max_concurrency).

These points check the model; nothing is fitted on them. They are data with their provenance
(data/measurements/serving_phases.yaml, read by pipelines/inputs/measurements.py), taken as
an argument here.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date
from typing import Final

from models.c2c.validation import Facets, PublishedSet, SetReport, ValidationResult
from models.serving.curve import decode_step, max_concurrency, prefill_seconds
from models.serving.measured_points import LeftOut, Source
from models.serving.presets import PRESETS
from models.serving.spec import Deployment, RequestShape, WeightFormat
from models.serving.validation import HARDWARE, PEAKS, constants_for, layout_name

PHASES: Final = ("prefill", "decode")
QUANTITY: Final = "input (prefill) or output (decode) tokens/s per GPU of the pool"


@dataclass(frozen=True)
class PhasePoint:
    """One phase of a disaggregated deployment, measured alone.

    The pool is `gpus` GPUs serving one instance: with DP attention each GPU is its own
    attention replica and the experts are spread over `ep` of them; without it attention is
    split `tp` ways. `precision` is the experts' weights (the bulk of a MoE model's: a post's
    attention in another precision is said in `what`). `batch`: decode sequences per attention
    replica, None when the post measured at saturation without stating it; prefill points have
    none. `tok_s_per_gpu`: input tokens/s (prefill) or output tokens/s (decode) per GPU of the
    pool."""

    source: str
    url: str
    hardware: str
    arch: str
    model: str
    precision: str
    engine: str
    phase: str
    gpus: int
    tp: int
    ep: int
    dp_attention: bool
    input_tokens: int
    output_tokens: int
    batch: int | None
    tok_s_per_gpu: float
    measured_on: date
    what: str

    @property
    def name(self) -> str:
        layout = f"tp{self.tp} ep{self.ep}{' dpa' if self.dp_attention else ''}"
        load = ("" if self.phase == "prefill" else
                f" batch {self.batch}" if self.batch else " saturated")
        return (f"{self.model} {self.precision} {self.hardware} {self.engine} {self.phase}-only "
                f"{self.gpus} GPUs {layout} {self.input_tokens}/{self.output_tokens}{load}")


@dataclass(frozen=True)
class PhasePoints:
    """The published phase-isolated measurements, and the rows that could not be expressed."""

    sources: tuple[Source, ...]
    points: tuple[PhasePoint, ...]
    left_out: tuple[LeftOut, ...] = ()


def phase_deployment(p: PhasePoint) -> Deployment:
    """The pool as one instance of the model."""
    weights = WeightFormat(p.precision)
    ep = p.ep if p.ep > 1 else None
    if p.dp_attention:
        return Deployment(tp=1, dp=p.gpus, ep=ep, weights=weights, engine=p.engine)
    return Deployment(tp=p.tp, dp=p.gpus // p.tp, ep=ep, weights=weights, engine=p.engine)


def predicted(p: PhasePoint) -> float:
    """The model's tokens/s per GPU for the phase, with the family's and engine's stored
    constants; 0 when the pool cannot hold the weights (no sequence fits)."""
    llm = PRESETS[p.model]
    dep = phase_deployment(p)
    hw = replace(HARDWARE[p.hardware], gemm_peak_flops=PEAKS[(p.hardware, p.precision)])
    request = RequestShape(p.input_tokens, p.output_tokens)
    k = constants_for(p.arch)
    if p.phase == "prefill":
        seconds = prefill_seconds(llm, dep, hw, request, k, hw.gemm_peak)
        return p.input_tokens * dep.dp * dep.pp / (seconds * dep.gpus)
    sequences = (p.batch * dep.dp if p.batch is not None
                 else max_concurrency(llm, dep, hw, request))
    if sequences < 1:
        return 0.0
    step = decode_step(llm, dep, hw, request, sequences, k, hw.gemm_peak)
    return sequences / (step.total * dep.gpus)


def phase_report(table: PhasePoints) -> SetReport | None:
    """The phase-isolated points as one validation set (None when there are none): measured,
    predicted and the signed error, (predicted - measured) / measured in %."""
    if not table.points:
        return None
    latest = max(table.sources, key=lambda s: s.published_on)
    families = " / ".join(sorted({p.hardware for p in table.points}))
    published = PublishedSet(
        f"Phase-isolated serving throughputs, DeepSeek-R1 wide EP on {families}: a "
        f"disaggregated deployment's prefill or decode pool measured alone; "
        f"{len(table.points)} points, checks only (nothing is fitted on them)",
        latest.url, latest.published_on, QUANTITY, "%", "serving-phases", checks="serving")
    results = []
    for p in table.points:
        model = predicted(p)
        error = 100 * (model - p.tok_s_per_gpu) / p.tok_s_per_gpu
        layout = layout_name(p.tp, p.ep, p.dp_attention)
        results.append(ValidationResult(published, p.name, p.tok_s_per_gpu, model, error,
                                        Facets(p.model, p.hardware, p.engine,
                                               f"{layout} {p.phase}-only")))
    return SetReport(published, tuple(results))
