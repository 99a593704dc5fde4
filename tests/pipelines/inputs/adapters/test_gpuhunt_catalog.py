"""The gpuhunt catalog adapter: a provider's catalog.zip (gpuhunt's v2 CSV) becomes one offer
per GPU instance, location and term, mapped to the ledger's GPU items; a fraction of a GPU, an
untracked GPU and GCP's DWS rows are skipped, an ambiguous name is kept for review, and an
empty or broken catalog is refused whole.

The catalogs are written with gpuhunt's own writer (`storage.dump`, the code dstack publishes
them with) from real offers: Lambda's catalog of 2026-04-28 as the anycloud SkyPilot mirror
published it (no gpuhunt catalog file is in the shared data)."""

from __future__ import annotations

import csv
import io
import tempfile
import zipfile
from datetime import date
from pathlib import Path

import pytest
from gpuhunt import CatalogItem
from gpuhunt._internal.models import AcceleratorVendor
from gpuhunt._internal.storage import dump
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipelines.inputs.adapters import gpuhunt_catalog
from pipelines.inputs.adapters.base import AdapterError, AdapterOptions, Parsed
from pipelines.inputs.adapters.registry import detect_format
from tests.conftest import examples
from tests.support.shared_data import shared_bytes

NAME = "gpuhunt-lambdalabs-2026-04-28.zip"


def item(instance: str = "gpu_8x_h100_sxm5", gpu: str | None = "H100", count: int = 8,
         price: float = 23.92, location: str = "us-east-1", memory: float | None = 80,
         spot: bool = False, flags: list[str] | None = None,
         provider: str = "lambdalabs") -> CatalogItem:
    return CatalogItem(provider=provider, instance_name=instance, location=location,
                       price=price, cpu=208, memory=1800, gpu_count=count, gpu_name=gpu,
                       gpu_memory=memory, spot=spot, disk_size=None,
                       gpu_vendor=AcceleratorVendor.NVIDIA if count else None,
                       flags=flags or [])


def catalog_zip(items: list[CatalogItem], provider: str = "lambdalabs") -> bytes:
    """A catalog.zip as gpuhunt publishes it: `<provider>.csv` written by gpuhunt itself."""
    folder = Path(tempfile.mkdtemp())
    dump(items, str(folder / f"{provider}.csv"))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.write(folder / f"{provider}.csv", f"{provider}.csv")
    return out.getvalue()


def real_lambda_items() -> list[CatalogItem]:
    """Lambda's real offers of 2026-04-28 (SkyPilot's columns) as gpuhunt items."""
    text = shared_bytes("market", "skypilot-anycloud", "lambda-vms-2026-04-28.csv").decode()
    items = []
    for row in csv.DictReader(io.StringIO(text)):
        gpus = int(float(row["AcceleratorCount"] or 0))
        memory = None
        if "SizeInMiB" in row["GpuInfo"]:
            memory = int(row["GpuInfo"].split("'SizeInMiB': ")[1].split("}")[0]) / 1024
        items.append(item(row["InstanceType"], row["AcceleratorName"] or None, gpus,
                          float(row["Price"]), row["Region"], memory))
    return items


def read(data: bytes, name: str = NAME) -> Parsed:
    return gpuhunt_catalog.parse(name, data, AdapterOptions())


def accounted(parsed: Parsed) -> int:
    return len(parsed.pack.rows) + len(parsed.rejected) + parsed.skipped_lines


def by_item(parsed: Parsed) -> dict[str, dict]:
    return {row.fields["item"]: row.fields for row in parsed.pack.rows}


def test_a_real_catalog_gives_one_offer_per_instance_location_and_term():
    items = real_lambda_items()
    data = catalog_zip(items)
    assert detect_format(NAME, data) == gpuhunt_catalog.FORMAT
    parsed = read(data)
    assert accounted(parsed) == len(items)        # every row read is accounted for
    rows = by_item(parsed)
    sxm = rows["lambdalabs-gpu-8x-h100-sxm5-us-east-1-on-demand"]
    assert sxm["offer"]["gpu"] == "h100-sxm5" and sxm["offer"]["gpus_per_instance"] == 8
    assert sxm["as_of"] == "2026-04-28"           # the catalog's date, from its name
    assert sxm["value"] == pytest.approx(float(sxm["offer"]["price_written"]) / 8)
    # Listed instances keep their table entry; B200, unlisted, is priced by gpuhunt's name.
    gpus = {r["offer"]["instance_type"]: r["offer"]["gpu"] for r in rows.values()}
    assert gpus["gpu_1x_h100_pcie"] == "h100-pcie"
    assert gpus["gpu_8x_b200_sxm6"] == "b200"
    assert "gpu_1x_gh200" not in gpus and "gpu_1x_a10" not in gpus
    assert any("GH200" in note for note in parsed.notes)
    assert parsed.pack.sources[0].key == "gpuhunt-lambdalabs-2026-04-28"


def test_a_fraction_of_a_gpu_is_not_a_gpu():
    parsed = read(catalog_zip([item("h200-slice", "H200", 1, 1.0, memory=70),
                               item("h200-whole", "H200", 1, 3.5, memory=141)]))
    assert [r.fields["offer"]["instance_type"] for r in parsed.pack.rows] == ["h200-whole"]
    assert any("a fraction of a GPU (H200 with 70 GB of 141)" in n for n in parsed.notes)


def test_an_ambiguous_name_on_an_unlisted_instance_is_kept_for_review():
    parsed = read(catalog_zip([item("h100-mystery", "H100", 8)]))
    [rejected] = parsed.rejected
    assert (rejected.line, rejected.field) == (2, "gpu_name")
    assert "SXM5 or the PCIe card" in rejected.reason and "h100-mystery" in rejected.raw_text


def test_a_listed_instance_must_agree_with_the_table_on_its_gpus():
    parsed = read(catalog_zip([item("gpu_8x_h100_sxm5", "H100", 4)]))
    [rejected] = parsed.rejected
    assert rejected.field == "gpu_count" and "data/instances.yaml says 8" in rejected.reason


def test_gcp_dws_rows_spot_and_repeats():
    items = [item("a3-highgpu-8g", "H100", 8, 88.0, "us-central1", flags=["gcp-dws-calendar-mode"],
                  provider="gcp"),
             item("a3-highgpu-8g", "H100", 8, 90.0, "us-central1", provider="gcp"),
             item("a3-highgpu-8g", "H100", 8, 88.5, "us-central1", provider="gcp"),
             item("a3-highgpu-8g", "H100", 8, 30.0, "us-central1", spot=True, provider="gcp")]
    parsed = read(catalog_zip(items, "gcp"), "gpuhunt-gcp-2026-11-30.zip")
    rows = by_item(parsed)
    assert rows["gcp-a3-highgpu-8g-us-central1-on-demand"]["offer"]["price_written"] == "88.5"
    assert rows["gcp-a3-highgpu-8g-us-central1-spot"]["offer"]["term"] == "spot"
    assert any("DWS calendar-mode" in n for n in parsed.notes)
    assert accounted(parsed) == len(items)


def test_a_bad_price_is_rejected_naming_its_line_and_field():
    good = catalog_zip([item("gpu_8x_h100_sxm5")])
    with zipfile.ZipFile(io.BytesIO(good)) as archive:
        text = archive.read("lambdalabs.csv").decode()
    header, line = text.splitlines()[:2]
    bad = "\n".join([header, line, line.replace("23.92", "cheap", 1)]) + "\n"
    parsed = read(bad.encode(), "gpuhunt-lambdalabs-2026-04-28.csv")
    [rejected] = parsed.rejected
    assert (rejected.line, rejected.field) == (3, "price")
    assert len(parsed.pack.rows) == 1


@pytest.mark.parametrize("data, reason", [
    (b"", "empty catalog"),
    (b"PK\x03\x04" + b"\x00" * 90, "broken catalog: not a readable zip archive (94 bytes)"),
])
def test_an_empty_or_broken_catalog_is_refused_whole(data, reason):
    with pytest.raises(AdapterError, match=reason.replace("(", r"\(").replace(")", r"\)")):
        read(data, "gpuhunt-lambdalabs-2026-04-28.zip" if data else
             "gpuhunt-lambdalabs-2026-04-28.csv")


def test_a_header_only_catalog_is_refused_as_empty():
    empty = catalog_zip([])
    with pytest.raises(AdapterError, match="empty catalog"):
        read(empty)


def test_an_archive_without_the_providers_csv_is_refused():
    with pytest.raises(AdapterError, match="holds gcp.csv, not lambdalabs.csv"):
        read(catalog_zip([item()], "gcp"))


def test_an_archive_that_inflates_past_the_file_limit_is_refused_before_inflating():
    from pipelines.inputs.limits import DEFAULT_LIMITS

    limits = DEFAULT_LIMITS.__class__(**{**DEFAULT_LIMITS.__dict__, "max_file_bytes": 2000})
    big = catalog_zip([item(location=f"region-{i}") for i in range(200)])
    assert len(big) < 2000
    with pytest.raises(AdapterError, match="inflates to"):
        gpuhunt_catalog.parse(NAME, big, AdapterOptions(limits=limits))


_rows = st.lists(st.tuples(
    st.sampled_from(["gpu_8x_h100_sxm5", "gpu_1x_b200_sxm6", "odd-box", "gpu_1x_gh200"]),
    st.sampled_from(["H100", "B200", "GH200", "L4", "NEWGPU", None]),
    st.integers(0, 8), st.floats(0.01, 500, allow_nan=False), st.sampled_from(["a", "b"]),
    st.one_of(st.none(), st.floats(1, 300)), st.booleans()), max_size=25)


@settings(max_examples=examples(120), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(_rows)
def test_every_row_read_is_an_offer_a_rejection_or_a_skip(rows):
    items = [item(i, g, c, p, loc, m, spot) for i, g, c, p, loc, m, spot in rows]
    if not items:
        return
    parsed = read(catalog_zip(items))
    assert accounted(parsed) == len(items)
    for row in parsed.pack.rows:
        assert row.fields["value"] > 0 and row.fields["as_of"] == date(2026, 4, 28).isoformat()
