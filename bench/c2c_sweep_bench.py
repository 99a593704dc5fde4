"""C2C sweep benchmark: a whole layout search, and the vectorised model's rate on one core.

For GPT-3 175B (dense) and a 64-expert top-2 MoE, each on 1,024 GPUs, times `sweep()` over
the full layout space (enumerate + evaluate + rank; median of 5 runs; target <= 10 s, and
>= 1,000,000 layouts/s: the rate `specledger sweep` reports as layouts / seconds) and
`evaluate()` alone on >= 1,000,000 layouts made by tiling the enumerated ones (target
>= 1,000,000 configurations/s on one core; Calculon does ~74/s, docs/c2c-method.md#speed): once as
one call on the whole array (the target's measure) and once in cache-sized chunks. Also the
peak memory of a search per candidate layout (tracemalloc), which the sweep_max_layouts limit
(SPECLEDGER_SWEEP_MAX_LAYOUTS) multiplies: the figure the README's memory bound quotes.
Reports only: the exit code is 0 even when a target is missed.

    python bench/c2c_sweep_bench.py [--rows 1000000] [--runs 5]
"""

from __future__ import annotations

import os

# One core: set before numpy is imported, so no BLAS / OpenMP pool is started.
for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = "1"

import argparse  # noqa: E402
import math  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass  # noqa: E402

import numpy as np  # noqa: E402

from models.c2c.estimate import evaluate  # noqa: E402
from models.c2c.spec import (  # noqa: E402
    LAYOUT_FIELDS,
    ClusterSpec,
    Framework,
    Layouts,
    TransformerSpec,
)
from models.c2c.sweep import (  # noqa: E402
    ENUMERATION_BYTES_PER_LAYOUT,
    enumerate_layouts,
    layout_choices,
    sweep,
)
from pipelines.inputs.limits import DEFAULT_LIMITS  # noqa: E402

# Selene-class A100 80GB: NVLink 3 (300 GB/s per direction), one HDR 200 Gb/s NIC per GPU
# (the same figures as models/c2c/validation.py A100_SELENE).
A100 = ClusterSpec(peak_flops=312e12, hbm_bytes=80e9, hbm_bw=2039e9, domain_gpus=8,
                   scaleup_bw=300e9, scaleout_bw=25e9, scaleup_efficiency=0.82,
                   scaleout_efficiency=0.94, scaleup_latency=3.4e-6, scaleout_latency=14e-6)
GPT3 = TransformerSpec(layers=96, hidden=12288, heads=96, seq_len=2048, vocab=51200)
MOE = TransformerSpec(layers=32, hidden=4096, heads=32, seq_len=4096, vocab=32000,
                      experts=64, top_k=2)
GPUS = 1024
TARGET_RATE, TARGET_SEARCH_S, CALCULON_RATE = 1_000_000, 10.0, 74
CHUNK_ROWS = 16_384  # about what one sweep evaluates; its temporaries stay in cache


@dataclass(frozen=True)
class Case:
    name: str
    model: TransformerSpec
    global_batch: int


@dataclass(frozen=True)
class Result:
    case: Case
    enumerated: int
    valid: int
    search_s: float
    rows: int
    evaluate_s: float  # one evaluate() call on all rows
    chunked_s: float  # evaluate() on CHUNK_ROWS rows at a time
    candidates: int  # layouts before the divisibility rules: what the limit counts
    peak_bytes: int  # tracemalloc peak of one whole search

    @property
    def search_rate(self) -> float:
        """Layouts searched per second: what `specledger sweep` shows (evaluated / seconds)."""
        return self.enumerated / self.search_s

    @property
    def rate(self) -> float:
        return self.rows / self.evaluate_s

    @property
    def chunked_rate(self) -> float:
        return self.rows / self.chunked_s


def pin_to_one_core() -> str:
    """Pin this process to its first allowed CPU, where the OS supports it."""
    if not hasattr(os, "sched_setaffinity"):
        return "not pinned (no sched_setaffinity)"
    cpu = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
    return f"pinned to CPU {cpu}"


def median_seconds(run: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def tile(layouts: Layouts, rows: int) -> Layouts:
    """At least `rows` layouts: the enumerated ones repeated whole."""
    copies = -(-rows // len(layouts))
    return Layouts(**{name: np.tile(getattr(layouts, name), copies) for name in LAYOUT_FIELDS})


def evaluate_in_chunks(model: TransformerSpec, hw: ClusterSpec, fw: Framework,
                       layouts: Layouts, chunk: int) -> None:
    chunks = [layouts.take(np.arange(i, min(i + chunk, len(layouts))))
              for i in range(0, len(layouts), chunk)]
    for part in chunks:
        evaluate(model, hw, fw, part)


def measure(case: Case, hw: ClusterSpec, rows: int, runs: int) -> Result:
    fw = Framework()
    result = sweep(case.model, hw, fw, GPUS, case.global_batch)
    search_s = median_seconds(lambda: sweep(case.model, hw, fw, GPUS, case.global_batch), runs)
    big = tile(enumerate_layouts(case.model, fw, GPUS, case.global_batch), rows)
    evaluate(case.model, hw, fw, big)  # warm-up: first-touch page faults of the big arrays
    evaluate_s = median_seconds(lambda: evaluate(case.model, hw, fw, big), 3)
    chunked_s = median_seconds(
        lambda: evaluate_in_chunks(case.model, hw, fw, big, CHUNK_ROWS), 3)
    candidates = math.prod(len(v) for v in
                           layout_choices(case.model, fw, GPUS, case.global_batch).values())
    tracemalloc.start()
    sweep(case.model, hw, fw, GPUS, case.global_batch)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return Result(case, result.evaluated, result.valid, search_s, len(big), evaluate_s,
                  chunked_s, candidates, peak)


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def report(results: list[Result]) -> None:
    print(f"\n{'model':<28}{'layouts':>9}{'fit':>8}{'search s':>10}{'layouts/s':>12}"
          f"{'eval rows':>11}{'one call/s':>12}{f'{CHUNK_ROWS:,}-row chunks/s':>22}"
          f"{'x Calculon':>12}")
    for r in results:
        print(f"{r.case.name:<28}{r.enumerated:>9,}{r.valid:>8,}{r.search_s:>10.4f}"
              f"{r.search_rate:>12,.0f}{r.rows:>11,}{r.rate:>12,.0f}{r.chunked_rate:>22,.0f}"
              f"{r.rate / CALCULON_RATE:>12,.0f}")
    print(f"\n{'target':<66}{'result':>16}  verdict")
    misses = []
    for r in results:
        checks = [(f"{r.case.name}: whole search <= {TARGET_SEARCH_S:g} s",
                   f"{r.search_s:.4f} s", r.search_s <= TARGET_SEARCH_S),
                  (f"{r.case.name}: whole search >= {TARGET_RATE:,} layouts/s",
                   f"{r.search_rate:,.0f}/s", r.search_rate >= TARGET_RATE),
                  (f"{r.case.name}: >= {TARGET_RATE:,} configs/s/core (one call)",
                   f"{r.rate:,.0f}/s", r.rate >= TARGET_RATE)]
        for label, value, ok in checks:
            print(f"{label:<66}{value:>16}  {_verdict(ok)}")
            if not ok:
                misses.append(label)
    print(f"{'Calculon (docs/c2c-method.md#speed), for scale':<66}{f'~{CALCULON_RATE}/s':>16}  -")
    limit = DEFAULT_LIMITS.sweep_max_layouts
    for r in results:
        per = r.peak_bytes / r.candidates
        print(f"{r.case.name}: {r.candidates:,} candidates, search peak "
              f"{r.peak_bytes / 2**20:.1f} MiB = {per:.0f} B per candidate (model constant "
              f"{ENUMERATION_BYTES_PER_LAYOUT}); at the {limit:,} limit ~"
              f"{per * limit / 2**20:,.0f} MiB")
    print("RESULT: " + (f"MISS ({'; '.join(misses)})" if misses else "PASS (all targets met)"))


def main() -> None:
    """Run both cases and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(f"numpy {np.__version__}, {pin_to_one_core()}, OMP/OpenBLAS threads 1, "
          f"{GPUS:,} A100, Framework() defaults")
    cases = [Case("GPT-3 175B, batch 1536", GPT3, 1536),
             Case("MoE 64x top-2 h4096, b1024", MOE, 1024)]
    report([measure(case, A100, args.rows, args.runs) for case in cases])


if __name__ == "__main__":
    main()
