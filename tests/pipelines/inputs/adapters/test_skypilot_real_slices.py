"""Issue 27, case 2 ("whole GPUs are dropped"), on slices of the real SkyPilot catalog files
(the shared skypilot README, "Slices of the published catalogs"): Azure's ND GB200 v6 and ND
MI300X v5 rows (AcceleratorName blank), GCP's A4 (host line 0.0, the price on the B200 line),
Lambda's instances, and Azure's NC80adis H100 v5 (untracked) come out priced or skipped, never
rejected."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import duckdb
import pytest

from pipelines.inputs.adapters import skypilot_catalog
from pipelines.inputs.adapters.base import AdapterOptions, Parsed
from tests.support.shared_data import fixture_path
from tests.support.warehouse import publish_test_warehouse

ON = date(2026, 11, 20)
# A GCP catalog's split prices are read as on-demand only before DWS flex-start
# (skypilot_catalog._GCP_GPU_LINES_FLEX_START_FROM): the arithmetic is tested on such a date.
BEFORE_FLEX_START = date(2023, 12, 11)
SLICES = ("azure-vms.csv", "gcp-vms.csv", "lambda-vms.csv", "runpod-vms.csv", "oci-vms.csv")


def real(name: str) -> Path:
    """A slice of a published catalog (a shared copy: the project keeps none)."""
    return fixture_path("skypilot", "real", name)


def read(name: str) -> Parsed:
    return skypilot_catalog.parse(name, real(name).read_bytes(),
                                  AdapterOptions(as_of=dated(name)))


def dated(name: str) -> date:
    """The slices' date, but GCP's before DWS flex-start, so its split prices are read."""
    return BEFORE_FLEX_START if name.startswith("gcp") else ON


def offers(name: str) -> dict[str, dict]:
    return {row.fields["item"]: row.fields["offer"] | {"value": row.fields["value"]}
            for row in read(name).pack.rows}


def data_lines(name: str) -> int:
    return len(real(name).read_text().splitlines()) - 1


@pytest.mark.parametrize("name", SLICES)
def test_nothing_in_a_real_slice_is_rejected_and_every_line_is_counted(name):
    parsed = read(name)
    assert parsed.rejected == []
    # Parsed.read counts rows + rejections; the skipped lines are counted apart. A line gives
    # up to two rows (on-demand and spot), so lines are counted by number.
    assert parsed.read == len(parsed.pack.rows) + len(parsed.rejected)
    lines = {row.line for row in parsed.pack.rows}
    assert len(lines) + parsed.skipped_lines == data_lines(name)


def test_azure_gb200_and_mi300x_are_priced_per_gpu_from_their_blank_accelerator_rows():
    rows = offers("azure-vms.csv")
    gb200 = rows["azure-standard-nd128isr-ndr-gb200-v6-eastus-on-demand"]
    assert (gb200["gpu"], gb200["gpus_per_instance"]) == ("gb200", 4)
    assert gb200["value"] == pytest.approx(100.0 / 4)
    assert rows["azure-standard-nd128isr-ndr-gb200-v6-westus3-on-demand"]["value"] == \
        pytest.approx(112.0 / 4)
    mi300x = rows["azure-standard-nd96is-mi300x-v5-eastus-on-demand"]
    assert (mi300x["gpu"], mi300x["gpus_per_instance"]) == ("amd-mi300x", 8)
    assert mi300x["value"] == pytest.approx(48.0 / 8)
    assert mi300x["price_written"] == "48.0"  # the whole VM's price, nothing added
    assert not any("gb200-v6" in key and key.endswith("-spot") for key in rows)  # no spot price


def test_azure_nc80adis_h100_nvl_is_skipped_as_untracked():
    parsed = read("azure-vms.csv")
    notes = " | ".join(parsed.notes)
    assert "NC80adis: 2 GPUs" in notes and "H100 NVL" in notes
    assert not any("nc80adis" in row.fields["item"] for row in parsed.pack.rows)


def test_gcp_a4_is_priced_by_its_b200_line_when_its_host_line_is_zero():
    rows = offers("gcp-vms.csv")
    # From 2024 the GPU line is DWS flex-start's price: the same lines give no on-demand offer.
    later = skypilot_catalog.parse("gcp-vms.csv", real("gcp-vms.csv").read_bytes(),
                                   AdapterOptions(as_of=ON))
    assert not any(r.fields["offer"]["instance_type"] == "a4-highgpu-8g"
                   for r in later.pack.rows)
    a4 = rows["gcp-a4-highgpu-8g-us-central1-on-demand"]
    assert (a4["gpu"], a4["gpus_per_instance"]) == ("b200", 8)
    assert a4["value"] == pytest.approx(90.216 / 8) and a4["value"] > 0
    assert a4["price_written"] == "0.0 + 90.216"
    assert rows["gcp-a4-highgpu-8g-us-central1-spot"]["value"] == pytest.approx(32.6064 / 8)
    assert rows["gcp-a4-highgpu-8g-us-west3-on-demand"]["value"] == pytest.approx(64.44 / 8)
    assert {row["region"] for row in rows.values()} == {"europe-west4", "us-central1", "us-west3"}
    assert all(row["value"] > 0 for row in rows.values())


def test_a_zero_host_price_with_a_zero_gpu_price_is_rejected_not_stored():
    text = real("gcp-vms.csv").read_text().replace("us-central1-b,90.216,32.6064",
                                                      "us-central1-b,0.0,0.0")
    parsed = skypilot_catalog.parse("gcp-vms.csv", text.encode(),
                                    AdapterOptions(as_of=BEFORE_FLEX_START))
    assert {r.field for r in parsed.rejected} == {"Price", "SpotPrice"}
    assert all(row.fields["value"] > 0 for row in parsed.pack.rows)


def test_a_zero_host_price_elsewhere_than_gcp_is_still_rejected():
    text = real("azure-vms.csv").read_text().replace(",100.0,,eastus", ",0.0,,eastus")
    parsed = skypilot_catalog.parse("azure-vms.csv", text.encode(), AdapterOptions(as_of=ON))
    assert [r.reason for r in parsed.rejected] == ["Price '0.0' is not a finite positive number"]


def test_lambda_h100_and_a100_offers_come_out_and_untracked_gpus_are_skipped():
    parsed = read("lambda-vms.csv")
    rows = offers("lambda-vms.csv")
    h100 = rows["lambda-gpu-8x-h100-sxm5-us-east-1-on-demand"]
    assert (h100["gpu"], h100["gpus_per_instance"], h100["value"]) == (
        "h100-sxm5", 8, pytest.approx(23.92 / 8))
    assert "lambda-gpu-8x-h100-sxm5-us-west-1-on-demand" in rows
    assert rows["lambda-gpu-1x-h100-pcie-us-east-1-on-demand"]["gpu"] == "h100-pcie"
    assert rows["lambda-gpu-8x-a100-us-east-1-on-demand"]["gpu"] == "a100-sxm4-40gb"
    assert rows["lambda-gpu-8x-a100-80gb-sxm4-us-east-1-on-demand"]["gpu"] == "a100-sxm4-80gb"
    assert len(rows) == 5  # no spot market on Lambda
    notes = " | ".join(parsed.notes)
    for why in ("GH200", "A6000", "RTX6000", "A10", "V100", "A100 PCIe 40 GB",
                "not a GPU instance"):
        assert why in notes


def test_runpod_h100_sxm5_is_priced_per_gpu_and_its_ambiguous_a100_is_skipped_with_why():
    """A neocloud's catalog: RunPod's nx H100 80GB HBM3 (GpuInfo H100_80GB_SXM5) are H100
    SXM5 at the instance price over its GPUs, on demand and spot; its A100-80GB, which does
    not say PCIe or SXM4, and its workstation GPUs are skipped, each with the reason."""
    parsed = read("runpod-vms.csv")
    rows = offers("runpod-vms.csv")
    eight = rows["runpod-8x-h100-80gb-hbm3-community-us-on-demand"]
    assert (eight["gpu"], eight["gpus_per_instance"]) == ("h100-sxm5", 8)
    assert eight["value"] == pytest.approx(35.92 / 8)
    assert rows["runpod-8x-h100-80gb-hbm3-community-us-spot"]["value"] == pytest.approx(19.92 / 8)
    assert {r["gpu"] for r in rows.values()} == {"h100-sxm5"} and len(rows) == 8
    notes = " | ".join(parsed.notes)
    for why in ("does not say PCIe or SXM4", "A40", "RTX4090"):
        assert why in notes


def test_oci_gpu_shapes_are_priced_per_gpu_from_their_own_column_order():
    """OCI's catalog orders its columns otherwise (Price after GpuInfo, then SpotPrice,
    Region, AvailabilityZone): its A100 and V100 shapes are priced per GPU on demand (no spot
    price written), its A10 and CPU shapes skipped."""
    rows = offers("oci-vms.csv")
    a100 = rows["oci-bm-gpu4-8-us-ashburn-1-on-demand"]
    assert (a100["gpu"], a100["gpus_per_instance"], a100["value"]) == (
        "a100-sxm4-40gb", 8, pytest.approx(24.4 / 8))
    assert rows["oci-bm-gpu-a100-v2-8-us-ashburn-1-on-demand"]["gpu"] == "a100-sxm4-80gb"
    assert rows["oci-vm-gpu3-1-us-ashburn-1-on-demand"]["gpu"] == "tesla-v100-sxm2"
    assert len(rows) == 3


@pytest.mark.parametrize("name", SLICES)
def test_each_real_slice_ingests_with_nothing_rejected(ledger, ingest, tmp_path, name):
    provider = name.split("-")[0]
    catalog = tmp_path / provider / "vms.csv"
    catalog.parent.mkdir()
    catalog.write_bytes(real(name).read_bytes())
    [file] = ingest(catalog, as_of=dated(name)).files
    assert (file.outcome, file.format, file.rejected) == ("ingested", "skypilot-catalog", 0)
    assert file.accepted == len(read(name).pack.rows)


def test_a_catalog_alone_in_an_empty_ledger_publishes_a_warehouse_naming_its_gpus(
        ledger, ingest, clock, tmp_path):
    """Without the source packs, the offers' GPUs are still items (named by their keys until
    a pack names them), so the warehouse's checks pass and market_offer joins to item."""
    report = ingest(real("lambda-vms.csv"), as_of=ON)
    path = publish_test_warehouse(ledger, report.dataset_version,
                                  tmp_path / "warehouse.duckdb", ON, clock.tick)

    with duckdb.connect(str(path), read_only=True) as con:
        gpus = con.execute("select distinct m.gpu, i.kind from market_offer m "
                           "join item i on i.key = m.gpu order by 1").fetchall()
    named = sorted({offer["gpu"] for offer in offers("lambda-vms.csv").values()})
    assert "h100-sxm5" in named
    assert gpus == [(gpu, "gpu") for gpu in named]
