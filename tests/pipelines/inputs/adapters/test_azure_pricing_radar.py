"""The azure-pricing-radar adapter: the tracker's per-region VM price files (the real
westeurope, swedencentral files of 2026-08-15 and 2026-08-22 in the shared data) become USD per
GPU-hour of Linux GPU VMs, on-demand and spot, in the region Azure calls them (`westeurope` for
the file `vm-eu-west`), dated by the file's name; Low Priority, savings-plan prices, Windows
and non-GPU sizes are counted skips; a GPU size the instance table does not list is rejected."""

from __future__ import annotations

import json
from datetime import date
from decimal import Decimal
from functools import lru_cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipelines.inputs.adapters import azure_prices, azure_pricing_radar
from pipelines.inputs.adapters.azure_pricing_radar import FORMAT, arm_sku_name
from pipelines.inputs.adapters.base import AdapterError, AdapterOptions, Parsed
from tests.conftest import examples
from tests.support.shared_data import shared_bytes

WEST = "vm-eu-west_2026-08-15.json"
WEST_LATER = "vm-eu-west_2026-08-22.json"
SWEDEN = "vm-swedencentral_2026-08-22.json"
H100 = "azure-standard-nd96isr-h100-v5-westeurope"


def real(name: str) -> bytes:
    """The published bytes of a shared file (kept as `<name>.gz`)."""
    return shared_bytes("market", "azure-pricing-radar-eu", f"{name}.gz")


def read(data: bytes, name: str = WEST, **options) -> Parsed:
    return azure_pricing_radar.parse(name, data, AdapterOptions(**options))


@lru_cache(maxsize=4)
def read_real(name: str) -> Parsed:
    return read(real(name), name)


def by_item(parsed: Parsed) -> dict[str, dict]:
    return {row.fields["item"]: row.fields for row in parsed.pack.rows}


def accounted(parsed: Parsed) -> int:
    return len(parsed.pack.rows) + len(parsed.rejected) + parsed.skipped_lines


def linux_meter(data: bytes, sku_name: str) -> tuple[str, dict]:
    """The key and fields of the Linux meter with this skuName, found the plain way."""
    found = [(key, value) for key, value in json.loads(data, parse_float=Decimal).items()
             if value["skuName"] == sku_name and "Windows" not in value["productName"]]
    assert len(found) == 1, found
    return found[0]


def meter(sku: str = "ND96isrH100v5", price: object = 127.816, *,
          product: str = "Virtual Machines NDsr H100 v5 Series",
          region: str | None = "westeurope", unit: str = "1 Hour",
          savings: object = None) -> dict:
    """One meter as the tracker writes it (a subset of a Retail Prices item)."""
    fields = {"armRegionName": region, "meterName": sku, "productName": product,
              "retailPrice": price, "skuName": sku, "unitOfMeasure": unit, "unitPrice": price}
    if region is None:
        del fields["armRegionName"]
    if price is None:
        del fields["retailPrice"], fields["unitPrice"]
    if savings is not None:
        fields["savingsPlanPrice"] = savings
    return fields


def document(*meters: object, price_type: str = "Consumption") -> bytes:
    """A tracker file: `{"<skuId>|<meterId>|<type>|<term>": meter}`, written as the tracker
    writes it (json.dumps, indent=0, sort_keys=True)."""
    keyed = {f"DZH318Z0{n:04X}/0001|00000000-0000-0000-0000-{n:012x}|{price_type}|": value
             for n, value in enumerate(meters)}
    return json.dumps(keyed, indent=0, sort_keys=True).encode()


# --- detect ----------------------------------------------------------------------------------

def test_a_tracker_file_is_recognised_by_its_head_and_is_not_a_retail_prices_response():
    data = real(WEST)
    assert azure_pricing_radar.detect("download.txt", data) == FORMAT == "azure-pricing-radar"
    assert azure_pricing_radar.detect(WEST, data[:5000]) == FORMAT  # the head is enough
    assert azure_prices.detect(WEST, data) is None


@pytest.mark.parametrize("data", [
    json.dumps({"BillingCurrency": "USD", "Items": [{"armSkuName": "Standard_ND96isr_H100_v5",
                                                     "retailPrice": 98.32}]}).encode(),
    b'{"ND96isrH100v5": {"retailPrice": 127.816}}',  # not the tracker's key
    b'{"a|b|Consumption|": 127.816}',  # a key, but no meter object
    b"[]", b"", b"InstanceType,AcceleratorName\n",
])
def test_other_files_are_not_the_trackers(data):
    assert azure_pricing_radar.detect("vm-eu-west.json", data) is None


# --- the real files ----------------------------------------------------------------------------

def test_the_real_westeurope_file_prices_nd96isr_h100_v5_on_demand_and_spot():
    data = real(WEST)
    parsed = read_real(WEST)
    rows = by_item(parsed)
    for term, sku_name in (("on-demand", "ND96isrH100v5"), ("spot", "ND96isrH100v5 Spot")):
        _, fields = linux_meter(data, sku_name)
        row = rows[f"{H100}-{term}"]
        # The file's own price over the instance's 8 GPUs: 127.816 / 8 = 15.977 on-demand.
        assert row["value"] == pytest.approx(float(fields["retailPrice"]) / 8)
        assert row["offer"]["price_written"] == str(fields["retailPrice"])
        assert row["offer"]["region"] == "westeurope"  # Azure's name, not the file's eu-west
        assert row["as_of"] == "2026-08-15"  # the file's date (its name), not today
        assert row["source"] == "azure-pricing-radar-westeurope-2026-08-15"
    assert rows[f"{H100}-on-demand"]["value"] == pytest.approx(15.977)
    on_demand = next(r for r in parsed.pack.rows if r.fields["item"] == f"{H100}-on-demand")
    key, _ = linux_meter(data, "ND96isrH100v5")
    assert json.dumps(key) in data.decode().splitlines()[on_demand.line - 1]
    assert on_demand.column == f"[{json.dumps(key)}].retailPrice"
    # The westeurope file's other priced sizes: A100 80 GB and A100 40 GB (the meter
    # "ND96asr_A100_v4" is the VM Standard_ND96asr_v4).
    assert set(rows) == {f"azure-standard-{size}-westeurope-{term}"
                         for size in ("nd96isr-h100-v5", "nd96amsr-a100-v4", "nd96asr-v4")
                         for term in ("on-demand", "spot")}
    assert [s.key for s in parsed.pack.sources] == ["azure-pricing-radar-westeurope-2026-08-15"]


def test_every_price_of_the_real_file_is_an_offer_a_rejection_or_a_skip():
    document_ = json.loads(real(WEST))
    prices = len(document_) + sum("savingsPlanPrice" in m for m in document_.values())
    assert accounted(read_real(WEST)) == prices == 8666 + 1651


def test_low_priority_and_savings_plan_prices_are_counted_skips_not_offers():
    data = real(WEST)
    parsed = read_real(WEST)
    values = {round(row["value"], 6) for row in by_item(parsed).values()}
    _, low = linux_meter(data, "ND96isrH100v5 Low Priority")
    _, a100 = linux_meter(data, "Standard_ND96amsr_A100_v4")
    assert round(float(low["retailPrice"]) / 8, 6) not in values
    assert round(float(a100["savingsPlanPrice"]) / 8, 6) not in values
    assert {row["offer"]["term"] for row in by_item(parsed).values()} == {"on_demand", "spot"}
    savings = sum("savingsPlanPrice" in m for m in json.loads(data).values())
    assert f"{savings:,} price(s) skipped: {azure_pricing_radar.SAVINGS_PLAN}" in parsed.notes
    assert any(note.endswith(azure_pricing_radar.LOW_PRIORITY) for note in parsed.notes)


def test_a_gpu_size_the_table_does_not_list_is_rejected_naming_its_key_and_line():
    from dataclasses import replace

    from pipelines.inputs.adapters.instances import default_instances

    data = real(WEST)
    key, _ = linux_meter(data, "ND96isflH100v5")
    # The shipped table marks this size untracked; without that entry it is a new GPU size.
    table = default_instances()
    azure = {k: v for k, v in table.untracked_instances["azure"].items()
             if k != "Standard_ND96isfl_H100_v5"}
    unlisted = replace(table, untracked_instances={**table.untracked_instances, "azure": azure})
    parsed = azure_pricing_radar.parse(WEST, data, AdapterOptions(instances=unlisted))
    rejected = {r.field: r for r in parsed.rejected}
    found = rejected[f"[{json.dumps(key)}].skuName"]
    assert "unknown GPU instance Standard_ND96isfl_H100_v5" in found.reason
    assert json.dumps(key) in data.decode().splitlines()[found.line - 1]
    assert "ND96isflH100v5" in found.raw_text


def test_the_same_offer_from_the_raw_api_and_from_the_tracker_is_one_identity():
    _, fields = linux_meter(real(WEST), "ND96isrH100v5")
    raw_item = {"armSkuName": "Standard_ND96isr_H100_v5", "armRegionName": "westeurope",
                "type": "Consumption", "serviceName": "Virtual Machines",
                "currencyCode": "USD", "effectiveStartDate": "2026-08-01T00:00:00Z",
                **{k: fields[k] for k in ("meterName", "productName", "skuName",
                                          "unitOfMeasure")},
                "retailPrice": float(fields["retailPrice"])}
    page = json.dumps({"BillingCurrency": "USD", "Items": [raw_item]}).encode()
    from_api = by_item(azure_prices.parse("prices.json", page, AdapterOptions()))
    assert set(from_api) == {f"{H100}-on-demand"}
    assert from_api[f"{H100}-on-demand"]["value"] == by_item(read_real(WEST))[
        f"{H100}-on-demand"]["value"]


def test_a_spot_meter_at_the_full_price_is_not_a_spot_offer():
    data = real(SWEDEN)
    _, on_demand = linux_meter(data, "ND96isrH200v5")
    _, spot = linux_meter(data, "ND96isrH200v5 Spot")
    assert spot["retailPrice"] == on_demand["retailPrice"]  # the file's quirk: 110.272 both
    parsed = read_real(SWEDEN)
    rows = by_item(parsed)
    h200 = "azure-standard-nd96isr-h200-v5-swedencentral"
    assert rows[f"{h200}-on-demand"]["value"] == pytest.approx(float(on_demand["retailPrice"])
                                                               / 8)
    assert f"{h200}-spot" not in rows
    assert f"1 price(s) skipped: {azure_pricing_radar.SPOT_AT_FULL_PRICE}" in parsed.notes
    # a real discount stays: the H100's spot meter in the same file
    assert "azure-standard-nd96isr-h100-v5-swedencentral-spot" in rows


def test_the_two_dates_of_one_region_give_the_same_offers_and_a_moved_price_shows():
    earlier, later = by_item(read_real(WEST)), by_item(read_real(WEST_LATER))
    assert set(earlier) == set(later)
    assert {k: r["as_of"] for k, r in later.items()} == dict.fromkeys(later, "2026-08-22")
    # No GPU price changed between the two dates (SOURCES.md): 0 % week over week.
    assert {k: r["value"] for k, r in earlier.items()} == {k: r["value"]
                                                           for k, r in later.items()}
    # A price that moves shows as another value, and only that one.
    data = real(WEST_LATER)
    key, _ = linux_meter(data, "ND96isrH100v5")
    document_ = json.loads(data, parse_float=Decimal)
    document_[key]["retailPrice"] = Decimal("120.0")
    moved = by_item(read(json.dumps(document_, indent=0, sort_keys=True, default=float)
                         .encode(), WEST_LATER))
    assert moved[f"{H100}-on-demand"]["value"] == pytest.approx(15.0)
    assert {k for k in moved if moved[k]["value"] != later[k]["value"]} == {f"{H100}-on-demand"}


# --- sizes, dates and regions ----------------------------------------------------------------

@pytest.mark.parametrize("sku_name, arm", [
    ("ND96isrH100v5", "Standard_ND96isr_H100_v5"),
    ("ND96isrMI300Xv5", "Standard_ND96isr_MI300X_v5"),
    ("Standard_ND96amsr_A100_v4", "Standard_ND96amsr_A100_v4"),
    ("ND96amsA100v4", "Standard_ND96ams_A100_v4"),  # the raw API's armSkuName for this meter
    ("ND96asr_A100_v4", "Standard_ND96asr_v4"),
    ("NC8as T4 v3", "Standard_NC8as_T4_v3"),
    ("NC16asT4 v3", "Standard_NC16as_T4_v3"),
    ("ND128isr NDR GB200 v6", "Standard_ND128isr_NDR_GB200_v6"),  # GB200, not G + B200
    ("A10", "Standard_A10"),  # the A-series size, not an NVIDIA A10
])
def test_a_meters_sku_name_becomes_the_raw_apis_arm_sku_name(sku_name, arm):
    assert arm_sku_name(sku_name) == arm


def test_the_price_date_is_the_files_name_or_as_of_and_nothing_else():
    data = document(meter())
    assert by_item(read(data, "vm-eu-west_2026-08-15.json"))[f"{H100}-on-demand"][
        "as_of"] == "2026-08-15"
    assert by_item(read(data, "vm-eu-west.json", as_of=date(2026, 9, 1)))[
        f"{H100}-on-demand"]["as_of"] == "2026-09-01"
    with pytest.raises(AdapterError, match="no date"):
        read(data, "vm-eu-west.json")


def test_a_meter_of_another_region_is_rejected_and_the_name_is_checked_against_the_content():
    parsed = read(document(meter(), meter("ND96isrH100v5 Spot", 23.62, region="northeurope"),
                           meter("D2s v3", 0.1)), "vm-eu-west_2026-08-15.json")
    assert set(by_item(parsed)) == {f"{H100}-on-demand"}
    assert [r.field.rsplit(".", 1)[1] for r in parsed.rejected] == ["armRegionName"]
    assert "northeurope" in parsed.rejected[0].reason
    northern = read(document(meter(region="northeurope")), "vm-eu-west_2026-08-15.json")
    assert "azure-standard-nd96isr-h100-v5-northeurope-on-demand" in by_item(northern)
    assert any("vm-eu-west (westeurope)" in note for note in northern.notes)


def test_windows_cloud_services_and_dedicated_host_meters_are_skipped_not_priced():
    parsed = read(document(
        meter(),
        meter(price=150.0, product="Virtual Machines NDsr H100 v5 Series Windows"),
        meter(price=151.0, product="Virtual Machines NDsr H100 v5 Srs Win"),  # as NCCadsv5's
        meter(price=152.0, product="NDsr H100 v5 Series Dedicated Host"),
        meter(price=153.0, product="NDsr H100 v5 Series Cloud Services")))
    assert {k: r["offer"]["price_written"] for k, r in by_item(parsed).items()} == {
        f"{H100}-on-demand": "127.816"}
    assert (len(parsed.rejected), parsed.skipped_lines) == (0, 4)


# --- bad input -------------------------------------------------------------------------------

def test_a_truncated_file_is_refused_whole():
    data = real(WEST)
    with pytest.raises(AdapterError, match="truncated JSON"):
        read(data[: len(data) // 2])
    with pytest.raises(AdapterError, match="truncated JSON"):
        read(document(meter())[:-10])


@pytest.mark.parametrize("data, reason", [
    (b"", "empty file"), (b"  \n", "empty file"), (b"{}", "an empty price list"),
    (b"[]", "expected a JSON object of meters"),
    (b'{"a|b|Consumption|": ' + b"[" * 100 + b"]" * 100 + b"}", "nested deeper than 64"),
])
def test_an_empty_or_unusable_file_is_refused_whole(data, reason):
    with pytest.raises(AdapterError, match=reason):
        read(data)


@pytest.mark.parametrize("price", [0, -5, "abc", "NaN", None, [1]])
def test_a_price_that_is_not_a_positive_number_is_rejected_naming_where(price):
    data = document(meter(), meter("ND96isrH100v5 Spot", price))
    parsed = read(data)
    assert set(by_item(parsed)) == {f"{H100}-on-demand"}
    (rejected,) = parsed.rejected
    key = list(json.loads(data))[1]
    assert rejected.field == f"[{json.dumps(key)}].retailPrice"
    assert rejected.line == data.decode().splitlines().index(f"{json.dumps(key)}: {{") + 1
    assert "not a finite positive number" in rejected.reason


def test_a_meter_that_is_not_an_object_or_not_hourly_is_rejected():
    parsed = read(document(meter(), "127.816", meter("ND96isrH100v5 Spot", 23.6, unit="1 GB")))
    assert [r.field.rsplit("]", 1)[1] for r in parsed.rejected] == ["", ".unitOfMeasure"]
    assert accounted(parsed) == 3


# --- every price is accounted for ------------------------------------------------------------

_SKUS = ["ND96isrH100v5", "ND96isrH100v5 Spot", "ND96isrH100v5 Low Priority",
         "ND96isrH200v5 Spot", "ND96isrH200v5", "Standard_ND96amsr_A100_v4",
         "ND96isflH100v5", "NC40adsH100v5", "D2s v3", "A10", ""]
_PRODUCTS = ["Virtual Machines NDsr H100 v5 Series", "Virtual Machines NDsr H100 v5 Series Windows",
             "Virtual Machines NCCadsv5 Srs Win", "Dasv5 Series Cloud Services",
             "NDamsr A100 v4 Series Dedicated Host"]
_PRICES = st.one_of(st.floats(0.001, 500).map(lambda x: round(x, 4)),
                    st.sampled_from([0, -1, "abc", None, "NaN", 1e999]))
_METERS = st.lists(st.one_of(
    st.builds(meter, st.sampled_from(_SKUS), _PRICES, product=st.sampled_from(_PRODUCTS),
              region=st.sampled_from(["westeurope", "westeurope", "northeurope", None]),
              unit=st.sampled_from(["1 Hour", "1 Hour", "1 GB"]),
              savings=st.one_of(st.none(), st.floats(0.01, 400), st.just("n/a"))),
    st.sampled_from(["x", 1, None, []])), min_size=1, max_size=20)


@settings(max_examples=examples(60), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(_METERS, st.sampled_from(["Consumption", "Consumption", "DevTestConsumption",
                                 "Reservation"]))
def test_every_price_read_is_an_offer_a_rejection_or_a_skip(meters, price_type):
    data = document(*meters, price_type=price_type)
    parsed = read(data)
    prices = len(meters) + sum(isinstance(m, dict) and "savingsPlanPrice" in m for m in meters)
    assert accounted(parsed) == prices
    for row in parsed.pack.rows:
        assert row.fields["value"] > 0
        assert row.fields["offer"]["term"] in ("on_demand", "spot")
        assert row.fields["as_of"] == "2026-08-15"
        assert "Win" not in row.raw_text and "Low Priority" not in row.raw_text
