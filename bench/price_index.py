"""Market analytics benchmark: the price index, its changes and the term spreads over two
years of weekly snapshots of a cloud GPU price list (target <= 1 s on a 2-core machine).

The offers are generated with a seeded RNG: 104 weekly dataset versions x 5 GPUs x 4 terms
(on-demand, spot, 1- and 3-year reserved) x 12 providers x 5 regions, about 125,000 rows,
each provider repricing now and then and prices drifting down about 30 % a year. Dates come
as Python dates, as a database query returns them. The first call also pays for imports and
warm-up; the figure reported is the median of the rest (and the fastest).

    .venv/bin/python bench/price_index.py [--repeat 7] [--versions 104] [--seed 20261123]
"""

from __future__ import annotations

import argparse
import statistics
import time
from datetime import date, timedelta

import numpy as np
import pandas as pd

from models.market import halving_times, index_changes, price_index, term_spreads

TARGET_SECONDS = 1.0
GPUS = {"a100-sxm4": 1.6, "h100-sxm5": 2.9, "h200-sxm5": 3.6, "b200": 5.5, "mi300x": 2.4}
GENERATIONS = {"a100-sxm4": "ampere", "h100-sxm5": "hopper", "h200-sxm5": "hopper",
               "b200": "blackwell", "mi300x": "cdna3"}
TERMS = {"on_demand": 1.0, "spot": 0.45, "reserved_1y": 0.7, "reserved_3y": 0.5}
PROVIDERS = [f"provider-{n:02d}" for n in range(12)]
REGIONS = ["us-east", "us-west", "eu-west", "eu-north", "ap-south"]
FIRST = date(2024, 12, 2)


def offers(versions: int = 104, seed: int = 20261123) -> pd.DataFrame:
    """One row per (version, GPU, term, provider, region), built with array operations."""
    rng = np.random.default_rng(seed)
    gpus, terms = list(GPUS), list(TERMS)
    shape = (versions, len(gpus), len(terms), len(PROVIDERS), len(REGIONS))
    v, g, t, p, r = (a.ravel() for a in np.indices(shape))
    # A provider's price level per (GPU, term, region), repriced at random versions.
    level = rng.lognormal(0.0, 0.12, shape[1:])
    repriced = rng.random(shape) < 0.08
    steps = np.where(repriced, rng.lognormal(-0.02, 0.05, shape), 1.0).cumprod(axis=0)
    base = np.array(list(GPUS.values()))[g] * np.array(list(TERMS.values()))[t]
    decay = 2 ** (-v * 7 / 365.25 / 2)   # halving every two years besides the repricing
    price = base * level.reshape(-1)[np.ravel_multi_index((g, t, p, r), shape[1:])] \
        * steps.ravel() * decay
    days = [FIRST + timedelta(weeks=n) for n in range(versions)]
    version_dates = np.array(days, dtype=object)
    return pd.DataFrame({
        "dataset_version": v + 1,
        "version_date": version_dates[v],
        "provider": np.array(PROVIDERS, dtype=object)[p],
        "region": np.array(REGIONS, dtype=object)[r],
        "term": np.array(terms, dtype=object)[t],
        "gpu": np.array(gpus, dtype=object)[g],
        "gpus_per_instance": 8,
        "usd_per_gpu_hour": np.round(price, 4),
        "as_of": version_dates[v],
        "source": np.char.add("prices-", np.array(PROVIDERS)[p]).astype(object),
        "observation_id": np.arange(v.size) + 1,
    })


def run(frame: pd.DataFrame) -> tuple[float, float, float]:
    start = time.perf_counter()
    index = price_index(frame)
    indexed = time.perf_counter()
    index_changes(index)
    changed = time.perf_counter()
    term_spreads(index)
    spread = time.perf_counter()
    return indexed - start, changed - indexed, spread - changed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--versions", type=int, default=104)
    parser.add_argument("--seed", type=int, default=20261123)
    args = parser.parse_args()
    start = time.perf_counter()
    frame = offers(args.versions, args.seed)
    print(f"{len(frame):,} offers ({args.versions} versions x {len(GPUS)} GPUs x "
          f"{len(TERMS)} terms x {len(PROVIDERS)} providers x {len(REGIONS)} regions), "
          f"built in {time.perf_counter() - start:.2f} s")
    runs = [run(frame) for _ in range(args.repeat)]
    rest = runs[1:] or runs
    totals = [sum(r) for r in rest]
    parts = [statistics.median(r[n] for r in rest) for n in range(3)]
    median = statistics.median(totals)
    print(f"index + changes + spreads: median {median:.3f} s, fastest {min(totals):.3f} s, "
          f"first call {sum(runs[0]):.3f} s (target <= {TARGET_SECONDS:.1f} s: "
          f"{'met' if median <= TARGET_SECONDS else 'MISSED'})")
    print(f"  price_index {parts[0]:.3f} s, index_changes {parts[1]:.3f} s, "
          f"term_spreads {parts[2]:.3f} s (medians)")
    index = price_index(frame)
    start = time.perf_counter()
    fits = halving_times(index, GENERATIONS)
    print(f"halving_times {time.perf_counter() - start:.3f} s: " + "; ".join(
        f"{f.generation} {f.halving_days:,.0f} days" if f.halving_days else
        f"{f.generation} {f.reason}" for f in fits))
    print(f"index rows {len(index):,}; memory of the offers "
          f"{frame.memory_usage(deep=True).sum() / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
