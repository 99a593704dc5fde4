"""What a new user tries in the first hour: listing the items and metrics, asking for a value
the item does not have, and exporting twice into one folder."""

from __future__ import annotations

import json

from tests.conftest import NVLINK_PACK


def test_list_items_and_metrics(cli, write_pack):
    cli("ingest", str(write_pack("nvlink.yaml", NVLINK_PACK)))
    items = cli("list", "items", "--json")
    assert items.exit_code == 0, items.output
    assert json.loads(items.stdout) == [
        {"item": "gb200-nvl72", "name": "GB200 NVL72", "kind": "rack", "metrics": 1,
         "values": 1},
        {"item": "nvlink-5", "name": "NVLink 5.0", "kind": "scaleup_fabric", "metrics": 1,
         "values": 1}]
    metrics = json.loads(cli("list", "metrics", "--item", "gb200-nvl72", "--json").stdout)
    assert metrics == [{"metric": "rack_it_power", "unit": "kW", "items": 1, "values": 1}]
    shown = cli("list", "metrics").stdout
    assert "scaleup_bw_per_gpu_bidir" in shown and "rack_it_power" in shown
    assert cli("list", "things").exit_code == 2


def test_a_metric_the_item_does_not_have_is_named_with_the_items_metrics(cli, write_pack):
    cli("ingest", str(write_pack("nvlink.yaml", NVLINK_PACK)))
    unknown = cli("value", "gb200-nvl72", "rack_power")
    assert unknown.exit_code == 3
    said = " ".join(unknown.stderr.split())
    assert "no metric 'rack_power' exists; gb200-nvl72's metrics are rack_it_power" in said
    other = " ".join(cli("value", "gb200-nvl72", "tdp").stderr.split())
    assert "gb200-nvl72 has no tdp; gb200-nvl72's metrics are rack_it_power" in other
    missing = " ".join(cli("value", "gb300-nvl72", "rack_it_power").stderr.split())
    assert "the ledger knew no item 'gb300-nvl72' then" in missing
    dated = cli("value", "gb200-nvl72", "rack_it_power", "--as-of", "2020-01-01")
    assert dated.exit_code == 3 and "no value for gb200-nvl72 rack_it_power valid on " \
        "2020-01-01" in " ".join(dated.stderr.split())


def test_export_twice_into_one_folder_needs_force(cli, write_pack, tmp_path):
    cli("ingest", str(write_pack("nvlink.yaml", NVLINK_PACK)))
    folder = tmp_path / "out"
    assert cli("export", str(folder)).exit_code == 0
    again = cli("export", str(folder))
    assert again.exit_code == 2
    said = " ".join(again.stderr.split())
    assert f"{folder} already holds" in said and "nothing written (give --force" in said
    assert cli("export", str(folder), "--force").exit_code == 0
    assert (folder / "current_value.parquet").is_file()
