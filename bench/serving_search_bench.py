"""Serving layout search benchmark: layouts evaluated per second on one core (target
>= 1,000,000/s, issue 39), and one whole search per shipped model and scale-up domain.

For each preset model (Llama 3.3 70B, DeepSeek-R1, gpt-oss-120b) on an HGX-class node (8
GPUs) and an NVL72-class rack (72), builds the option's search space (layouts.candidates:
tp, dp-attention, ep, pp and prefill pools up to two domains), then times
layout_array.throughput_at_target on >= --rows layouts made by tiling that space (each row a
layout's output tokens/s per GPU at 20 tokens/s per user, its whole curve of 1, 2, 4, ...
concurrencies read at the target as page 1 reads it) as one call on the whole array (it
works through the rows in cache-sized chunks of one curve length itself). Median of --runs.
The hardware is nominal B200 / GB200 figures and the prior constants: the rate does not
depend on them. Reports only: the exit code is 0 even when a target is missed.

    .venv/bin/python bench/serving_search_bench.py [--rows 1000000] [--runs 5]
"""

from __future__ import annotations

import os

# One core: set before numpy is imported, so no BLAS / OpenMP pool is started.
for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = "1"

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from models.c2c.spec import ClusterSpec  # noqa: E402
from models.serving.calibration import PRIOR, EngineConstants  # noqa: E402
from models.serving.layout_array import Layouts, throughput_at_target  # noqa: E402
from models.serving.layouts import candidates  # noqa: E402
from models.serving.presets import PRESETS  # noqa: E402
from models.serving.spec import Deployment, RequestShape  # noqa: E402

# Nominal Blackwell figures (180 GB HBM3e at 8 TB/s, NVLink 5 at 900 GB/s a direction, one
# 400G NIC per GPU); the FP8 dense peak. What the rate is measured on, not an answer.
HGX = ClusterSpec(peak_flops=2.25e15, hbm_bytes=180e9, hbm_bw=8e12, domain_gpus=8,
                  scaleup_bw=900e9, scaleout_bw=50e9, scaleup_efficiency=0.8,
                  scaleout_efficiency=0.9, scaleup_latency=3e-6, scaleout_latency=10e-6,
                  gemm_peak_flops=4.5e15, arch="blackwell")
NVL72 = ClusterSpec(**{**HGX.__dict__, "domain_gpus": 72})
REQUEST, TARGET = RequestShape(1024, 1024), 20.0
TARGET_RATE = 1_000_000


def tiled(space: Layouts, rows: int) -> Layouts:
    repeat = -(-rows // len(space))
    return Layouts(*(np.tile(c, repeat)[:rows] for c in (space.tp, space.dp, space.ep,
                                                         space.pp, space.prefill_gpus)))


def timed(call, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    base, engine = Deployment(), EngineConstants()
    print(f"{'model':<16}{'domain':>7}{'space':>7}{'search ms':>11}{'layouts/s':>14}")
    rates = []
    for name, llm in PRESETS.items():
        for hw in (HGX, NVL72):
            space = candidates(llm, hw.domain_gpus)

            def evaluate(rows: Layouts, llm=llm, hw=hw) -> np.ndarray:
                return throughput_at_target(llm, rows, hw, REQUEST, base, PRIOR, engine,
                                            hw.gemm_peak, TARGET)

            search = timed(lambda space=space: evaluate(space), args.runs)
            many = tiled(space, args.rows)
            whole = timed(lambda many=many: evaluate(many), args.runs)
            rates.append(len(many) / whole)
            print(f"{name:<16}{hw.domain_gpus:>7}{len(space):>7}{search * 1e3:>11.1f}"
                  f"{len(many) / whole:>14,.0f}")
    worst = min(rates)
    print(f"\nslowest rate {worst:,.0f} layouts/s on one core "
          f"(target >= {TARGET_RATE:,}): {'met' if worst >= TARGET_RATE else 'MISSED'}")


if __name__ == "__main__":
    main()
