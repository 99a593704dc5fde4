"""What would flip a verdict, said in the terms of the table beside it."""

from __future__ import annotations

import dataclasses

from models.dates import shown
from models.records import TcoOption
from models.tco.decision import Flip
from pipelines.briefing.decisions import flip_text, point_at_range_end


def option(name: str, availability: float, goodput: float) -> TcoOption:
    return TcoOption(name=name, gpus=3072, gpu="b200", jct_days=8.49, usd_per_gpu_hour=2.4,
                     job_cost_usd=1.8e6, rents={}, rented_job_cost_usd=None,
                     availability=availability, goodput=goodput)


def test_a_job_time_flips_in_time_to_train_the_failure_free_time_stretched_by_goodput():
    text = flip_text(Flip("options.hgx-ndr.jct", "low", 7.79),
                     [option("nvl72", 1.0, 0.95), option("hgx-ndr", 1.0, 0.95)])
    assert text == "hgx-ndr time to train at the low end of its range (8.2 days)"


def test_another_input_keeps_its_own_name_and_value():
    text = flip_text(Flip("options.nvl72.capex.rack.cost", "high", 4.1e6),
                     [option("nvl72", 0.99, 0.95)])
    assert text.startswith("nvl72 capex rack cost at the high end of its range (")


def test_a_months_date_prints_as_the_month():
    assert shown("2024-07-01", "month") == "2024-07"
    assert shown("2024-01-01", "year") == "2024"
    assert shown("2024-07-09", "day") == "2024-07-09"
    assert shown(None, None) == "undated"


def record(tornado):
    from models.records import TcoRecord, Verdict

    return TcoRecord(scenario="own-vs-rent", mode="comparison", scale_up=None, scale_out=None,
                     options=(dataclasses.replace(option("own", 1.0, 1.0), job_cost_usd=100.0),
                              dataclasses.replace(option("rent", 1.0, 1.0),
                                                  job_cost_usd=200.0)),
                     break_even=None, speedup=None, cheaper_option="own",
                     verdict=Verdict(None, None, None), tornado=tuple(tornado), inputs=(),
                     c2c_links={}, ranges={})


def test_a_point_outside_its_band_names_the_input_priced_at_an_end_of_its_range():
    at_low = {"input": "options.own.capex.nodes.cost", "low": 1.46e8, "high": 1.98e8,
              "own.job_cost_usd": [100.0, 130.0], "rent.job_cost_usd": [200.0, 200.0]}
    both_ways = {"input": "options.rent.rent", "low": 4.0, "high": 6.0,
                 "own.job_cost_usd": [100.0, 100.0], "rent.job_cost_usd": [160.0, 240.0]}
    assert point_at_range_end(record([both_ways, at_low]), "own", "rent") == \
        "own capex nodes cost at its low end ($146 M–$198 M)"
    assert point_at_range_end(record([both_ways]), "own", "rent") is None


def test_each_option_says_how_old_its_cost_inputs_are_and_how_many_are_undated():
    from pipelines.briefing.decisions import input_dates

    inputs = [
        {"name": "finance.electricity", "origin": "ledger", "as_of": "2025-01-01",
         "as_of_precision": "year"},
        {"name": "options.a.capex.nodes.cost", "origin": "ledger", "as_of": "2024-12-01",
         "as_of_precision": "month"},
        {"name": "options.a.it_power", "origin": "ledger", "as_of": "2026-05-28",
         "as_of_precision": "day"},
        {"name": "options.a.pue", "origin": "ledger", "as_of": None, "as_of_precision": "none"},
        {"name": "options.a.staff", "origin": "default"},
        {"name": "options.b.it_power", "origin": "ledger", "as_of": "2020-01-01",
         "as_of_precision": "day"},
    ]
    assert input_dates(inputs, "a") == ("2024-12", "2026-05", 1)
    assert input_dates(inputs, "b") == ("2020-01", "2025", 0)   # a year's figure stays a year
    assert input_dates([], "a") == (None, None, 0)


def test_capex_is_said_by_category_with_what_the_ledger_lacks_never_as_zero():
    from pipelines.briefing.results import capex_text

    racks = dataclasses.replace(
        option("nvl72", 1.0, 1.0), capex_items=(("racks", ("compute", "network"), 1.677e8),),
        capex_missing=("cooling",), facility_in_colocation=True)
    assert capex_text(racks) == ("racks (compute, network) $168 M; facility in colocation "
                                 "(its rent is opex); not in the ledger: cooling")


def test_the_appendix_says_a_shared_part_once_and_groups_options_of_one_bill():
    from reports.context import TcoLine
    from reports.view_model import capex_groups

    colo = "facility in colocation (its rent is opex)"
    line = TcoLine(name="x", scale_up_option="a", scale_out_option="b", break_even_speedup=1.0,
                   break_even_p10=None, break_even_p90=None, speedup=None, cheaper_option=None,
                   capex_by_category=(("a", f"racks (compute) $1 M; {colo}"),
                                      ("b", f"nodes (compute) $2 M; {colo}"),
                                      ("c", f"nodes (compute) $2 M; {colo}")))
    assert capex_groups([line]) == (("", colo), ("a", "racks (compute) $1 M"),
                                    ("b, c", "nodes (compute) $2 M"))
