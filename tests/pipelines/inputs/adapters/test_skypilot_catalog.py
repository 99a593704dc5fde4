"""The SkyPilot catalog vms.csv adapter (the shared skypilot README): on-demand and spot prices
per instance-hour become USD per GPU-hour, one offer per region; GCP's split host and GPU
prices are added up; the instance table is checked against the catalog."""

from __future__ import annotations

import csv
import io
from datetime import date

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipelines.inputs.adapters import skypilot_catalog
from pipelines.inputs.adapters.base import AdapterError, AdapterOptions, Parsed
from pipelines.inputs.adapters.registry import detect_format, read_file
from tests.conftest import examples
from tests.support.shared_data import fixture_path

ON = date(2025, 11, 20)
# GCP's split host + GPU prices are on-demand only in catalogs from before DWS flex-start
# (skypilot_catalog._GCP_GPU_LINES_FLEX_START_FROM); the arithmetic is tested on such a date.
BEFORE_FLEX_START = date(2023, 12, 11)


def catalog(name: str) -> bytes:
    """aws-vms.csv or gcp-vms.csv, a catalog sample (a shared copy: the project keeps none)."""
    return fixture_path("skypilot", name).read_bytes()


def read(data: bytes | None = None, name: str = "aws-vms.csv",
         as_of: date | None = ON) -> Parsed:
    data = catalog("aws-vms.csv") if data is None else data
    return skypilot_catalog.parse(name, data, AdapterOptions(as_of=as_of))


def by_item(parsed: Parsed) -> dict[str, dict]:
    return {row.fields["item"]: row.fields for row in parsed.pack.rows}


def data_lines(data: bytes) -> int:
    return len(data.decode().splitlines()) - 1


def accounted(parsed: Parsed) -> int:
    """Lines that gave a row or a rejection, plus the skipped ones."""
    lines = {row.line for row in parsed.pack.rows} | {r.line for r in parsed.rejected}
    return len(lines) + parsed.skipped_lines


# --- detect and name -------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["aws-vms.csv", "gcp-vms.csv"])
def test_a_catalog_is_recognised_by_its_header(name):
    data = catalog(name)
    assert skypilot_catalog.detect("prices.txt", data) == "skypilot-catalog"
    assert detect_format("gcp-vms.csv", data) == "skypilot-catalog"


def test_a_source_pack_csv_is_not_a_catalog():
    pack = b"source,item,metric,value,unit,as_of\ns,h100-sxm5,tdp,700,W,2022-03-22\n"
    assert skypilot_catalog.detect("aws-vms.csv", pack) is None


@pytest.mark.parametrize("name, provider", [
    ("skypilot-catalog/catalogs/v7/aws/vms.csv", "aws"), ("catalogs\\v7\\gcp\\vms.csv", "gcp"),
    ("aws-vms.csv", "aws"), ("Azure_vms.csv", "azure"), ("vms-lambda.csv", "lambda"),
    ("vms.csv", None), ("prices.csv", None), ("aws-vms-2025.csv", None),
])
def test_the_provider_is_told_by_the_path(name, provider):
    assert skypilot_catalog.provider_of(name) == provider


def test_a_file_whose_cloud_cannot_be_told_or_with_no_date_is_refused():
    with pytest.raises(AdapterError, match="name the file <provider>-vms.csv"):
        read(name="vms.csv")
    with pytest.raises(AdapterError, match=r"as_of needed \(--as-of, or a YYYY-MM-DD"):
        read(as_of=None)


def test_without_as_of_a_date_in_the_file_name_dates_the_catalog():
    parsed = read(name="aws-vms-2026-11-16.csv", as_of=None)
    assert {row.fields["as_of"] for row in parsed.pack.rows} == {"2026-11-16"}


# --- AWS: one line a zone --------------------------------------------------------------------

def test_every_line_is_a_row_a_rejection_or_a_counted_skip():
    parsed = read()
    assert parsed.read == len(parsed.pack.rows) + len(parsed.rejected) == 8 + 3
    assert accounted(parsed) == data_lines(catalog("aws-vms.csv"))


def test_on_demand_and_spot_are_two_offers_per_instance_hour_over_its_gpus():
    rows = by_item(read())
    on_demand = rows["aws-p5-48xlarge-us-east-1-on-demand"]
    assert on_demand["value"] == pytest.approx(98.32 / 8) == pytest.approx(12.29)
    assert on_demand["offer"] == {
        "provider": "aws", "region": "us-east-1", "term": "on_demand",
        "instance_type": "p5.48xlarge", "gpu": "h100-sxm5", "gpus_per_instance": 8,
        "price_written": "98.32", "currency": "USD", "unit_written": "hour"}
    assert rows["aws-p5-4xlarge-us-east-1-on-demand"]["value"] == pytest.approx(6.88)  # 1 GPU


def test_the_region_offer_is_its_lowest_zone_price():
    parsed = read()
    spot = by_item(parsed)["aws-p5-48xlarge-us-east-1-spot"]
    assert spot["value"] == pytest.approx(29.7016 / 8)
    assert spot["quote"].endswith("lowest of 3 zones (29.7016 to 35.3984 USD per hour)")
    assert "aws-p5-48xlarge-us-west-2-spot" not in by_item(parsed)  # no spot price there
    assert any("the same offer in another availability zone" in n for n in parsed.notes)


def test_an_unlisted_instance_is_priced_by_an_unambiguous_accelerator_name():
    gb200 = by_item(read())["aws-p6e-gb200-36xlarge-us-east-1-on-demand"]
    assert (gb200["offer"]["gpu"], gb200["offer"]["gpus_per_instance"]) == ("gb200", 4)
    assert gb200["value"] == pytest.approx(15.0)


def test_the_catalog_is_checked_against_the_instance_table():
    found = {(r.line, r.field): r.reason for r in read().rejected}
    assert found == {
        (7, "AcceleratorName"): ("p4de.24xlarge has A100 here but data/instances.yaml says "
                                 "a100-sxm4-80gb (SkyPilot name A100-80GB): check the table"),
        (13, "Price"): "Price 'n/a' is not a finite positive number",
        (14, "InstanceType"): ("unknown GPU instance p5x.48xlarge (H100): add it to "
                               "data/instances.yaml with its source")}
    assert "aws-p5e-48xlarge-us-east-2-spot" in by_item(read())  # its spot price is fine


def test_untracked_and_non_gpu_lines_are_skipped_with_their_reason():
    notes = " | ".join(read().notes)
    assert "2 line(s) skipped: not a GPU instance" in notes
    assert "NVIDIA A10G: no ledger item" in notes and "Trainium" in notes


def test_the_catalog_is_one_dataset_source_per_provider_and_date():
    parsed = read()
    [source] = parsed.pack.sources
    assert (source.key, source.kind) == ("skypilot-catalog-aws-2025-11-20", "dataset")
    assert {row.fields["as_of"] for row in parsed.pack.rows} == {"2025-11-20"}


# --- GCP: the host and its GPUs on two lines -------------------------------------------------

def test_a_gcp_vm_price_is_its_host_line_plus_its_gpu_line():
    parsed = read(catalog("gcp-vms.csv"), "gcp-vms.csv", as_of=BEFORE_FLEX_START)
    rows = by_item(parsed)
    a2 = rows["gcp-a2-highgpu-1g-us-central1-on-demand"]
    assert a2["value"] == pytest.approx(0.73948 + 2.933908)
    assert a2["offer"]["price_written"] == "0.73948 + 2.933908"
    assert rows["gcp-a2-highgpu-1g-us-central1-spot"]["value"] == pytest.approx(0.29576 + 0.8802)
    a3 = rows["gcp-a3-highgpu-8g-us-central1-on-demand"]
    assert a3["value"] == pytest.approx((9.46006 + 79.02942) / 8)
    mega = rows["gcp-a3-megagpu-8g-us-central1-on-demand"]
    assert mega["value"] == pytest.approx((10.26006 + 82.59) / 8)  # H100-MEGA, not H100
    raw = next(r for r in parsed.pack.rows if r.fields is a2).raw_text
    assert raw.splitlines()[1].startswith(",,,A100,1,")


def test_a_gcp_host_with_no_gpu_line_is_rejected_and_lines_add_up():
    parsed = read(catalog("gcp-vms.csv"), "gcp-vms.csv", as_of=BEFORE_FLEX_START)
    [rejected] = parsed.rejected
    assert (rejected.line, rejected.field) == (4, "AcceleratorName")
    assert "no H100 x 8 line prices its GPUs in europe-west4-b" in rejected.reason
    assert accounted(parsed) == data_lines(catalog("gcp-vms.csv"))
    assert any(n.startswith("5 line(s) skipped: accelerator-only lines") for n in parsed.notes)


# --- properties ------------------------------------------------------------------------------

FAST = settings(max_examples=examples(150), deadline=None,
                suppress_health_check=[HealthCheck.too_slow])
# aws-vms.csv's header, the columns of the catalogs the properties write.
HEADER = ["InstanceType", "AcceleratorName", "AcceleratorCount", "vCPUs", "MemoryGiB", "GpuInfo",
          "Price", "SpotPrice", "Region", "AvailabilityZone"]
# No bare CR (it would end a record: the csv writer quotes only \n) and no lone surrogates.
cell = st.one_of(st.sampled_from(["", "p5.48xlarge", "p4d.24xlarge", "g5.xlarge", "x.large",
                                  "H100", "A100", "GB200", "L4", "8", "8.0", "1", "0.5", "-3",
                                  "98.32", "n/a", "inf", "1e400", "us-east-1", "use1-az2", '"']),
                 st.text(st.characters(blacklist_characters="\r", blacklist_categories=("Cs",)),
                         max_size=6))


def test_the_written_catalogs_have_the_samples_columns():
    assert catalog("aws-vms.csv").decode().splitlines()[0].split(",") == HEADER


@FAST
@given(st.lists(st.lists(cell, min_size=len(HEADER), max_size=len(HEADER)), max_size=10),
       st.sampled_from(["aws-vms.csv", "gcp-vms.csv"]))
def test_random_lines_are_all_accounted_for(lines, name):
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(HEADER)
    writer.writerows(lines)
    data = out.getvalue().encode()
    parsed = read(data, name)
    assert parsed.read == len(parsed.pack.rows) + len(parsed.rejected)
    assert accounted(parsed) == sum(1 for line in lines if any(c.strip() for c in line))


@FAST
@given(st.binary(max_size=300))
def test_arbitrary_bytes_are_read_or_refused(data):
    try:
        parsed = read_file("aws-vms.csv", b"InstanceType,AcceleratorName,AcceleratorCount,Price,"
                                          b"Region\n" + data, AdapterOptions(as_of=ON))
    except AdapterError:
        return
    assert parsed.read == len(parsed.pack.rows) + len(parsed.rejected)
