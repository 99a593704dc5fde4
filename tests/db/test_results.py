"""Scenarios and C2C results: append-only, one result per scenario and dataset version, reuse
that names the original computation."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from db.engine import Session, write_session
from db.results import (
    add_c2c_result,
    c2c_results_frame,
    latest_result_with_inputs,
    record_scenario,
    result_for,
)
from db.schema import C2CResult, Scenario

AT = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def estimate(**changes: Any) -> dict[str, Any]:
    """A C2C estimate shaped like the model's output."""
    return {"gpus": 72, "t_iter_s": 10.5, "t_compute_s": 8.0, "t_bubble_s": 1.0, "c2c": 0.1875,
            "c2c_scale_up": 0.125, "c2c_scale_out": 0.0625, "class": "compute-bound",
            "recommended_fabric": "ethernet", "mfu": 0.42, "hw_tflops_per_gpu": 450.0,
            "model_tflops_per_gpu": 415.5, "memory_gib_per_gpu": 61.25, "fits": True,
            "time_to_train_days": 21.5,
            "time_stack": {"tp": {"link_s": 1.2, "exposed_s": 1.0}, "dp": {"link_s": 2.0,
                                                                           "exposed_s": 0.5}},
            "layout": {"tp": 8, "pp": 3, "dp": 3},
            "specs": [{"item": "nvlink-5", "metric": "scaleup_bw_per_gpu_bidir",
                       "value": 1800.0, "source": "nvidia-nvlink-page"}], **changes}


def scenario(session: Session, name: str = "gpt-175b-nvl72",
             definition: dict[str, Any] | None = None, at: datetime = AT,
             kind: str = "c2c") -> Scenario:
    text = json.dumps(definition or {"model": "gpt-175b", "gpus": 72}, sort_keys=True)
    return record_scenario(session, name=name, kind=kind, definition=text,
                           content_sha256=hashlib.sha256(text.encode()).hexdigest(),
                           path=f"data/scenarios/{name}.yaml", recorded_at=at)


def add(session: Session, target: Scenario, version: int | None, inputs: str = "a" * 64,
        **kwargs: Any) -> C2CResult:
    return add_c2c_result(session, scenario=target, dataset_version_id=version,
                          estimate=kwargs.pop("figures", estimate()), inputs_sha256=inputs,
                          code_version="test", computed_at=AT, **kwargs)


def test_record_scenario_is_idempotent_and_a_changed_definition_is_a_new_row(ledger):
    with write_session(ledger) as session:
        first = scenario(session)
        again = scenario(session, at=datetime(2026, 11, 29, tzinfo=UTC))
        changed = scenario(session, definition={"model": "gpt-175b", "gpus": 144})
        assert again.id == first.id and again.recorded_at == AT
        assert changed.id != first.id
    with Session(ledger) as session:
        rows = session.execute(select(Scenario.name, Scenario.kind).order_by(Scenario.id)).all()
        assert rows == [("gpt-175b-nvl72", "c2c"), ("gpt-175b-nvl72", "c2c")]


def test_a_scenario_kind_is_c2c_or_tco(ledger):
    with Session(ledger) as session, pytest.raises(IntegrityError):
        record_scenario(session, name="x", kind="capex", definition="{}", content_sha256="0" * 64,
                        path=None, recorded_at=AT)


def test_add_c2c_result_stores_the_figures_and_the_full_estimate(ledger, versions):
    with write_session(ledger) as session:
        result_id = add(session, scenario(session), versions[0]).id
    with Session(ledger) as session:
        stored = session.get(C2CResult, result_id)
        assert (stored.gpus, stored.c2c, stored.c2c_class, stored.fits, stored.reused_from_id,
                stored.time_to_train_days) == (72, 0.1875, "compute-bound", True, None, 21.5)
        assert stored.computed_at == AT
        assert json.loads(stored.result_json) == estimate()
        assert stored.result_json == json.dumps(estimate(), sort_keys=True)


def test_an_estimate_without_a_training_time_stores_null(ledger):
    with write_session(ledger) as session:
        result = add(session, scenario(session), None, figures=estimate(time_to_train_days=None))
        assert result.time_to_train_days is None


@pytest.mark.parametrize("figures, message", [
    ({k: v for k, v in estimate().items() if k not in ("mfu", "class")}, "lacks class, mfu"),
    (estimate(c2c=float("nan")), "non-finite c2c"),
    (estimate(t_iter_s=float("inf")), "non-finite t_iter_s"),
])
def test_a_malformed_estimate_is_refused(ledger, figures, message):
    with Session(ledger) as session, pytest.raises(ValueError, match=message):
        add(session, scenario(session), None, figures=figures)


def test_result_for_finds_the_result_of_a_version_or_the_latest_ad_hoc_one(ledger, versions):
    with write_session(ledger) as session:
        target = scenario(session)
        on_first = add(session, target, versions[0])
        add(session, target, None, inputs="b" * 64)
        newer_ad_hoc = add(session, target, None, inputs="c" * 64)
        assert result_for(session, target.id, versions[0]).id == on_first.id
        assert result_for(session, target.id, versions[1]) is None
        assert result_for(session, target.id, None).id == newer_ad_hoc.id


def test_latest_result_with_inputs_matches_name_and_inputs(ledger, versions):
    with write_session(ledger) as session:
        old = scenario(session)
        new = scenario(session, definition={"model": "gpt-175b", "gpus": 144})
        add(session, old, versions[0], inputs="a" * 64)
        newest = add(session, new, versions[0], inputs="a" * 64)
        add(session, new, versions[1], inputs="b" * 64)
        add(session, scenario(session, name="other"), versions[0], inputs="c" * 64)
    with Session(ledger) as session:
        assert latest_result_with_inputs(session, "gpt-175b-nvl72", "a" * 64).id == newest.id
        assert latest_result_with_inputs(session, "gpt-175b-nvl72", "c" * 64) is None
        assert latest_result_with_inputs(session, "other", "a" * 64) is None


def test_a_reused_result_copies_the_figures_and_names_the_original(ledger, versions):
    with write_session(ledger) as session:
        target = scenario(session)
        original = add(session, target, None, figures=estimate(c2c=0.5, **{"class": "x"}))
        copy = add(session, target, versions[0], figures={}, reused_from=original)
        third = add(session, target, versions[1], figures={}, reused_from=copy)
    with Session(ledger) as session:
        for reused in (session.get(C2CResult, copy.id), session.get(C2CResult, third.id)):
            assert reused.reused_from_id == original.id
            assert (reused.c2c, reused.c2c_class, reused.result_json) == (
                0.5, "x", original.result_json)
        assert session.scalar(select(func.count()).select_from(C2CResult)) == 3


def test_a_result_with_other_inputs_cannot_be_reused(ledger, versions):
    with write_session(ledger) as session:
        target = scenario(session)
        original = add(session, target, versions[0], inputs="a" * 64)
        with pytest.raises(ValueError, match="other inputs"):
            add(session, target, versions[1], inputs="b" * 64, reused_from=original)


def test_the_results_frame_names_each_scenario_and_filters_by_version(ledger, versions):
    with write_session(ledger) as session:
        for name in ("zeta", "alpha"):
            target = scenario(session, name=name)
            add(session, target, versions[0])
            add(session, target, versions[1], figures=estimate(c2c=0.3))
        add(session, scenario(session, name="adhoc"), None)
    with Session(ledger) as session:
        every = c2c_results_frame(session)
        on_second = c2c_results_frame(session, versions[1])
    assert list(every["scenario"]) == ["adhoc", "alpha", "alpha", "zeta", "zeta"]
    assert list(on_second["scenario"]) == ["alpha", "zeta"]
    assert list(on_second["c2c"]) == [0.3, 0.3]
    assert {"result_id", "dataset_version_id", "c2c_class", "fits", "result_json",
            "inputs_sha256", "reused_from_id"} <= set(on_second.columns)
