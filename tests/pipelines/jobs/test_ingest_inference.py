"""Inference benchmark files through the real ingest, on SQLite and PostgreSQL: InferenceX and
MLPerf Inference points are stored with their run and source, bad rows are kept for review
beside the good ones, rows add up, the same bytes again change nothing, and an undated file is
read again once its date is given."""

from __future__ import annotations

import json
import shutil
from datetime import date
from pathlib import Path

import pytest
from sqlalchemy import func, select

from db.engine import Session
from db.schema import InferencePoint, IngestFile, Item, MeasurementRun, RejectedRow, Source
from tests.support.shared_data import fixture_path

# The real files the tests ingest, by their path in the shared folder (a copy of each is there;
# the project keeps none).
AGG = ("inferencex", "agg_bmk_kimik2.5_mi355x.json")
PUBLISHED = ("inferencex", "published_kimik2.5_mi355x.json")
V51 = ("mlperf_inference", "summary_results_v5.1_sample.json")
GB200_SYSTEM = ("mlperf_inference", "GB200-NVL72_GB200-186GB_aarch64x72_TRT.json")
RUN_DAY = date(2026, 6, 1)
V51_PUBLISHED = date(2025, 9, 9)


def adds_up(report) -> None:
    for f in report.files:
        assert f.read == f.accepted + f.unchanged + f.rejected, f.path


def stored(ledger, model) -> list:
    with Session(ledger) as session:
        return list(session.scalars(select(model).order_by(model.id)))


def hostile(tmp_path: Path) -> Path:
    """The real artifacts and bad copies of them, one fault a row."""
    real = json.loads(fixture_path(*AGG).read_text())
    bad = [real[0] | {"hw": ""}, real[1] | {"output_tput_per_gpu": "NaN"},
           real[2] | {"infmax_model_prefix": "llama4maverick", "model": "meta/Llama-4"},
           real[0] | {"conc": -4}, "not a row"]
    path = tmp_path / "agg_bmk.json"
    path.write_text(json.dumps([*real, *bad], indent=2))
    return path


def test_inferencex_points_are_stored_with_their_run_and_source(ledger, ingest):
    report = ingest(fixture_path(*AGG), as_of=RUN_DAY)

    adds_up(report)
    [f] = report.files
    assert (f.format, f.read, f.accepted, f.rejected, f.measured_runs) == (
        "inferencex", 3, 3, 0, 1)
    [run] = stored(ledger, MeasurementRun)
    assert (run.kind, run.item_key, run.benchmark) == ("inference", "amd-mi355x", "inferencex")
    assert json.loads(run.metadata_json)["as_of"] == ["2026-06-01"]
    points = stored(ledger, InferencePoint)
    assert [(p.measurement_run_id, p.line, p.concurrency) for p in points] == [
        (run.id, 2, 4), (run.id, 52, 32), (run.id, 102, 64)]
    first = points[0]
    assert (first.as_of, first.source_key, first.hardware, first.model) == (
        RUN_DAY, "inferencex-2026-06-01", "amd-mi355x", "kimi-k2.5")
    assert (first.framework, first.framework_version, first.spec_decoding) == (
        "vllm", "v0.21.0", "mtp")
    assert (first.gpus, first.tp, first.ep, first.dp, first.disaggregated) == (8, 8, 1, 1, False)
    assert first.tok_s_per_gpu == 27.678011491816765  # a double on both databases
    assert first.tpot_s == pytest.approx(0.017393898241078155)
    [source] = stored(ledger, Source)
    assert (source.key, source.publisher, source.kind) == ("inferencex-2026-06-01",
                                                           "SemiAnalysis", "measurement")


def test_a_hostile_file_keeps_the_good_rows_and_every_bad_row_for_review(ledger, ingest,
                                                                        tmp_path):
    report = ingest(hostile(tmp_path), as_of=RUN_DAY)

    adds_up(report)
    [f] = report.files
    assert (f.read, f.accepted, f.rejected) == (8, 3, 5)
    assert sorted(e.field for e in f.errors) == ["conc", "hw", "infmax_model_prefix",
                                                 "output_tput_per_gpu", "row"]
    assert len(stored(ledger, InferencePoint)) == 3
    rejected = stored(ledger, RejectedRow)
    assert len(rejected) == 5
    assert all(r.line and r.raw_text and r.reason.startswith("/") for r in rejected)
    nan = next(r for r in rejected if r.field == "output_tput_per_gpu")
    assert nan.reason.startswith("/4/output_tput_per_gpu: ") and "NaN" in nan.raw_text


def test_the_same_bytes_again_change_nothing(ledger, ingest, tmp_path, clock):
    path = hostile(tmp_path)
    ingest(path, as_of=RUN_DAY)
    clock.tick()
    again = ingest(path, as_of=RUN_DAY)

    adds_up(again)
    [f] = again.files
    assert (f.outcome, f.accepted, f.unchanged, f.rejected) == ("unchanged_file", 0, 3, 5)
    assert len(stored(ledger, InferencePoint)) == 3
    assert len(stored(ledger, MeasurementRun)) == 1


def test_an_undated_artifact_is_read_again_once_its_date_is_given(ledger, ingest, clock):
    first = ingest(fixture_path(*AGG))
    [f] = first.files
    assert (f.outcome, f.rejected, f.measured_runs) == ("ingested", 3, 0)
    assert all(e.field == "as_of" and "--as-of" in e.reason for e in f.errors)
    assert stored(ledger, MeasurementRun) == []

    clock.tick()
    second = ingest(fixture_path(*AGG), as_of=RUN_DAY)
    [g] = second.files
    assert (g.outcome, g.accepted, g.rejected) == ("ingested", 3, 0)
    with Session(ledger) as session:
        options = session.scalars(select(IngestFile.options).order_by(IngestFile.id)).all()
        assert session.scalar(select(func.count()).select_from(InferencePoint)) == 3
    assert options == ["{}", '{"as_of": "2026-06-01"}']


def test_published_rows_need_no_date_and_skipped_agentic_rows_are_not_rows(ledger, ingest):
    report = ingest(fixture_path(*PUBLISHED))

    adds_up(report)
    [f] = report.files
    assert (f.read, f.accepted, f.rejected) == (3, 3, 0)
    assert any("agentic_traces" in note for note in f.notes)
    assert {p.as_of for p in stored(ledger, InferencePoint)} == {RUN_DAY}


def test_an_mlperf_round_is_stored_beside_the_systems_json_of_its_submission(ledger, ingest):
    report = ingest(fixture_path(*V51), fixture_path(*GB200_SYSTEM), as_of=V51_PUBLISHED)

    adds_up(report)
    summary = next(f for f in report.files if f.format == "mlperf-inference")
    assert (summary.read, summary.accepted, summary.rejected) == (9, 7, 2)
    assert {e.field for e in summary.errors} == {"Accelerator"}
    points = stored(ledger, InferencePoint)
    gb200 = [p for p in points if p.hardware == "gb200"]
    assert {p.scenario for p in gb200} == {"Offline", "Server"}
    with Session(ledger) as session:
        system = session.scalars(select(Item).where(Item.key == gb200[0].system)).one()
    assert system.kind == "system" and system.vendor == "NVIDIA"
    assert {p.source_key for p in points} == {"mlperf-inference-v5.1"}
    assert {p.benchmark for p in points} == {"mlperf-inference-v5.1"}


def test_inference_points_ingested_on_their_own_cut_a_dataset_version(ingest, nvlink_pack,
                                                                      clock):
    """Issue 30, case 5: points that arrive without any observation still make a new version,
    so the stages that read a version (serving) see them; the same bytes again do not."""
    first = ingest(nvlink_pack)
    clock.tick()
    points = ingest(fixture_path(*AGG), as_of=RUN_DAY)
    clock.tick()
    again = ingest(fixture_path(*AGG), as_of=RUN_DAY)

    assert points.dataset_changed and points.dataset_version > first.dataset_version
    assert points.dataset_hash != first.dataset_hash
    assert not again.dataset_changed and again.dataset_version == points.dataset_version


# Transcriptions of real submissions' loadgen logs, laid out as the submission tree is.
LOADGEN = (Path(__file__).parents[1] / "inputs" / "adapters" / "transcriptions"
           / "mlperf_loadgen")


def test_a_submission_tree_of_loadgen_logs_becomes_points_with_arrivals_and_limits(ledger,
                                                                                   ingest):
    report = ingest(LOADGEN, as_of=date(2024, 8, 28))

    adds_up(report)
    formats = sorted(f.format for f in report.files)
    assert formats == ["mlperf-loadgen"] * 4 + ["mlperf-system"] * 3
    assert all(f.rejected == 0 for f in report.files)
    points = {(p.model_written, p.scenario): p for p in stored(ledger, InferencePoint)}
    assert sorted(points) == [("llama2-70b-99", "Offline"), ("llama2-70b-99", "Server"),
                              ("llama2-70b-99.9", "Server"),
                              ("llama2-70b-interactive-99", "Interactive")]
    server = points["llama2-70b-99.9", "Server"]
    assert (server.target_qps, server.tpot_limit_s, server.ttft_limit_s) == (75.0, 0.2, 2.0)
    assert server.tpot_p99_s == pytest.approx(0.175354317)
    assert server.concurrency is None
    offline = points["llama2-70b-99", "Offline"]
    assert (offline.samples_per_s, offline.target_qps) == (pytest.approx(41.1075), None)
    # Each point names the system item its systems JSON declared, in the same ingest.
    systems = {i.key for i in stored(ledger, Item) if i.kind == "system"}
    assert {p.system for p in points.values()} <= systems


def test_a_loadgen_log_is_read_again_when_its_systems_json_changes(ledger, ingest, tmp_path):
    tree = tmp_path / "tree"
    shutil.copytree(LOADGEN / "inference_results_v4.1", tree / "inference_results_v4.1")
    log = next(tree.rglob("B200-SXM-180GBx1_TRT/**/mlperf_log_summary.txt"))
    assert ingest(log, as_of=date(2024, 8, 28)).files[0].accepted == 1
    assert ingest(log, as_of=date(2024, 8, 28)).files[0].outcome == "unchanged_file"

    described = next(tree.rglob("systems/B200-SXM-180GBx1_TRT.json"))
    described.write_text(described.read_text().replace('"accelerators_per_node": 1',
                                                       '"accelerators_per_node": 2'))
    [again] = ingest(log, as_of=date(2024, 8, 28)).files
    assert (again.outcome, again.accepted) == ("ingested", 1)
    assert sorted(p.gpus for p in stored(ledger, InferencePoint)) == [1, 2]
