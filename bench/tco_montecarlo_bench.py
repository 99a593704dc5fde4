"""TCO Monte Carlo and tornado throughput on the worked illustration (docs/tco-method.md),
with every price, power, PUE, rate and life given a +/-20 % range; and the Monte Carlo's peak
memory per sample (tracemalloc), which the max_samples limit (SPECLEDGER_MAX_SAMPLES)
multiplies.

    .venv/bin/python bench/tco_montecarlo_bench.py
"""

from __future__ import annotations

import time
import tracemalloc

from models.tco.plans import CapexPlan, ComparisonPlan, OptionPlan
from models.tco.uncertainty import monte_carlo, tornado
from pipelines.inputs.limits import DEFAULT_LIMITS
from pipelines.inputs.tco_scenarios import BYTES_PER_SAMPLE


def worked_illustration() -> tuple[ComparisonPlan, dict[str, float]]:
    plan = ComparisonPlan((OptionPlan("nvl72", (CapexPlan("racks", True),
                                                CapexPlan("retrofit", False)), True),
                           OptionPlan("hgx", (CapexPlan("nodes", True),), True)),
                          "nvl72", "hgx")
    point = {"finance.cost_of_capital": 0.08, "finance.electricity": 0.083,
             "time_cost_per_year": 0.0}
    for name, values in (
            ("nvl72", {"gpus": 4032, "it_power": 7392, "pue": 1.15, "jct": 30,
                       "capex.racks.cost": 218.4e6, "capex.racks.life_years": 5,
                       "capex.retrofit.cost": 42e6, "capex.retrofit.life_years": 10}),
            ("hgx", {"gpus": 4032, "it_power": 5594.4, "pue": 1.40, "jct": 180,
                     "capex.nodes.cost": 104.328e6, "capex.nodes.life_years": 5})):
        common = {"power_fraction": 0.8, "colocation": 195, "maintenance_rate": 0.05,
                  "staff": 0.0, "licences": 0.0, "availability": 1.0, "goodput": 1.0}
        point.update({f"options.{name}.{k}": v for k, v in {**common, **values}.items()})
    return plan, point


def main() -> None:
    plan, point = worked_illustration()
    skip = ("gpus", "availability", "goodput", "staff", "licences", "time_cost")
    ranges = {k: (v * 0.8, v * 1.2) for k, v in point.items()
              if v and not any(s in k for s in skip)}
    print(f"{len(ranges)} ranged inputs")  # noqa: T201
    for samples in (10_000, 1_000_000):
        started = time.perf_counter()
        spread = monte_carlo(plan.evaluate, point, ranges, samples=samples, seed=1)
        seconds = time.perf_counter() - started
        band = spread["break_even_speedup"]
        print(f"monte carlo {samples:>9,} samples: {seconds * 1000:8.1f} ms "  # noqa: T201
              f"({samples / seconds / 1e6:.2f}M samples/s); s* P10 {band.p10:.2f} "
              f"P50 {band.p50:.2f} P90 {band.p90:.2f}")
    tracemalloc.start()
    monte_carlo(plan.evaluate, point, ranges, samples=100_000, seed=1)
    per = tracemalloc.get_traced_memory()[1] / 100_000
    tracemalloc.stop()
    limit = DEFAULT_LIMITS.max_samples
    print(f"monte carlo peak {per:.0f} B per sample (the reader quotes {BYTES_PER_SAMPLE}); "  # noqa: T201
          f"at the {limit:,}-sample limit ~{per * limit / 2**20:,.0f} MiB")
    started = time.perf_counter()
    bars = tornado(plan.evaluate, point, ranges, "break_even_speedup")
    seconds = time.perf_counter() - started
    print(f"tornado over {len(bars)} inputs: {seconds * 1000:.1f} ms; widest: "  # noqa: T201
          f"{bars[0].name} ({bars[0].swing('break_even_speedup'):.2f})")


if __name__ == "__main__":
    main()
