"""The serving model on phase-isolated measurements (a disaggregated deployment's prefill or
decode pool measured alone): how each is read, and the set it makes for `validate`."""

from __future__ import annotations

from dataclasses import replace

import pytest

from models.fidelity import validation_reports
from models.serving.phases import PhasePoints, phase_deployment, phase_report, predicted
from pipelines.inputs.measurements import (
    shipped_serving_phases,
    shipped_serving_points,
    shipped_training_runs,
)


@pytest.fixture(scope="module")
def table() -> PhasePoints:
    return shipped_serving_phases()


def first(table: PhasePoints, phase: str, hardware: str):
    return next(p for p in table.points if p.phase == phase and p.hardware == hardware)


def test_a_pool_with_dp_attention_is_one_replica_per_gpu_over_its_experts(table):
    pool = first(table, "decode", "h100-sxm5")
    dep = phase_deployment(pool)
    assert (dep.tp, dep.dp, dep.ep, dep.gpus, dep.engine) == (1, 72, 72, 72, "sglang")


def test_a_longer_prompt_prefills_fewer_tokens_a_second(table):
    short = first(table, "prefill", "h100-sxm5")
    rates = [predicted(replace(short, input_tokens=n)) for n in (1000, 4000, 16000)]
    assert rates[0] > rates[1] > rates[2] > 0


def test_a_fuller_decode_batch_serves_more_tokens_per_gpu_up_to_the_kv_budget(table):
    pool = first(table, "decode", "h100-sxm5")
    rates = [predicted(replace(pool, batch=b)) for b in (16, 64, 256)]
    assert rates[0] < rates[1] < rates[2]
    # Unstated batch: as many sequences as the KV budget holds, at least the stated 256's rate.
    assert predicted(replace(pool, batch=None)) >= rates[2] * 0.99


def test_the_phase_checks_are_a_validation_set_with_the_signed_error(table):
    report = phase_report(table)

    assert report.published.key == "serving-phases"
    assert report.published.checks == "serving"
    assert len(report.results) == len(table.points)
    for result, point in zip(report.results, table.points, strict=True):
        assert result.measured == point.tok_s_per_gpu
        assert result.error == pytest.approx(100 * (result.predicted / result.measured - 1))
        assert result.facets.layout.endswith(f"{point.phase}-only")
    assert phase_report(PhasePoints((), ())) is None


def test_the_phase_set_comes_last_among_the_validation_sets_only_when_given(table):
    without = validation_reports(shipped_training_runs(), shipped_serving_points())
    with_phases = validation_reports(shipped_training_runs(), shipped_serving_points(), table)
    assert with_phases[:-1] == without
    assert with_phases[-1].published.key == "serving-phases"
