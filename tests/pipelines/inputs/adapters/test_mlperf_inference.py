"""MLPerf Inference adapter: real rows of MLCommons' summary_results.json (v5.1 and v4.1,
the shared mlperf_inference README) read into serving points tied to the systems the
submission's systems JSON describes; rows of other units skipped, bad rows rejected alone."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from pipelines.inputs.adapters import mlperf
from pipelines.inputs.adapters.base import AdapterError, AdapterOptions, Parsed
from pipelines.inputs.adapters.mlperf_inference import detect, gpu_key, parse
from pipelines.inputs.adapters.registry import detect_format
from tests.support.shared_data import fixture_path

# The MLPerf Inference files the tests read, by name (shared copies: the project keeps none).
V51 = "summary_results_v5.1_sample.json"
V41 = "summary_results_v4.1_sample.json"
GB200_SYSTEM = "GB200-NVL72_GB200-186GB_aarch64x72_TRT.json"
V51_PUBLISHED = date(2025, 9, 9)  # MLPerf Inference v5.1 publication date


def sample(name: str) -> Path:
    return fixture_path("mlperf_inference", name)


def read(name: str | bytes, **options) -> Parsed:
    data = name if isinstance(name, bytes) else sample(name).read_bytes()
    return parse("summary_results.json", data, AdapterOptions(**options))


def points(parsed: Parsed) -> list:
    return [p for run in parsed.runs for p in run.points]


def written(document) -> bytes:
    return json.dumps(document, indent=2).encode()


def test_the_summary_is_recognised_by_content_and_systems_json_stays_mlperfs():
    assert detect("renamed.dat", sample(V51).read_bytes()) == "mlperf-inference"
    assert detect_format("renamed.dat", sample(V41).read_bytes()) == "mlperf-inference"
    assert detect_format("renamed.dat", sample(GB200_SYSTEM).read_bytes()) == "mlperf-system"
    assert detect("x.json", fixture_path("inferencex", "agg_bmk_kimik2.5_mi355x.json")
                  .read_bytes()) is None


def test_token_throughput_rows_become_points_per_gpu_of_the_system():
    parsed = read(V51, as_of=V51_PUBLISHED)

    assert parsed.format == "mlperf-inference"
    found = {(p.hardware, p.model, p.scenario): p for p in points(parsed)}
    assert sorted(found) == [
        ("amd-mi300x", "llama-2-70b", "Interactive"), ("amd-mi300x", "llama-2-70b", "Offline"),
        ("amd-mi300x", "llama-2-70b", "Server"), ("b200", "deepseek-r1", "Offline"),
        ("gb200", "deepseek-r1", "Offline"), ("gb200", "deepseek-r1", "Server"),
        ("nvidia-h200-nvl-141gb", "llama-2-70b", "Offline")]
    gb200 = found["gb200", "deepseek-r1", "Offline"]
    assert gb200.gpus == 72  # 18 nodes x 4
    assert gb200.tok_s_per_gpu == pytest.approx(289712.0 / 72)
    assert (gb200.model_written, gb200.precision, gb200.framework, gb200.framework_version) == (
        "deepseek-r1", "fp4", "tensorrt", "10.11")
    assert (gb200.as_of, gb200.source_key, gb200.benchmark) == (
        V51_PUBLISHED, "mlperf-inference-v5.1", "mlperf-inference-v5.1")
    assert (gb200.concurrency, gb200.input_tokens, gb200.ttft_s, gb200.tpot_s, gb200.tp) == (
        None, None, None, None, None)
    mi300x = found["amd-mi300x", "llama-2-70b", "Offline"]
    assert (mi300x.gpus, mi300x.tok_s_per_gpu) == (8, pytest.approx(27803.9 / 8))
    assert (mi300x.model_written, mi300x.framework) == ("llama2-70b-99", "vllm")
    assert mi300x.framework_version == "0.9.0.2.dev108+g71faa1880.d20250730.rocm641"
    assert mi300x.hardware_written == "AMD Instinct MI300X 192GB HBM3"


def test_the_point_names_the_system_item_its_systems_json_gives():
    [point, _] = [p for p in points(read(V51, as_of=V51_PUBLISHED)) if p.hardware == "gb200"]
    system = mlperf.parse("GB200.json", sample(GB200_SYSTEM).read_bytes(),
                          AdapterOptions(as_of=V51_PUBLISHED))

    [item] = system.pack.items
    assert point.system == item.key == "mlperf-nvidia-72x-gb200-186gb-aarch64-tensorrt"


def test_other_units_are_skipped_and_cpu_only_or_mixed_systems_rejected():
    parsed = read(V51, as_of=V51_PUBLISHED)

    assert parsed.skipped_lines == 2
    assert sorted(n for n in parsed.notes if "skipped" in n) == [
        '1 row(s) of results in "Latency (ms)" (not token throughput) skipped',
        '1 row(s) of results in "Samples/s" (not token throughput) skipped']
    cpu, mixed = parsed.rejected
    assert (cpu.field, cpu.line) == ("Accelerator", 306)
    assert cpu.reason.startswith("/8/Accelerator: no Accelerator")
    assert mixed.field == "Accelerator" and "amd-mi300x, amd-mi325x" in mixed.reason
    assert parsed.read == 7 + 2  # skipped rows are not rows
    assert any('"NVIDIA H200-NVL-141GB"' in n for n in parsed.notes)  # kept under its slug


def test_the_file_is_declared_as_mlcommons_measurement_of_its_round():
    [source] = read(V51, as_of=V51_PUBLISHED).pack.sources
    assert (source.key, source.kind, source.publisher, source.published_on) == (
        "mlperf-inference-v5.1", "measurement", "MLCommons", V51_PUBLISHED)
    assert source.url == "https://github.com/mlcommons/inference_results_v5.1"


def test_an_older_round_writes_counts_as_floats():
    parsed = read(V41, as_of=date(2024, 8, 28))
    assert [(p.gpus, p.scenario, round(p.tok_s_per_gpu, 2)) for p in points(parsed)] == [
        (1, "Offline", 3062.72), (1, "Server", 2520.27)]
    assert {p.framework_version for p in points(parsed)} == {"0.4.3+rocm614"}
    assert {p.hardware for p in points(parsed)} == {"amd-mi300x"}


def test_without_as_of_every_token_row_is_rejected_and_the_others_still_skipped():
    parsed = read(V51)

    assert parsed.runs == []
    assert sum(r.field == "as_of" for r in parsed.rejected) == 7
    assert all("--as-of" in r.reason for r in parsed.rejected if r.field == "as_of")
    assert parsed.skipped_lines == 2 and parsed.read == 9


def test_aliases_place_a_gpu_the_built_in_names_do_not_know():
    parsed = read(V51, as_of=V51_PUBLISHED, aliases={"NVIDIA H200-NVL-141GB": "h200-nvl"})
    assert "h200-nvl" in {p.hardware for p in points(parsed)}
    assert not any("item_aliases" in n for n in parsed.notes)


@pytest.mark.parametrize(("written_name", "key"), [
    ("NVIDIA H100-SXM-80GB", "h100-sxm5"), ("NVIDIA H200-SXM-141GB", "h200-sxm"),
    ("Virtualized NVIDIA H200-SXM-141GB", "h200-sxm"), ("NVIDIA B200-SXM-180GB", "b200"),
    ("NVIDIA GB300", "gb300"), ("AMD Instinct MI325X 256GB HBM3e", "amd-mi325x"),
    ("AMD Instinct MI355X 288GB HBM3e", "amd-mi355x"), ("NVIDIA L40S", None),
])
def test_accelerator_names_map_to_the_ledgers_gpu_items(written_name, key):
    assert gpu_key(written_name) == key


@pytest.mark.parametrize(("change", "field", "says"), [
    ({"Performance_Result": "NaN"}, "Performance_Result", "not a number"),
    ({"Performance_Result": -1}, "Performance_Result", "not a positive number"),
    ({"Performance_Result": None}, "Performance_Result", "no Performance_Result"),
    ({"Model": "llama4-scout"}, "Model", "unknown model"),
    ({"a#": "eight"}, "a#", "not a whole number"),
    ({"Nodes": 0}, "Nodes", "between 1 and"),
    ({"version": "5.1 (final)"}, "version", "not an MLPerf round"),
    ({"Scenario": ""}, "Scenario", "no Scenario"),
    ({"Performance_Units": 7}, "Performance_Units", "not a name"),
])
def test_a_bad_value_rejects_its_row_alone(change, field, says):
    document = json.loads(sample(V51).read_text())
    document[1] |= change
    parsed = read(written(document), as_of=V51_PUBLISHED)

    rejected = [r for r in parsed.rejected if r.reason.startswith("/1/")]
    assert [(r.field, says in r.reason) for r in rejected] == [(field, True)]
    assert 38 <= rejected[0].line <= 73
    assert len(points(parsed)) == 6  # the seven minus this one
    assert parsed.read == len(points(parsed)) + len(parsed.rejected)


def test_a_summary_that_is_not_an_array_of_rows_is_rejected_whole():
    with pytest.raises(AdapterError, match="expected a JSON array"):
        read(b'"Performance_Result Performance_Units Scenario"')
