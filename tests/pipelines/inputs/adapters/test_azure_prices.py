"""The Azure Retail Prices API adapter, on pages shaped like the API's (the shared azure README):
Linux GPU VMs become USD per GPU-hour; Windows, DevTest, Low Priority and non-GPU SKUs are
skipped with their reasons; a reservation's whole-term price is spread over its hours."""

from __future__ import annotations

import json
from datetime import date
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipelines.inputs.adapters import azure_prices
from pipelines.inputs.adapters.base import AdapterError, AdapterOptions, Parsed
from pipelines.inputs.adapters.instances import load_instances
from pipelines.inputs.adapters.registry import detect_format, read_file
from pipelines.inputs.limits import InputLimits
from tests.conftest import examples
from tests.support.shared_data import fixture_path

H100 = "azure-standard-nd96isr-h100-v5-eastus"


@cache
def page() -> bytes:
    """A response page of ND GPU VMs (a shared copy: the project keeps none)."""
    return fixture_path("azure", "retail_prices_nd_gpu.json").read_bytes()


@cache
def pages() -> bytes:
    """A list of two response pages (a shared copy)."""
    return fixture_path("azure", "retail_prices_two_pages.json").read_bytes()


def read(data: bytes | None = None, **options) -> Parsed:
    return azure_prices.parse("prices.json", page() if data is None else data,
                              AdapterOptions(**options))


def by_item(parsed: Parsed) -> dict[str, dict]:
    return {row.fields["item"]: row.fields for row in parsed.pack.rows}


def page_with(*items: dict, **page) -> bytes:
    return json.dumps({"BillingCurrency": "USD", "Items": list(items), "NextPageLink": None,
                       **page}).encode()


def first_item(**changes) -> dict:
    return {**json.loads(page())["Items"][0], **changes}


# --- detect ----------------------------------------------------------------------------------

@pytest.mark.parametrize("response", [page, pages])
def test_a_response_is_recognised_by_its_content_whatever_its_name(response):
    data = response()
    assert azure_prices.detect("download.txt", data) == "azure-retail-prices"
    assert detect_format("prices-2026-11-23.json", data) == "azure-retail-prices"
    assert detect_format("saved.out", data) == "azure-retail-prices"


@pytest.mark.parametrize("data", [
    b'{"results": [], "nccl_version": 22807}',
    b'{"system_name": "x", "number_of_nodes": "1", "Items": []}',
    b'{"formatVersion": "v1.0", "offerCode": "AmazonEC2", "products": {}}',
    b"InstanceType,AcceleratorName\n", b"",
])
def test_other_files_are_not_azure_prices(data):
    assert azure_prices.detect("prices.json", data) is None


# --- what becomes a row ----------------------------------------------------------------------

def test_every_item_is_a_row_a_rejection_or_a_counted_skip():
    parsed = read()
    items = len(json.loads(page())["Items"])
    assert parsed.read == len(parsed.pack.rows) + len(parsed.rejected) == 8
    assert parsed.read + parsed.skipped_lines == items
    assert sum(int(note.split()[0]) for note in parsed.notes if "skipped" in note) == 8


def test_an_hourly_instance_price_becomes_usd_per_gpu_hour():
    row = by_item(read())[f"{H100}-on-demand"]
    assert row["value"] == pytest.approx(98.32 / 8) == pytest.approx(12.29)
    assert (row["metric"], row["unit"], row["status"], row["value_kind"]) == (
        "gpu_hour_price", "USD/hour", "C", "reported")
    assert row["offer"] == {
        "provider": "azure", "region": "eastus", "term": "on_demand",
        "instance_type": "Standard_ND96isr_H100_v5", "gpu": "h100-sxm5", "gpus_per_instance": 8,
        "price_written": "98.32", "currency": "USD", "unit_written": "1 Hour"}
    assert row["quote"] == ("Standard_ND96isr_H100_v5 eastus on-demand: 98.32 USD per 1 Hour "
                            "= 12.29 USD/GPU-hour over 8 GPUs")


def test_a_reservation_price_is_for_the_whole_term_and_is_spread_over_its_hours():
    rows = by_item(read())
    one_year, three_years = rows[f"{H100}-reserved-1y"], rows[f"{H100}-reserved-3y"]
    assert one_year["value"] == pytest.approx(352000 / 8760 / 8)  # 5.02 USD per GPU-hour
    assert three_years["value"] == pytest.approx(672000 / 26280 / 8)
    assert one_year["offer"]["price_written"] == "352000"  # exactly as the file writes it
    assert one_year["offer"]["unit_written"] == "1 Year"
    assert "352000 USD per 1 Year (8,760 h) = 5.02 USD/GPU-hour" in one_year["quote"]


def test_windows_prices_are_skipped_though_they_share_the_linux_meter():
    parsed = read()
    assert all(" Windows" not in row.raw_text for row in parsed.pack.rows)
    assert by_item(parsed)[f"{H100}-on-demand"]["offer"]["price_written"] == "98.32"  # not 105.68
    assert any(note.startswith("2 item(s) skipped: Windows") for note in parsed.notes)


def test_spot_is_a_term_and_devtest_and_low_priority_are_not_offers():
    parsed = read()
    assert by_item(parsed)[f"{H100}-spot"]["value"] == pytest.approx(39.328 / 8)
    assert {row.fields["offer"]["term"] for row in parsed.pack.rows} == {
        "on_demand", "spot", "reserved_1y", "reserved_3y"}
    notes = " | ".join(parsed.notes)
    assert "DevTestConsumption: not a public price" in notes
    assert "Low Priority" in notes and "not a GPU instance" in notes
    assert "H100 NVL" in notes  # untracked: skipped, not rejected


def test_rejections_name_the_json_path_and_the_line():
    # The page's GB200 v6 item with a SKU the instance table does not list (it lists GB200 v6).
    unknown_sku = page().replace(b"Standard_ND128isr_NDR_GB200_v6",
                                 b"Standard_ND128isr_NDR_GB300_v7")
    parsed = read(unknown_sku)
    lines = unknown_sku.decode().splitlines()
    found = {r.field: r for r in parsed.rejected}
    assert set(found) == {"Items[11].armSkuName", "Items[12].retailPrice",
                          "Items[13].unitOfMeasure"}
    assert "unknown GPU instance Standard_ND128isr_NDR_GB300_v7: add it to data/instances.yaml" \
        in found["Items[11].armSkuName"].reason
    assert "'0' is not a finite positive number" in found["Items[12].retailPrice"].reason
    assert "'1 GB/Month' is not per hour" in found["Items[13].unitOfMeasure"].reason
    for rejected in parsed.rejected:
        assert lines[rejected.line - 1].strip() == "{"  # the line the item opens on
        assert json.loads(rejected.raw_text)["armSkuName"]  # the item's own text


def test_items_keep_their_own_text_and_line():
    parsed = read()
    row = parsed.pack.rows[0]
    assert json.loads(row.raw_text)["retailPrice"] == 98.32
    assert row.column == "Items[0].retailPrice"
    assert page().decode().splitlines()[row.line - 1].strip() == "{"


def test_dated_by_the_newest_effective_start_date_unless_as_of_is_given():
    parsed = read()
    assert {row.fields["as_of"] for row in parsed.pack.rows} == {"2024-06-01"}
    [source] = parsed.pack.sources
    assert (source.key, source.kind) == ("azure-retail-prices-2024-06-01", "vendor_datasheet")
    given_date = read(as_of=date(2026, 11, 23))
    assert given_date.pack.sources[0].key == "azure-retail-prices-2026-11-23"
    assert {row.fields["as_of"] for row in given_date.pack.rows} == {"2026-11-23"}


def test_a_gb200_vm_is_priced_per_gpu_of_its_four():
    gb200 = by_item(read())["azure-standard-nd128isr-ndr-gb200-v6-eastus-on-demand"]
    assert gb200["value"] == pytest.approx(108.0 / 4)
    assert gb200["offer"]["gpu"] == "gb200"


def test_one_item_per_offer_of_kind_cloud_offer_and_one_per_gpu_it_names():
    parsed = read()
    offers = [i for i in parsed.pack.items if i.kind == "cloud_offer"]
    assert len(offers) == len(parsed.pack.rows) == 6
    item = next(i for i in offers if i.key == f"{H100}-spot")
    assert (item.kind, item.vendor, item.family) == ("cloud_offer", "azure", "h100-sxm5")
    gpus = [i for i in parsed.pack.items if i.kind == "gpu"]
    assert sorted(i.key for i in gpus) == sorted({i.family for i in offers})


# --- pages -----------------------------------------------------------------------------------

def test_a_list_of_pages_is_read_page_by_page():
    parsed = read(pages())
    assert [row.column for row in parsed.pack.rows] == [
        "[0].Items[0].retailPrice", "[1].Items[0].retailPrice", "[1].Items[1].retailPrice"]
    assert by_item(parsed)["azure-standard-nd96isr-mi300x-v5-canadacentral-on-demand"][
        "value"] == pytest.approx(6.0)
    assert parsed.skipped_lines == 1  # the Windows twin on page 1
    assert not any("continues" in note for note in parsed.notes)


def test_a_page_that_is_not_the_last_says_so():
    data = page_with(first_item(), NextPageLink="https://prices.azure.com/api/retail/prices?"
                                                "$skip=100", Count=3)
    notes = read(data).notes
    assert any("Count 3 but holds 1 items" in note for note in notes)
    assert any("the price list continues" in note for note in notes)


# --- what is refused -------------------------------------------------------------------------

def test_a_price_in_another_currency_is_a_rejected_row():
    parsed = read(page_with(first_item(currencyCode="EUR", retailPrice=91.2)))
    [rejected] = parsed.rejected
    assert rejected.field == "Items[0].currencyCode"
    assert "prices in EUR: the ledger stores USD" in rejected.reason


@pytest.mark.parametrize("price", [None, -1, 0.0, "n/a", True, [98.32], "NaN", "1e400"])
def test_a_price_that_is_not_a_finite_positive_number_is_rejected(price):
    data = page_with(first_item(retailPrice=price))
    if price in ("NaN", "1e400"):  # as JSON numbers, not text: NaN, and 1e400 (an infinite float)
        data = data.replace(f'"{price}"'.encode(), price.encode())
    [rejected] = read(data).rejected
    assert rejected.field == "Items[0].retailPrice"
    assert "is not a finite positive number" in rejected.reason


def test_a_price_written_as_text_is_read_as_written():
    [row] = read(page_with(first_item(retailPrice="98.3200"))).pack.rows
    assert row.fields["offer"]["price_written"] == "98.3200"
    assert row.fields["value"] == pytest.approx(12.29)


def test_an_unknown_reservation_term_is_rejected():
    item = first_item(type="Reservation", reservationTerm="5 Years", retailPrice=900000)
    [rejected] = read(page_with(item)).rejected
    assert rejected.field == "Items[0].reservationTerm"
    assert "'5 Years'" in rejected.reason


def test_the_instance_table_can_be_given():
    table = load_instances("""
sources: {docs: {title: Docs}}
instances:
  azure:
    Standard_ND128isr_NDR_GB200_v6: {gpu: gb200, gpus: 4, source: docs}
""")
    parsed = read(instances=table)
    assert by_item(parsed)["azure-standard-nd128isr-ndr-gb200-v6-eastus-on-demand"][
        "value"] == pytest.approx(108.0 / 4)
    assert {r.field for r in parsed.rejected} >= {"Items[0].armSkuName"}  # H100 unknown now


@pytest.mark.parametrize("data, message", [
    (lambda: page()[: len(page()) // 2], "truncated JSON at byte"),
    (b'{"BillingCurrency": "USD", "Items": [', "truncated JSON at byte"),
    (b'{"BillingCurrency": "USD", "Items": [{"a": 1} {"b": 2}]}', "expected ',' or ']'"),
    (b"not json", "not an Azure Retail Prices response"),
    (b'{"Items": [' + b"[" * 100_000 + b"]" * 100_000 + b"]}", "nested deeper than 64"),
    (b'{"Items": [{"retailPrice": ' + b"9" * 5000 + b"}]}", "cannot be read"),
    (b'{"Items": []} {"Items": []}', "extra data after the JSON document"),
    (b"", "empty file"),
])
def test_a_file_that_cannot_be_read_is_an_adapter_error(data, message):
    with pytest.raises(AdapterError, match=message):
        read(data() if callable(data) else data)


def test_items_alike_but_for_a_fields_type_are_judged_each_on_its_own():
    """The verdict on an item's shared fields is remembered for text fields only: 0 is not
    False, 1 is not "1", and a list is not a term."""
    parsed = read(page_with(first_item(isPrimaryMeterRegion=False),
                            first_item(isPrimaryMeterRegion=0),
                            first_item(type=["Consumption"]),
                            first_item(currencyCode=1), first_item(currencyCode="1")))
    assert [row.line for row in parsed.pack.rows] == [1]
    assert [r.field for r in parsed.rejected] == ["Items[2].type", "Items[3].currencyCode",
                                                  "Items[4].currencyCode"]
    assert "prices in (no currency)" in parsed.rejected[1].reason
    assert "prices in 1:" in parsed.rejected[2].reason
    assert any("isPrimaryMeterRegion false" in note for note in parsed.notes)


DEEP_VALUE = "[" * 70 + "]" * 70  # deeper than 64, well within Python's recursion


@pytest.mark.parametrize("written", [
    lambda: page_with(first_item(meterName=json.loads(DEEP_VALUE))),  # an item's field
    lambda: page_with(first_item(), Extra=json.loads(DEEP_VALUE)),  # a page's field
    lambda: json.dumps([  # the second of two pages, then malformed
        json.loads(page_with(first_item())),
        json.loads(page_with(first_item(x=json.loads(DEEP_VALUE))))]).encode()[:-1],
])
def test_a_value_nested_too_deep_is_refused_wherever_it_is(written):
    """The file is refused as too deep, at the line of the first bracket past the limit, as
    the whole-text walk words it, even when the walk over the items read it."""
    from pipelines.inputs.adapters.guards import json_depth_problem

    data = written()
    line, reason = json_depth_problem(data.decode(), 64)
    with pytest.raises(AdapterError, match="nested deeper than 64") as error:
        read(data)
    assert error.value.line == line and reason in str(error.value)


def test_the_depth_counts_the_pages_structure_and_the_items_own():
    flat = {k: v for k, v in first_item().items() if not isinstance(v, dict | list)}
    with pytest.raises(AdapterError, match="deeper than 2 levels"):  # page, Items, item: 3
        read(page_with(flat), limits=InputLimits(json_max_depth=2))
    assert read(page_with(flat), limits=InputLimits(json_max_depth=3)).pack.rows
    with_plans = first_item(savingsPlan=[{"term": "1 Year", "retailPrice": "1.0"}])
    with pytest.raises(AdapterError, match="deeper than 4 levels"):  # ... a plan: 5
        read(page_with(with_plans), limits=InputLimits(json_max_depth=4))
    assert read(page_with(with_plans), limits=InputLimits(json_max_depth=5)).pack.rows


def test_brackets_inside_the_text_of_an_item_are_not_depth():
    item = first_item(productName="Virtual Machines [ND {H100}] Series " + "[" * 100)
    assert read(page_with(item)).pack.rows


def test_a_file_beyond_the_row_limit_is_refused():
    with pytest.raises(AdapterError, match="more than 3 rows"):
        read(limits=InputLimits(max_rows_per_file=3))


# --- properties ------------------------------------------------------------------------------

FAST = settings(max_examples=examples(150), deadline=None,
                suppress_health_check=[HealthCheck.too_slow])


def _read_or_refuse(data: bytes) -> None:
    try:
        parsed = read_file("prices.json", data, AdapterOptions())
    except AdapterError:
        return
    lines = data.count(b"\n") + 1
    assert parsed.read == len(parsed.pack.rows) + parsed.measured_rows + len(parsed.rejected)
    assert all(r.field and (r.line is None or 1 <= r.line <= lines) for r in parsed.rejected)


def _mutations(text: str) -> st.SearchStrategy[str]:
    alphabet = st.sampled_from('0123456789[]{}":,.-+eE \n\r\x00²InfaNLW\\u')
    return st.tuples(st.integers(0, len(text)), st.integers(0, 40),
                     st.text(alphabet=alphabet, max_size=40)).map(
        lambda m: text[:m[0]] + m[2] + text[m[0] + m[1]:])


@FAST
@given(st.deferred(lambda: _mutations(pages().decode())))
def test_a_mutated_response_is_read_or_refused_never_a_crash(text):
    _read_or_refuse(text.encode("utf-8", "surrogatepass"))


@FAST
@given(st.lists(st.dictionaries(
    st.sampled_from(["armSkuName", "retailPrice", "type", "productName", "skuName",
                     "unitOfMeasure", "armRegionName", "currencyCode", "reservationTerm",
                     "serviceName", "effectiveStartDate", "isPrimaryMeterRegion"]),
    st.one_of(st.sampled_from(["Standard_ND96isr_H100_v5", "Standard_ND96asr_v4", "Reservation",
                               "Consumption", "1 Hour", "1 Year", "3 Years", "USD", "eastus",
                               "x Windows", "y Spot", "2024-01-01T00:00:00Z", "H100"]),
              st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8))),
    max_size=8))
def test_random_items_account_for_every_item(items):
    data = json.dumps({"Items": items, "BillingCurrency": "USD"}).encode()
    try:
        parsed = read(data, as_of=date(2026, 1, 1))
    except AdapterError:
        return
    assert parsed.read + parsed.skipped_lines == len(items)


@FAST
@given(st.binary(max_size=300))
def test_arbitrary_bytes_are_read_or_refused(data):
    try:
        parsed = read(data)
    except AdapterError:
        return
    assert parsed.read == len(parsed.pack.rows) + len(parsed.rejected)


# --- a price scheduled after the file's date (issue 30, case 4) ------------------------------

def test_a_scheduled_price_is_rejected_on_its_own_and_the_rest_is_read_as_of_today():
    # The H100 price in force since 2024-04-01, and the same VM's price Azure has scheduled
    # for 2027-01-01: read on 2026-11-26, the file is dated by the first, not by the second.
    in_force = first_item(effectiveStartDate="2024-04-01T00:00:00Z")
    scheduled = first_item(effectiveStartDate="2027-01-01T00:00:00Z", retailPrice=90.0,
                           unitPrice=90.0, armRegionName="westus3")
    parsed = read(page_with(in_force, scheduled), today=date(2026, 11, 26))
    rows = by_item(parsed)
    assert {row["as_of"] for row in rows.values()} == {"2024-04-01"}
    assert H100 + "-on-demand" in rows
    [rejected] = parsed.rejected
    assert rejected.field == "Items[1].effectiveStartDate"
    assert "in force from 2027-01-01, after the file's date 2024-04-01" in rejected.reason
    assert parsed.read == len(parsed.pack.rows) + len(parsed.rejected)


def test_given_a_later_as_of_the_scheduled_price_is_read():
    scheduled = first_item(effectiveStartDate="2027-01-01T00:00:00Z")
    parsed = read(page_with(scheduled), as_of=date(2027, 1, 4))
    assert parsed.rejected == []
    assert {row["as_of"] for row in by_item(parsed).values()} == {"2027-01-04"}


# --- the daily raw-items sample of 2026 (a bare JSON array; shared data) -----------------------

def sample(day: str) -> Parsed:
    from tests.support.shared_data import shared_bytes

    name = f"azure_prices_{day}.json"
    data = shared_bytes("market", "azure-retail-api-sample", f"{name}.gz")
    assert detect_format(name, data) == azure_prices.FORMAT
    return azure_prices.parse(name, data, AdapterOptions())


def test_a_bare_array_of_items_is_read_with_reservations_per_term_and_hour():
    parsed = sample("2026-08-22")
    items = 1000
    assert len(parsed.pack.rows) + len(parsed.rejected) + parsed.skipped_lines == items
    rows = {r.fields["item"]: r.fields for r in parsed.pack.rows}
    one_year = rows["azure-standard-nd96isr-h200-v5-usgovvirginia-reserved-1y"]
    assert one_year["value"] == pytest.approx(509_408 / 8_760 / 8)   # the whole term's price
    three = rows["azure-standard-nd96isr-h200-v5-usgovvirginia-reserved-3y"]
    assert three["value"] == pytest.approx(1_386_990 / 26_280 / 8)
    assert one_year["offer"]["term"] == "reserved_1y" and one_year["as_of"] == "2026-08-01"


def test_a_reservation_repriced_inside_the_file_keeps_its_newest_price():
    """The 08-01 file lists the H200 reservation at its 2025-05-01 and its 2026-08-01 price:
    one offer, one price (the newer), the older skipped and counted."""
    parsed = sample("2026-08-01")
    keys = [r.fields["item"] for r in parsed.pack.rows]
    assert len(keys) == len(set(keys))
    rows = {r.fields["item"]: r.fields for r in parsed.pack.rows}
    assert rows["azure-standard-nd96isr-h200-v5-usgovvirginia-reserved-1y"]["value"] == \
        pytest.approx(509_408 / 8_760 / 8)
    assert any("an older price of an offer" in note for note in parsed.notes)
    before = {r.fields["item"]: r.fields for r in sample("2026-07-25").pack.rows}
    assert before["azure-standard-nd96isr-h200-v5-usgovvirginia-reserved-1y"]["value"] == \
        pytest.approx(495_201 / 8_760 / 8)
