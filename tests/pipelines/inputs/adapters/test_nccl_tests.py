"""nccl-tests adapter: one real (or faithfully reconstructed) log per layout; see
the shared nccl README for where each comes from and which lines are reconstructed."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from models.bulk_rows import validate_rows
from models.observations import CleanObservation
from pipelines.inputs.adapters.base import AdapterError, AdapterOptions, NcclPoint, Parsed
from pipelines.inputs.adapters.nccl_tests import detect, parse
from tests.support.shared_data import fixture_path

LEGACY = "a_legacy_allreduce_v100_2node.txt"  # A: nccl-tests#107, 2 nodes x 1 V100
LEGACY_TWO_RUNS = "a_legacy_concatenated.txt"  # A: nccl#340 + nccl-tests#82 in one log
A3_MEGA = "b_a3mega_h100_2node.txt"  # B: 2 x 8 H100, byte-for-byte
EFA = "b_prime_efa_g5.txt"  # B': `[1,0]<stdout>:` labels, NCCL INFO lines
GB10_ALLGATHER = "c_gb10_allgather_2node.txt"  # C: 2025 preamble
SENDRECV = "d_sendrecv_na_a100.txt"  # D: sendrecv in-place #wrong `N/A`
CPUTIME = "d_cputime_timestamp_h100.txt"  # D: -C 1 (cputime) and -S 1 (timestamp)
PER_ITERATION = "d_per_iteration_a100.txt"  # D: i_min i_max i_p99 i_cv% per side
JSON_RUN = "json_h200_single_node.json"  # -J
TRUNCATED = "truncated_c_gb10_allreduce.txt"  # cut in the middle of a row, no footer
GARBLED = "garbled_intel_mpi_h100_2node.txt"  # Intel MPI `[0]` labels, rows split by INFO lines
ALL = [LEGACY, LEGACY_TWO_RUNS, A3_MEGA, EFA, GB10_ALLGATHER, SENDRECV, CPUTIME, PER_ITERATION,
       JSON_RUN, TRUNCATED, GARBLED]
TODAY = date(2026, 11, 22)


def sample(name: str) -> Path:
    """An nccl-tests output the tests read (a shared copy: the project keeps none)."""
    return fixture_path("nccl", name)


def read(name: str, **options) -> Parsed:
    return parse(name, sample(name).read_bytes(), AdapterOptions(**options))


def points(parsed: Parsed) -> list[NcclPoint]:
    return [point for run in parsed.runs for point in run.points]


def at_size(parsed: Parsed, size: int) -> NcclPoint:
    return next(p for p in points(parsed) if p.size_bytes == size)


def validated(parsed: Parsed, metrics) -> list[CleanObservation]:
    """The summary rows as the ingest validates them (unit, bounds, dates)."""
    clean, errors = validate_rows(
        [(r.line, r.fields) for r in parsed.pack.rows], metrics=metrics,
        items={r.fields["item"] for r in parsed.pack.rows},
        sources={s.key for s in parsed.pack.sources}, today=TODAY)
    assert errors == []
    return clean


# ---------------------------------------------------------------- detect and accounting


@pytest.mark.parametrize("name", ALL)
def test_detect_knows_every_layout_by_its_content(name):
    assert detect("run.out", sample(name).read_bytes()) == "nccl-tests"


@pytest.mark.parametrize("data", [
    b"source,item,metric,value,unit,as_of,status\nacme,h100-sxm5,tdp,700,W,2023,C\n",
    b"Hardware name,Manufacturer,Type,Release date,Memory bandwidth (byte/s)\n",
    b'{"results": [{"size": 8}], "benchmark": "resnet"}',
    b':::MLLOG {"namespace": "", "key": "run_start", "value": null}\n',
    b"",
])
def test_detect_leaves_other_files_alone(data):
    assert detect("all_reduce_perf.csv", data) is None


@pytest.mark.parametrize("name", ALL)
def test_every_row_read_is_a_point_a_pack_row_or_a_rejection(name):
    parsed = read(name)
    assert parsed.read == len(points(parsed)) + len(parsed.pack.rows) + len(parsed.rejected)
    assert parsed.format == "nccl-tests"
    assert all(run.kind == "nccl-tests" for run in parsed.runs)


# ---------------------------------------------------------------- layout A (legacy)


def test_legacy_allreduce_reads_the_error_float_as_no_wrong_count():
    parsed = read(LEGACY)
    [run] = parsed.runs
    [point] = run.points
    assert point == NcclPoint(
        line=11, collective="all_reduce", size_bytes=1310720000, count=327680000, dtype="float",
        redop="sum", root=None, oop_time_us=1213630.0, oop_algbw=1.08, oop_busbw=1.08,
        oop_wrong=None, ip_time_us=1221847.0, ip_algbw=1.07, ip_busbw=1.07, ip_wrong=None)
    assert run.metadata["layout"] == "legacy"
    assert run.metadata["legacy_error_max"] == 0.0  # kept: the max deviation the run reported
    assert run.metadata["avg_bus_bandwidth"] == 1.07535
    assert run.metadata["parameters"]["step"] == "1048576(bytes)"
    assert (run.ranks, run.nodes, run.gpus_per_node) == (2, 2, 1)
    assert run.device == "Tesla V100-SXM2-16GB" and run.nccl_version is None
    assert "-b 1250M -e 1250M" in run.metadata["command"]
    assert not run.metadata["command"].startswith("ih@")  # the shell prompt is not the command
    assert parsed.skipped_lines == 13  # every other line: command, comments, devices, footer


def test_legacy_two_run_log_gives_two_runs_and_names_what_the_header_cannot_tell():
    parsed = read(LEGACY_TWO_RUNS)
    first, second = parsed.runs
    # nccl#340: no command, a header with neither redop nor root: all_gather? alltoall?
    assert first.collective == "unknown" and len(first.points) == 12
    assert any("neither redop nor root" in note for note in parsed.notes)
    assert at_size(parsed, 134217728).ip_busbw == 21.86
    assert first.metadata["avg_bus_bandwidth"] == 6.6972
    # nccl-tests#82: broadcast_perf, `root` column, -c 0 so the error column says N/A
    assert second.collective == "broadcast"
    [point] = second.points
    assert (point.line, point.root, point.redop, point.oop_wrong) == (34, 0, None, None)
    assert second.nccl_version == "2.9.6" and second.metadata["nccl_build"] == "+cuda11.2"
    assert second.metadata["algorithm"] == "Ring"  # -x NCCL_ALGO=Ring on the command line
    assert second.device == "Tesla V100-PCIE-16GB" and second.nodes == 2


def test_a_run_that_stopped_before_its_large_sizes_gives_no_peak():
    parsed = read(LEGACY_TWO_RUNS, item="ib-edr", as_of=date(2021, 5, 11))
    rejected = {r.line: r for r in parsed.rejected}
    assert rejected[34].field == "busbw"
    assert "stopped at 8 B" in rejected[34].reason and "2147483648" in rejected[34].reason
    # the first run is complete and, with --item and --as-of, gives its summary
    [row] = parsed.pack.rows
    assert (row.line, row.fields["value"], row.fields["item"]) == (15, 21.86, "ib-edr")


# ---------------------------------------------------------------- layout B


def test_current_layout_points_and_topology_from_the_device_lines():
    parsed = read(A3_MEGA)
    [run] = parsed.runs
    assert len(run.points) == 31 and run.collective == "all_reduce"
    largest = at_size(parsed, 8589934592)
    assert (largest.line, largest.count, largest.redop, largest.root) == (62, 2147483648, "sum",
                                                                         None)
    assert (largest.oop_time_us, largest.oop_algbw, largest.oop_busbw) == (47535, 180.71, 338.82)
    assert (largest.ip_time_us, largest.ip_busbw, largest.ip_wrong) == (47743, 337.35, 0)
    assert (run.ranks, run.nodes, run.gpus_per_node) == (16, 2, 8)
    assert run.device == "NVIDIA H100 80GB HBM3"
    assert run.metadata["devices"][8] == {"rank": 8, "group": 0, "pid": 6733,
                                          "host": "ztan-mig-gq73", "device": 0,
                                          "bus_id": "0000:04:00", "name": "NVIDIA H100 80GB HBM3"}
    assert run.metadata["command"].startswith("mpirun -v --mca btl self,tcp")
    assert run.metadata["command"].endswith("all_reduce_perf -b 8 -e 8G -f 2 -g 1")
    assert (run.metadata["out_of_bounds_values"], run.metadata["avg_bus_bandwidth"]) == (0, 70.742)
    assert parsed.skipped_lines == 64 - 31


def test_a_multi_node_run_needs_the_fabric_named():
    parsed = read(A3_MEGA)
    assert parsed.pack.rows == [] and parsed.runs[0].item is None
    [rejected] = parsed.rejected
    assert (rejected.line, rejected.field) == (62, "item")
    assert "a 2-node run measures the scale-out fabric" in rejected.reason
    assert "--item" in rejected.reason and "--as-of" in rejected.reason
    assert rejected.raw_text.split()[0] == "8589934592"


def test_with_item_and_date_the_peak_at_large_messages_becomes_an_observation(metrics):
    parsed = read(A3_MEGA, item="gcp-a3-mega-tcpxo", as_of=date(2024, 9, 1))
    [row] = parsed.pack.rows
    [source] = parsed.pack.sources
    assert (row.line, row.column) == (62, "busbw")
    assert row.fields == {
        "source": source.key, "item": "gcp-a3-mega-tcpxo", "metric": "busbw_measured",
        "value": 338.82, "unit": "GB/s", "as_of": date(2024, 9, 1), "status": "C",
        "value_kind": "measured",
        "quote": "nccl-tests all_reduce_perf, 2 nodes x 8 GPUs (NVIDIA H100 80GB HBM3): peak "
                 "busbw 338.82 GB/s at 8589934592 B (out-of-place); avg bus bandwidth 70.742 GB/s"}
    assert source.key.startswith("nccl-tests-") and len(source.key) == len("nccl-tests-") + 12
    assert (source.kind, source.published_on) == ("measurement", None)
    assert source.title == "nccl-tests all_reduce_perf run, 2 x 8 NVIDIA H100 80GB HBM3"
    assert parsed.runs[0].item == "gcp-a3-mega-tcpxo"
    [clean] = validated(parsed, metrics)
    assert (clean.value, clean.unit_written) == (338.82, "GB/s")


# ---------------------------------------------------------------- layout B' (launcher labels)


def test_openmpi_tagged_output_is_read_and_info_lines_are_skipped():
    parsed = read(EFA)
    [run] = parsed.runs
    assert [p.size_bytes for p in run.points] == [262144, 524288, 1048576, 2097152, 4194304]
    assert at_size(parsed, 4194304).ip_busbw == 2.51 and at_size(parsed, 4194304).line == 11
    assert run.nccl_version == "2.12.7" and run.metadata["avg_bus_bandwidth"] == 1.15327
    assert (run.ranks, run.nodes, run.device) == (None, None, None)  # no device lines
    assert parsed.skipped_lines == 8  # 2 INFO, version, 2 header lines, 2 `...`, footer
    assert any("elided" in note and "6, 12" in note for note in parsed.notes)
    [rejected] = parsed.rejected
    assert rejected.field == "item" and "lists no devices" in rejected.reason


@pytest.mark.parametrize(("cell", "garbled", "column"), [
    ("2.40      0", "2.4O      0", "busbw"),  # a letter O for a zero
    ("1745.4", "  -nan", "time"),
])
def test_a_garbled_cell_is_rejected_under_its_column(cell, garbled, column):
    data = sample(EFA).read_bytes().replace(cell.encode(), garbled.encode(), 1)
    parsed = parse(EFA, data, AdapterOptions())
    assert len(points(parsed)) == 4
    bad = next(r for r in parsed.rejected if r.field == column)
    assert bad.line == 11 and "out-of-place" in bad.reason and garbled.split()[0] in bad.reason
    assert bad.raw_text.startswith("[1,0]<stdout>:     4194304")


def test_slurm_labels_are_stripped():
    # ROCm/rccl#1490: `srun --label` output (4 nodes x 8 MI250X GCDs).
    text = (
        "srun --nodes=4 --ntasks-per-node=8 --cpus-per-task=8 --threads-per-core=1 --label \\\n"
        "    -- all_gather_perf -b 64K -e 4G -f 2 -g 1\n"
        " 0: #       size         count      type   redop    root     time   algbw   busbw #wrong"
        "     time   algbw   busbw #wrong\n"
        " 0: #        (B)    (elements)                               (us)  (GB/s)  (GB/s)"
        "            (us)  (GB/s)  (GB/s)\n"
        " 0:        65536           512     float    none      -1    107.5    0.61    0.59      0"
        "    105.6    0.62    0.60      0\n"
        " 0:       131072          1024     float    none      -1    210.0    0.62    0.60      0"
        "    202.6    0.65    0.63      0\n")
    parsed = parse("slurm.out", text.encode(), AdapterOptions())
    [run] = parsed.runs
    assert run.collective == "all_gather"
    assert [(p.line, p.size_bytes, p.redop, p.ip_busbw) for p in run.points] == [
        (5, 65536, None, 0.60), (6, 131072, None, 0.63)]
    assert run.metadata["command"].startswith("srun --nodes=4")


# ---------------------------------------------------------------- layout C (2025 preamble)


def test_2025_preamble_names_the_collective_and_the_nccl_library():
    parsed = read(GB10_ALLGATHER)
    [run] = parsed.runs
    [point] = run.points
    assert run.collective == "all_gather"  # from `# Collective test starting: all_gather_perf`
    assert (point.line, point.size_bytes, point.redop, point.root) == (12, 17179869184, None, None)
    assert (point.oop_busbw, point.ip_busbw, point.oop_wrong, point.ip_wrong) == (18.94, 20.95, 0,
                                                                                  0)
    assert run.nccl_version == "2.28.3"  # nccl-library=22803
    assert run.metadata["nccl_tests_version"] == "2.17.6"
    assert run.metadata["concluded"] is True and run.metadata["avg_bus_bandwidth"] == 19.945
    assert (run.ranks, run.nodes, run.gpus_per_node, run.device) == (2, 2, 1, "NVIDIA GB10")


# ---------------------------------------------------------------- layout D (options)


def test_sendrecv_in_place_wrong_count_is_not_given():
    parsed = read(SENDRECV)
    [run] = parsed.runs
    assert run.collective == "sendrecv" and len(run.points) == 4
    point = at_size(parsed, 1073741824)
    assert (point.line, point.oop_wrong, point.ip_wrong, point.ip_busbw) == (9, 0, None, 195.56)
    # one process without a launcher, -g 8: 8 ranks on one host
    assert (run.ranks, run.nodes, run.gpus_per_node, run.device) == (8, 1, 8, None)
    [rejected] = parsed.rejected
    assert rejected.field == "item" and "names no GPU model" in rejected.reason


def test_cputime_and_timestamp_columns_date_the_run_and_the_item_is_inferred(metrics):
    parsed = read(CPUTIME)  # no --item, no --as-of: one node of H100 and its own timestamps
    [run] = parsed.runs
    assert run.metadata["time_column"] == "cputime"
    assert at_size(parsed, 8589934592).oop_time_us == 31575.3
    assert (run.started_at, run.finished_at) == (datetime(2025, 11, 4, 9, 12, 31, tzinfo=UTC),
                                                 datetime(2025, 11, 4, 9, 12, 42, tzinfo=UTC))
    assert (run.ranks, run.nodes, run.gpus_per_node) == (8, 1, 8)
    assert run.item == "nvlink-4" and parsed.rejected == []
    [row] = parsed.pack.rows
    assert (row.line, row.fields["item"], row.fields["value"]) == (22, "nvlink-4", 476.08)
    assert row.fields["as_of"] == date(2025, 11, 4)
    assert parsed.pack.sources[0].published_on == date(2025, 11, 4)
    validated(parsed, metrics)


def test_per_iteration_columns_are_named_and_ignored():
    parsed = read(PER_ITERATION, as_of=date(2026, 3, 2))
    [run] = parsed.runs
    assert run.metadata["ignored_columns"] == ["i_cv%", "i_max", "i_min", "i_p99"]
    point = at_size(parsed, 1073741824)
    assert (point.line, point.oop_time_us, point.oop_busbw, point.ip_busbw) == (21, 4042.70,
                                                                                232.40, 233.18)
    assert run.collective == "all_gather" and run.item == "nvlink-3"
    [row] = parsed.pack.rows
    assert (row.fields["value"], row.fields["as_of"], row.fields["item"]) == (233.18,
                                                                              date(2026, 3, 2),
                                                                              "nvlink-3")
    assert "(in-place)" in row.fields["quote"]


# ---------------------------------------------------------------- -J JSON


def test_json_run_is_preferred_and_dated_by_its_start_time(metrics):
    parsed = read(JSON_RUN)
    [run] = parsed.runs
    assert run.collective == "all_reduce" and len(run.points) == 4
    assert (run.started_at, run.finished_at) == (datetime(2025, 11, 21, 10, 15, 2, tzinfo=UTC),
                                                 datetime(2025, 11, 21, 10, 15, 40, tzinfo=UTC))
    # one device entry per process: 1 process x nthreads 1 x ngpus 8
    assert (run.ranks, run.nodes, run.gpus_per_node, run.device) == (8, 1, 8, "NVIDIA H200")
    assert run.nccl_version == "2.28.7"
    point = at_size(parsed, 8589934592)
    assert (point.root, point.redop, point.oop_busbw, point.ip_wrong) == (None, "sum", 479.52, 0)
    assert run.metadata["nccl_env"] == ["NCCL_DEBUG=WARN"]  # not PATH, HOME or the rest
    assert run.metadata["avg_bus_bandwidth"] == 463.365
    assert run.metadata["command"].startswith("./build/all_reduce_perf -b 1G")
    [row] = parsed.pack.rows
    assert (row.line, row.column, row.fields["item"]) == (1, "bus_bw", "nvlink-4")
    assert row.fields["as_of"] == date(2025, 11, 21) and row.fields["value"] == 479.52
    assert row.raw_text.startswith('{"size":8589934592,')
    assert parsed.skipped_lines == 0
    validated(parsed, metrics)


def test_pretty_printed_json_points_carry_their_lines():
    document = json.loads(sample(JSON_RUN).read_text())
    text = json.dumps(document, indent=2)
    parsed = parse("h200.json", text.encode(), AdapterOptions())
    lines = [p.line for p in points(parsed)]
    assert lines == sorted(lines) and len(set(lines)) == 4
    assert text.splitlines()[lines[-1] - 1].strip() == "{"
    assert parsed.pack.rows[0].line == lines[-1]


def test_json_results_without_a_measurement_are_rejected_by_key():
    document = json.loads(sample(JSON_RUN).read_text())
    document["results"][0]["out_of_place"] = None  # what a trace replay writes
    document["results"][1]["in_place"]["bus_bw"] = "nan"  # util.cu writes NaN as "nan"
    document["results"][2]["tuning"] = {"algo": "NVLS", "proto": "Simple"}
    parsed = parse("h200.json", json.dumps(document).encode(), AdapterOptions())
    assert [(r.field, r.line) for r in parsed.rejected] == [("out_of_place", 1),
                                                            ("in_place.bus_bw", 1)]
    assert len(points(parsed)) == 2
    assert parsed.runs[0].metadata["algorithm"] == "NVLS"


def test_a_json_file_cut_short_is_unusable_and_says_where():
    document = json.loads(sample(JSON_RUN).read_text())
    text = json.dumps(document, indent=2)
    with pytest.raises(AdapterError) as error:
        parse("h200.json", text[: len(text) // 2].encode(), AdapterOptions())
    assert error.value.line is not None and error.value.line > 1
    assert "malformed JSON" in error.value.reason


# ---------------------------------------------------------------- truncated and garbled


def test_a_truncated_file_keeps_its_rows_and_rejects_the_cut_line():
    parsed = read(TRUNCATED)
    [run] = parsed.runs
    assert [p.size_bytes for p in run.points] == [8192, 16384, 32768, 65536]
    assert run.nccl_version == "2.31.2" and run.metadata["nccl_tests_version"] == "2.20.0 (b4d5bee)"
    assert run.metadata["footer"] is False
    cut, summary = parsed.rejected
    assert (cut.line, cut.field, cut.raw_text) == (16, "row", "      131072")
    assert "found 1: the line is cut short" in cut.reason
    assert (summary.line, summary.field) == (15, "busbw")
    assert "stopped at 65536 B" in summary.reason
    assert any("no footer" in note for note in parsed.notes)
    assert parsed.skipped_lines == 16 - 4 - 1


def test_garbled_lines_are_rejected_with_their_line_and_the_rest_is_kept():
    parsed = read(GARBLED)
    [run] = parsed.runs
    # Intel MPI's mid-line `[0]` labels are removed, so these rows read whole.
    assert len(run.points) == 10
    assert at_size(parsed, 33554432).oop_busbw == 29.50
    assert at_size(parsed, 1048576).ip_time_us == 2302.3
    assert (run.ranks, run.nodes, run.gpus_per_node) == (16, 2, 8)
    rows = [r for r in parsed.rejected if r.field == "row"]
    assert [r.line for r in rows] == [24, 25, 28, 39]
    reasons = {r.line: r.reason for r in rows}
    assert "size columns are missing" in reasons[24] and "found 4" in reasons[24]
    assert "NCCL log line was printed into the middle of this row" in reasons[25]
    assert "found 8" in reasons[28]
    assert "cut short" in reasons[39]
    assert rows[1].raw_text.startswith("[0]         8192          2048")
    [summary] = [r for r in parsed.rejected if r.field != "row"]
    assert (summary.line, summary.field) == (34, "item")
    assert parsed.skipped_lines == 39 - 10 - 4


# ---------------------------------------------------------------- several runs, item rules


def test_each_run_of_a_log_has_its_own_summary_and_source():
    data = sample(CPUTIME).read_bytes() + sample(PER_ITERATION).read_bytes()
    parsed = parse("both.log", data, AdapterOptions(as_of=date(2026, 3, 2)))
    assert [r.collective for r in parsed.runs] == ["all_reduce", "all_gather"]
    first, second = parsed.pack.rows
    assert (first.fields["item"], first.fields["as_of"]) == ("nvlink-4", date(2025, 11, 4))
    assert (second.fields["item"], second.fields["as_of"]) == ("nvlink-3", date(2026, 3, 2))
    assert second.fields["source"] == first.fields["source"] + "-2"
    assert [s.key for s in parsed.pack.sources] == [first.fields["source"],
                                                    second.fields["source"]]


def single_node_log(device: str) -> bytes:
    """A one-node, one-size all_reduce log (the current layout) on the given GPU."""
    return (
        "# nThread 1 nGpus 1 minBytes 8589934592 maxBytes 8589934592 step: 2(factor) warmup iters:"
        " 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n"
        f"#  Rank  0 Group  0 Pid   6899 on     node-1 device  0 [0000:04:00] {device}\n"
        f"#  Rank  1 Group  0 Pid   6900 on     node-1 device  1 [0000:05:00] {device}\n"
        "#       size         count      type   redop    root     time   algbw   busbw #wrong"
        "     time   algbw   busbw #wrong\n"
        "  8589934592    2147483648     float     sum      -1    47535  180.71  180.71      0"
        "    47743  179.92  179.92      0\n").encode()


@pytest.mark.parametrize(("device", "item"), [
    ("Tesla V100-SXM2-32GB", "nvlink-2"), ("NVIDIA A100-SXM4-40GB", "nvlink-3"),
    ("NVIDIA H100 80GB HBM3", "nvlink-4"), ("NVIDIA H200", "nvlink-4"), ("NVIDIA H800", "nvlink-4"),
    ("NVIDIA H20", "nvlink-4"), ("NVIDIA B200", "nvlink-5"), ("NVIDIA GB200", "nvlink-5"),
    ("NVIDIA B300 SXM6 AC", "nvlink-5"),
    ("NVIDIA H100 PCIe", None), ("NVIDIA A100-PCIE-40GB", None), ("NVIDIA H100 NVL", None),
    ("NVIDIA GeForce RTX 4090", None), ("NVIDIA GB10", None), ("NVIDIA Graphics Device", None),
])
def test_a_single_node_run_names_its_nvlink_generation(device, item):
    parsed = parse("run.log", single_node_log(device), AdapterOptions(as_of=date(2025, 1, 6)))
    assert parsed.runs[0].item == item
    if item is None:
        [rejected] = parsed.rejected
        assert rejected.field == "item" and "--item" in rejected.reason
        assert ("PCIe card" in rejected.reason) == ("PCI" in device or device.endswith("NVL"))
    else:
        assert parsed.pack.rows[0].fields["item"] == item


def test_a_header_printed_twice_by_a_non_mpi_build_is_one_table():
    # nccl-tests#107's preamble: each process of a non-MPI build prints the header.
    header = ("#       size         count      type   redop     time   algbw   busbw  error"
              "     time   algbw   busbw  error\n")
    text = ("# nThread 1 nGpus 1 minBytes 1310720000 maxBytes 1310720000 step: 1048576(bytes)"
            " warmup iters: 5 iters: 20 validation: 1\n"
            "#   Rank  0 Pid   1320 on ip-172-31-20-228 device  0 [0x00] Tesla V100-SXM2-16GB\n"
            + header + header +
            "  1310720000     327680000     float     sum  1213630    1.08    1.08  0e+00  1221847"
            "    1.07    1.07  0e+00\n")
    parsed = parse("run.log", text.encode(), AdapterOptions())
    [run] = parsed.runs
    assert run.device == "Tesla V100-SXM2-16GB" and run.metadata["header_line"] == 4
    assert run.collective == "all_reduce"  # legacy header (redop, no root), count = size / 4
    assert not any("has no rows" in note for note in parsed.notes)


def test_a_second_process_writing_after_the_footer_is_rejected_not_merged():
    # nccl-tests#182: two non-MPI processes writing one log.
    text = (
        "#       size         count      type   redop    root     time   algbw   busbw #wrong"
        "     time   algbw   busbw #wrong\n"
        "   134217728      33554432     float     sum      -1    27666    4.85    4.85      0"
        "    27662    4.85    4.85      0\n"
        "   268435456      67108864     float     sum      -1    55270    4.86    4.86      0"
        "    55213    4.86    4.86      0\n"
        "testgpu1:2832:2832 [1] NCCL INFO comm 0x55c6f1c65b50 rank 0 nranks 2 cudaDev 0 busId 3000"
        " - Destroy COMPLETE\n"
        "# Out of bounds values : 0 OK\n"
        "# Avg bus bandwidth    : 1.7535\n"
        "#\n"
        "\n"
        "   268435456      67108864     float     sum      -1    59440    4.52    4.52      0"
        "    59568    4.51    4.51      0\n"
        "# Out of bounds values : 0 OK\n"
        "# Avg bus bandwidth    : 1.6796\n")
    parsed = parse("run.log", text.encode(), AdapterOptions())
    [run] = parsed.runs
    assert len(run.points) == 2 and run.metadata["avg_bus_bandwidth"] == 1.7535
    stray = next(r for r in parsed.rejected if r.field == "row")
    assert stray.line == 9 and "after the end of the table at line 1" in stray.reason
    assert any("second footer line at line 10" in note for note in parsed.notes)


# ---------------------------------------------------------------- unusable files


@pytest.mark.parametrize("data", [
    b"",
    b"v100-gpu-1:14926:14926 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n"
    b"NCCL version 2.9.6+cuda11.2\n",
    b'{"nccl_version": 22807, "config": {"nthreads": 1}, "results": []}',
])
def test_a_file_without_results_is_unusable(data):
    with pytest.raises(AdapterError):
        parse("run.log", data, AdapterOptions())


def test_a_header_without_rows_is_unusable_and_says_where():
    text = sample(A3_MEGA).read_text().split("           8             2")[0]
    with pytest.raises(AdapterError) as error:
        parse("run.log", text.encode(), AdapterOptions())
    assert error.value.line == 30 and "no rows" in error.value.reason
