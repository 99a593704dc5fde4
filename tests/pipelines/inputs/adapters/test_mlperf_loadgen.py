"""MLPerf loadgen logs: transcriptions of real submissions' mlperf_log_summary.txt and
mlperf_log_detail.txt (transcriptions/mlperf_loadgen/README.md), read as serving points with
their arrival rate and p99 limits, and checked against the shared MLPerf tables (the same runs,
extracted by others); bad logs rejected naming line and field, accuracy runs skipped."""

from __future__ import annotations

import csv
import shutil
from datetime import date
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipelines.inputs.adapters.base import AdapterOptions, Beside, Parsed
from pipelines.inputs.adapters.mlperf_loadgen import DETAIL, SUMMARY, detect, parse, place_of
from pipelines.inputs.adapters.registry import detect_format, read_file, reader_name
from pipelines.jobs.ingest import with_files_beside
from tests.support.shared_data import fixture_path, shared_path

TRANSCRIPTIONS = Path(__file__).parent / "transcriptions" / "mlperf_loadgen"
V41 = TRANSCRIPTIONS / "inference_results_v4.1" / "closed" / "NVIDIA"
V50 = TRANSCRIPTIONS / "inference_results_v5.0" / "closed" / "NVIDIA"
RUN = ("performance", "run_1")
H100_SERVER_SUMMARY = V41.joinpath("results", "DGX-H100_H100-SXM-80GBx8_TRT", "llama2-70b-99.9",
                                   "Server", *RUN, SUMMARY)
H100_SERVER_DETAIL = V41.joinpath("results", "DGX-H100_H100-SXM-80GBx8_TRT", "llama2-70b-99",
                                  "Server", *RUN, DETAIL)
B200_OFFLINE = V41.joinpath("results", "B200-SXM-180GBx1_TRT", "llama2-70b-99", "Offline", *RUN,
                            SUMMARY)
B200_INTERACTIVE = V50.joinpath("results", "B200-SXM-180GBx8_TRT", "llama2-70b-interactive-99",
                                "Server", *RUN, SUMMARY)
V41_PUBLISHED = date(2024, 8, 28)


def read(path: Path, text: str | None = None, **options) -> Parsed:
    """A log read as the ingest reads it: its place in the tree, the files beside it."""
    given_options = with_files_beside(AdapterOptions(**options), path.resolve())
    data = path.read_bytes() if text is None else text.encode()
    return read_file(reader_name(path.resolve()), data, given_options)


def only_point(parsed: Parsed):
    [run] = parsed.runs
    [point] = run.points
    return point


def published(table: str, system: str, benchmark: str, scenario: str) -> dict[str, str]:
    """The row of a shared MLPerf table (others' extraction of the same loadgen logs)."""
    with shared_path("serving", table).open(newline="") as rows:
        [row] = [r for r in csv.DictReader(rows) if (r["submitter"], r["system"], r["benchmark"],
                                                     r["scenario"])
                 == ("NVIDIA", system, benchmark, scenario)]
    return row


def test_logs_are_recognised_by_content_and_training_logs_stay_mlperfs():
    for path in (H100_SERVER_SUMMARY, H100_SERVER_DETAIL):
        assert detect("renamed.log", path.read_bytes()) == "mlperf-loadgen"
        assert detect_format("renamed.log", path.read_bytes()) == "mlperf-loadgen"
    training = fixture_path("mlperf", "training_v4.0_NVIDIA_eos_n8_gnn_result_0.txt")
    assert detect_format("result_0.txt", training.read_bytes()) == "mlperf-result"


def test_a_log_is_told_its_place_in_the_submission_tree():
    place = place_of(reader_name(B200_INTERACTIVE.resolve()))

    assert (place.submitter, place.system, place.benchmark, place.scenario, place.round) == (
        "NVIDIA", "B200-SXM-180GBx8_TRT", "llama2-70b-interactive-99", "Server", "5.0")
    assert place_of("mlperf_log_summary.txt") is None


def test_a_server_summary_is_a_point_at_its_arrival_rate_and_limits_as_mlperf_published_it():
    point = only_point(read(H100_SERVER_SUMMARY, as_of=V41_PUBLISHED))
    row = published("mlperf_inference_v4.1_llama2_70b.csv", "DGX-H100_H100-SXM-80GBx8_TRT",
                    "llama2-70b-99", "Server")

    assert (point.hardware, point.gpus, point.scenario, point.model) == (
        "h100-sxm5", int(row["n_gpus"]), "Server", "llama-2-70b")
    assert point.tok_s_per_gpu * point.gpus == pytest.approx(float(row["result_tokens_s_system"]))
    assert point.samples_per_s == pytest.approx(float(row["samples_s_system"]))
    assert point.target_qps == pytest.approx(float(row["target_qps"]))
    assert point.tpot_p99_s * 1000 == pytest.approx(float(row["tpot_p99_ms"]), abs=1e-3)
    assert point.ttft_p99_s * 1000 == pytest.approx(float(row["ttft_p99_ms"]), abs=0.1)
    assert point.tpot_limit_s * 1000 == pytest.approx(float(row["tpot_limit_ms_p99"]))
    assert point.ttft_limit_s * 1000 == pytest.approx(float(row["ttft_limit_ms_p99"]))
    assert point.concurrency is None  # Poisson arrivals: no concurrency was fixed
    assert point.tok_s_per_user == pytest.approx(1 / point.tpot_s)
    assert (point.source_key, point.as_of) == ("mlperf-inference-v4.1", V41_PUBLISHED)
    assert point.system == "mlperf-nvidia-nvidia-dgx-h100-8x-h100-sxm-80gb-tensorrt"
    assert (point.framework, point.framework_version) == ("tensorrt", "10.2.0")


def test_a_detail_log_gives_the_same_run_dated_by_its_test_datetime():
    point = only_point(read(H100_SERVER_DETAIL))
    summary = only_point(read(H100_SERVER_SUMMARY, as_of=V41_PUBLISHED))

    assert point.as_of == date(2024, 7, 24)
    assert point.source_key == "mlperf-inference-v4.1"  # from loadgen's version too
    # loadgen's own result_token_throughput (6.46e-09 here) is not the throughput.
    assert point.tok_s_per_gpu == pytest.approx(summary.tok_s_per_gpu, rel=1e-5)
    for figure in ("target_qps", "tpot_p99_s", "ttft_p99_s", "tpot_limit_s", "ttft_limit_s",
                   "tpot_s", "ttft_s"):
        assert getattr(point, figure) == pytest.approx(getattr(summary, figure)), figure
    assert point.samples_per_s == pytest.approx(74.4245)


def test_an_offline_summary_has_throughput_and_no_latencies_or_limits():
    point = only_point(read(B200_OFFLINE, as_of=V41_PUBLISHED))
    row = published("mlperf_inference_v4.1_llama2_70b.csv", "B200-SXM-180GBx1_TRT",
                    "llama2-70b-99", "Offline")

    assert (point.hardware, point.gpus, point.scenario) == ("b200", 1, "Offline")
    assert point.tok_s_per_gpu == pytest.approx(float(row["result_tokens_s_system"]))
    assert point.samples_per_s == pytest.approx(float(row["samples_s_system"]))
    assert (point.target_qps, point.tpot_limit_s, point.ttft_limit_s, point.tpot_s,
            point.tok_s_per_user) == (None, None, None, None, None)


def test_an_interactive_benchmark_is_the_server_scenario_at_its_tighter_limits():
    point = only_point(read(B200_INTERACTIVE, as_of=date(2025, 4, 2)))
    row = published("mlperf_inference_v5.0_llama2_70b.csv", "B200-SXM-180GBx8_TRT",
                    "llama2-70b-interactive-99", "Interactive")

    assert (point.scenario, point.source_key, point.gpus) == (
        "Interactive", "mlperf-inference-v5.0", 8)
    assert point.tok_s_per_gpu == pytest.approx(float(row["output_tok_s_per_gpu"]), rel=1e-5)
    assert (point.tpot_limit_s, point.ttft_limit_s) == pytest.approx((0.040, 0.450))
    assert point.tpot_p99_s <= point.tpot_limit_s


def in_tree(tmp_path: Path, log: Path, *, system: bool = True) -> Path:
    """A copy of a log in a submission tree of its own (with its systems JSON or not)."""
    relative = log.relative_to(TRANSCRIPTIONS)  # <round>/<division>/<submitter>/results/...
    copy = tmp_path / relative
    copy.parent.mkdir(parents=True)
    shutil.copy(log, copy)
    if system:
        submitter, name = Path(*relative.parts[:3]), f"{relative.parts[4]}.json"
        (tmp_path / submitter / "systems").mkdir()
        shutil.copy(TRANSCRIPTIONS / submitter / "systems" / name,
                    tmp_path / submitter / "systems" / name)
    return copy


def test_a_log_without_its_systems_json_is_rejected_saying_where_it_belongs(tmp_path):
    parsed = read(in_tree(tmp_path, H100_SERVER_SUMMARY, system=False), as_of=V41_PUBLISHED)

    assert parsed.runs == []
    [rejected] = parsed.rejected
    assert (rejected.field, rejected.line) == ("system", 8)  # the line of its throughput
    assert "systems/<system>.json" in rejected.reason


def test_a_detail_log_beside_its_summary_is_skipped_one_run_one_point(tmp_path):
    detail = in_tree(tmp_path, H100_SERVER_DETAIL)
    shutil.copy(H100_SERVER_SUMMARY, detail.parent / SUMMARY)

    parsed = read(detail)
    assert (parsed.runs, parsed.rejected, parsed.read) == ([], [], 0)
    assert "read from the mlperf_log_summary.txt beside it" in parsed.notes[0]


@pytest.mark.parametrize("change, field, line, says", [
    (("Result is : VALID", "Result is : INVALID"), "Result is", 9, "INVALID"),
    (("Completed tokens per second: 21605.79", "Completed tokens per second: n/a"),
     "Completed tokens per second", 8, "is not a number"),
    (("tpot_latency (ns): 200000000", "tpot_latency (ns): -5"), "tpot_latency (ns)", 37,
     "not a positive number"),
    (("Scenario : Server", "Scenario : SingleStream"), "Scenario", 5, "Offline or Server"),
])
def test_a_bad_figure_rejects_the_log_naming_its_line_and_field(change, field, line, says):
    text = H100_SERVER_SUMMARY.read_text().replace(*change)
    assert text != H100_SERVER_SUMMARY.read_text()

    parsed = read(H100_SERVER_SUMMARY, text, as_of=V41_PUBLISHED)
    assert parsed.runs == []
    [rejected] = parsed.rejected
    assert (rejected.field, rejected.line) == (field, line)
    assert says in rejected.reason
    assert rejected.raw_text == text.splitlines()[line - 1]


def test_a_summary_without_as_of_says_what_to_add():
    [rejected] = read(H100_SERVER_SUMMARY).rejected
    assert rejected.field == "as_of"
    assert "--as-of" in rejected.reason


def test_an_accuracy_run_is_skipped_not_rejected():
    text = H100_SERVER_SUMMARY.read_text().replace("PerformanceOnly", "AccuracyOnly")

    parsed = read(H100_SERVER_SUMMARY, text, as_of=V41_PUBLISHED)
    assert (parsed.runs, parsed.rejected) == ([], [])
    assert parsed.notes == ["1 row(s) of AccuracyOnly runs (no throughput measured) skipped"]


def test_a_log_is_one_row_read_and_kept_or_rejected_whatever_lines_are_added():
    @settings(max_examples=60, deadline=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(st.lists(st.text(max_size=80), max_size=6), st.integers(0, 40))
    def check(extra: list[str], at: int) -> None:
        lines = H100_SERVER_SUMMARY.read_text().splitlines()
        text = "\n".join(lines[:at] + extra + lines[at:])
        parsed = read(H100_SERVER_SUMMARY, text, as_of=V41_PUBLISHED)
        kept = [p for run in parsed.runs for p in run.points]
        assert len(kept) + len(parsed.rejected) + parsed.skipped_lines == 1
        if kept:  # a figure written twice counts where it is first written
            assert kept[0].tok_s_per_gpu > 0
    check()


def test_beside_files_are_found_only_for_loadgen_logs(tmp_path):
    other = tmp_path / "prices.csv"
    options = AdapterOptions()
    assert with_files_beside(options, other) is options
    found = with_files_beside(options, H100_SERVER_SUMMARY.resolve()).beside
    assert found.system_json[0] == "systems/DGX-H100_H100-SXM-80GBx8_TRT.json"
    assert found.summary is False
    assert parse("mlperf_log_detail.txt", H100_SERVER_DETAIL.read_bytes(),
                 AdapterOptions(beside=Beside(summary=True))).runs == []


def test_a_compliance_test_run_is_skipped_as_an_audit_of_the_result(tmp_path):
    result = in_tree(tmp_path, H100_SERVER_SUMMARY)
    audit = result.parents[2] / "TEST06" / "performance" / "run_1" / SUMMARY
    audit.parent.mkdir(parents=True)
    shutil.copy(result, audit)

    parsed = read(audit, as_of=V41_PUBLISHED)
    assert (parsed.runs, parsed.rejected) == ([], [])
    assert "compliance test runs" in parsed.notes[0]
    assert only_point(read(result, as_of=V41_PUBLISHED)).gpus == 8


def test_an_accuracy_runs_summary_with_no_results_is_recognised_and_skipped():
    # loadgen's closing lines, all an accuracy run's summary may hold
    text = "\nNo warnings encountered during test.\n\nNo errors encountered during test.\n"
    assert detect(SUMMARY, text.encode()) == "mlperf-loadgen"
    assert detect("notes.txt", text.encode()) is None

    parsed = read(H100_SERVER_SUMMARY, text, as_of=V41_PUBLISHED)
    assert (parsed.runs, parsed.rejected) == ([], [])
    assert "no results" in parsed.notes[0]
