"""Inference serving points read back: db.queries.inference_points on the knowledge clock, and
the warehouse's inference_point table as of a dataset version, checked and commented."""

from __future__ import annotations

from datetime import date, timedelta

import duckdb
import pytest

from db.engine import Session
from db.queries import dataset_version, inference_points
from db.schema import InferencePoint
from db.warehouse import WarehouseMeta, publish_warehouse
from db.warehouse_checks import CHECKS, run_checks
from models.resolve import SOURCE_KIND_RANK
from tests.conftest import NVLINK_PACK
from tests.support.shared_data import fixture_path

# The real files the tests ingest, by their path in the shared folder (a copy of each is there;
# the project keeps none).
AGG = ("inferencex", "agg_bmk_kimik2.5_mi355x.json")
MULTINODE = ("inferencex", "agg_bmk_multinode_gptoss.json")
V51 = ("mlperf_inference", "summary_results_v5.1_sample.json")


def test_the_query_gives_the_table_columns_and_what_was_known_at_a_time(ledger, ingest, clock):
    ingest(fixture_path(*AGG), as_of=date(2026, 6, 1))
    first = clock.now
    clock.tick()
    ingest(fixture_path(*MULTINODE), as_of=date(2026, 4, 28))

    with Session(ledger) as session:
        everything = inference_points(session)
        then = inference_points(session, known_at=first)
        before = inference_points(session, known_at=first - timedelta(seconds=1))
    assert list(everything.columns) == [c.name for c in InferencePoint.__table__.columns] + [
        "recorded_at"]
    assert len(everything) == 4 and len(then) == 3 and before.empty
    assert list(before.columns) == list(everything.columns)
    assert set(then["recorded_at"]) == {first}
    last = everything.iloc[-1]
    assert (last["model"], last["gpus"], last["prefill_gpus"], bool(last["disaggregated"])) == (
        "gpt-oss-120b", 16, 8, True)
    assert last["recorded_at"] == clock.now
    assert then["tok_s_per_gpu"].tolist() == pytest.approx([27.678011491816765,
                                                            17.57057269511527,
                                                            26.012913447290337])


def publish(ledger, report, clock, tmp_path, name):
    with Session(ledger) as session:
        version = dataset_version(session, report.dataset_version)
        meta = WarehouseMeta(version.id, version.content_hash, version.cutoff_at,
                             date(2026, 11, 22), clock.tick(), "test")
    return publish_warehouse(ledger, tmp_path / name, meta, SOURCE_KIND_RANK)


def test_the_warehouse_publishes_the_points_known_at_its_versions_cut_off(ledger, ingest,
                                                                         write_pack, clock,
                                                                         tmp_path):
    before = ingest(write_pack("v1.yaml", NVLINK_PACK))
    clock.tick()
    ingest(fixture_path(*V51), as_of=date(2025, 9, 9))
    clock.tick()
    after = ingest(write_pack("v2.yaml", NVLINK_PACK.replace("value: 1.8,", "value: 1.9,")))
    early = publish(ledger, before, clock, tmp_path, "early.duckdb")
    late = publish(ledger, after, clock, tmp_path, "late.duckdb")

    with duckdb.connect(str(early), read_only=True) as con:
        assert con.execute("select count(*) from inference_point").fetchone() == (0,)
    with duckdb.connect(str(late), read_only=True) as con:
        rows = con.execute(
            "select p.hardware, p.scenario, p.gpus, p.tok_s_per_gpu, p.system, p.as_of, "
            "s.publisher from inference_point p join source s on s.key = p.source_key "
            "where p.model = 'deepseek-r1' order by p.tok_s_per_gpu desc").fetchall()
        kinds = con.execute("select distinct kind from measurement_run").fetchall()
        comments = con.execute("select count(*) from duckdb_columns() where table_name = "
                               "'inference_point' and comment is null").fetchone()
        assert run_checks(con, {"inference_point": CHECKS["inference_point"]}) == []
    assert rows[0] == ("b200", "Offline", 8, pytest.approx(33379.0 / 8),
                       "mlperf-nvidia-nvidia-dgx-b200-8x-b200-sxm-180gb-tensorrt",
                       date(2025, 9, 9), "MLCommons")
    assert [(r[0], r[1], r[2]) for r in rows[1:]] == [("gb200", "Offline", 72),
                                                     ("gb200", "Server", 72)]
    assert kinds == [("inference",)] and comments == (0,)


def test_a_check_catches_a_point_without_throughput(tmp_path):
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    con.execute("create table inference_point (measurement_run_id integer, source_key varchar, "
                "as_of date, hardware varchar, gpus integer, model varchar, "
                "tok_s_per_gpu double, benchmark varchar, prefill_gpus integer, "
                "decode_gpus integer, ttft_s double)")
    con.execute("create table measurement_run (id integer)")
    con.execute("create table source (key varchar)")
    con.execute("insert into measurement_run values (1)")
    con.execute("insert into source values ('inferencex-2026-06-01')")
    con.execute("insert into inference_point values (1, 'inferencex-2026-06-01', '2026-06-01', "
                "'b200', 8, 'deepseek-r1', 0, 'inferencex', 4, 2, null)")
    failures = {f.check for f in run_checks(con, {"inference_point": CHECKS["inference_point"]})}
    con.close()
    assert failures == {"expression_is_true: inference_point: tok_s_per_gpu > 0",
                        "expression_is_true: inference_point: prefill_gpus is null or "
                        "prefill_gpus + decode_gpus = gpus"}
