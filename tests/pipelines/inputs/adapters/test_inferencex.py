"""InferenceX adapter: real benchmark artifacts and rows in the dashboard's published shape
(the shared inferencex README says which are real and what was constructed), read into serving
points; bad rows rejected one by one with their line, key and JSON pointer."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from pipelines.inputs.adapters.base import AdapterError, AdapterOptions, Parsed
from pipelines.inputs.adapters.inferencex import detect, gpu_key, parse
from pipelines.inputs.adapters.registry import detect_format
from pipelines.inputs.limits import InputLimits
from tests.support.shared_data import fixture_path

# The InferenceX files the tests read, by name (shared copies: the project keeps none).
AGG = "agg_bmk_kimik2.5_mi355x.json"
ONE = ("agg_kimik2.5_1k1k_int4_vllm_tp8-ep1-dpafalse_disagg-false_"
       "spec-mtp_conc4_MI355-gbt350-odcdh5-wbb3.json")
MULTINODE = "agg_bmk_multinode_gptoss.json"
PUBLISHED = "published_kimik2.5_mi355x.json"
RUN_DAY = date(2026, 6, 1)


def sample(name: str) -> Path:
    return fixture_path("inferencex", name)


def read(name: str | bytes, **options) -> Parsed:
    data = name if isinstance(name, bytes) else sample(name).read_bytes()
    return parse("results.json", data, AdapterOptions(**options))


def points(parsed: Parsed) -> list:
    return [p for run in parsed.runs for p in run.points]


def rows() -> list[dict]:
    return json.loads(sample(AGG).read_text())


def written(document) -> bytes:
    return json.dumps(document, indent=2).encode()


# ---------------------------------------------------------------- recognised by content


@pytest.mark.parametrize("name", [AGG, ONE, MULTINODE, PUBLISHED])
def test_each_fixture_is_recognised_by_its_content_whatever_its_name(name):
    assert detect("renamed.dat", sample(name).read_bytes()) == "inferencex"
    assert detect_format("renamed.dat", sample(name).read_bytes()) == "inferencex"


@pytest.mark.parametrize("data", [
    ("nccl", "json_h200_single_node.json"),  # another shared file, by its path there
    ("mlperf", "training_v4.0_NVIDIA_eos_n8_ngc24.04_pytorch.json"),
    ("mlperf_inference", "summary_results_v5.1_sample.json"),
    b'[{"hw": "h100", "throughput": 1}]',  # no concurrency, no per-GPU throughput
    b"hw,conc,tput_per_gpu\nh100,4,100\n",
    b"",
])
def test_other_files_are_left_alone(data):
    data = data if isinstance(data, bytes) else fixture_path(*data).read_bytes()
    assert detect("results.json", data) is None


# ---------------------------------------------------------------- benchmark artifacts


def test_real_artifacts_become_serving_points_with_every_figure():
    parsed = read(AGG, as_of=RUN_DAY)

    assert (parsed.format, parsed.read, parsed.rejected) == ("inferencex", 3, [])
    [run] = parsed.runs
    assert (run.kind, run.item, run.benchmark) == ("inference", "amd-mi355x", "inferencex")
    first = run.points[0]
    assert (first.line, first.as_of, first.source_key) == (2, RUN_DAY, "inferencex-2026-06-01")
    assert (first.hardware, first.hardware_written, first.system) == ("amd-mi355x", "mi355x",
                                                                      None)
    assert (first.model, first.model_written) == ("kimi-k2.5", "moonshotai/Kimi-K2.5")
    assert (first.precision, first.framework, first.framework_version, first.spec_decoding) == (
        "int4", "vllm", "v0.21.0", "mtp")
    assert (first.gpus, first.tp, first.ep, first.dp, first.disaggregated) == (8, 8, 1, 1, False)
    assert (first.prefill_gpus, first.decode_gpus) == (None, None)
    assert (first.input_tokens, first.output_tokens, first.concurrency) == (1024, 1024, 4)
    assert first.tok_s_per_gpu == pytest.approx(27.678011491816765)  # output_tput_per_gpu
    assert first.total_tok_s_per_gpu == pytest.approx(55.62670336516291)  # tput_per_gpu
    assert first.tok_s_per_user == pytest.approx(57.49142521935413)  # median_intvty
    assert first.ttft_s == pytest.approx(0.2969768075272441)  # median_ttft
    assert first.tpot_s == pytest.approx(0.017393898241078155)  # median_tpot
    assert (first.scenario, first.benchmark) == (None, "inferencex")
    assert [(p.input_tokens, p.concurrency) for p in run.points] == [(1024, 4), (8192, 32),
                                                                    (8192, 64)]
    assert [p.line for p in run.points] == [2, 52, 102]


def test_the_file_is_declared_as_a_semianalysis_measurement_of_its_day():
    [source] = read(AGG, as_of=RUN_DAY).pack.sources

    assert (source.key, source.kind, source.publisher) == ("inferencex-2026-06-01",
                                                           "measurement", "SemiAnalysis")
    assert source.url == "https://github.com/SemiAnalysisAI/InferenceX"
    assert source.published_on == RUN_DAY


def test_one_artifact_object_is_one_point():
    [point] = points(read(ONE, as_of=RUN_DAY))
    assert (point.line, point.concurrency, point.model) == (1, 4, "kimi-k2.5")


def test_an_undated_artifact_without_as_of_rejects_every_row_and_says_what_to_add():
    parsed = read(AGG)

    assert parsed.runs == [] and parsed.pack.sources == []
    assert [(r.line, r.field) for r in parsed.rejected] == [(2, "as_of"), (52, "as_of"),
                                                           (102, "as_of")]
    assert all("--as-of" in r.reason for r in parsed.rejected)
    assert parsed.read == 3
    assert parsed.rejected[1].raw_text.startswith('{\n    "hw": "mi355x"')


def test_an_artifact_named_with_its_run_date_is_dated_by_its_name_unless_as_of_says_otherwise():
    named = parse("inferencemax_kimi_2026-06-01.json", sample(AGG).read_bytes(), AdapterOptions())
    said = parse("inferencemax_kimi_2026-06-01.json", sample(AGG).read_bytes(),
                 AdapterOptions(as_of=date(2026, 6, 3)))

    assert parsed_days(named) == {RUN_DAY} and named.rejected == []
    assert [s.key for s in named.pack.sources] == ["inferencex-2026-06-01"]
    assert parsed_days(said) == {date(2026, 6, 3)}


def test_a_published_row_keeps_its_own_date_whatever_the_file_is_named():
    parsed = parse("published_1999-01-01.json", sample(PUBLISHED).read_bytes(), AdapterOptions())
    assert parsed_days(parsed) == {RUN_DAY}


def parsed_days(parsed: Parsed) -> set[date]:
    return {p.as_of for p in points(parsed)}


def test_a_disaggregated_point_counts_prefill_and_decode_gpus_and_rescales_its_throughput():
    [point] = points(read(MULTINODE, as_of=date(2026, 4, 28)))
    [row] = json.loads(sample(MULTINODE).read_text())

    assert (point.hardware, point.hardware_written) == ("amd-mi355x", "mi355x-disagg")
    assert point.disaggregated is True
    assert (point.gpus, point.prefill_gpus, point.decode_gpus) == (16, 8, 8)
    assert (point.tp, point.ep, point.dp, point.spec_decoding) == (8, 1, 1, "none")
    assert point.model == "gpt-oss-120b"
    # InferenceX divides the output by the 8 decode GPUs; the ledger's figure is over all 16.
    assert point.tok_s_per_gpu == pytest.approx(row["output_tput_per_gpu"] * 8 / 16)
    assert point.total_tok_s_per_gpu == pytest.approx(row["tput_per_gpu"])


# ---------------------------------------------------------------- published rows


def test_published_rows_are_dated_by_their_own_date_and_agentic_rows_are_skipped():
    parsed = read(PUBLISHED)  # no --as-of needed

    assert parsed.rejected == []
    assert [(p.as_of, p.concurrency) for p in points(parsed)] == [(RUN_DAY, 4), (RUN_DAY, 32),
                                                                  (RUN_DAY, 64)]
    assert parsed.read == 3 and parsed.skipped_lines == 1
    assert any("agentic_traces" in note and "skipped" in note for note in parsed.notes)


def test_published_and_artifact_rows_of_one_run_give_the_same_points():
    artifact = points(read(AGG, as_of=RUN_DAY))
    published = points(read(PUBLISHED))

    def figures(p):
        return (p.hardware, p.model, p.precision, p.framework, p.framework_version, p.gpus,
                p.tp, p.ep, p.dp, p.input_tokens, p.output_tokens, p.concurrency,
                p.tok_s_per_gpu, p.total_tok_s_per_gpu, p.tok_s_per_user, p.ttft_s, p.tpot_s)
    assert [figures(p) for p in published] == [figures(p) for p in artifact]


def test_a_published_date_beats_as_of_and_a_bad_one_rejects_its_row():
    document = json.loads(sample(PUBLISHED).read_text())
    document[1]["date"] = "2026-02-30"
    parsed = read(written(document), as_of=date(2020, 1, 1))

    assert {p.as_of for p in points(parsed)} == {RUN_DAY}
    [rejected] = parsed.rejected
    assert rejected.field == "date" and rejected.reason.startswith("/1/date: ")


# ---------------------------------------------------------------- names


@pytest.mark.parametrize(("written", "key"), [
    ("h100", "h100-sxm5"), ("h200-nv_0", "h200-sxm"), ("b200-dgxc-slurm_5", "b200"),
    ("gb200-nv", "gb200"), ("gb300-multinode-slurm", "gb300"), ("mi300x-amds", "amd-mi300x"),
    ("MI355X-disagg", "amd-mi355x"), ("mi325x", "amd-mi325x"), ("tpu-v7", None),
])
def test_runner_names_map_to_the_ledgers_gpu_items(written, key):
    assert gpu_key(written) == key


def test_a_superchip_point_names_its_rack_and_an_unknown_gpu_keeps_a_slug_and_a_note():
    document = rows()
    document[0]["hw"] = "gb200-nv_1"
    document[1]["hw"] = "Trainium-3"
    parsed = read(written(document), as_of=RUN_DAY)

    first, second, third = points(parsed)
    assert (first.hardware, first.system) == ("gb200", "gb200-nvl72")
    assert (second.hardware, second.hardware_written) == ("trainium-3", "Trainium-3")
    assert third.hardware == "amd-mi355x"
    assert any('"Trainium-3"' in note and "item_aliases" in note for note in parsed.notes)
    assert parsed.runs[0].item is None  # three GPUs: the run measures no single item


def test_aliases_override_the_built_in_names():
    parsed = read(AGG, as_of=RUN_DAY, aliases={"mi355x": "mi355x-oam",
                                               "moonshotai/Kimi-K2.5": "kimi-k2.5-int4"})
    assert {(p.hardware, p.model) for p in points(parsed)} == {("mi355x-oam", "kimi-k2.5-int4")}


@pytest.mark.parametrize(("prefix", "model", "key"), [
    ("dsr1", "deepseek-ai/DeepSeek-R1-0528", "deepseek-r1"),
    ("dsr1-fp8", None, "deepseek-r1"),
    (None, "nvidia/DeepSeek-R1-0528-FP4-V2", "deepseek-r1"),
    ("gptoss", "openai/gpt-oss-120b", "gpt-oss-120b"),
    ("llama70b", "nvidia/Llama-3.3-70B-Instruct-FP8", "llama-3.3-70b"),
    ("qwen3.5", "Qwen/Qwen3.5-397B-A17B-FP8", "qwen3.5-397b-a17b"),
    ("dsv4", "deepseek-ai/DeepSeek-V4-Pro", "deepseek-v4-pro"),
    ("glm5.1", "zai-org/GLM-5.1-FP8", "glm-5.1"),
    ("glm5", "zai-org/GLM-5-FP8", "glm-5"),
    ("minimaxm3", "MiniMaxAI/MiniMax-M3-MXFP8", "minimax-m3"),
])
def test_models_get_their_canonical_key_from_the_prefix_or_the_path(prefix, model, key):
    document = rows()[:1]
    document[0]["infmax_model_prefix"] = prefix
    document[0]["model"] = model
    [point] = points(read(written(document), as_of=RUN_DAY))
    assert point.model == key


def test_frameworks_take_the_ledgers_names_and_dp_attention_sets_dp():
    document = rows()
    document[0] |= {"framework": "sglang-disagg", "dp_attention": "true"}
    document[1] |= {"framework": "dynamo-trtllm", "pp": 2}
    document[2] |= {"framework": "trt", "image": "lmsysorg/sglang@sha256:abcd"}
    first, second, third = points(read(written(document), as_of=RUN_DAY))

    assert (first.framework, first.disaggregated, first.dp) == ("mori-sglang", True, 8)
    assert (second.framework, second.gpus) == ("dynamo-trt-llm", 16)  # tp 8 x pp 2
    assert (third.framework, third.framework_version) == ("trt-llm", None)


# ---------------------------------------------------------------- bad rows, one by one


@pytest.mark.parametrize(("change", "field", "says"), [
    ({"hw": None}, "hw", "no hw"),
    ({"hw": ""}, "hw", "no hw"),
    ({"output_tput_per_gpu": "fast"}, "output_tput_per_gpu", "not a number"),
    ({"output_tput_per_gpu": -3.5}, "output_tput_per_gpu", "not a positive number"),
    ({"output_tput_per_gpu": 0}, "output_tput_per_gpu", "not a positive number"),
    ({"output_tput_per_gpu": float("nan")}, "output_tput_per_gpu", "not a finite number"),
    ({"output_tput_per_gpu": 10**400}, "output_tput_per_gpu", "not a finite number"),
    ({"output_tput_per_gpu": None}, "output_tput_per_gpu", "only the total tput_per_gpu"),
    ({"median_ttft": -0.1}, "median_ttft", "not a positive number"),
    ({"infmax_model_prefix": "llama4maverick", "model": "meta/Llama-4-Maverick"},
     "infmax_model_prefix", "unknown model"),
    ({"infmax_model_prefix": None, "model": None}, "infmax_model_prefix", "no "),
    ({"conc": 0}, "conc", "between 1 and"),
    ({"isl": "1k"}, "isl", "not a whole number"),
    ({"tp": 2**40}, "tp", "between 1 and"),
    ({"disagg": "maybe"}, "disagg", "not true or false"),
    ({"precision": 4}, "precision", "not a name"),
    ({"framework": None}, "framework", "no framework"),
])
def test_a_bad_value_rejects_its_row_alone_naming_line_field_and_pointer(change, field, says):
    document = rows()
    document[1] |= change
    parsed = read(written(document), as_of=RUN_DAY)

    assert [p.concurrency for p in points(parsed)] == [4, 64]  # the other rows are kept
    [rejected] = parsed.rejected
    assert rejected.field == field
    assert rejected.reason.startswith(f"/1/{field}: ") and says in rejected.reason
    assert 52 <= rejected.line <= 101  # inside the second row
    assert '"hw"' in rejected.raw_text  # the whole row, for review
    assert parsed.read == len(points(parsed)) + len(parsed.rejected) == 3


def test_a_nested_metric_is_pointed_at_inside_metrics():
    document = json.loads(sample(PUBLISHED).read_text())
    document[2]["metrics"]["output_tput_per_gpu"] = "n/a"
    [rejected] = read(written(document)).rejected
    assert rejected.reason.startswith("/2/metrics/output_tput_per_gpu: ")
    assert rejected.field == "output_tput_per_gpu"


def test_an_element_that_is_not_an_object_is_a_rejected_row():
    document = [*rows(), "oops", [1, 2]]
    parsed = read(written(document), as_of=RUN_DAY)
    assert [(r.field, r.reason) for r in parsed.rejected] == [
        ("row", "/3: a result row is str, not an object"),
        ("row", "/4: a result row is list, not an object")]
    assert parsed.read == 5


# ---------------------------------------------------------------- unusable files


@pytest.mark.parametrize(("data", "says"), [
    (AGG, "malformed JSON"),  # cut short, below
    (b"[" * 200 + b"]" * 200, "nested deeper"),
    (b'"hw conc tput_per_gpu"', "expected a JSON array"),
    (b"\xff\xfe[]", "not UTF-8"),
    (b"  ", "empty file"),
])
def test_a_file_that_is_not_readable_json_is_rejected_whole(data, says):
    data = data if isinstance(data, bytes) else sample(data).read_bytes()[:-40]
    with pytest.raises(AdapterError, match=says):
        read(data, as_of=RUN_DAY)


def test_more_rows_than_the_limit_is_a_rejected_file():
    limits = InputLimits(max_rows_per_file=2)
    with pytest.raises(AdapterError, match="more than 2 rows"):
        parse("agg_bmk.json", sample(AGG).read_bytes(),
              AdapterOptions(as_of=RUN_DAY, limits=limits))
