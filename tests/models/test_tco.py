"""The TCO model against the worked illustration (docs/tco-method.md) and Epoch AI's GPT-4
figure, and the behaviour of its parts (CRF, depreciation, uncertainty)."""

from __future__ import annotations

import dataclasses
from datetime import date

import numpy as np
import pytest

from models.tco.finance import (
    annualised_capex,
    capital_recovery_factor,
    depreciated_value,
    economic_replacement_rate,
)
from models.tco.ownership import CapexItem, Comparison, Finance, Option, compare, option_cost
from models.tco.plans import CapexPlan, ComparisonPlan, OptionPlan
from models.tco.training_run import TrainingRun, acquisition_date, training_run_cost
from models.tco.uncertainty import TooManySamples, monte_carlo, tornado

WITHIN_1_PERCENT = 0.01


def nvl72(jct_days: float = 30.0) -> Option:
    """docs/tco-method.md#worked-illustration, scale-up: 56 NVL72 racks at 3.9 M USD all-in,
    0.75 M USD retrofit each, 132 kW per rack, PUE 1.15."""
    return Option("nvl72", gpus=4032,
                  capex=(CapexItem("racks", 56 * 3.9e6, 5, it=True),
                         CapexItem("retrofit", 56 * 0.75e6, 10)),
                  it_power_kw=56 * 132, power_fraction=0.8, pue=1.15,
                  colocation_usd_per_kw_month=195, maintenance_rate=0.05, jct_days=jct_days)


def hgx_ib(jct_days: float = 180.0) -> Option:
    """Scale-out: 504 HGX nodes at 150 k USD + 57 k USD of InfiniBand, 11.1 kW, PUE 1.40."""
    return Option("hgx-ib", gpus=4032, capex=(CapexItem("nodes", 504 * 207e3, 5, it=True),),
                  it_power_kw=504 * 11.1, power_fraction=0.8, pue=1.40,
                  colocation_usd_per_kw_month=195, maintenance_rate=0.05, jct_days=jct_days)


def worked_illustration(k: float = 0.0) -> Comparison:
    return Comparison(Finance(cost_of_capital=0.08, electricity_usd_per_kwh=0.083,
                              time_cost_usd_per_year=k),
                      (nvl72(), hgx_ib()), scale_up="nvl72", scale_out="hgx-ib")


def test_the_worked_illustration_reproduces_its_annual_costs():
    result = compare(worked_illustration())
    up, out = result.option("nvl72"), result.option("hgx-ib")
    rel = WITHIN_1_PERCENT
    assert up.annual_capex == pytest.approx(61.0e6, rel=rel)
    assert (up.energy, up.colocation, up.maintenance) == pytest.approx((4.9e6, 17.3e6, 10.9e6),
                                                                       rel=rel)
    assert up.annual_total == pytest.approx(94.1e6, rel=rel)
    assert up.usd_per_gpu_hour == pytest.approx(2.66, rel=rel)
    assert out.annual_capex == pytest.approx(26.1e6, rel=rel)
    assert (out.energy, out.colocation, out.maintenance) == pytest.approx((4.6e6, 13.1e6, 5.2e6),
                                                                          rel=rel)
    assert out.annual_total == pytest.approx(49.0e6, rel=rel)
    assert out.usd_per_gpu_hour == pytest.approx(1.39, rel=rel)


def test_the_worked_illustration_reproduces_break_even_and_job_costs():
    result = compare(worked_illustration())
    assert result.break_even_speedup == pytest.approx(1.92, rel=WITHIN_1_PERCENT)
    assert result.speedup == 6.0  # 180 days / 30 days
    assert result.option("nvl72").job_cost == pytest.approx(7.7e6, rel=WITHIN_1_PERCENT)
    assert result.option("hgx-ib").job_cost == pytest.approx(24.2e6, rel=WITHIN_1_PERCENT)


@pytest.mark.parametrize(("k", "s_star", "jobs"), [
    (20e6, 1.65, None),
    (100e6, 1.30, (16.0e6, 73.5e6)),
])
def test_time_proportional_cost_pulls_break_even_toward_one(k, s_star, jobs):
    result = compare(worked_illustration(k))
    assert result.break_even_speedup == pytest.approx(s_star, rel=WITHIN_1_PERCENT)
    if jobs:
        assert (result.option("nvl72").job_cost, result.option("hgx-ib").job_cost) == \
            pytest.approx(jobs, rel=WITHIN_1_PERCENT)


def test_the_capital_recovery_factor():
    assert capital_recovery_factor(0.08, 5) == pytest.approx(0.250456, rel=1e-5)
    assert capital_recovery_factor(0.0, 5) == 0.2  # straight line
    rates = np.array([0.0, 0.05, 0.10])
    assert capital_recovery_factor(rates, 10) == pytest.approx(
        [0.1, 0.129505, 0.162745], rel=1e-5)


def test_a_residual_worth_the_whole_price_leaves_only_the_interest():
    # Buy at C, sell at C after n years: the yearly cost is the forgone interest C r.
    assert annualised_capex(1e6, 0.08, 5, residual=1e6) == pytest.approx(0.08e6)
    assert annualised_capex(1e6, 0.0, 4, residual=2e5) == pytest.approx(2e5)


def test_economic_depreciation_charges_k_ln10_of_the_price_per_year():
    assert economic_replacement_rate() == pytest.approx(0.3224, abs=1e-4)
    assert depreciated_value(100.0, 1 / 0.14) == pytest.approx(10.0)  # one order of magnitude
    option = Option("x", gpus=8, capex=(CapexItem("server", 300e3, 5, it=True),),
                    it_power_kw=10, depreciation="economic")
    cost = option_cost(option, Finance(0.08, 0.1))
    assert cost.annual_capex == pytest.approx(300e3 * 0.3224, rel=1e-3)


def test_availability_and_goodput_raise_the_cost_of_a_useful_gpu_hour():
    option = Option("x", gpus=8, capex=(CapexItem("server", 300e3, 5, it=True),),
                    it_power_kw=10, availability=0.95, goodput=0.9)
    cost = option_cost(option, Finance(0.08, 0.1))
    assert cost.usd_per_useful_gpu_hour == pytest.approx(cost.usd_per_gpu_hour / (0.95 * 0.9))


def gpt4_run(**changes: object) -> TrainingRun:
    """Epoch's inputs for GPT-4 (issue 4; docs/tco-method.md#training-run-cost)."""
    run = TrainingRun(chips=25_000, hours=2_280, price_per_chip=24_875, server_overhead=1.0,
                      released=date(2020, 5, 21), price_date=date(2020, 5, 14),
                      training_start=date(2022, 5, 12), chip_tdp_kw=0.4,
                      server_power_ratio=2.031, average_draw=0.75, pue=1.25,
                      electricity_usd_per_kwh=0.0806)
    return dataclasses.replace(run, **changes)  # type: ignore[arg-type]


def test_epoch_gpt4_final_run_cost_is_reproduced():
    cost = training_run_cost(gpt4_run())
    rel = WITHIN_1_PERCENT
    assert cost.acquired == date(2020, 8, 19)  # release + 90 days: the price predates it
    assert cost.hardware == pytest.approx(29.66e6, rel=rel)
    assert cost.interconnect == pytest.approx(6.96e6, rel=rel)
    assert cost.energy == pytest.approx(3.50e6, rel=rel)
    assert cost.total == pytest.approx(40.1e6, rel=rel)


def test_a_price_dated_after_release_sets_the_acquisition_date():
    assert acquisition_date(date(2020, 5, 21), date(2021, 1, 1)) == date(2021, 1, 1)
    later = training_run_cost(gpt4_run(price_date=date(2021, 5, 12)))
    # A later purchase has depreciated less by the time training starts.
    assert later.hardware > training_run_cost(gpt4_run()).hardware
    assert later.years_depreciated == pytest.approx(1.0, abs=0.01)


def test_training_cannot_start_before_the_chips_are_owned():
    early = training_run_cost(gpt4_run(training_start=date(2020, 6, 1)))
    assert early.years_depreciated == 0.0
    assert early.start_value_per_chip == 24_875


def two_option_plan() -> tuple[ComparisonPlan, dict[str, float]]:
    plan = ComparisonPlan((OptionPlan("up", (CapexPlan("it", True),), has_jct=True),
                           OptionPlan("out", (CapexPlan("it", True),), has_jct=True)),
                          "up", "out")
    point = {"finance.cost_of_capital": 0.08, "finance.electricity": 0.08,
             "time_cost_per_year": 0.0}
    for name, capex, power, jct in (("up", 200e6, 7000, 30), ("out", 100e6, 5500, 90)):
        point.update({f"options.{name}.{k}": v for k, v in {
            "gpus": 4032, "it_power": power, "power_fraction": 0.8, "pue": 1.2,
            "colocation": 190, "maintenance_rate": 0.05, "staff": 0, "licences": 0,
            "availability": 1, "goodput": 1, "jct": jct, "capex.it.cost": capex,
            "capex.it.life_years": 5}.items()})
    return plan, point


def test_a_plan_evaluates_sample_arrays_like_each_sample_alone():
    plan, point = two_option_plan()
    pues = np.array([1.1, 1.3, 1.5])
    together = plan.evaluate({**point, "options.up.pue": pues})["break_even_speedup"]
    alone = [plan.evaluate({**point, "options.up.pue": p})["break_even_speedup"] for p in pues]
    assert together == pytest.approx(alone)


def test_a_modelled_jct_is_stretched_by_availability_and_goodput():
    plan, point = two_option_plan()
    modelled = ComparisonPlan((OptionPlan("up", (CapexPlan("it", True),), True,
                                          modelled_jct=True), plan.options[1]), "up", "out")
    point = {**point, "options.up.availability": 0.9, "options.up.goodput": 0.8}
    assert modelled.build(point).option("up").jct_days == pytest.approx(30 / 0.72)
    assert plan.build(point).option("up").jct_days == 30  # a given JCT is already wall-clock


def test_an_idle_cluster_charges_its_owned_cost_to_the_jobs_that_do_run():
    plan, point = two_option_plan()
    busy = plan.evaluate(point)
    half = plan.evaluate({**point, "options.up.utilisation": 0.5})
    assert plan.build({**point, "options.up.utilisation": 0.5}).option("up").utilisation == 0.5
    # Owning: the job pays twice its share of the year when the cluster is busy half of it.
    assert half["up.job_cost_usd"] == pytest.approx(2 * busy["up.job_cost_usd"])
    assert half["out.job_cost_usd"] == busy["out.job_cost_usd"]
    assert half["up.annual_total_usd"] == busy["up.annual_total_usd"]   # the year costs the same
    assert half["break_even_speedup"] == pytest.approx(2 * busy["break_even_speedup"])


def test_a_rent_is_paid_for_the_hours_rented_whatever_the_utilisation():
    rented = option_cost(Option("rent", gpus=8, capex=(), it_power_kw=0.0, jct_days=10,
                                rent_usd_per_gpu_hour=2.0, utilisation=0.25),
                         Finance(cost_of_capital=0.08, electricity_usd_per_kwh=0.08))
    assert rented.job_cost == pytest.approx(2.0 * 8 * 24 * 10)


def test_monte_carlo_is_reproducible_and_brackets_the_point_value():
    plan, point = two_option_plan()
    ranges = {"options.up.capex.it.cost": (150e6, 250e6), "finance.electricity": (0.06, 0.12)}
    first = monte_carlo(plan.evaluate, point, ranges, samples=5000, seed=7)
    again = monte_carlo(plan.evaluate, point, ranges, samples=5000, seed=7)
    other = monte_carlo(plan.evaluate, point, ranges, samples=5000, seed=8)
    assert first == again
    assert first != other
    band = first["break_even_speedup"]
    point_value = plan.evaluate(point)["break_even_speedup"]
    assert band.p10 < point_value < band.p90
    assert band.p10 < band.p50 < band.p90
    # Only U's capex varies in cost: O's job cost varies only through electricity.
    low, high = plan.evaluate({**point, "finance.electricity": 0.06}), \
        plan.evaluate({**point, "finance.electricity": 0.12})
    assert low["out.job_cost_usd"] <= first["out.job_cost_usd"].p10 <= \
        first["out.job_cost_usd"].p90 <= high["out.job_cost_usd"]


def test_monte_carlo_refuses_more_samples_than_its_limit_before_drawing():
    plan, point = two_option_plan()
    ranges = {"finance.electricity": (0.06, 0.12)}
    with pytest.raises(TooManySamples, match="1,000,000,000,000 samples .* limit of 1,000"):
        monte_carlo(plan.evaluate, point, ranges, samples=10**12, seed=1, max_samples=1000)
    assert monte_carlo(plan.evaluate, point, ranges, samples=1000, seed=1, max_samples=1000)


def test_two_job_times_of_one_estimate_move_together_in_the_monte_carlo():
    """One C2C estimate behind both options' job times is one error: drawn apart, the
    speed-up s would spread around a value that is known exactly."""
    plan, point = two_option_plan()
    point = {**point, "options.out.jct": 30}          # the same job time on both
    ranges = {"options.up.jct": (25.0, 40.0), "options.out.jct": (25.0, 40.0)}
    together = {"options.out.jct": "options.up.jct"}
    apart = monte_carlo(plan.evaluate, point, ranges, samples=4000, seed=3)
    joined = monte_carlo(plan.evaluate, point, ranges, samples=4000, seed=3, together=together)
    assert apart["speedup"].p10 < 0.9 and apart["speedup"].p90 > 1.1
    assert joined["speedup"].p10 == pytest.approx(1.0) == joined["speedup"].p90
    # The leader's draws are the ones it had alone: the other inputs' draws do not shift.
    alone = monte_carlo(plan.evaluate, point, {"options.up.jct": (25.0, 40.0)}, samples=4000,
                        seed=3)
    assert joined["up.job_cost_usd"] == alone["up.job_cost_usd"]
    # A follower in a range of its own takes the same place in it (comonotonic).
    wider = monte_carlo(plan.evaluate, point, {**ranges, "options.out.jct": (50.0, 80.0)},
                        samples=4000, seed=3, together=together)
    assert wider["speedup"].p10 == pytest.approx(2.0) == wider["speedup"].p90
    bars = tornado(plan.evaluate, point, ranges, rank_by="break_even_speedup",
                   together=together)
    assert [b.name for b in bars] == ["options.up.jct"]
    assert bars[0].at_low["speedup"] == pytest.approx(1.0) == bars[0].at_high["speedup"]


def test_tornado_puts_the_input_that_moves_break_even_most_first():
    plan, point = two_option_plan()
    ranges = {"options.up.pue": (1.15, 1.25), "options.up.capex.it.cost": (150e6, 250e6),
              "options.out.capex.it.cost": (90e6, 110e6)}
    bars = tornado(plan.evaluate, point, ranges, rank_by="break_even_speedup")
    assert [b.name for b in bars] == ["options.up.capex.it.cost", "options.out.capex.it.cost",
                                      "options.up.pue"]
    top = bars[0]
    assert top.at_low["break_even_speedup"] < top.at_high["break_even_speedup"]
    assert top.at_low["out.job_cost_usd"] == top.at_high["out.job_cost_usd"]
