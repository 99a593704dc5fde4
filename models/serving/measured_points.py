"""Published serving measurements the serving model is calibrated on: SemiAnalysis InferenceX.

InferenceX (formerly InferenceMAX, SemiAnalysis, Apache-2.0) runs each model on each GPU with
each engine every few days and publishes, per configuration (engine, precision, sequence
lengths, tensor and expert parallelism, DP attention) and per concurrency, the output tokens/s
per GPU, the tokens/s each user sees (1 / time per output token, median) and the time to first
token. The dashboard's API (`/api/v1/benchmarks`) serves those rows; InferenceX-app keeps a
capture of its answers for DeepSeek-R1 as the end-to-end tests' fixtures (`benchmarks.json`:
the rows the dashboard draws; `benchmarks-history.json`: runs of the same configurations over
time), with each row's run date and its GitHub Actions run. That capture is what is
transcribed here, pinned to the commit that last refreshed it (the fixture manifest's SHA-256
of both files matches the files at that commit).

Only the rows the serving model describes are kept: aggregated serving (prefill and decode on
the same GPUs, one node), no speculative decoding, on the GPUs whose figures the ledger's
source packs hold (H200 SXM and B200: data/sources/gpu_compute.yaml). Of each configuration and
concurrency the latest run is kept (`benchmarks.json` over `benchmarks-history.json` on the same
date). Left out, with why: B300 and the MI300X / MI325X / MI355X rows (no HBM or peak figures
in the packs), H100 and GB200 (only disaggregated, multi-node rows), MTP rows (speculative
decoding is another curve). The capture has no Llama 3.3 70B or gpt-oss-120b rows: the
dashboard answers per model, and the fixtures hold DeepSeek-R1 only (the availability fixture
lists the other models' configurations, without numbers).

Values are as the API gives them, rounded to 0.01 tokens/s and 0.1 ms: `tok_s_per_gpu` is
`output_tput_per_gpu` (output tokens/s over the instance's GPUs), `tok_s_per_user` is
`median_intvty`, `ttft_s` is `median_ttft`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import Any, Final


@dataclass(frozen=True)
class Source:
    """A published set of serving points, pinned to the revision the rows were read from."""

    key: str
    title: str
    url: str
    published_on: date  # the commit that captured it


@dataclass(frozen=True)
class MeasuredPoint:
    """One serving point: a configuration at one concurrency, as InferenceX ran and measured it.

    `tp`, `ep` and `dp_attention` are InferenceX's: the instance is `tp` GPUs; with DP attention
    each GPU holds its own attention replica (tensor parallelism 1 for attention) and the
    experts are spread over `ep` GPUs; without it attention is split `tp` ways and `ep` = 1 means
    the experts are split by tensor parallelism."""

    hardware: str           # the ledger's GPU item (data/sources/gpus.yaml)
    arch: str               # models.c2c.calibration.ARCH_OF_FAMILY of the item's family
    model: str              # key in models.serving.presets.PRESETS
    precision: str          # weights: "fp8" | "fp4"
    engine: str             # "sglang" | "trt" (TensorRT-LLM)
    tp: int
    ep: int
    dp_attention: bool
    input_tokens: int
    output_tokens: int
    concurrency: int
    tok_s_per_gpu: float    # output tokens/s per GPU of the instance
    tok_s_per_user: float   # median interactivity: 1 / time per output token
    ttft_s: float           # median time to first token
    source: str             # key in SOURCES
    url: str                # the source's commit-pinned file
    measured_on: date       # the run's date (the dashboard's `date`)
    run: str                # the GitHub Actions run that measured it

    @property
    def gpus(self) -> int:
        return self.tp


_APP_COMMIT: Final = "528c4146b8f502fcbce8df7870a935a970cbae25"
_FIXTURES: Final = (f"https://github.com/SemiAnalysisAI/InferenceX-app/blob/{_APP_COMMIT}/"
                    "packages/app/cypress/fixtures/api")
_RUNS: Final = "https://github.com/SemiAnalysisAI/InferenceX/actions/runs"

# Committed 2026-06-14 by InferenceX-app pull request #458 ("refresh Cypress fixtures so
# MiniMax M3 appears in dropdown"); the fixture manifest (`_manifest.json`, SHA-256 f46823a7...
# and 9e7efc17...) names the same files.
SOURCES: Final[dict[str, Source]] = {
    s.key: s
    for s in (
        Source(key="inferencex-dsr1-latest",
               title="InferenceX dashboard API, DeepSeek-R1: the rows the dashboard draws "
                     "(InferenceX-app fixture benchmarks.json)",
               url=f"{_FIXTURES}/benchmarks.json", published_on=date(2026, 6, 14)),
        Source(key="inferencex-dsr1-history",
               title="InferenceX dashboard API, DeepSeek-R1: runs of the same configurations "
                     "over time (InferenceX-app fixture benchmarks-history.json)",
               url=f"{_FIXTURES}/benchmarks-history.json", published_on=date(2026, 6, 14)),
    )
}
# The ledger's GPU items -> the architecture their family maps to (gpus.yaml: H200 SXM is
# Hopper, B200 is Blackwell; models.c2c.calibration.ARCH_OF_FAMILY).
ARCH_OF_ITEM: Final = {"h200-sxm": "hopper", "b200": "blackwell"}

# (concurrency, tok_s_per_gpu, tok_s_per_user, ttft_s, run date, "run id/attempt")
_Point = tuple[int, float, float, float, str, str]
_Curve = list[dict[str, Any]]


def _curve(hardware: str, engine: str, precision: str, input_tokens: int, output_tokens: int,
           layout: str, *points: _Point) -> _Curve:
    """One configuration's points. `layout`: "tp<N> ep<M>", and " dpa" with DP attention
    (InferenceX's tp, ep and dp-attn)."""
    found = re.fullmatch(r"tp(\d+) ep(\d+)( dpa)?", layout)
    if found is None:
        raise ValueError(f"bad layout {layout!r}")
    config = {"hardware": hardware, "arch": ARCH_OF_ITEM[hardware], "model": "deepseek-r1",
              "precision": precision, "engine": engine, "tp": int(found[1]),
              "ep": int(found[2]), "dp_attention": found[3] is not None,
              "input_tokens": input_tokens, "output_tokens": output_tokens}
    return [{**config, "concurrency": conc, "tok_s_per_gpu": per_gpu,
             "tok_s_per_user": per_user, "ttft_s": ttft, "measured_on": date.fromisoformat(day),
             "run": f"{_RUNS}/{run.replace('/', '/attempts/')}"}
            for conc, per_gpu, per_user, ttft, day, run in points]


def _table(source: str, *curves: _Curve) -> tuple[MeasuredPoint, ...]:
    return tuple(MeasuredPoint(**row, source=source, url=SOURCES[source].url)
                 for rows in curves for row in rows)


_LATEST: Final = _table(
    "inferencex-dsr1-latest",
    _curve("b200", "sglang", "fp4", 1024, 1024, "tp4 ep1",
           (8, 147.62, 78.92, 0.5296, "2025-11-10", "19216506952/4")),
    _curve("b200", "sglang", "fp4", 1024, 1024, "tp8 ep8",
           (1, 20.68, 170.27, 0.1651, "2026-05-22", "26306422380/1"),
           (64, 450.47, 61.6, 0.4023, "2026-05-22", "26306422380/1")),
    _curve("b200", "sglang", "fp4", 1024, 8192, "tp4 ep1",
           (4, 97.54, 99.46, 0.5135, "2025-11-10", "19216506943/4"),
           (32, 396.54, 53.0, 0.7218, "2025-11-10", "19216506943/4")),
    _curve("b200", "sglang", "fp4", 1024, 8192, "tp4 ep4",
           (128, 1122.75, 35.76, 0.579, "2026-03-25", "23552373331/2")),
    _curve("b200", "sglang", "fp4", 1024, 8192, "tp8 ep1",
           (64, 397.81, 53.23, 0.5301, "2025-11-10", "19216506943/4")),
    _curve("b200", "sglang", "fp4", 1024, 8192, "tp8 ep8",
           (8, 109.49, 112.46, 0.2079, "2026-03-25", "23552373331/2")),
    _curve("b200", "sglang", "fp4", 8192, 1024, "tp8 ep1",
           (64, 235.77, 31.93, 0.8669, "2025-11-02", "19019430552/2")),
    _curve("b200", "sglang", "fp4", 8192, 1024, "tp8 ep8",
           (1, 19.95, 165.7, 0.2169, "2026-05-22", "26306422380/1"),
           (16, 158.62, 84.79, 0.4222, "2026-05-22", "26306422380/1")),
    _curve("b200", "sglang", "fp8", 1024, 1024, "tp8 ep1",
           (1, 17.01, 139.21, 0.1574, "2026-05-22", "26306422380/1"),
           (64, 338.97, 45.86, 0.5454, "2026-05-22", "26306422380/1")),
    _curve("b200", "sglang", "fp8", 1024, 1024, "tp8 ep8",
           (4, 47.54, 97.36, 0.1626, "2025-11-18", "19448910442/4"),
           (16, 126.69, 65.41, 0.3427, "2025-11-18", "19448910442/4")),
    _curve("b200", "sglang", "fp8", 1024, 8192, "tp8 ep1",
           (4, 56.8, 115.52, 0.1714, "2026-03-25", "23552373331/2"),
           (32, 231.85, 59.56, 0.4296, "2026-03-25", "23552373331/2")),
    _curve("b200", "sglang", "fp8", 1024, 8192, "tp8 ep8",
           (8, 83.24, 84.65, 0.1645, "2025-11-18", "19448910454/4"),
           (64, 314.0, 40.46, 0.5199, "2025-11-18", "19448910454/4")),
    _curve("b200", "sglang", "fp8", 8192, 1024, "tp4 ep1",
           (32, 225.22, 29.71, 0.799, "2026-05-22", "26306422380/1")),
    _curve("b200", "sglang", "fp8", 8192, 1024, "tp8 ep1",
           (1, 16.18, 135.29, 0.3141, "2026-05-22", "26306422380/1"),
           (16, 74.61, 56.13, 0.8118, "2025-12-31", "20621824084/1")),
    _curve("b200", "sglang", "fp8", 8192, 1024, "tp8 ep8",
           (4, 39.19, 83.46, 0.6088, "2025-11-18", "19449195765/4")),
    _curve("b200", "trt", "fp4", 1024, 1024, "tp4 ep1",
           (4, 125.57, 131.46, 0.1475, "2026-05-19", "26016880548/2")),
    _curve("b200", "trt", "fp4", 1024, 1024, "tp8 ep1",
           (64, 402.98, 52.44, 0.1097, "2025-11-02", "19019407598/2")),
    _curve("b200", "trt", "fp4", 1024, 1024, "tp8 ep8",
           (16, 157.24, 80.94, 0.1122, "2025-12-15", "20216641521/2")),
    _curve("b200", "trt", "fp4", 1024, 1024, "tp8 ep8 dpa",
           (128, 727.27, 48.73, 0.717, "2026-05-19", "26016880548/2")),
    _curve("b200", "trt", "fp4", 1024, 8192, "tp4 ep1",
           (4, 124.92, 127.0, 0.1495, "2026-02-03", "21640806486/1"),
           (64, 696.43, 44.43, 0.1003, "2025-11-02", "19019467297/2")),
    _curve("b200", "trt", "fp4", 1024, 8192, "tp4 ep4",
           (128, 1030.56, 32.79, 0.1234, "2025-12-15", "20216754736/2")),
    _curve("b200", "trt", "fp4", 8192, 1024, "tp4 ep1",
           (4, 118.73, 124.35, 0.2154, "2026-05-19", "26016880548/2"),
           (16, 276.7, 72.46, 0.223, "2026-05-19", "26016880548/2")),
    _curve("b200", "trt", "fp4", 8192, 1024, "tp8 ep8 dpa",
           (128, 533.34, 36.6, 1.8924, "2026-05-19", "26016880548/2")),
    _curve("b200", "trt", "fp8", 1024, 1024, "tp4 ep1",
           (16, 228.8, 58.42, 0.1713, "2026-05-18", "26016874169/1")),
    _curve("b200", "trt", "fp8", 1024, 1024, "tp8 ep1",
           (4, 54.45, 114.97, 0.1823, "2026-05-18", "26016874169/1")),
    _curve("b200", "trt", "fp8", 1024, 1024, "tp8 ep8 dpa",
           (64, 257.78, 35.69, 1.4508, "2025-12-15", "20216641521/2")),
    _curve("b200", "trt", "fp8", 1024, 8192, "tp8 ep1",
           (4, 48.45, 98.62, 0.1711, "2026-01-29", "21484110885/1"),
           (32, 237.66, 60.73, 0.1667, "2026-01-29", "21484110885/1")),
    _curve("b200", "trt", "fp8", 1024, 8192, "tp8 ep8",
           (64, 302.8, 38.91, 0.1447, "2025-12-15", "20216754736/2")),
    _curve("b200", "trt", "fp8", 8192, 1024, "tp4 ep1",
           (16, 188.0, 50.05, 0.3163, "2026-05-18", "26016874169/1")),
    _curve("b200", "trt", "fp8", 8192, 1024, "tp8 ep1",
           (4, 50.65, 109.48, 0.2323, "2026-05-18", "26016874169/1"),
           (64, 245.78, 31.6, 0.3116, "2026-05-18", "26016874169/1")),
    _curve("h200-sxm", "sglang", "fp8", 1024, 1024, "tp8 ep1",
           (4, 49.17, 102.78, 0.0847, "2026-05-17", "25980019087/2"),
           (8, 82.37, 85.4, 0.0875, "2026-05-17", "25980019087/2")),
    _curve("h200-sxm", "sglang", "fp8", 1024, 8192, "tp8 ep1",
           (4, 47.8, 97.36, 0.1565, "2026-03-25", "23552373331/2"),
           (8, 79.77, 81.89, 0.1494, "2026-03-25", "23552373331/2"),
           (16, 123.03, 63.03, 0.156, "2026-03-25", "23552373331/2"),
           (32, 176.93, 45.23, 0.1665, "2026-03-25", "23552373331/2"),
           (64, 255.02, 32.17, 0.1828, "2026-03-25", "23552373331/2")),
    _curve("h200-sxm", "sglang", "fp8", 8192, 1024, "tp8 ep1",
           (4, 43.12, 91.09, 0.3115, "2026-05-17", "25980019087/2"),
           (8, 68.33, 71.81, 0.3142, "2026-05-17", "25980019087/2")),
    _curve("h200-sxm", "trt", "fp8", 1024, 1024, "tp8 ep1",
           (4, 34.39, 72.39, 0.1188, "2025-11-02", "19019407598/2"),
           (64, 224.65, 29.38, 0.1496, "2025-11-02", "19019407598/2")),
    _curve("h200-sxm", "trt", "fp8", 1024, 1024, "tp8 ep8",
           (8, 65.26, 67.95, 0.1704, "2026-05-18", "26016868638/2")),
    _curve("h200-sxm", "trt", "fp8", 1024, 8192, "tp8 ep1",
           (4, 35.94, 72.65, 0.1285, "2025-11-02", "19019467297/2"),
           (64, 241.36, 30.91, 0.1468, "2025-11-02", "19019467297/2")),
    _curve("h200-sxm", "trt", "fp8", 1024, 8192, "tp8 ep8",
           (8, 61.13, 62.69, 0.1061, "2025-12-15", "20216754736/2")),
    _curve("h200-sxm", "trt", "fp8", 8192, 1024, "tp8 ep1",
           (4, 31.85, 66.99, 0.3739, "2025-11-02", "19019430552/2"),
           (64, 145.51, 20.12, 3.5998, "2025-11-02", "19019430552/2")),
    _curve("h200-sxm", "trt", "fp8", 8192, 1024, "tp8 ep8",
           (8, 57.59, 60.24, 0.3815, "2026-05-18", "26016868638/2")),
)

_HISTORY: Final = _table(
    "inferencex-dsr1-history",
    _curve("b200", "sglang", "fp4", 1024, 1024, "tp4 ep4",
           (32, 470.67, 63.04, 0.4101, "2026-05-20", "26129885146/1"),
           (128, 1193.64, 40.07, 0.6085, "2026-05-22", "26306422380/1")),
    _curve("b200", "sglang", "fp4", 1024, 1024, "tp8 ep8",
           (4, 63.96, 135.2, 0.2076, "2026-05-20", "26129885146/1"),
           (16, 176.66, 92.5, 0.3254, "2026-05-22", "26306422380/1"),
           (32, 281.98, 76.26, 0.3643, "2026-05-18", "26006037916/1")),
    _curve("b200", "sglang", "fp4", 1024, 8192, "tp8 ep8",
           (4, 60.48, 123.18, 0.1885, "2026-03-25", "23552373331/2"),
           (32, 300.49, 77.25, 0.347, "2026-03-25", "23552373331/2")),
    _curve("b200", "sglang", "fp4", 8192, 1024, "tp4 ep4",
           (128, 586.56, 19.18, 1.6827, "2026-05-22", "26306422380/1")),
    _curve("b200", "sglang", "fp4", 8192, 1024, "tp8 ep8",
           (4, 61.05, 129.41, 0.2396, "2026-05-20", "26129885146/1"),
           (8, 103.32, 108.67, 0.2468, "2026-05-22", "26306422380/1")),
    _curve("b200", "sglang", "fp8", 1024, 1024, "tp8 ep1",
           (4, 53.63, 112.88, 0.1989, "2026-05-20", "26129885146/1"),
           (16, 145.25, 76.22, 0.3539, "2026-05-22", "26306422380/1"),
           (32, 235.05, 61.41, 0.4233, "2026-05-20", "26129885146/1")),
    _curve("b200", "sglang", "fp8", 1024, 8192, "tp8 ep1",
           (16, 148.8, 75.46, 0.3132, "2026-01-13", "20972034325/1"),
           (64, 327.55, 43.6, 0.5026, "2026-01-13", "20972034325/1")),
    _curve("b200", "sglang", "fp8", 8192, 1024, "tp4 ep1",
           (8, 124.4, 65.79, 0.5101, "2026-05-22", "26306422380/1")),
    _curve("b200", "sglang", "fp8", 8192, 1024, "tp8 ep1",
           (4, 48.89, 104.29, 0.3674, "2026-05-20", "26129885146/1"),
           (64, 179.15, 23.95, 1.9947, "2025-12-31", "20621824084/1")),
    _curve("b200", "trt", "fp4", 1024, 1024, "tp4 ep4 dpa",
           (256, 1954.88, 32.16, 0.4274, "2026-02-03", "21640806486/1")),
    _curve("b200", "trt", "fp4", 1024, 1024, "tp8 ep8",
           (32, 262.62, 68.21, 0.1052, "2025-12-15", "20216641521/2"),
           (64, 492.72, 63.53, 0.0705, "2026-05-19", "26016880548/2")),
    _curve("b200", "trt", "fp4", 1024, 8192, "tp4 ep4 dpa",
           (256, 2073.94, 33.5, 1.0161, "2026-02-03", "21640806486/1")),
    _curve("b200", "trt", "fp4", 1024, 8192, "tp8 ep8",
           (32, 282.15, 72.28, 0.1094, "2025-12-15", "20216754736/2"),
           (64, 476.5, 60.58, 0.1487, "2026-02-03", "21640806486/1")),
    _curve("b200", "trt", "fp4", 8192, 1024, "tp4 ep1",
           (32, 365.89, 47.22, 0.2353, "2026-02-03", "21640806486/1")),
    _curve("b200", "trt", "fp4", 8192, 1024, "tp4 ep4",
           (32, 365.42, 47.23, 0.2555, "2026-05-19", "26016880548/2")),
    _curve("b200", "trt", "fp4", 8192, 1024, "tp4 ep4 dpa",
           (256, 1026.36, 16.91, 2.0249, "2026-02-03", "21640806486/1")),
    _curve("b200", "trt", "fp4", 8192, 1024, "tp8 ep1",
           (4, 57.71, 121.4, 0.2058, "2025-12-15", "20216709902/3")),
    _curve("b200", "trt", "fp8", 1024, 1024, "tp8 ep1",
           (128, 557.71, 36.7, 0.5321, "2026-01-29", "21484110885/1")),
    _curve("b200", "trt", "fp8", 1024, 1024, "tp8 ep8",
           (4, 32.76, 68.45, 0.1636, "2025-12-15", "20216641521/2"),
           (16, 101.91, 52.75, 0.1627, "2025-12-15", "20216641521/2")),
    _curve("b200", "trt", "fp8", 1024, 8192, "tp8 ep8",
           (4, 33.55, 68.07, 0.1385, "2025-12-15", "20216754736/2"),
           (16, 111.22, 56.97, 0.138, "2025-12-15", "20216754736/2")),
    _curve("b200", "trt", "fp8", 1024, 8192, "tp8 ep8 dpa",
           (256, 911.69, 29.72, 1.3315, "2026-01-29", "21484110885/1")),
    _curve("b200", "trt", "fp8", 8192, 1024, "tp4 ep1",
           (32, 214.47, 34.66, 5.1602, "2026-01-29", "21484110885/1")),
    _curve("b200", "trt", "fp8", 8192, 1024, "tp8 ep1",
           (256, 320.05, 10.88, 4.9129, "2026-01-29", "21484110885/1")),
    _curve("b200", "trt", "fp8", 8192, 1024, "tp8 ep8",
           (4, 30.6, 64.03, 0.33, "2025-12-15", "20216709902/3"),
           (16, 86.73, 45.76, 0.3357, "2025-12-15", "20216709902/3"),
           (64, 181.69, 23.36, 0.43, "2025-12-15", "20216709902/3")),
    _curve("h200-sxm", "sglang", "fp8", 1024, 1024, "tp8 ep1",
           (16, 126.62, 64.99, 0.0941, "2026-05-17", "25980019087/2"),
           (64, 259.8, 32.77, 0.1271, "2026-05-17", "25980019087/2")),
    _curve("h200-sxm", "sglang", "fp8", 8192, 1024, "tp8 ep1",
           (16, 93.89, 49.46, 0.3298, "2026-05-17", "25980019087/2"),
           (64, 150.98, 19.73, 0.6897, "2026-05-17", "25980019087/2")),
    _curve("h200-sxm", "trt", "fp8", 1024, 1024, "tp8 ep8",
           (4, 40.34, 84.77, 0.1685, "2026-05-18", "26016868638/2"),
           (16, 93.8, 49.84, 0.1129, "2025-12-15", "20216641521/2"),
           (32, 154.55, 39.5, 0.1801, "2026-05-18", "26016868638/2"),
           (64, 228.3, 30.19, 0.1398, "2025-12-15", "20216641521/2")),
    _curve("h200-sxm", "trt", "fp8", 1024, 8192, "tp8 ep8",
           (4, 35.85, 72.92, 0.102, "2025-12-15", "20216754736/2"),
           (16, 99.81, 51.05, 0.1273, "2025-12-15", "20216754736/2"),
           (64, 241.82, 31.11, 0.1448, "2025-12-15", "20216754736/2")),
    _curve("h200-sxm", "trt", "fp8", 8192, 1024, "tp8 ep8",
           (4, 37.07, 79.08, 0.3714, "2026-05-18", "26016868638/2"),
           (16, 74.99, 39.51, 0.4023, "2025-12-15", "20216709902/3"),
           (32, 113.78, 29.4, 0.4246, "2026-05-18", "26016868638/2")),
    _curve("h200-sxm", "trt", "fp8", 8192, 1024, "tp8 ep8 dpa",
           (64, 147.84, 20.37, 3.3858, "2025-12-15", "20216709902/3")),
)

POINTS: Final[tuple[MeasuredPoint, ...]] = _LATEST + _HISTORY
