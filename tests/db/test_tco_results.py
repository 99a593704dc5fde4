"""TCO results: a comparison or a training run per scenario and dataset version, append-only,
with reuse that names the original computation, beside the C2C results."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from db.engine import Session, write_session
from db.results import (
    add_tco_result,
    latest_result_with_inputs,
    result_for,
    tco_results_frame,
)
from db.schema import C2CResult, Scenario, TcoResult
from tests.db.test_results import add, scenario

AT = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
SPREAD = {"p10": 1.5, "p50": 1.75, "p90": 2.0}


def option(name: str, gpus: int, total: float, job_cost: float | None,
           ranges: dict[str, Any] | None = None) -> dict[str, Any]:
    """One option of a comparison, shaped like the TCO model's output."""
    return {"name": name, "gpus": gpus, "annual_capex_usd": total * 0.75,
            "annual_opex_usd": total * 0.25, "annual_total_usd": total,
            "usd_per_gpu_hour": total / (gpus * 8760), "usd_per_useful_gpu_hour": 3.0,
            "jct_days": None if job_cost is None else 30.0, "job_cost_usd": job_cost,
            "ranges": ranges or {}}


def comparison(**changes: Any) -> dict[str, Any]:
    """A scale-up vs scale-out comparison with ranges, as `--json` prints it."""
    return {"scenario": "nvl72-vs-hgx", "mode": "comparison", "scale_up": "gb200-nvl72",
            "scale_out": "hgx-h100-ib", "break_even_speedup": 1.75, "speedup": 2.5,
            "cheaper_option": "gb200-nvl72",
            "options": [option("gb200-nvl72", 4032, 94.1e6, 7.7e6,
                               {"job_cost_usd": {"p10": 7.0e6, "p50": 7.7e6, "p90": 8.5e6}}),
                        option("hgx-h100-ib", 4032, 49.0e6, 10.1e6)],
            "ranges": {"break_even_speedup": SPREAD},
            "inputs": [{"name": "electricity_usd_per_kwh", "value": 0.083,
                        "source": "eia"}],
            "tornado": [{"input": "electricity_usd_per_kwh", "low": 1.7, "high": 1.8}],
            **changes}


def training_run(**changes: Any) -> dict[str, Any]:
    """The cost of one training run, as `--json` prints it."""
    return {"scenario": "gpt-175b-run", "mode": "training-run", "total_usd": 4.6e6,
            "hardware_usd": 4.0e6, "interconnect_usd": 0.4e6, "energy_usd": 0.2e6,
            "ranges": {}, "inputs": [], **changes}


def tco_scenario(session: Session, name: str = "nvl72-vs-hgx", **kwargs: Any) -> Scenario:
    return scenario(session, name=name, kind="tco", **kwargs)


def add_tco(session: Session, target: Scenario, version: int | None, inputs: str = "a" * 64,
            **kwargs: Any) -> TcoResult:
    return add_tco_result(session, scenario=target, dataset_version_id=version,
                          result=kwargs.pop("result", comparison()), inputs_sha256=inputs,
                          code_version="test", computed_at=AT, **kwargs)


def test_a_comparison_fills_the_typed_columns_and_keeps_the_full_result(ledger, versions):
    with write_session(ledger) as session:
        result_id = add_tco(session, tco_scenario(session), versions[0]).id
    with Session(ledger) as session:
        stored = session.get(TcoResult, result_id)
        assert (stored.mode, stored.scale_up_option, stored.scale_out_option,
                stored.break_even_speedup, stored.speedup, stored.cheaper_option) == (
            "comparison", "gb200-nvl72", "hgx-h100-ib", 1.75, 2.5, "gb200-nvl72")
        assert (stored.break_even_p10, stored.break_even_p50, stored.break_even_p90) == (
            1.5, 1.75, 2.0)
        assert (stored.total_cost_usd, stored.reused_from_id) == (None, None)
        assert stored.computed_at == AT
        assert stored.result_json == json.dumps(comparison(), sort_keys=True)


def test_a_comparison_without_ranges_or_job_times_stores_nulls(ledger):
    with write_session(ledger) as session:
        result = add_tco(session, tco_scenario(session), None,
                         result=comparison(ranges={}, speedup=None, cheaper_option=None))
        assert (result.break_even_speedup, result.break_even_p10, result.break_even_p90,
                result.speedup, result.cheaper_option) == (1.75, None, None, None, None)


def test_a_training_run_fills_its_total_and_leaves_the_comparison_columns_null(ledger, versions):
    with write_session(ledger) as session:
        target = tco_scenario(session, "gpt-175b-run")
        result = add_tco(session, target, versions[0], result=training_run())
        assert (result.mode, result.total_cost_usd) == ("training-run", 4.6e6)
        assert (result.scale_up_option, result.scale_out_option, result.break_even_speedup,
                result.break_even_p50, result.speedup, result.cheaper_option) == (None,) * 6


def test_the_mode_is_comparison_or_training_run(ledger):
    with Session(ledger) as session, pytest.raises(IntegrityError, match="ck_tco_result_mode"):
        add_tco(session, tco_scenario(session), None, result=comparison(mode="capex"))


@pytest.mark.parametrize("result, message", [
    ({k: v for k, v in comparison().items() if k != "mode"}, "the result lacks mode"),
    (comparison(break_even_speedup=float("nan")), "non-finite break_even_speedup"),
    (comparison(ranges={"break_even_speedup": {**SPREAD, "p90": float("inf")}}),
     "non-finite break_even_p90"),
    (training_run(total_usd=float("nan")), "non-finite total_cost_usd"),
    (training_run(energy_usd=float("nan")), "Out of range float"),  # result_json stays JSON
])
def test_a_malformed_result_is_refused(ledger, result, message):
    with Session(ledger) as session, pytest.raises(ValueError, match=message):
        add_tco(session, tco_scenario(session), None, result=result)


@pytest.mark.parametrize("add_result", [add, add_tco], ids=["c2c", "tco"])
def test_one_result_per_scenario_and_dataset_version_of_each_model(ledger, versions, add_result):
    with write_session(ledger) as session:
        target = tco_scenario(session)
        add(session, target, versions[0])
        add_tco(session, target, versions[0])  # each model keeps its own results
        add_result(session, target, versions[1])  # another version is another result
    with Session(ledger) as session, pytest.raises(IntegrityError):
        add_result(session, session.get(Scenario, target.id), versions[0], inputs="b" * 64)


def test_a_reused_result_copies_the_figures_and_names_the_original(ledger, versions):
    with write_session(ledger) as session:
        target = tco_scenario(session)
        original = add_tco(session, target, None, result=comparison(break_even_speedup=1.6))
        copy = add_tco(session, target, versions[0], result={}, reused_from=original)
        third = add_tco(session, target, versions[1], result={}, reused_from=copy)
    with Session(ledger) as session:
        for reused in (session.get(TcoResult, copy.id), session.get(TcoResult, third.id)):
            assert reused.reused_from_id == original.id  # never a copy of a copy
            assert (reused.mode, reused.break_even_speedup, reused.break_even_p90,
                    reused.result_json) == ("comparison", 1.6, 2.0, original.result_json)
        assert session.scalar(select(func.count()).select_from(TcoResult)) == 3


@pytest.mark.parametrize("original_is_c2c, message", [
    (False, "other inputs"), (True, "c2c_result .* cannot be reused as a tco_result")])
def test_only_a_tco_result_with_the_same_inputs_can_be_reused(ledger, versions, original_is_c2c,
                                                              message):
    with write_session(ledger) as session:
        target = tco_scenario(session)
        original = (add(session, target, versions[0], inputs="b" * 64) if original_is_c2c
                    else add_tco(session, target, versions[0], inputs="a" * 64))
        with pytest.raises(ValueError, match=message):
            add_tco(session, target, versions[1], inputs="b" * 64, reused_from=original)


def test_the_lookups_take_the_result_class(ledger, versions):
    with write_session(ledger) as session:
        target = tco_scenario(session)
        c2c = add(session, target, versions[0], inputs="a" * 64)
        tco = add_tco(session, target, versions[0], inputs="a" * 64)
        assert result_for(session, target.id, versions[0]).id == c2c.id  # C2C by default
        assert result_for(session, target.id, versions[0], TcoResult).id == tco.id
        assert result_for(session, target.id, versions[1], TcoResult) is None
        assert isinstance(latest_result_with_inputs(session, target.name, "a" * 64), C2CResult)
        found = latest_result_with_inputs(session, target.name, "a" * 64, result_class=TcoResult)
        assert found.id == tco.id


def test_the_tco_results_frame_names_each_scenario_and_filters_by_version(ledger, versions):
    with write_session(ledger) as session:
        add_tco(session, tco_scenario(session, "zeta"), versions[0])
        add_tco(session, tco_scenario(session, "alpha"), versions[1], result=training_run())
        add_tco(session, tco_scenario(session, "adhoc"), None)
    with Session(ledger) as session:
        every = tco_results_frame(session)
        on_second = tco_results_frame(session, versions[1])
    assert list(every["scenario"]) == ["adhoc", "alpha", "zeta"]
    assert on_second[["scenario", "mode", "total_cost_usd"]].to_dict("records") == [
        {"scenario": "alpha", "mode": "training-run", "total_cost_usd": 4.6e6}]
    assert {"result_id", "dataset_version_id", "break_even_p50", "cheaper_option",
            "result_json", "inputs_sha256", "reused_from_id"} <= set(every.columns)
