"""The reference measurement tables (data/measurements/) read into the models' types, and a bad
row refused with the file, the line and the field named."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pipelines.inputs.errors import InputError
from pipelines.inputs.limits import DEFAULT_LIMITS
from pipelines.inputs.measurements import (
    SERVING_PHASES_PATH,
    SERVING_POINTS_PATH,
    TRAINING_RUNS_PATH,
    MeasurementError,
    load_serving_phases,
    load_serving_points,
    load_training_runs,
)


def test_the_shipped_tables_hold_every_run_and_point_with_its_source():
    training = load_training_runs()
    assert len(training.runs) == 62 and len(training.sources) == 4
    assert {r.framework for r in training.runs} == {"megatron", "pytorch"}
    assert {r.source for r in training.runs} == {s.key for s in training.sources}
    assert all(s.url.startswith("https://github.com/") for s in training.sources)
    serving = load_serving_points()
    assert len(serving.points) == 584 and len(serving.sources) == 14
    for point in serving.points:
        assert point.url == serving.source(point.source).url
        assert point.arch in ("hopper", "blackwell", "blackwell_ultra", "cdna3", "cdna4")
    # 454 InferenceX / InferenceMAX points, 68 MLPerf Llama-2-70B runs (Offline and Server),
    # 46 MLPerf gpt-oss-120b runs (22 of them on B300 / GB300), 16 of AMD's static batches;
    # and the published rows left out, each with why.
    assert sum(p.source.startswith("mlperf-") for p in serving.points) == 114
    assert {p.scenario for p in serving.points if p.source.startswith("mlperf-")} == {
        "offline", "server"}
    assert sum(entry.rows for entry in serving.left_out) == 250


def test_values_are_kept_as_written():
    """A throughput the table gives as a whole number stays one (the figures printed from it
    are the file's), and a decimal stays the decimal written."""
    run = load_training_runs().runs[0]
    assert (run.model, run.tokens_per_s_per_gpu, run.model_tflops_per_gpu) == (
        "GPT3_5B", 22521, 736)
    assert type(run.tokens_per_s_per_gpu) is int
    point = load_serving_points().points[0]
    assert (point.tok_s_per_gpu, point.ttft_s) == (147.62, 0.5296)


def test_a_recipe_applies_only_to_the_runs_with_its_layout():
    training = load_training_runs()
    gb200 = [r for r in training.runs if (r.system, r.model, r.precision) ==
             ("DGX-GB200", "LLAMA3_70B", "fp8")]
    assert [training.recipe_settings(r).offload_layers for r in gb200] == [40, 40]
    assert training.recipe_settings(replace(gb200[0], micro_batch=1)) is None


def damaged(tmp_path: Path, source: Path, old: str, new: str) -> tuple[Path, int]:
    """A copy of `source` with the first `old` replaced, and the line it is on."""
    text = source.read_text(encoding="utf-8")
    at = text.index(old)
    path = tmp_path / source.name
    path.write_text(text[:at] + new + text[at + len(old):], encoding="utf-8")
    return path, text.count("\n", 0, at) + 1


def damaged_run(tmp_path: Path, model: str, old: str, new: str) -> tuple[Path, int, int]:
    """A copy of the shipped runs with `old` replaced in the first run of `model`: the copy,
    the run's line and its 1-based position in `runs`."""
    lines = TRAINING_RUNS_PATH.read_text(encoding="utf-8").splitlines(keepends=True)
    runs = [n for n, line in enumerate(lines) if line.startswith("  - {source: ")]
    at = next(n for n in runs if f"model: {model}," in lines[n])
    assert old in lines[at]
    lines[at] = lines[at].replace(old, new, 1)
    path = tmp_path / TRAINING_RUNS_PATH.name
    path.write_text("".join(lines), encoding="utf-8")
    return path, at + 1, runs.index(at) + 1


@pytest.mark.parametrize(("old", "new", "field", "reason"), [
    ("tp: 2,", "tp: 0,", "tp", "must be at least 1, not 0"),
    ("tokens_per_s_per_gpu: 5851", "tokens_per_s_per_gpu: 5851 tok/s", "tokens_per_s_per_gpu",
     "expected a number"),
    ("model: GPT3_20B", "model: GPT3_21B", "model", "not a name of `architectures`"),
    ("fsdp: false", "fsdp: no", "fsdp", "expected true or false"),
    ("precision: fp8", "precision: fp6", "precision", "precision must be"),
    ("model_tflops_per_gpu: 750", "model_tflops_per_gpu: -750", "model_tflops_per_gpu",
     "above 0"),
    ("ep: 1,", "ep: 1, framework: jax,", "framework", "expected one of megatron, pytorch"),
    ("ep: 1,", "ep: 1, recompute: some,", "recompute", "expected one of none, selective"),
])
def test_a_bad_run_names_the_file_line_and_field(tmp_path, old, new, field, reason):
    path, line, number = damaged_run(tmp_path, "GPT3_20B", old, new)
    with pytest.raises(MeasurementError) as caught:
        load_training_runs(path)
    error = caught.value
    assert isinstance(error, InputError)
    assert (error.path, error.line, error.field) == (str(path), line, f"runs[{number}].{field}")
    assert reason in error.reason
    assert str(error).startswith(f"{path}:{line} runs[{number}].{field}: ")


def test_a_bad_serving_point_names_the_file_line_and_field(tmp_path):
    path, line = damaged(tmp_path, SERVING_POINTS_PATH, "measured_on: 2025-11-10",
                         "measured_on: 2025-11-31")
    with pytest.raises(MeasurementError) as caught:
        load_serving_points(path)
    assert (caught.value.line, caught.value.field) == (line, "points[1].measured_on")
    assert "expected a date YYYY-MM-DD" in caught.value.reason


@pytest.mark.parametrize(("old", "new", "field", "reason"), [
    ("hardware: b200", "hardware: l40s", "points[1].hardware", "a GPU item"),
    ("source: inferencex-dsr1-latest, hardware", "source: inferencex-dsr1-lately, hardware",
     "points[1].source", "not a key of `sources`"),
    ("concurrency: 8,", "concurrency: 8, concurrency: 9,", "points[1].concurrency",
     "written twice"),
    ("engine: sglang", "engine: sglang, gpu: b200", "points[1].gpu", "unknown field"),
    ("precision: fp4, engine", "engine", "points[1].precision", "missing"),
])
def test_a_point_that_refers_to_nothing_or_is_malformed_is_refused(tmp_path, old, new, field,
                                                                   reason):
    path, line = damaged(tmp_path, SERVING_POINTS_PATH, old, new)
    with pytest.raises(MeasurementError) as caught:
        load_serving_points(path)
    assert (caught.value.line, caught.value.field) == (line, field)
    assert reason in caught.value.reason


def _first(scenario: str) -> int:
    """The number of the first shipped point of `scenario`, as an error names it."""
    return next(n for n, p in enumerate(load_serving_points().points, start=1)
                if p.scenario == scenario)


@pytest.mark.parametrize(("scenario", "old", "new", "field", "reason"), [
    # An Offline run measures throughput alone: a per-user rate is a transcription error.
    ("offline", "scenario: offline,", "scenario: offline, tok_s_per_user: 6.5,",
     "tok_s_per_user", "a point of scenario offline has none"),
    # Poisson arrivals make their own concurrency; the limits are what the run was held to.
    ("server", "scenario: server,", "scenario: server, concurrency: 64,", "concurrency",
     "a point of scenario server has none"),
    ("server", ", tpot_p99_limit_s: 0.2", "", "tpot_p99_limit_s",
     "missing: a point of scenario server has one"),
    ("offline", "scenario: offline,", "scenario: queued,", "scenario",
     "expected one of concurrency, offline, server"),
])
def test_a_point_with_what_its_scenario_cannot_measure_is_refused(tmp_path, scenario, old, new,
                                                                  field, reason):
    path, line = damaged(tmp_path, SERVING_POINTS_PATH, old, new)
    with pytest.raises(MeasurementError) as caught:
        load_serving_points(path)
    assert (caught.value.line, caught.value.field) == (line, f"points[{_first(scenario)}].{field}")
    assert reason in caught.value.reason


def test_a_source_listed_twice_is_refused(tmp_path):
    path, _ = damaged(tmp_path, SERVING_POINTS_PATH, "key: inferencex-dsr1-history",
                      "key: inferencex-dsr1-latest")
    with pytest.raises(MeasurementError, match=r"sources\[2\]\.key: 'inferencex-dsr1-latest' "
                                               "is listed twice"):
        load_serving_points(path)


def test_the_readers_keep_within_the_input_limits(tmp_path):
    with pytest.raises(MeasurementError, match="SPECLEDGER_MAX_ROWS_PER_FILE"):
        load_serving_points(limits=replace(DEFAULT_LIMITS, max_rows_per_file=100))
    with pytest.raises(MeasurementError, match="SPECLEDGER_MAX_FILE_BYTES"):
        load_training_runs(limits=replace(DEFAULT_LIMITS, max_file_bytes=1000))
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("a: &a [x, x, x, x, x, x, x, x, x, x]\n"
                    "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                    "runs: [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n")
    with pytest.raises(MeasurementError) as caught:   # 1,200 values from 22 written
        load_training_runs(bomb, replace(DEFAULT_LIMITS, yaml_max_alias_nodes=1000))
    assert caught.value.field == "(file)" and "alias" in caught.value.reason


def test_a_missing_or_unknown_section_is_refused(tmp_path):
    missing = tmp_path / "missing.yaml"
    with pytest.raises(MeasurementError, match="missing.yaml"):
        load_training_runs(missing)
    odd = tmp_path / "odd.yaml"
    odd.write_text("sources: []\npoints: []\nextra: 1\n")
    with pytest.raises(MeasurementError, match=r"odd.yaml:3 extra: unknown section"):
        load_serving_points(odd)
    empty = tmp_path / "empty.yaml"
    empty.write_text("sources: []\n")
    with pytest.raises(MeasurementError, match=r"points: expected a list of rows"):
        load_serving_points(empty)


def test_the_phase_table_holds_each_pool_with_its_source_and_the_row_it_cannot_express():
    table = load_serving_phases()

    assert len(table.points) == 11
    assert {p.phase for p in table.points} == {"prefill", "decode"}
    assert all(p.batch is None for p in table.points if p.phase == "prefill")
    first = table.points[0]
    assert first.tok_s_per_gpu == 57674 / 8  # the post's per-node figure, per GPU
    assert first.url == table.sources[0].url and "2db4e40" in first.url
    assert [u.rows for u in table.left_out] == [1]


@pytest.mark.parametrize(("old", "new", "field", "reason"), [
    ("phase: prefill, gpus: 32", "phase: prefill, batch: 8, gpus: 32", "points[1].batch",
     "no decode batch"),
    ("phase: prefill, gpus: 32, tp: 1", "phase: prefill, gpus: 32, tp: 2", "points[1].tp",
     "tp is 1"),
    ("phase: prefill, gpus: 32", "phase: both, gpus: 32", "points[1].phase", "prefill"),
    ("hardware: h100-sxm5", "hardware: h20", "points[1].hardware", "a GPU item"),
])
def test_a_bad_phase_point_names_the_file_line_and_field(tmp_path, old, new, field, reason):
    path, line = damaged(tmp_path, SERVING_PHASES_PATH, old, new)
    with pytest.raises(MeasurementError) as caught:
        load_serving_phases(path)
    assert (caught.value.line, caught.value.field) == (line, field)
    assert reason in caught.value.reason
