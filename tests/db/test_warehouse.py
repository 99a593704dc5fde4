"""The analyst warehouse: explicit DDL, history with both clocks, current values, comments,
readable by the duckdb CLI analysts use, and replaced atomically."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from datetime import date
from pathlib import Path

import duckdb
import pytest

from db.engine import Session
from db.queries import dataset_version
from db.warehouse import WarehouseMeta, publish_warehouse
from models.resolve import SOURCE_KIND_RANK
from tests.conftest import NVLINK_PACK


@pytest.fixture
def published(ledger, ingest, write_pack, clock, tmp_path) -> Path:
    ingest(write_pack("v1.yaml", NVLINK_PACK))
    clock.tick()
    report = ingest(write_pack("v2.yaml", NVLINK_PACK.replace("value: 1.8,", "value: 1.9,")))
    with Session(ledger) as session:
        version = dataset_version(session, report.dataset_version)
        meta = WarehouseMeta(version.id, version.content_hash, version.cutoff_at,
                             date(2026, 11, 22), clock.tick(), "test")
    return publish_warehouse(ledger, tmp_path / "out" / "warehouse.duckdb", meta,
                             SOURCE_KIND_RANK)


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
    tables = query(published, "select table_name from duckdb_tables() where comment is null")
    assert tables == []


def test_the_duckdb_cli_analysts_use_opens_it(published):
    cli = shutil.which("duckdb") or str(Path(sys.executable).parent / "duckdb")
    result = subprocess.run([cli, "-json", "-readonly", str(published), "-c",
                             "select count(*) as n from current_value"],
                            capture_output=True, text=True, check=True)
    assert json.loads(result.stdout) == [{"n": 2}]


def test_a_failed_build_leaves_the_previous_warehouse_intact(published, ledger, monkeypatch):
    before = published.read_bytes()
    meta = WarehouseMeta(2, "x" * 64, published_cutoff(published), date(2026, 11, 23),
                         published_cutoff(published), "test")
    broken_ranks = {"vendor_datasheet": None}  # NOT NULL violation halfway through the build
    with pytest.raises(duckdb.Error):
        publish_warehouse(ledger, published, meta, broken_ranks)
    assert published.read_bytes() == before
    assert not published.with_name(published.name + ".tmp").exists()


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
