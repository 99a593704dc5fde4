"""The shape of the published serving measurements the serving model is calibrated on:
SemiAnalysis InferenceX points (a fixed concurrency), MLPerf Inference runs (Offline: every
request at once; Server: Poisson arrivals at a target rate under percentile latency limits)
and AMD's vLLM reference numbers (a static batch).

The points themselves are data, with their provenance (each set's title, commit-pinned URL and
date; each point's run date and GitHub Actions run): data/measurements/serving_points.yaml, read
by pipelines/inputs/measurements.py into a ServingPoints. This module holds only the types and
the GPU items' architectures, so the model's validation takes the points as an argument.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Final


@dataclass(frozen=True)
class Source:
    """A published set of serving points, pinned to the revision the rows were read from."""

    key: str
    title: str
    url: str
    published_on: date  # the commit that captured it


@dataclass(frozen=True)
class MeasuredPoint:
    """One serving point: a configuration in one scenario, as its source ran and measured it.

    `tp`, `ep` and `dp_attention` are InferenceX's: the instance is `tp` GPUs; with DP attention
    each GPU holds its own attention replica (tensor parallelism 1 for attention) and the
    experts are spread over `ep` GPUs; without it attention is split `tp` ways and `ep` = 1 means
    the experts are split by tensor parallelism.

    `scenario` says how the load was offered (SCENARIOS): "concurrency" keeps `concurrency`
    requests in flight (InferenceX, a static batch); "offline" sends every request at once and
    measures throughput alone (MLPerf Offline: no concurrency, no per-user rate); "server"
    sends requests as Poisson arrivals at a target rate, the highest rate whose p99 time per
    output token and to first token stay within `tpot_p99_limit_s` and `ttft_p99_limit_s`
    (MLPerf Server and Interactive): the concurrency is whatever the arrivals make it, and
    `tok_s_per_user` is the median one."""

    hardware: str           # the ledger's GPU item (data/sources/gpus.yaml)
    arch: str               # ARCH_OF_ITEM of the hardware
    model: str              # key in models.serving.presets.PRESETS
    precision: str          # weights: "fp8" | "fp4"
    engine: str             # "sglang" | "trt" (TensorRT-LLM) | "vllm" | "atom" (AMD's ATOM)
    tp: int
    ep: int
    dp_attention: bool
    input_tokens: int
    output_tokens: int
    concurrency: int | None         # requests in flight; None unless scenario "concurrency"
    tok_s_per_gpu: float            # output tokens/s per GPU of the instance
    tok_s_per_user: float | None    # median interactivity: 1 / time per output token
    ttft_s: float | None            # median time to first token, where measured
    source: str                     # key of a Source
    url: str                        # the source's commit-pinned file
    measured_on: date               # the run's date (the dashboard's `date`)
    run: str                        # the run that measured it (an Actions run, a log file)
    scenario: str = "concurrency"
    tpot_p99_limit_s: float | None = None   # the scenario "server" limits
    ttft_p99_limit_s: float | None = None

    @property
    def gpus(self) -> int:
        return self.tp


SCENARIOS: Final = ("concurrency", "offline", "server")


@dataclass(frozen=True)
class LeftOut:
    """Published rows the model is not scored on, with why: those a cited set holds that the
    table does not (a GPU the model has no figures for, a layout the source does not state, an
    engine it does not know), or configurations whose weights the model's HBM budget does not
    hold (`specledger validate` counts and names them)."""

    why: str
    rows: int
    what: tuple[str, ...]


@dataclass(frozen=True)
class ServingPoints:
    """The published sets and their points. Tuples, so a set of points can key a cache."""

    sources: tuple[Source, ...]
    points: tuple[MeasuredPoint, ...]
    left_out: tuple[LeftOut, ...] = ()

    def source(self, key: str) -> Source:
        return next(s for s in self.sources if s.key == key)


# The ledger's GPU items -> the architecture their family maps to (gpus.yaml: H100 SXM5 and H200
# SXM are Hopper, B200 and GB200 are Blackwell, B300 and GB300 Blackwell Ultra;
# models.c2c.calibration.ARCH_OF_FAMILY). The AMD Instinct items (gpus.yaml family Instinct) by
# their compute architecture: MI300X and MI325X are CDNA 3, MI355X is CDNA 4 (AMD's product
# pages); the serving model fits each apart (Blackwell Ultra, one model on one engine, is not
# fitted: models.serving.calibration.UNFITTED).
ARCH_OF_ITEM: Final = {"h100-sxm5": "hopper", "h200-sxm": "hopper", "b200": "blackwell",
                       "gb200": "blackwell", "b300": "blackwell_ultra",
                       "gb300": "blackwell_ultra", "amd-mi300x": "cdna3", "amd-mi325x": "cdna3",
                       "amd-mi355x": "cdna4"}
