"""Hostile and careless input to the adapters: a file nested 100,000 deep is a rejected file, a
number beyond 64 bits or no time at all is a rejected row naming its field, and no bytes make
a reader raise anything but AdapterError (issue 15)."""

from __future__ import annotations

import json
import math
import time
from datetime import date
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipelines.inputs.adapters import mlperf, nccl_tests
from pipelines.inputs.adapters.base import AdapterError, AdapterOptions, Parsed
from pipelines.inputs.adapters.epoch import estimated_families, price_is_estimate
from pipelines.inputs.adapters.guards import INT64_MAX, json_depth_problem, storable, whole
from pipelines.inputs.adapters.registry import read_file
from pipelines.inputs.limits import InputLimits
from tests.conftest import examples
from tests.support.shared_data import fixture_path

# Real files the tests change (shared copies: the project keeps none).
NCCL_JSON = ("nccl", "json_h200_single_node.json")
NCCL_TEXT = ("nccl", "d_cputime_timestamp_h100.txt")
MLPERF_LOG = ("mlperf", "training_v4.0_NVIDIA_eos_n8_gnn_result_0.txt")
DEEP = "[" * 100_000 + "]" * 100_000
OPTIONS = AdapterOptions(item="nvlink-4", as_of=date(2026, 1, 5))


@cache
def text_of(parts: tuple[str, ...]) -> str:
    return fixture_path(*parts).read_text()


def points(parsed: Parsed) -> int:
    return sum(len(run.points) for run in parsed.runs)


def nccl_json(**changes) -> bytes:
    """The -J fixture with its first results element changed."""
    document = json.loads(text_of(NCCL_JSON))
    document["results"][0] |= changes
    return json.dumps(document).encode()


# ---------------------------------------------------------------- nesting depth


@pytest.mark.parametrize("text, depth", [
    ('{"a": [1, {"b": []}]}', 4),
    ('{"a": "[[[[[[[[", "b": "\\"[[[["}', 1),  # brackets inside strings are text
    ('[[["unclosed string [[[[[[[[', 3),
])
def test_depth_is_counted_over_structure_only(text, depth):
    assert json_depth_problem(text, depth) is None
    assert json_depth_problem(text, depth - 1) is not None


def test_the_depth_refusal_names_the_line_where_the_limit_is_passed():
    line, reason = json_depth_problem('{\n"a":\n' + DEEP + "}", 64)
    assert line == 3 and "deeper than 64 levels" in reason


@pytest.mark.parametrize("name, data", [
    ("run.json", ('{"nccl_version": 22807, "results": [' + DEEP + "]}").encode()),
    ("system.json", ('{"system_name": "x", "number_of_nodes": "1", "a": ' + DEEP + "}").encode()),
])
def test_json_nested_100000_deep_is_a_rejected_file_not_a_recursion_error(name, data):
    with pytest.raises(AdapterError, match="nested deeper than 64 levels") as error:
        read_file(name, data, AdapterOptions())
    assert error.value.line == 1


def test_the_depth_limit_is_the_setting():
    data = b'{"nccl_version": 22807, "results": [[[[1]]]]}'
    with pytest.raises(AdapterError, match="deeper than 3 levels"):
        nccl_tests.parse("run.json", data, AdapterOptions(limits=InputLimits(json_max_depth=3)))


def test_a_deep_mllog_event_is_a_rejected_line_and_the_log_is_still_read():
    deep = ':::MLLOG {"key": "eval_accuracy", "value": ' + DEEP + "}"
    lines = text_of(MLPERF_LOG).splitlines()
    data = "\n".join([*lines[:5], deep, *lines[5:]]).encode()

    parsed = mlperf.parse("result_0.txt", data, AdapterOptions())

    [rejected] = parsed.rejected
    assert (rejected.line, rejected.field) == (6, "row")
    assert "nested deeper than 64 levels" in rejected.reason
    assert parsed.runs and parsed.runs[0].duration_s is not None


def test_a_number_of_5000_digits_is_a_rejected_file():
    with pytest.raises(AdapterError, match="cannot be read as JSON"):
        nccl_tests.parse("run.json", nccl_json(size=0).replace(b'"size": 0', b'"size": '
                                                              + b"9" * 5000), OPTIONS)


# ---------------------------------------------------------------- 64-bit integers


@pytest.mark.parametrize("field, value", [
    ("size", 10**30), ("count", 2**63),
    ("out_of_place", {"time": 1.0, "alg_bw": 1.0, "bus_bw": 1.0, "nwrong": 1e30}),
])
def test_a_json_integer_beyond_64_bits_is_a_rejected_row_and_the_rest_lands(field, value):
    parsed = nccl_tests.parse("run.json", nccl_json(**{field: value}), OPTIONS)

    [rejected] = parsed.rejected
    assert rejected.field == (field if field != "out_of_place" else "out_of_place.nwrong")
    assert rejected.line == 1 and "beyond a 64-bit integer" in rejected.reason
    assert points(parsed) == 3 and len(parsed.pack.rows) == 1


def test_a_27_digit_size_in_a_text_log_is_a_rejected_row_and_the_rest_lands():
    data = text_of(NCCL_TEXT).replace("  1073741824     268435456",
                                      "  123456789012345678901234567 1", 1).encode()
    parsed = nccl_tests.parse("all_reduce_perf.log", data, OPTIONS)

    [rejected] = parsed.rejected
    assert (rejected.line, rejected.field) == (19, "size")
    assert "123456789012345678901234567 is beyond a 64-bit integer" in rejected.reason
    assert points(parsed) == 3 and len(parsed.pack.rows) == 1


@pytest.mark.parametrize("cell", ["1²", "٣", "9" * 5000])
def test_a_size_python_would_misread_is_a_rejected_row(cell):
    data = text_of(NCCL_TEXT).replace("  1073741824  ", f"  {cell}  ", 1).encode()
    parsed = nccl_tests.parse("all_reduce_perf.log", data, OPTIONS)
    assert [r.field for r in parsed.rejected] == ["size"]


def test_a_wrong_count_and_a_root_beyond_their_columns_are_rejected_rows():
    text = text_of(NCCL_TEXT).replace("431.52       0", "431.52   1e+30", 1).replace(
        "458.33       0  8207", "458.33       0  8207", 1)
    text = text.replace("    sum      -1  8199", "    sum 99999999999  8199", 1)
    parsed = nccl_tests.parse("all_reduce_perf.log", text.encode(), OPTIONS)
    assert [(r.line, r.field) for r in parsed.rejected] == [(19, "#wrong"), (20, "root")]


def test_preamble_numbers_beyond_any_count_are_not_a_crash():
    huge = "9" * 5000
    text = (f"$ mpirun -np 8 ./build/all_reduce_perf -e 1{'0' * 400}G\n"
            + text_of(NCCL_TEXT).split("\n", 1)[1]
            .replace("nThread 1 nGpus 1", f"nThread {10**30} nGpus 1")
            .replace("nccl-library=22803", f"nccl-library={huge}")
            .replace("Out of bounds values : 0", f"Out of bounds values : {huge}")
            .replace("Avg bus bandwidth    : 459.261", "Avg bus bandwidth    : 1e999"))
    parsed = nccl_tests.parse("all_reduce_perf.log", text.encode(), OPTIONS)

    [run] = storable(parsed).runs
    assert run.ranks == 8  # the device lines count the ranks, not nThread
    assert run.metadata["parameters"]["nThread"] == str(10**30)  # as written, metadata only
    assert run.metadata["out_of_bounds_values"] == huge
    json.dumps(run.metadata, allow_nan=False)  # valid JSON: raises on inf or NaN


def test_an_implausible_rank_count_is_not_recorded():
    document = json.loads(text_of(NCCL_JSON))
    document["config"]["nthreads"] = 10**30
    parsed = nccl_tests.parse("run.json", json.dumps(document).encode(), OPTIONS)
    assert parsed.runs[0].ranks is None and parsed.runs[0].gpus_per_node is None
    assert any("not a plausible rank count" in note for note in parsed.notes)


@pytest.mark.parametrize("text, maximum, expected", [
    ("9223372036854775807", INT64_MAX, INT64_MAX), ("9223372036854775808", INT64_MAX, None),
    ("0000000000000000000000001", INT64_MAX, 1), ("1" * 5000, INT64_MAX, None),
    ("12", 10, None), ("-1", INT64_MAX, None), ("²", INT64_MAX, None),
])
def test_whole_reads_ascii_digits_within_a_bound_and_never_raises(text, maximum, expected):
    assert whole(text, maximum) == expected


# ---------------------------------------------------------------- MLPerf numbers


@pytest.mark.parametrize("time_ms", ["NaN", "Infinity", "-Infinity", "1e300", "1e20"])
def test_a_run_start_with_no_usable_time_is_a_rejected_row(time_ms):
    lines = text_of(MLPERF_LOG).splitlines()
    at = next(i for i, line in enumerate(lines) if '"key": "run_start"' in line)
    event = json.loads(lines[at].split(":::MLLOG", 1)[1])
    lines[at] = ":::MLLOG " + json.dumps(event).replace(
        f'"time_ms": {event["time_ms"]}', f'"time_ms": {time_ms}')

    parsed = mlperf.parse("result_0.txt", "\n".join(lines).encode(), AdapterOptions())

    assert ("run_start", at + 1) in {(r.field, r.line) for r in parsed.rejected}
    assert parsed.runs[0].started_at is None and parsed.runs[0].duration_s is None


def test_a_node_count_beyond_any_column_is_a_rejected_row():
    document = json.loads(text_of(("mlperf",
                                   "training_v5.1_NVIDIA_tyche_ngpu8_ngc25.09_nemo.json")))
    document["number_of_nodes"] = str(10**30)
    parsed = mlperf.parse("system.json", json.dumps(document, indent=1).encode(), OPTIONS)
    [rejected] = [r for r in parsed.rejected if r.field == "number_of_nodes"]
    assert "not a plausible count" in rejected.reason
    assert {r.fields["metric"] for r in parsed.pack.rows} >= {"gpus_per_node", "hbm_capacity"}


def test_nan_in_run_metadata_is_stored_as_valid_json():
    document = json.loads(text_of(NCCL_JSON))
    document["config"]["warmup_iters"] = math.nan
    document["average_bus_bandwidth"]["bandwidth"] = math.inf
    parsed = read_file("run.json", json.dumps(document).encode(), OPTIONS)
    metadata = json.loads(json.dumps(parsed.runs[0].metadata, allow_nan=False))
    assert metadata["parameters"]["warmup_iters"] == "nan"
    assert metadata["avg_bus_bandwidth"] == "inf"


# ---------------------------------------------------------------- time: no regex backtracking


def _seconds(read, *args) -> float:
    started = time.monotonic()
    read(*args)
    return time.monotonic() - started


@pytest.mark.parametrize("notes", ["TDP estimated = " + " " * 100_000 + "x",
                                   "we use " * 20_000, "price = " + "~ " * 50_000 + "x"])
def test_hostile_epoch_notes_are_read_in_linear_time(notes):
    assert _seconds(estimated_families, notes) + _seconds(price_is_estimate, notes) < 2


def test_hostile_nccl_preamble_lines_are_read_in_linear_time():
    text = text_of(NCCL_TEXT).replace("NVIDIA H100 80GB HBM3\n",
                                      "NVIDIA" + " " * 200_000 + "H100\n", 1)
    text = text.replace("validation: 1", "validation: 1 " + "a_" * 100_000, 1)
    assert _seconds(nccl_tests.parse, "all_reduce_perf.log", text.encode(), OPTIONS) < 2


# ---------------------------------------------------------------- properties


def _mutations(text: str) -> st.SearchStrategy[str]:
    """The text with a slice replaced by arbitrary characters (digits, brackets, NULs...)."""
    alphabet = st.sampled_from("0123456789[]{}\":,.-+eE \n\r\x1c\u2028\x00²Infa")
    pieces = st.text(alphabet=alphabet, max_size=40)
    return st.tuples(st.integers(0, len(text)), st.integers(0, 40), pieces).map(
        lambda m: text[:m[0]] + m[2] + text[m[0] + m[1]:])


def _read_or_refuse(name: str, data: bytes) -> None:
    """AdapterError, or rows whose rejections name a field and a line of the file, and runs
    the ledger can store."""
    try:
        parsed = read_file(name, data, OPTIONS)
    except AdapterError:
        return
    lines = data.count(b"\n") + 1
    assert all(r.field and (r.line is None or 1 <= r.line <= lines) for r in parsed.rejected)
    for run in parsed.runs:
        json.dumps(run.metadata, allow_nan=False)
        assert all(-INT64_MAX - 1 <= p.size_bytes <= INT64_MAX for p in run.points)


FAST = settings(max_examples=examples(150), deadline=None,
                suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(st.deferred(lambda: _mutations(text_of(NCCL_TEXT))))
def test_a_mutated_text_log_is_read_or_refused_never_a_crash(text):
    _read_or_refuse("all_reduce_perf.log", text.encode())


@FAST
@given(st.deferred(lambda: _mutations(text_of(NCCL_JSON))))
def test_a_mutated_json_run_is_read_or_refused_never_a_crash(text):
    _read_or_refuse("run.json", text.encode())


@FAST
@given(st.deferred(lambda: _mutations(text_of(MLPERF_LOG)[:6000])))
def test_a_mutated_mlperf_log_is_read_or_refused_never_a_crash(text):
    _read_or_refuse("result_0.txt", text.encode())


@FAST
@given(st.binary(max_size=300))
def test_arbitrary_bytes_are_read_or_refused_never_a_crash(data):
    for name in ("run.json", "all_reduce_perf.log", "result_0.txt"):
        _read_or_refuse(name, data)
