"""Files users already have, through the real ingest on SQLite and PostgreSQL: Epoch snapshots
supersede by knowledge time, nccl-tests runs keep their points and change the C2C model's
figures, MLPerf systems become items; bytes are kept, re-ingest is idempotent, rows add up."""

from __future__ import annotations

import json
from datetime import date, timedelta

import duckdb
import pytest
from sqlalchemy import func, select

from db.engine import Session
from db.schema import IngestFile, Item, MeasurementRun, NcclPoint, RawFile, RejectedRow
from pipelines.inputs.adapters.registry import load_aliases
from pipelines.inputs.scenarios import load_scenario
from pipelines.ledger.cluster_specs import resolve_cluster
from pipelines.ledger.resolved import conflicts, resolved_value
from pipelines.settings import PROJECT_ROOT
from tests.pipelines.conftest import SHIPPED_SCENARIOS, SOURCES
from tests.support.shared_data import fixture_path
from tests.support.warehouse import publish_test_warehouse

# Real files the tests ingest, by their path in the shared folder (tests.support.shared_data:
# the project keeps no copy).
EPOCH_DEC_10 = ("epoch", "ml_hardware_2025-12-10.csv")
EPOCH_DEC_16 = ("epoch", "ml_hardware_2025-12-16.csv")
A3_MEGA = ("nccl", "b_a3mega_h100_2node.txt")  # 2 nodes x 8 H100, no date in it
H200_JSON = ("nccl", "json_h200_single_node.json")  # one node, dated by -J
MLPERF_SYSTEM = ("mlperf", "training_v5.1_NVIDIA_tyche_ngpu8_ngc25.09_nemo.json")
MLPERF_RESULT = ("mlperf", "training_v4.0_NVIDIA_eos_n8_gnn_result_0.txt")
ALIASES = load_aliases((PROJECT_ROOT / "data" / "item_aliases.yaml").read_text())
ON = date(2026, 11, 22)


def adds_up(report) -> None:
    for f in report.files:
        assert f.read == f.accepted + f.unchanged + f.rejected, f.path


def value_of(ledger, item, metric, known, source=None):
    """The resolved value as the ledger knew it at `known` (or one source's own figure)."""
    with Session(ledger) as session:
        resolved = resolved_value(session, item, metric, on=ON, known=known)
    if resolved is None:
        return None
    rows = [resolved.winner, *resolved.alternatives]
    return next(r["value"] for r in rows if source in (None, r["source"]))


# The file's ~14 s (its tests ingest the shipped packs), half per dialect: its weight in the
# order of ./dev test (tests/conftest.py), so it does not start last.
@pytest.mark.slow(seconds=7)
def test_a_later_epoch_snapshot_supersedes_changed_values_by_knowledge_time(ledger, ingest,
                                                                            clock):
    first = ingest(fixture_path(*EPOCH_DEC_10), aliases=ALIASES)
    between = clock.tick(days=3)
    clock.tick(days=4)
    second = ingest(fixture_path(*EPOCH_DEC_16), aliases=ALIASES)
    adds_up(first), adds_up(second)
    [f1], [f2] = first.files, second.files
    assert (f1.format, f1.outcome, f1.rejected) == ("epoch-ml-hardware", "ingested", 0)
    assert f2.unchanged > 0 and f2.superseded > 0  # most figures stayed, some changed
    assert second.dataset_version > first.dataset_version

    # Huawei Ascend 910C FP16: 752 TFLOP/s in the 2025-12-10 snapshot, 800 on 2025-12-16.
    ascend = ("huawei-ascend-910c", "peak_fp16")
    assert value_of(ledger, *ascend, known=between) == pytest.approx(752)
    assert value_of(ledger, *ascend, known=clock.now) == pytest.approx(800)
    # Google TPU v4's TDP was revised from 170 W to the 340 W estimate.
    assert value_of(ledger, "google-tpu-v4", "tdp", known=between) == pytest.approx(170)
    with Session(ledger) as session:
        tpu = resolved_value(session, "google-tpu-v4", "tdp", on=ON, known=clock.now).winner
        released = session.scalar(select(Item.released_on).where(Item.key == "google-tpu-v4"))
    assert (tpu["value"], tpu["value_kind"], tpu["source"]) == (340, "estimate",
                                                                "epoch-ml-hardware-csv")
    assert released == date(2021, 5, 20)


def test_the_same_epoch_bytes_again_change_nothing(ledger, ingest, clock):
    ingest(fixture_path(*EPOCH_DEC_16), aliases=ALIASES)
    clock.tick()
    again = ingest(fixture_path(*EPOCH_DEC_16), aliases=ALIASES)

    [f] = again.files
    assert (f.outcome, f.accepted, f.unchanged) == ("unchanged_file", 0, f.read)
    assert not again.dataset_changed
    with Session(ledger) as session:
        assert session.scalar(select(func.count()).select_from(RawFile)) == 1


def test_epoch_and_the_reference_packs_sit_side_by_side_and_disagreements_are_listed(
        ledger, ingest, clock):
    ingest(SOURCES)
    ingest(fixture_path(*EPOCH_DEC_16), aliases=ALIASES)

    with Session(ledger) as session:
        h100_tdp = resolved_value(session, "h100-sxm5", "tdp", on=ON, known=clock.now)
        listed = {(c.winner["item"], c.winner["metric"]): c
                  for c in conflicts(session, on=ON, known=clock.now)}
    sources = {h100_tdp.winner["source"], *(a["source"] for a in h100_tdp.alternatives)}
    # The hand-typed Epoch pack and Epoch's own CSV are one publisher's series: one speaks.
    assert len(sources & {"epoch-ml-hardware-csv", "epoch-ml-hardware"}) == 1
    assert "nvidia-h100-page" in sources
    # B200 HBM bandwidth: NVIDIA's DGX B200 page says 8 TB/s, Epoch 7.7 TB/s.
    b200 = listed["b200", "hbm_bandwidth"]
    assert (b200.winner["value"], b200.winner["source"]) == (8.0, "nvidia-dgx-b200-page")
    assert [(a["value"], a["source"]) for a in b200.alternatives] == [
        (7.7, "epoch-ml-hardware-csv")]
    assert "source kind vendor_datasheet outranks dataset" in b200.resolution.reason
    # Same figure in both (700 W within the 1 % tolerance): not a disagreement.
    assert ("h100-sxm5", "tdp") not in listed


def test_an_nccl_run_keeps_every_size_point_and_its_metadata(ledger, ingest):
    ingest(SOURCES)  # the ledger's items, ib-ndr among them
    report = ingest(fixture_path(*A3_MEGA), item="ib-ndr", as_of=date(2025, 1, 15))

    adds_up(report)
    [f] = report.files
    assert (f.format, f.rejected, f.measured_runs) == ("nccl-tests", 0, 1)
    with Session(ledger) as session:
        run = session.scalars(select(MeasurementRun)
                              .where(MeasurementRun.kind == "nccl-tests")).one()
        points = session.scalars(select(NcclPoint).order_by(NcclPoint.size_bytes)).all()
    assert (run.kind, run.item_key, run.ranks, run.nodes, run.gpus_per_node) == (
        "nccl-tests", "ib-ndr", 16, 2, 8)
    assert run.device == "NVIDIA H100 80GB HBM3"
    assert f.accepted == len(points) + 1  # every size point and the summary observation
    largest = points[-1]
    assert (largest.collective, largest.size_bytes, largest.dtype) == (
        "all_reduce", 8589934592, "float")
    assert largest.oop_busbw == pytest.approx(338.82) or largest.ip_busbw == pytest.approx(
        338.82)
    assert json.loads(run.metadata_json)  # command line, parameters, rank map, footer


def test_an_undated_multi_node_run_keeps_its_points_and_says_what_to_add(ledger, ingest):
    ingest(SOURCES)
    first = ingest(fixture_path(*A3_MEGA))

    adds_up(first)
    [f] = first.files
    [error] = f.errors
    assert error.field == "item" and "--item" in error.reason and "--as-of" in error.reason
    with Session(ledger) as session:
        [rejected] = session.scalars(select(RejectedRow)).all()
        assert rejected.raw_text  # the peak's line, kept for review

    # The same bytes with what was missing: read again, not "unchanged".
    again = ingest(fixture_path(*A3_MEGA), item="ib-ndr", as_of=date(2025, 1, 15))
    [g] = again.files
    assert (g.outcome, g.rejected) == ("ingested", 0)
    with Session(ledger) as session:
        options = session.scalars(select(IngestFile.options).order_by(IngestFile.id)).all()
    assert options[-2:] == ["{}", '{"as_of": "2025-01-15", "item": "ib-ndr"}']


def test_a_single_node_run_is_tied_to_its_nvlink_generation_by_the_file_alone(ledger,
                                                                             ingest, clock):
    ingest(SOURCES)
    report = ingest(fixture_path(*H200_JSON))

    adds_up(report)
    assert report.files[0].rejected == 0
    with Session(ledger) as session:
        found = resolved_value(session, "nvlink-4", "busbw_measured", on=ON, known=clock.now)
    assert found.winner["value_kind"] == "measured"
    assert found.winner["source"].startswith("nccl-tests-")


def test_an_nccl_measurement_changes_the_c2c_figures_of_scenarios_on_that_fabric(
        ledger, ingest, clock, tmp_path):
    ingest(SOURCES)
    # The shipped scenario gives its NIC rate inline (400G, as NDR); here it reads the
    # switch's port rate from the ledger, which a measurement then replaces.
    shipped = (SHIPPED_SCENARIOS / "1t-dense-hgx-800gbe.yaml").read_text(encoding="utf-8")
    ledger_rate = tmp_path / "1t-dense-hgx-800gbe.yaml"
    ledger_rate.write_text(shipped.replace("nic_rate: 400 Gb/s, ", ""), encoding="utf-8")
    scenario = load_scenario(ledger_rate)
    with Session(ledger) as session:
        before, used_before = resolve_cluster(scenario.cluster, session, on=ON,
                                              known=clock.now)
    nic_before = {s.name: s for s in used_before}["scaleout_bw_per_nic"]
    assert nic_before.origin == "ledger" and nic_before.metric == "port_rate"

    clock.tick()
    ingest(fixture_path(*A3_MEGA), item="nvidia-sn5600", as_of=date(2025, 1, 15))
    with Session(ledger) as session:
        after, used_after = resolve_cluster(scenario.cluster, session, on=ON, known=clock.now)

    figures = {s.name: s for s in used_after}
    nic = figures["scaleout_bw_per_nic"]
    assert (nic.origin, nic.item, nic.metric) == ("measured", "nvidia-sn5600", "busbw_measured")
    assert nic.source.startswith("nccl-tests-") and nic.as_of == "2025-01-15"
    assert "instead of the line rate" in nic.note and nic.source in nic.note
    assert figures["scaleout_efficiency"].value == 1.0
    # 338.82 GB/s busbw over 2 nodes x 8 GPUs: 8 GPUs share each node's rails.
    assert after.scaleout_bw == pytest.approx(338.82e9 / 8)
    assert "2-node x 8-GPU run / 8 GPUs" in nic.note
    assert before.scaleout_bw * before.scaleout_efficiency != pytest.approx(
        after.scaleout_bw * after.scaleout_efficiency)
    # As the ledger knew it before the measurement, the line rate still holds.
    with Session(ledger) as session:
        _, then = resolve_cluster(scenario.cluster, session, on=ON,
                                  known=clock.now - timedelta(minutes=30))
    assert {s.name: s for s in then}["scaleout_bw_per_nic"].origin == "ledger"


def test_an_mlperf_system_becomes_an_item_with_its_figures(ledger, ingest, clock):
    report = ingest(fixture_path(*MLPERF_SYSTEM), as_of=date(2025, 11, 12))

    adds_up(report)
    [f] = report.files
    assert (f.format, f.rejected) == ("mlperf-system", 0)
    with Session(ledger) as session:
        item = session.scalars(select(Item).where(Item.kind == "system")).one()
        nvlink = resolved_value(session, item.key, "scaleup_bw_per_gpu_bidir", on=ON,
                                known=clock.now)
        port = resolved_value(session, item.key, "port_rate", on=ON, known=clock.now)
    assert nvlink.winner["value"] == 1800 and nvlink.winner["unit_written"] == "GB/s"
    assert port.winner["value"] == 400 and port.winner["unit_written"] == "Gb/s"


def test_an_mlperf_result_log_stores_its_time_to_train(ledger, ingest):
    report = ingest(fixture_path(*MLPERF_RESULT))

    adds_up(report)
    with Session(ledger) as session:
        run = session.scalars(select(MeasurementRun)).one()
    assert (run.kind, run.benchmark) == ("mlperf-result", "gnn")
    assert run.duration_s == pytest.approx(164.542)
    assert run.started_at.tzinfo is not None


def test_a_file_nothing_reads_is_rejected_whole_and_kept(ledger, ingest, write_pack):
    path = write_pack("notes.txt", "just some notes\n")
    report = ingest(path)

    [f] = report.files
    assert (f.outcome, f.read, f.rejected) == ("rejected_file", 1, 1)
    assert "unrecognised file" in f.errors[0].reason
    with Session(ledger) as session:
        assert session.scalar(select(func.count()).select_from(RawFile)) == 1


def test_a_measured_nvlink_bus_bandwidth_replaces_the_scale_up_line_rate(ledger, ingest, clock):
    ingest(SOURCES)
    # What the user says overrides the file's own guess.
    ingest(fixture_path(*H200_JSON), item="nvlink-5")
    scenario = load_scenario(SHIPPED_SCENARIOS / "1t-dense-nvl72.yaml")
    with Session(ledger) as session:
        spec, used = resolve_cluster(scenario.cluster, session, on=ON, known=clock.now)

    figures = {s.name: s for s in used}
    up = figures["scaleup_bw"]
    assert (up.origin, up.item, up.metric) == ("measured", "nvlink-5", "busbw_measured")
    assert figures["scaleup_efficiency"].value == 1.0
    assert spec.scaleup_bw == pytest.approx(up.value) and up.value < 900e9  # not the line rate


def test_the_warehouse_publishes_measured_runs_and_their_points(ledger, ingest, clock,
                                                                tmp_path):
    ingest(SOURCES)
    clock.tick()
    report = ingest(fixture_path(*A3_MEGA), item="nvidia-sn5600", as_of=date(2025, 1, 15))
    path = publish_test_warehouse(ledger, report.dataset_version,
                                  tmp_path / "warehouse.duckdb", ON, clock.tick)

    with duckdb.connect(str(path), read_only=True) as con:
        runs = con.execute("select item, nodes, gpus_per_node from measurement_run "
                           "where kind = 'nccl-tests'").fetchall()
        peak = con.execute("select max(greatest(oop_busbw, coalesce(ip_busbw, 0))) "
                           "from nccl_point").fetchone()[0]
    assert runs == [("nvidia-sn5600", 2, 8)]
    assert peak == pytest.approx(338.82)
