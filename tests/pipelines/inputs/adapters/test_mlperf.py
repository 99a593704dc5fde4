"""MLPerf adapter: real system descriptions and training logs from MLCommons' results
repositories (the shared mlperf README says which files and what was trimmed or changed)."""

from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from models.bulk_rows import validate_rows
from pipelines.inputs.adapters.base import AdapterError, AdapterOptions, Parsed
from pipelines.inputs.adapters.mlperf import detect, parse
from tests.support.shared_data import fixture_path

EOS_N8 = "training_v4.0_NVIDIA_eos_n8_ngc24.04_pytorch.json"
TYCHE = "training_v5.1_NVIDIA_tyche_ngpu8_ngc25.09_nemo.json"
DGX_H100 = "inference_v4.1_NVIDIA_DGX-H100_H100-SXM-80GBx8_TRT.json"
BROKEN = "broken_eos_n8_missing_comma.json"
RESNET = "training_v1.0_NVIDIA_dgxa100_resnet_result_0.txt"
GNN = "training_v4.0_NVIDIA_eos_n8_gnn_result_0.txt"
ABORTED = "aborted_dgxh100_n3_unet3d_result_00.txt"
TRUNCATED = "truncated_dgxa100_resnet_result_0.txt"
TRAINING_V40 = date(2024, 6, 12)  # MLPerf Training v4.0 publication date


def sample(name: str) -> Path:
    """An MLPerf file the tests read (a shared copy: the project keeps none)."""
    return fixture_path("mlperf", name)


def read(name: str, **options) -> Parsed:
    return parse(name, sample(name).read_bytes(), AdapterOptions(**options))


def facts(parsed: Parsed) -> dict[str, tuple]:
    """metric -> (value, unit) as the rows carry them."""
    return {r.fields["metric"]: (r.fields["value"], r.fields["unit"]) for r in parsed.pack.rows}


def row(parsed: Parsed, metric: str):
    return next(r for r in parsed.pack.rows if r.fields["metric"] == metric)


def validated(parsed: Parsed, metrics):
    """The rows as the ingest validates them (pint conversion, bounds, bits vs bytes)."""
    return validate_rows([(r.line, r.fields) for r in parsed.pack.rows], metrics=metrics,
                         items={i.key for i in parsed.pack.items},
                         sources={s.key for s in parsed.pack.sources}, today=date(2026, 11, 22))


# ---------------------------------------------------------------- detect


@pytest.mark.parametrize(("name", "kind"), [
    (EOS_N8, "mlperf-system"), (TYCHE, "mlperf-system"), (DGX_H100, "mlperf-system"),
    (BROKEN, "mlperf-system"),  # still ours, so parse() can say where it breaks
    (RESNET, "mlperf-result"), (GNN, "mlperf-result"), (ABORTED, "mlperf-result"),
    (TRUNCATED, "mlperf-result"),
])
def test_detect_names_each_fixture_by_its_content(name, kind):
    assert detect("renamed.dat", sample(name).read_bytes()) == kind


@pytest.mark.parametrize("data", [
    b"#  Rank  0 Group  0 Pid  1 on node0 device  0 [0x1b] NVIDIA H100 80GB HBM3\n",
    b'{"version": "2.17.6", "nccl_version": "2.27.3", "results": []}',
    b'{"system_name": "x", "host_networking": "4x 400 Gb/s"}',  # no node or GPU count
    b"RESULT,IMAGE_CLASSIFICATION,,1771,root,2021-05-15 03:43:35 PM\n",
    b"",
])
def test_detect_leaves_other_files_alone(data):
    assert detect("result_0.txt", data) is None


def test_parse_refuses_a_file_that_is_not_mlperf():
    with pytest.raises(AdapterError, match="not an MLPerf file"):
        parse("notes.txt", b"RESULT,IMAGE_CLASSIFICATION,,1771\n", AdapterOptions())


# ---------------------------------------------------------------- systems JSON


def test_a_training_system_json_gives_its_counts_memory_nvlink_and_nics():
    parsed = read(EOS_N8, as_of=TRAINING_V40)

    assert parsed.format == "mlperf-system"
    assert facts(parsed) == {
        "nodes_per_system": ("8", "count"),
        "gpus_per_node": ("8", "count"),
        "gpus_per_system": (64, "count"),
        "hbm_capacity": ("81559", "MiB"),
        "scaleup_bw_per_gpu_bidir": ("900", "GB/s"),
        "nics_per_node": ("8", "count"),
        "port_rate": ("400", "Gb/s"),
    }
    assert {r.fields["status"] for r in parsed.pack.rows} == {"S"}
    assert {r.fields["as_of"] for r in parsed.pack.rows} == {"2024-06-12"}
    assert parsed.rejected == [] and parsed.runs == []


def test_each_row_points_at_its_json_key_line():
    memory = row(read(EOS_N8, as_of=TRAINING_V40), "hbm_capacity")

    assert (memory.line, memory.column) == (26, "accelerator_memory_capacity")
    assert memory.raw_text == '"accelerator_memory_capacity": "81559 MiB",'
    assert memory.fields["value_kind"] == "reported"
    assert memory.fields["quote"] == \
        '"accelerator_memory_capacity": "81559 MiB" (MLPerf system "Eos_n8", NVIDIA)'


def test_the_system_is_declared_as_the_submitters_claim_published_by_mlcommons():
    parsed = read(EOS_N8, as_of=TRAINING_V40)

    [source], [item] = parsed.pack.sources, parsed.pack.items
    assert (source.key, source.kind) == ("mlperf-closed-nvidia-eos-n8", "vendor_press")
    assert source.publisher == "MLCommons (submitter: NVIDIA)"
    assert source.title == "MLPerf system description: Eos_n8 (NVIDIA, closed)"
    assert (item.key, item.name, item.kind, item.vendor) == \
        ("mlperf-nvidia-eos-n8", "Eos_n8", "system", "NVIDIA")
    assert {r.fields["item"] for r in parsed.pack.rows} == {"mlperf-nvidia-eos-n8"}


def test_an_alias_ties_the_system_to_an_existing_ledger_item():
    parsed = read(DGX_H100, as_of=date(2024, 8, 28),
                  aliases={"NVIDIA DGX H100 (8x H100-SXM-80GB, TensorRT)": "dgx-h100"})

    assert {r.fields["item"] for r in parsed.pack.rows} == {"dgx-h100"}
    assert parsed.pack.sources[0].key == \
        "mlperf-closed-nvidia-nvidia-dgx-h100-8x-h100-sxm-80gb-tensorrt"


def test_memory_keeps_the_unit_written_and_pint_converts_mib_not_gb(metrics):
    eos = read(EOS_N8, as_of=TRAINING_V40)
    dgx = read(DGX_H100, as_of=date(2024, 8, 28))

    assert facts(eos)["hbm_capacity"] == ("81559", "MiB")
    assert facts(dgx)["hbm_capacity"] == ("80", "GB")
    [eos_hbm] = [o for o in validated(eos, metrics)[0] if o.metric == "hbm_capacity"]
    [dgx_hbm] = [o for o in validated(dgx, metrics)[0] if o.metric == "hbm_capacity"]
    assert eos_hbm.value == pytest.approx(85.52, abs=0.01)  # 81559 MiB = 85.5 GB, not 81.6
    assert (eos_hbm.value_written, eos_hbm.unit_written) == ("81559", "MiB")
    assert dgx_hbm.value == 80


@pytest.mark.parametrize(("name", "gbps", "written"), [
    (EOS_N8, "900", "NVLINK Gen4 900 GB/s + NVSWITCH Gen3"),
    (TYCHE, "1800", "NVLINK Gen5 1800 GB/s + NVSWITCH Gen5"),
    (DGX_H100, "900", "18x 4th Gen NVLink, 900GB/s"),
])
def test_nvlink_bandwidth_is_per_gpu_both_directions_and_the_quote_says_so(name, gbps, written):
    nvlink = row(read(name, as_of=TRAINING_V40), "scaleup_bw_per_gpu_bidir")

    assert (nvlink.fields["value"], nvlink.fields["unit"]) == (gbps, "GB/s")
    assert nvlink.column == "accelerator_interconnect"
    assert f'"accelerator_interconnect": "{written}"' in nvlink.fields["quote"]
    assert "total of both directions" in nvlink.fields["quote"]
    assert f"{int(gbps) / 2:g} GB/s each way" in nvlink.fields["quote"]


def test_nics_come_from_the_compute_group_when_networking_lists_several():
    nics = row(read(EOS_N8, as_of=TRAINING_V40), "nics_per_node")

    # "Storage: 2x ... 400Gb/s, Compute: 8x ... 400Gb/s, Management: 100Gb/s Ethernet NIC"
    assert nics.fields["value"] == "8"
    assert 'read from "Compute: 8x ConnectX-7 IB NDR 400Gb/s"' in nics.fields["quote"]


def test_nics_and_rate_read_from_a_single_group_or_the_inference_card_count():
    tyche = facts(read(TYCHE, as_of=TRAINING_V40))
    dgx = facts(read(DGX_H100, as_of=date(2024, 8, 28)))

    assert (tyche["nics_per_node"], tyche["port_rate"]) == (("4", "count"), ("400", "Gb/s"))
    # "10x 400Gbe Infiniband": GbE is bits; host_networking's "PCIe-NIC: 500GB/s" is not a port
    assert (dgx["nics_per_node"], dgx["port_rate"]) == (("10", "count"), ("400", "Gb/s"))
    assert row(read(DGX_H100, as_of=TRAINING_V40), "port_rate").column == \
        "host_network_card_count"


@pytest.mark.parametrize(("networking", "expected"), [
    ("8x 400Gb/s InfiniBand", {"nics_per_node": ("8", "count"), "port_rate": ("400", "Gb/s")}),
    ("8x ConnectX-7 400Gbps", {"nics_per_node": ("8", "count"), "port_rate": ("400", "Gb/s")}),
    ("2x BlueField-3 50GBps", {"nics_per_node": ("2", "count"), "port_rate": ("50", "GB/s")}),
    ("8x ConnectX-7", {"nics_per_node": ("8", "count")}),
    ("InfiniBand NDR", {}),  # states no number: nothing, and no complaint
    ("2x CX7 200Gb/s, 8x CX7 400Gb/s", {}),  # two unlabelled groups: not guessed between
])
def test_networking_text_keeps_bits_and_bytes_as_written(networking, expected):
    text = sample(TYCHE).read_text().replace("4x ConnectX-7 IB NDR 400 Gb/s", networking)
    parsed = parse("s.json", text.encode(), AdapterOptions(as_of=TRAINING_V40))

    got = {k: v for k, v in facts(parsed).items() if k in ("nics_per_node", "port_rate")}
    assert got == expected
    assert parsed.rejected == []


def test_a_port_rate_in_bytes_is_kept_and_the_validator_refuses_to_convert_it(metrics):
    text = sample(TYCHE).read_text().replace("400 Gb/s", "50 GB/s")
    parsed = parse("s.json", text.encode(), AdapterOptions(as_of=TRAINING_V40))

    _, errors = validated(parsed, metrics)
    assert [(e.line, e.field) for e in errors] == [(17, "unit")]
    assert "Gb/s vs GB/s is never converted" in errors[0].reason


def test_every_row_of_the_real_files_passes_the_ingest_validator(metrics):
    for name in (EOS_N8, TYCHE, DGX_H100):
        clean, errors = validated(read(name, as_of=TRAINING_V40), metrics)
        assert errors == [] and len(clean) == 7, name


def test_a_multi_node_system_derives_gpus_per_system_and_shows_the_arithmetic():
    parsed = read(EOS_N8, as_of=TRAINING_V40)
    total = row(parsed, "gpus_per_system")

    assert (total.fields["value"], total.fields["value_kind"]) == (64, "derived")
    assert total.fields["quote"].startswith(
        'number_of_nodes "8" x accelerators_per_node "8" = 64 GPUs')
    assert facts(read(TYCHE, as_of=TRAINING_V40))["gpus_per_system"] == (8, "count")  # 2 x 4


def test_inference_counts_written_as_json_numbers_are_quoted_as_written():
    nodes = row(read(DGX_H100, as_of=TRAINING_V40), "nodes_per_system")

    assert (nodes.fields["value"], nodes.line) == ("1", 37)
    assert nodes.fields["quote"].startswith('"number_of_nodes": 1 (')


def test_without_as_of_every_observation_is_rejected_and_still_counted():
    parsed = read(EOS_N8)

    assert parsed.pack.rows == [] and parsed.pack.sources == [] and parsed.pack.items == []
    assert len(parsed.rejected) == 7
    assert {r.field for r in parsed.rejected} == {"as_of"}
    assert "--as-of <round publication date, e.g. 2024-06-12" in parsed.rejected[0].reason
    assert parsed.read == len(parsed.pack.rows) + len(parsed.rejected) + 0  # no measured points
    assert parsed.rejected[0].raw_text == '"number_of_nodes": "8",'


def test_a_count_that_is_not_a_number_is_rejected_with_its_key_and_line():
    text = sample(EOS_N8).read_text().replace('"number_of_nodes": "8"',
                                                   '"number_of_nodes": "two"')
    parsed = parse("s.json", text.encode(), AdapterOptions(as_of=TRAINING_V40))

    [bad] = parsed.rejected
    assert (bad.line, bad.field) == (6, "number_of_nodes")
    assert "'two' is not a whole number" in bad.reason
    assert "nodes_per_system" not in facts(parsed) and "gpus_per_system" not in facts(parsed)
    assert parsed.read == 5 + 1  # the other five facts, and the rejected count


def test_a_broken_json_is_refused_whole_with_its_line():
    with pytest.raises(AdapterError) as error:
        read(BROKEN, as_of=TRAINING_V40)

    assert error.value.line == 7
    assert "malformed JSON: Expecting ',' delimiter" in str(error.value)


# ---------------------------------------------------------------- result logs


def test_a_result_log_times_the_run_from_run_start_to_run_stop():
    parsed = read(RESNET)
    [run] = parsed.runs

    assert parsed.format == "mlperf-result"
    assert run.kind == "mlperf-result" and run.benchmark == "resnet"
    assert run.started_at == datetime(2021, 5, 15, 22, 44, 6, 492000, tzinfo=UTC)
    assert run.finished_at == datetime(2021, 5, 15, 23, 12, 51, 34000, tzinfo=UTC)
    assert run.duration_s == pytest.approx(1724.542)  # (1621120371034 - 1621118646492) / 1000
    assert run.item == "mlperf-nvidia-1xnvidia-dgx-a100"
    assert run.metadata | {"result_file": None} == {
        "division": "closed", "org": "NVIDIA", "platform": "1xNVIDIA DGX A100",
        "submission_status": "onprem", "status": "success", "run_stop_status": "success",
        "result_file": None, "first_line": 7, "last_line": 45, "mllog_events": 25,
        "run_start_line": 26, "run_stop_line": 45}
    assert run.metadata["result_file"] == RESNET


def test_lines_that_are_not_mllog_events_are_skipped_not_rejected():
    parsed = read(RESNET)

    assert parsed.skipped_lines == 22  # shell trace, MXNet output, RESULT lines
    assert parsed.rejected == [] and parsed.pack.rows == []
    assert [i.key for i in parsed.pack.items] == ["mlperf-nvidia-1xnvidia-dgx-a100"]


def test_an_mllog_marker_after_a_prefix_is_still_read():
    lines = sample(RESNET).read_text().splitlines()
    tagged = "\n".join(f"[1,0]<stdout>:{line}" for line in lines)  # mpirun --tag-output style

    [run] = parse(RESNET, tagged.encode(), AdapterOptions()).runs
    assert run.duration_s == pytest.approx(1724.542)


def test_sysjson_in_a_log_gives_the_system_observations_dated_by_the_run():
    parsed = read(GNN, as_of=TRAINING_V40)  # --as-of is not needed: the run dates them
    [run] = parsed.runs

    assert run.duration_s == pytest.approx(164.542)
    assert run.item == "mlperf-nvidia-eos-n8"  # SYSJSON's system_name, not "8xNVIDIA DGX H100"
    assert (run.nodes, run.gpus_per_node, run.device, run.nccl_version) == \
        (8, 8, "NVIDIA H100-SXM5-80GB", "2.21.5")
    assert facts(parsed) == facts(read(EOS_N8, as_of=TRAINING_V40))
    assert {r.fields["as_of"] for r in parsed.pack.rows} == {"2024-04-26"}  # run_start, UTC
    assert {r.line for r in parsed.pack.rows} == {1}
    assert {r.raw_text[:11] for r in parsed.pack.rows} == {":::SYSJSON "}
    assert parsed.pack.sources[0].key == "mlperf-closed-nvidia-eos-n8"


def test_a_repeated_sysjson_is_read_once():
    parsed = read(GNN)

    assert len(parsed.pack.rows) == 7
    assert parsed.skipped_lines == 1
    assert parsed.notes == [":::SYSJSON at line 2 repeats the one at line 1: skipped"]


def test_an_aborted_run_keeps_its_duration_but_is_not_a_time_to_train():
    parsed = read(ABORTED)
    [run] = parsed.runs

    assert run.duration_s == pytest.approx(311.17)
    assert (run.metadata["status"], run.metadata["run_stop_status"]) == ("aborted", "aborted")
    assert "not a valid time to train" in parsed.notes[0]
    assert parsed.rejected == []


def test_a_truncated_log_returns_the_run_without_a_time_and_rejects_the_missing_stop():
    parsed = read(TRUNCATED)
    [run] = parsed.runs
    [missing] = parsed.rejected

    assert run.started_at is not None
    assert (run.finished_at, run.duration_s, run.metadata["status"]) == (None, None, "incomplete")
    assert (missing.line, missing.field) == (37, "run_stop")
    assert missing.reason == "no run_stop: the log is truncated, so it has no time to train"
    assert parsed.read == 2  # the run (kept, without a time) and its missing time to train


def test_a_broken_mllog_line_is_rejected_and_the_rest_is_read():
    text = sample(RESNET).read_text().replace('"key": "seed", "value": 11934,',
                                                   '"key": "seed", "value": 11934')
    parsed = parse(RESNET, text.encode(), AdapterOptions())

    [bad] = parsed.rejected
    assert (bad.line, bad.field) == (21, "row")
    assert "not valid JSON" in bad.reason and bad.raw_text.startswith(":::MLLOG")
    assert parsed.runs[0].duration_s == pytest.approx(1724.542)


def test_a_log_without_mllog_lines_is_refused():
    with pytest.raises(AdapterError, match=r"result log \(:::MLLOG lines\)"):
        parse("result_0.txt", b"ENDING TIMING RUN AT 2021-05-15 04:13:06 PM\n", AdapterOptions())


def test_a_log_whose_only_events_are_broken_gives_its_rejections_and_no_run():
    parsed = parse("result_0.txt", b"Beginning trial 1 of 1\n:::MLLOG {\"key\": \"run_st\n",
                   AdapterOptions())

    assert parsed.runs == []
    assert [(r.line, r.field) for r in parsed.rejected] == [(2, "row")]
    assert parsed.read == 1 and parsed.skipped_lines == 1
