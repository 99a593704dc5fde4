"""Stored results read back as typed records: the verdict, its margin and the rent-vs-buy
line come from what the stage stored, never recomputed by the reader."""

from __future__ import annotations

import pytest

from models.records import C2CRecord, ServingRecord, TcoRecord
from models.tco.decision import SETTLE, TOO_CLOSE

STORED_TCO = {
    "scenario": "tco-x", "mode": "comparison", "scale_up": "nvl72", "scale_out": "hgx",
    "break_even_speedup": 1.07, "speedup": 1.16, "cheaper_option": "nvl72",
    "ranges": {"speedup": {"p10": 0.98, "p50": 1.16, "p90": 1.3},
               "break_even_speedup": {"p10": 1.05, "p50": 1.07, "p90": 1.09}},
    "verdict": {"call": TOO_CLOSE, "settle_with": SETTLE, "cheaper": "nvl72", "dearer": "hgx",
                "saving": 0.0776, "saving_p10": -0.112, "saving_p90": 0.192},
    "options": [{"name": "nvl72", "gpus": 3072, "jct_days": 8.1, "usd_per_gpu_hour": 2.4,
                 "job_cost_usd": 1.4e6},
                {"name": "hgx", "gpus": 3072, "jct_days": 9.4, "usd_per_gpu_hour": 2.2,
                 "job_cost_usd": 1.5e6}],
    "c2c": {"nvl72": {"gpu": "gb200"}, "hgx": {"gpu": "b200"}},
    "market": {"hgx": {"gpu": "b200", "on_demand_job_cost_usd": 3.5e6, "usd_per_gpu_hour": {
        "on_demand": {"median": 5.05, "p25": 4.0, "p75": 6.0, "offers": 4, "cheapest": 3.2,
                      "cheapest_provider": "lambda", "as_of": "2026-11-22"}}}},
    "tornado": [], "inputs": [{"name": "x", "item": "b200", "metric": "tdp"}],
}


def test_a_tco_result_reads_back_with_its_verdict_and_the_market_beside():
    record = TcoRecord.from_json(STORED_TCO, {"options": [
        {"name": "nvl72", "c2c_scenario": "1t-nvl72"}, {"name": "hgx"}]})
    assert record.verdict.call == TOO_CLOSE and record.verdict.settle_with == SETTLE
    assert record.verdict.margin is not None
    assert (record.verdict.margin.p10, record.verdict.margin.p90) == (-0.112, 0.192)
    assert record.speedup is not None and record.speedup.p90 == 1.3
    hgx, nvl72 = record.option("hgx"), record.option("nvl72")
    assert hgx is not None and hgx.on_demand is not None and hgx.on_demand.median == 5.05
    assert hgx.rented_job_cost_usd == 3.5e6
    assert nvl72 is not None and nvl72.gpu == "gb200" and nvl72.on_demand is None
    assert record.c2c_links == {"nvl72": "1t-nvl72"}


def test_a_result_without_ranges_has_point_bands_and_no_margin_when_none_was_stored():
    stored = {**STORED_TCO, "ranges": {}, "verdict": {"call": None, "settle_with": None}}
    record = TcoRecord.from_json(stored)
    assert record.speedup is not None and record.speedup.p10 == record.speedup.p90 == 1.16
    assert record.verdict.margin is None and record.verdict.call is None


def test_a_stored_result_missing_a_required_figure_is_an_error_not_a_blank():
    with pytest.raises(KeyError):
        TcoRecord.from_json({k: v for k, v in STORED_TCO.items() if k != "mode"})


def test_a_serving_answer_reads_back_with_its_point_at_the_target():
    stored = {"scenario": "s", "model": "llama-3.3-70b", "precision": "fp8",
              "request": {"input_tokens": 1024, "output_tokens": 1024},
              "target_tok_s_per_user": 50.0, "cheaper_option": "b200", "dearer_option": "h100",
              "margin": 0.4, "band": {"p10": 0.1, "p90": 0.6}, "call": "b200",
              "options": [{"name": "b200", "source": "model", "usd_per_gpu_hour": 3.0,
                           "price_source": "scenario", "band": {"basis": "blackwell"},
                           "curve": [{"concurrency": 1, "tok_s_per_gpu": 10.0,
                                      "tok_s_per_user": 80.0, "usd_per_mtok_out": 83.3}],
                           "at_target": {"concurrency": 1, "tok_s_per_gpu": 10.0,
                                         "tok_s_per_user": 80.0, "usd_per_mtok_out": 83.3}}]}
    record = ServingRecord.from_json(stored)
    [option] = record.options
    assert option.at_target is not None and option.at_target.usd_per_mtok_out == 83.3
    assert (record.margin_p10, record.margin_p90) == (0.1, 0.6) and record.input_tokens == 1024
    # Stored before the answer said whether its model was measured: read as it was printed.
    assert record.model_measured
    unmeasured = {**stored, "band": {**stored["band"], "model_measured": False}}
    assert not ServingRecord.from_json(unmeasured).model_measured
    # The engine its deployment ran on, when the answer stored one.
    assert option.engine is None
    on_trt = {**stored, "options": [{**stored["options"][0],
                                     "deployment": {"tp": 2, "engine": "trt"}}]}
    assert ServingRecord.from_json(on_trt).options[0].engine == "trt"


def test_a_c2c_estimate_reads_back_with_its_workload_and_the_figures_it_read():
    stored = {"scenario": "1t-nvl72", "gpus": 3072, "t_iter_s": 12.5, "c2c": 0.31,
              "c2c_scale_up": 0.2, "c2c_scale_out": 0.11, "class": "performance-sensitive",
              "recommended_fabric": "scale-up", "mfu": 0.41, "time_to_train_days": 10.1,
              "specs": [{"name": "domain_gpus", "value": 72, "origin": "ledger"}, "noise"]}
    record = C2CRecord.from_json(stored, {"model": {"layers": 128}, "parallel": {"tp": 8},
                                          "cluster": {"gpu": "gb200"}})
    assert record.c2c_class == "performance-sensitive" and record.time_to_train_days == 10.1
    assert record.spec("domain_gpus") == {"name": "domain_gpus", "value": 72, "origin": "ledger"}
    assert len(record.specs) == 1  # what is not a figure is not read as one
    assert record.cluster["gpu"] == "gb200" and record.parallel["tp"] == 8


def test_a_serving_option_is_named_with_its_layout_and_engine_as_a_verdict_names_it():
    from reports.context import ServingOptionLine

    line = ServingOptionLine("hgx-b200", "model", 2.4, "TCO", (), layout="TP2",
                             layout_note="best of 100", engine="TensorRT-LLM")
    assert line.labelled(with_engine=True) == "hgx-b200 (TP2, TensorRT-LLM, best of 100)"
    assert ServingOptionLine("hgx-b200", "model", 2.4, "TCO", ()).labelled(
        with_engine=True) == "hgx-b200"
