"""The SkyPilot reader on the anycloud catalogs of 2026 (real files in the shared data): the
quirks each cloud's file has, read right. Azure writes Generation "V1,V2" unquoted, repeats
Price as SpotPrice where there is no spot market and leaves the GB200 SKU's accelerator
blank; GCP's GPU lines are DWS flex-start prices, not on-demand; Vast writes 0.00 for no spot."""

from __future__ import annotations

from pipelines.inputs.adapters import skypilot_catalog
from pipelines.inputs.adapters.base import AdapterOptions, Parsed
from tests.support.shared_data import shared_bytes


def read(name: str) -> tuple[bytes, Parsed]:
    data = shared_bytes("market", "skypilot-anycloud", name)
    return data, skypilot_catalog.parse(name.removesuffix(".gz"), data, AdapterOptions())


def rows(parsed: Parsed) -> dict[str, dict]:
    return {row.fields["item"]: row.fields for row in parsed.pack.rows}


def test_azure_2026_ingests_whole_with_its_unquoted_generation_column():
    data, parsed = read("azure-vms-2026-04-28.csv.gz")
    lines = len(data.decode().splitlines()) - 1
    assert parsed.rejected == []   # 27,085 lines were rejected as having 11 fields
    assert len(parsed.pack.rows) + parsed.skipped_lines >= lines - 1
    offer = rows(parsed)["azure-standard-nd96isr-h100-v5-eastus-on-demand"]
    assert offer["value"] == 98.32 / 8   # the line's Price over its 8 GPUs
    assert rows(parsed)["azure-standard-nd96isr-h100-v5-eastus-spot"]["value"] == \
        18.169536 / 8
    # H200 and GB200 repeat Price as SpotPrice: no spot market, so no spot offer.
    items = rows(parsed)
    assert "azure-standard-nd96isr-h200-v5-eastus2-on-demand" in items
    assert "azure-standard-nd96isr-h200-v5-eastus2-spot" not in items
    assert any("equal to the on-demand price" in note for note in parsed.notes)
    # GB200's accelerator is blank: its 4 GPUs come from the instance table.
    gb200 = items["azure-standard-nd128isr-ndr-gb200-v6-eastus-on-demand"]
    assert gb200["offer"]["gpus_per_instance"] == 4 and gb200["value"] == 108.16 / 4


def test_gcp_2026_gpu_lines_are_flex_start_prices_so_no_on_demand_offer_comes_of_them():
    _, parsed = read("gcp-vms-2026-04-28.csv.gz")
    assert not [r for r in parsed.pack.rows if r.fields["offer"]["instance_type"]
                .startswith(("a2-", "a3-", "a4-"))]
    assert any("DWS flex-start" in note for note in parsed.notes)
    assert parsed.rejected == []


def test_a_zero_spot_price_is_no_spot_market_not_a_bad_price():
    data, _ = read("lambda-vms-2026-04-28.csv")
    header, *lines = data.decode().splitlines()
    sxm = next(line for line in lines if line.startswith("gpu_8x_h100_sxm5,"))
    zero_spot = sxm.rstrip(",") + ",0.00"   # SpotPrice is the last column, empty at Lambda
    parsed = skypilot_catalog.parse("lambda-vms-2026-04-28.csv",
                                    f"{header}\n{sxm}\n".encode(), AdapterOptions())
    zeroed = skypilot_catalog.parse("lambda-vms-2026-04-28.csv",
                                    f"{header}\n{zero_spot}\n".encode(), AdapterOptions())
    assert zeroed.rejected == []
    assert [r.fields["offer"]["term"] for r in zeroed.pack.rows] == ["on_demand"]
    assert parsed.pack.rows  # the same line without a spot price is read alike
