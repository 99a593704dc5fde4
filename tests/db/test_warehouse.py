"""The analyst warehouse: explicit DDL, history with both clocks, current values, comments,
readable by the duckdb CLI analysts use, and replaced atomically."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path

import duckdb
import pytest

from db.engine import Engine, Session, write_session
from db.queries import dataset_version
from db.warehouse import WarehouseMeta, publish_warehouse
from models.resolve import SOURCE_KIND_RANK
from tests.conftest import NVLINK_PACK, ModuleLedger
from tests.db.test_results import add, estimate, scenario
from tests.db.test_tco_results import add_tco, tco_scenario, training_run


def build_published(ledger: Engine, ingest, write_pack, clock, folder: Path) -> Path:
    """Two versions of the NVLink pack (a correction), the second published under `folder`."""
    ingest(write_pack("v1.yaml", NVLINK_PACK))
    clock.tick()
    report = ingest(write_pack("v2.yaml", NVLINK_PACK.replace("value: 1.8,", "value: 1.9,")))
    with Session(ledger) as session:
        version = dataset_version(session, report.dataset_version)
        meta = WarehouseMeta(version.id, version.content_hash, version.cutoff_at,
                             date(2026, 11, 22), clock.tick(), "test")
    return publish_warehouse(ledger, folder / "out" / "warehouse.duckdb", meta,
                             SOURCE_KIND_RANK)


@pytest.fixture(scope="module")
def published(module_ledgers: Callable[[str], ModuleLedger]) -> Path:
    """Built once per module and dialect, for the tests that only read it."""
    built = module_ledgers("published")
    return build_published(built.engine, built.ingest, built.write_pack, built.clock,
                           built.folder)


@pytest.fixture
def published_here(ledger, ingest, write_pack, clock, tmp_path) -> Path:
    """The same on the test's own `ledger`, for the tests that publish over it again."""
    return build_published(ledger, ingest, write_pack, clock, tmp_path)


def query(path: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_the_warehouse_keeps_the_full_history_with_both_clocks(published):
    rows = query(published, "select value, superseded_at is null from observation "
                            "where item = 'nvlink-5' order by observation_id")
    assert rows == [(1800.0, False), (1900.0, True)]


def test_current_value_resolves_each_item_metric_once(published):
    rows = query(published, "select item, metric, value, unit, source from current_value "
                            "order by item")
    assert rows == [("gb200-nvl72", "rack_it_power", 126.0, "kW", "nvidia-nvlink-page"),
                    ("nvlink-5", "scaleup_bw_per_gpu_bidir", 1900.0, "GB/s",
                     "nvidia-nvlink-page")]


def test_value_as_of_answers_with_what_was_known_then(published):
    first_recording = query(published, "select min(recorded_at) from observation")[0][0]
    rows = query(published, f"select value from value_as_of(date '2026-11-22', "
                            f"timestamptz '{first_recording.isoformat()}') "
                            f"where item = 'nvlink-5'")
    assert rows == [(1800.0,)]


def test_meta_names_the_dataset_version(published):
    (version, digest, as_of, code), = query(
        published, "select dataset_version, dataset_hash, as_of, code_version from meta")
    assert (version, len(digest), as_of, code) == (2, 64, date(2026, 11, 22), "test")


def test_every_table_and_column_carries_a_comment(published):
    missing = query(published, "select table_name, column_name from duckdb_columns() c "
                               "where comment is null and not internal and table_name in "
                               "(select table_name from duckdb_tables())")
    assert missing == []
    in_views = query(published, "select table_name, column_name from duckdb_columns() "
                                "where comment is null and not internal")
    assert in_views == []
    macros = query(published, "select function_name from duckdb_functions() "
                              "where not internal and comment is null")
    assert macros == []
    assert {name for name, in query(published, "select function_name from duckdb_functions() "
                                               "where not internal")} >= {
        "spec_as_of", "spec_known_at", "value_as_of"}
    tables = query(published, "select table_name from duckdb_tables() where comment is null")
    assert tables == []
    views = query(published, "select view_name from duckdb_views() "
                             "where not internal and comment is null")
    assert views == []


def duckdb_cli(path: Path, sql: str) -> list[dict]:
    cli = shutil.which("duckdb") or str(Path(sys.executable).parent / "duckdb")
    result = subprocess.run([cli, "-json", "-readonly", str(path), "-c", sql],
                            capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def test_the_duckdb_cli_analysts_use_opens_it(published):
    assert duckdb_cli(published, "select count(*) as n from current_value") == [{"n": 2}]


def test_a_failed_build_leaves_the_previous_warehouse_intact(published_here, ledger, monkeypatch):
    before = published_here.read_bytes()
    meta = WarehouseMeta(2, "x" * 64, published_cutoff(published_here), date(2026, 11, 23),
                         published_cutoff(published_here), "test")
    broken_ranks = {"vendor_datasheet": None}  # NOT NULL violation halfway through the build
    with pytest.raises(duckdb.Error):
        publish_warehouse(ledger, published_here, meta, broken_ranks)
    assert published_here.read_bytes() == before
    assert not published_here.with_name(published_here.name + ".tmp").exists()


def test_a_reader_holding_the_old_file_is_not_broken_by_a_publish(published_here, ledger,
                                                                   ingest, write_pack, clock):
    reader = duckdb.connect(str(published_here), read_only=True)
    try:
        assert reader.execute("select dataset_version from meta").fetchall() == [(2,)]
        clock.tick()
        report = ingest(write_pack("v3.yaml", NVLINK_PACK.replace("value: 1.8,", "value: 2.0,")))
        with Session(ledger) as session:
            version = dataset_version(session, report.dataset_version)
            meta = WarehouseMeta(version.id, version.content_hash, version.cutoff_at,
                                 date(2026, 11, 23), clock.tick(), "test")
        publish_warehouse(ledger, published_here, meta, SOURCE_KIND_RANK)
        # The open connection keeps the old file whole, even the tables it had not read yet.
        assert reader.execute("select value from observation where item = 'nvlink-5' "
                              "order by observation_id").fetchall() == [(1800.0,), (1900.0,)]
        assert reader.execute("select value from current_value "
                              "where item = 'nvlink-5'").fetchall() == [(1900.0,)]
        # A new connection (another process, like an analyst's CLI) opens the new file.
        assert duckdb_cli(published_here, "select dataset_version as v from meta") == [{"v": 3}]
        assert duckdb_cli(published_here, "select value from current_value "
                                          "where item = 'nvlink-5'") == [{"value": 2000.0}]
    finally:
        reader.close()
    assert query(published_here, "select dataset_version from meta") == [(3,)]


def published_cutoff(path: Path):
    return query(path, "select cutoff_at from meta")[0][0]


def test_current_value_follows_each_source_series(ledger, ingest, write_pack, clock, tmp_path):
    ingest(write_pack("eia.yaml", """
        source: {key: eia, title: EIA, kind: dataset}
        items: [{key: us-industrial, name: US industrial, kind: energy_price}]
        observations:
          - {item: us-industrial, metric: electricity_price, value: 0.0771, unit: USD/kWh,
             as_of: "2024", status: S}
          - {item: us-industrial, metric: electricity_price, value: 0.0826, unit: USD/kWh,
             as_of: "2025", status: S}
        """))
    report = ingest(write_pack("blog.yaml", """
        source: {key: blog, title: A blog, kind: secondary_press}
        items: [{key: us-industrial, name: US industrial, kind: energy_price}]
        observations:
          - {item: us-industrial, metric: electricity_price, value: 0.09, unit: USD/kWh,
             as_of: "2025-06", status: U}
        """))
    with Session(ledger) as session:
        version = dataset_version(session, report.dataset_version)
        meta = WarehouseMeta(version.id, version.content_hash, version.cutoff_at,
                             date(2026, 11, 22), clock.now, "test")
    path = publish_warehouse(ledger, tmp_path / "w.duckdb", meta, SOURCE_KIND_RANK)
    assert query(path, "select value, source, alternatives from current_value") == [
        (0.0826, "eia", 1)]
    # The value set aside is there too, without a join to observation.
    assert query(path, "select a.source, a.value, a.as_of from current_value, "
                       "unnest(alternative_values) as t(a)") == [("blog", 0.09, date(2025, 6, 1))]
    known_at = "(select cutoff_at from meta)"
    assert query(path, "select alternative_values from current_value") == query(
        path, f"select alternative_values from spec_known_at({known_at})")


@pytest.fixture(scope="module")
def published_results(module_ledgers: Callable[[str], ModuleLedger]) -> Path:
    """Two versions with results on each, an ad-hoc result, and a warehouse of the first
    (and one of the second); once per module and dialect, the tests only read them."""
    built = module_ledgers("results")
    ledger, ingest, write_pack, clock = built.engine, built.ingest, built.write_pack, built.clock
    first = ingest(write_pack("v1.yaml", NVLINK_PACK)).dataset_version
    clock.tick()
    second = ingest(write_pack("v2.yaml", NVLINK_PACK.replace("value: 1.8,", "value: 1.9,")))
    after = clock.tick()  # scenarios are recorded after the ingest that made the version
    with write_session(ledger) as session:
        nvl72 = scenario(session, at=after)
        original = add(session, nvl72, first, figures=estimate(c2c=0.25))
        add(session, nvl72, second.dataset_version, reused_from=original)
        redefined = scenario(session, definition={"model": "gpt-175b", "gpus": 144}, at=after)
        add(session, redefined, second.dataset_version, inputs="b" * 64,
            figures=estimate(gpus=144, c2c=0.7, **{"class": "communication-bound"}))
        add(session, scenario(session, name="hgx-8", at=after), first,
            figures=estimate(gpus=8, time_to_train_days=None))
        add(session, scenario(session, name="ad-hoc", at=after), None)
        scenario(session, name="later", at=after + timedelta(days=1))
        v1 = dataset_version(session, first)
        v2 = dataset_version(session, second.dataset_version)
        metas = [WarehouseMeta(v.id, v.content_hash, v.cutoff_at, date(2026, 11, 22),
                               clock.tick(), "test") for v in (v1, v2)]
    for name, meta in zip(("v1", "v2"), metas, strict=True):
        publish_warehouse(ledger, built.folder / name / "warehouse.duckdb", meta,
                          SOURCE_KIND_RANK)
    return built.folder


def test_results_are_published_with_their_scenarios_as_of_the_version(published_results):
    path = published_results / "v1" / "warehouse.duckdb"
    assert query(path, "select scenario, dataset_version_id, gpus, c2c, c2c_class, fits, "
                       "time_to_train_days, reused_from_id from c2c_result order by id") == [
        ("gpt-175b-nvl72", 1, 72, 0.25, "compute-bound", True, 21.5, None),
        ("hgx-8", 1, 8, 0.1875, "compute-bound", True, None, None)]
    # Recorded after the cut-off, but the published results were computed from them.
    assert query(path, "select name from scenario order by id") == [("gpt-175b-nvl72",),
                                                                    ("hgx-8",)]
    assert query(path, "select count(*) from c2c_result r join scenario s "
                       "on s.name = r.scenario and s.content_sha256 = r.scenario_sha256") == [(2,)]
    assert query(path, "select json_extract(result_json, '$.layout.tp')::int, "
                       "json_extract_string(definition, '$.model') from c2c_result r "
                       "join scenario s on s.name = r.scenario where r.scenario = 'hgx-8'") == [
        (8, "gpt-175b")]


def test_c2c_latest_holds_the_newest_versions_result_of_each_scenario(published_results):
    path = published_results / "v2" / "warehouse.duckdb"
    assert query(path, "select scenario, count(*) from c2c_result group by all order by 1") == [
        ("gpt-175b-nvl72", 3), ("hgx-8", 1)]  # the ad-hoc estimate is not published
    latest = query(path, "select scenario, dataset_version_id, gpus, c2c, reused_from_id, "
                         "current_version from c2c_latest order by scenario")
    # The redefined scenario's result on version 2 beats the reused copy recorded before it;
    # hgx-8's only result is of version 1, older than the newest version's results.
    assert latest == [("gpt-175b-nvl72", 2, 144, 0.7, None, True)]
    assert query(path, "select count(*) from c2c_result where reused_from_id is not null") == [
        (1,)]
    assert "later" not in {name for name, in query(path, "select name from scenario")}
    assert duckdb_cli(path, "select scenario, c2c from c2c_latest order by 1") == [
        {"scenario": "gpt-175b-nvl72", "c2c": 0.7}]


def test_results_of_a_version_the_data_moved_on_from_are_marked_not_current(
        ledger, ingest, write_pack, clock, tmp_path):
    first = ingest(write_pack("v1.yaml", NVLINK_PACK)).dataset_version
    with write_session(ledger) as session:
        add(session, scenario(session, at=clock.tick()), first, figures=estimate(c2c=0.25))
    clock.tick()
    # An ingest makes a new version; nothing recomputed the scenario on it yet.
    second = ingest(write_pack("v2.yaml", NVLINK_PACK.replace("value: 1.8,", "value: 1.9,")))
    with Session(ledger) as session:
        version = dataset_version(session, second.dataset_version)
        meta = WarehouseMeta(version.id, version.content_hash, version.cutoff_at,
                             date(2026, 11, 22), clock.tick(), "test")
    path = publish_warehouse(ledger, tmp_path / "w.duckdb", meta, SOURCE_KIND_RANK)
    assert query(path, "select dataset_version_id, c2c, current_version from c2c_latest") == [
        (first, 0.25, False)]
    assert query(path, "select count(*) from tco_latest") == [(0,)]


@pytest.fixture(scope="module")
def published_tco(module_ledgers: Callable[[str], ModuleLedger]) -> Path:
    """A comparison on both versions (reused on the second), a training run, an ad-hoc
    result, and the warehouse of the second version; once per module and dialect, the tests
    only read it. The versions: the NVLink pack, then a correction of it (as `versions`)."""
    built = module_ledgers("tco")
    ledger, clock = built.engine, built.clock
    first = built.ingest(built.write_pack("v1.yaml", NVLINK_PACK)).dataset_version
    clock.tick()
    versions = (first, built.ingest(built.write_pack(
        "v2.yaml", NVLINK_PACK.replace("value: 1.8,", "value: 1.9,"))).dataset_version)
    after = clock.tick()  # scenarios are recorded after the ingest that made the version
    with write_session(ledger) as session:
        racks = tco_scenario(session, at=after)
        original = add_tco(session, racks, versions[0])
        add_tco(session, racks, versions[1], result={}, reused_from=original)
        add_tco(session, tco_scenario(session, "gpt-175b-run", at=after), versions[1],
                inputs="b" * 64, result=training_run())
        add_tco(session, tco_scenario(session, "ad-hoc", at=after), None)
        version = dataset_version(session, versions[1])
        meta = WarehouseMeta(version.id, version.content_hash, version.cutoff_at,
                             date(2026, 11, 22), clock.tick(), "test")
    return publish_warehouse(ledger, built.folder / "warehouse.duckdb", meta, SOURCE_KIND_RANK)


def test_tco_results_are_published_with_their_scenarios(published_tco):
    assert query(published_tco, "select scenario, dataset_version_id, mode, scale_up_option, "
                                "break_even_speedup, break_even_p10, break_even_p90, "
                                "total_cost_usd, reused_from_id is not null from tco_result "
                                "order by id") == [
        ("nvl72-vs-hgx", 1, "comparison", "gb200-nvl72", 1.75, 1.5, 2.0, None, False),
        ("nvl72-vs-hgx", 2, "comparison", "gb200-nvl72", 1.75, 1.5, 2.0, None, True),
        ("gpt-175b-run", 2, "training-run", None, None, None, None, 4.6e6, False)]
    # Recorded after the cut-off, but the published results were computed from them.
    assert query(published_tco, "select name, kind from scenario order by id") == [
        ("nvl72-vs-hgx", "tco"), ("gpt-175b-run", "tco")]
    assert query(published_tco, "select json_extract_string(result_json, '$.tornado[0].input') "
                                "from tco_result where mode = 'comparison' limit 1") == [
        ("electricity_usd_per_kwh",)]


def test_tco_option_result_has_a_row_per_option_of_each_comparison(published_tco):
    rows = query(published_tco, "select o.scenario, o.dataset_version_id, option, gpus, "
                                "annual_total_usd, jct_days, job_cost_usd, job_cost_p10, "
                                "job_cost_p90 from tco_option_result o "
                                "join tco_result r on r.id = o.result_id "
                                "order by r.id, option")
    nvl72 = ("gb200-nvl72", 4032, 94.1e6, 30.0, 7.7e6, 7.0e6, 8.5e6)
    hgx = ("hgx-h100-ib", 4032, 49.0e6, 30.0, 10.1e6, None, None)  # no range: no percentiles
    assert rows == [("nvl72-vs-hgx", version, *figures)
                    for version in (1, 2) for figures in (nvl72, hgx)]  # none for a training run


def test_tco_latest_gives_each_scenario_its_newest_result(published_tco):
    assert query(published_tco, "select scenario, dataset_version_id, mode, total_cost_usd "
                                "from tco_latest order by scenario") == [
        ("gpt-175b-run", 2, "training-run", 4.6e6), ("nvl72-vs-hgx", 2, "comparison", None)]
    assert duckdb_cli(published_tco, "select scenario, break_even_speedup from tco_latest "
                                     "order by 1") == [
        {"scenario": "gpt-175b-run", "break_even_speedup": None},
        {"scenario": "nvl72-vs-hgx", "break_even_speedup": 1.75}]


def test_the_result_tables_and_latest_views_comment_every_column(published):
    names = ("('tco_result', 'tco_option_result', 'tco_latest', 'c2c_latest', "
             "'serving_latest', 'flag_latest')")
    assert query(published, f"select table_name, column_name from duckdb_columns() "
                            f"where table_name in {names} and comment is null") == []
    assert query(published, f"select count(distinct table_name) from duckdb_columns() "
                            f"where table_name in {names}") == [(6,)]
    assert query(published, "select comment from duckdb_columns() where table_name = "
                            "'tco_latest' and column_name = 'total_cost_usd'") == query(
        published, "select comment from duckdb_columns() where table_name = 'tco_result' "
                   "and column_name = 'total_cost_usd'")


def test_the_models_calibration_errors_are_a_table_analysts_can_group(ledger, tmp_path,
                                                                       ingest, write_pack):
    from pipelines.jobs.c2c import fidelity_rows

    report = ingest(write_pack("v1.yaml", NVLINK_PACK))
    with Session(ledger) as session:
        version = dataset_version(session, report.dataset_version)
        meta = WarehouseMeta(version.id, version.content_hash, version.cutoff_at,
                             date(2026, 11, 22), version.cutoff_at, "test")
    rows = fidelity_rows()
    path = publish_warehouse(ledger, tmp_path / "w.duckdb", meta, SOURCE_KIND_RANK,
                             model_errors=rows)
    sets = query(path, "select calibration_set, count(*), avg(abs(error)) from model_error "
                       "group by all order by min(published_on)")
    assert sum(n for _, n, _ in sets) == len(rows) > 50
    assert "Korthikanti" in sets[0][0]
    korthikanti = [abs(r[-1]) for r in rows if r[2] == sets[0][0]]
    assert sets[0][2] == pytest.approx(sum(korthikanti) / len(korthikanti))
    # Every point says what it measured, on what, with which engine and layout: an analyst
    # groups by those columns, not by the set's prose title.
    assert query(path, "select count(*) from model_error where model is null or gpu is null "
                       "or engine is null or layout is null") == [(0,)]
    by_engine = dict(query(path, "select engine, count(*) from model_error "
                                 "where checks = 'serving' group by all"))
    assert {"sglang", "trt", "vllm"} <= set(by_engine)
    assert query(path, "select distinct checks from model_error order by 1") == [
        ("c2c",), ("serving",)]
    # The sign convention the table's comment states: positive when the model predicts more.
    assert query(path, "select count(*) from model_error where error_unit = '%' and "
                       "sign(error) <> sign(predicted - measured)") == [(0,)]
