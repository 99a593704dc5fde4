"""The analysts' marts: one row per GPU with its figures and their sources, one per
interconnect generation, every GPU-hour price with its terms on both clocks, and the price
index; JSON columns typed JSON; every table exported as Parquet or CSV."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from pathlib import Path

import duckdb
import pytest

from db.engine import Session
from db.queries import dataset_version
from db.warehouse import WarehouseMeta, publish_warehouse
from db.warehouse_export import export_warehouse
from models.resolve import SOURCE_KIND_RANK
from pipelines.ledger.market import market_index, price_index_rows
from tests.conftest import ModuleLedger
from tests.pipelines.jobs.test_tco_rent import PRICES

SPECS = """
source: {key: vendor-sheets, title: Vendor datasheets, kind: vendor_datasheet,
         publisher: NVIDIA, published_on: 2025-01-01}
items:
  - {key: h100-sxm5, name: H100 SXM5, kind: gpu, vendor: NVIDIA, family: Hopper}
  - {key: b200, name: B200, kind: gpu, vendor: NVIDIA, family: Blackwell}
  - {key: nvlink-5, name: NVLink 5, kind: scaleup_fabric, vendor: NVIDIA, family: NVLink}
  - {key: ib-xdr, name: InfiniBand XDR, kind: scaleout_fabric, vendor: IBTA, family: InfiniBand}
observations:
  - {item: h100-sxm5, metric: peak_dense_bf16, value: 989.5, unit: TFLOP/s, as_of: 2022-03-22,
     status: C}
  - {item: h100-sxm5, metric: hbm_capacity, value: 80, unit: GB, as_of: 2022-03-22, status: C}
  - {item: b200, metric: peak_dense_bf16, value: 2250, unit: TFLOP/s, as_of: 2024-03-18,
     status: C}
  - {item: nvlink-5, metric: scaleup_bw_per_gpu_bidir, value: 1.8, unit: TB/s,
     as_of: 2024-03-18, status: C}
  - {item: ib-xdr, metric: port_rate, value: 800, unit: Gb/s, as_of: 2024-03-18, status: C}
"""


@pytest.fixture(scope="module")
def published(module_ledgers: Callable[[str], ModuleLedger]) -> Path:
    """Built once per module and dialect: its tests only read the file."""
    module_ledger = module_ledgers("marts")
    ledger, clock, write_pack = module_ledger.engine, module_ledger.clock, module_ledger.write_pack
    module_ledger.ingest(write_pack("specs.yaml", SPECS), write_pack("prices.yaml", PRICES))
    clock.tick(days=7)
    # The same price list corrected (same date, another price): it supersedes.
    report = module_ledger.ingest(write_pack("prices-2.yaml",
                                             PRICES.replace("value: 6.0,", "value: 2.0,")))
    with Session(ledger) as session:
        version = dataset_version(session, report.dataset_version)
        index = price_index_rows(market_index(session, up_to=version.id))
        meta = WarehouseMeta(version.id, version.content_hash, version.cutoff_at,
                             date(2026, 11, 22), clock.tick(), "test")
    return publish_warehouse(ledger, module_ledger.folder / "warehouse.duckdb", meta,
                             SOURCE_KIND_RANK, price_index=index)


def query(path: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(path), read_only=True) as con:
        return con.execute(sql).fetchall()


def test_gpu_spec_wide_puts_each_gpus_figures_side_by_side_with_their_sources(published):
    rows = query(published, "select gpu, peak_bf16, peak_bf16_unit, peak_bf16_source, hbm, "
                            "hbm_unit from gpu_spec_wide order by gpu")
    assert rows == [("b200", 2250.0, "TFLOP/s", "vendor-sheets", None, None),
                    ("h100-sxm5", 989.5, "TFLOP/s", "vendor-sheets", 80.0, "GB")]


def test_interconnect_generation_gives_each_generation_its_bandwidth_and_scope(published):
    rows = query(published, "select family, generation, bandwidth, bandwidth_unit, "
                            "bandwidth_scope, introduced_on from interconnect_generation "
                            "order by family")
    assert rows == [("InfiniBand", "ib-xdr", 800.0, "Gb/s", "per port", date(2024, 3, 18)),
                    ("NVLink", "nvlink-5", 1800.0, "GB/s", "per GPU, both directions",
                     date(2024, 3, 18))]


def test_gpu_hour_price_keeps_a_superseded_price_beside_the_live_one(published):
    rows = query(published, "select provider, usd_per_gpu_hour, live from gpu_hour_price "
                            "where provider = 'c' order by known_at")
    assert rows == [("c", 6.0, False), ("c", 2.0, True)]


def test_gpu_hour_price_says_until_when_a_price_holds(ledger, ingest, write_pack, clock,
                                                      tmp_path):
    ingest(write_pack("prices.yaml", PRICES.replace(
        "as_of: 2026-11-01,\n     status: C, offer: {provider: a",
        "as_of: 2026-11-01, valid_to: 2027-02-01,\n     status: C, offer: {provider: a")))
    with Session(ledger) as session:
        version = dataset_version(session, 1)
        meta = WarehouseMeta(version.id, version.content_hash, version.cutoff_at,
                             date(2026, 11, 22), clock.tick(), "test")
    published = publish_warehouse(ledger, tmp_path / "w.duckdb", meta, SOURCE_KIND_RANK)
    rows = query(published, "select provider, as_of, valid_to from gpu_hour_price "
                            "order by provider")
    assert rows == [("a", date(2026, 11, 1), date(2027, 2, 1)), ("b", date(2026, 11, 1), None),
                    ("c", date(2026, 11, 1), None)]


def test_the_price_index_holds_every_version_with_its_change(published):
    rows = query(published, "select dataset_version, median_usd, cheapest_provider "
                            "from price_index where gpu = 'h100-sxm5' order by 1")
    assert [(median, cheapest) for _, median, cheapest in rows] == [(4.0, "a"), (3.0, "c")]


def test_json_columns_are_typed_json(published):
    types = dict(query(published, "select table_name || '.' || column_name, data_type "
                                  "from duckdb_columns() where column_name in "
                                  "('result_json', 'definition', 'metadata_json') "
                                  "and table_name in ('scenario', 'c2c_result', 'tco_result', "
                                  "'measurement_run')"))
    assert set(types.values()) == {"JSON"} and len(types) == 4


@pytest.mark.parametrize("file_format", ["parquet", "csv"])
def test_export_writes_every_table_and_mart_with_its_rows(published, tmp_path, file_format):
    written = export_warehouse(published, tmp_path / "export", file_format)
    names = {w.table for w in written}
    assert {"gpu_spec_wide", "gpu_hour_price", "price_index", "observation"} <= names
    for w in written:
        reader = "read_parquet" if file_format == "parquet" else "read_csv_auto"
        with duckdb.connect() as con:
            (rows,) = con.execute(f"select count(*) from {reader}('{w.path}')").fetchone()
        assert rows == w.rows and w.path.suffix == f".{file_format}"
