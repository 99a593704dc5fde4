"""The AWS Price List EC2 offer file adapter, streamed (the shared aws sample's README): Linux
Shared GPU instances become USD per GPU-hour on-demand and standard No Upfront reserved prices;
every other product is a counted skip; bytes that would crash the C parser are refused first."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import date
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipelines.inputs.adapters import aws_offer
from pipelines.inputs.adapters.base import AdapterError, AdapterOptions, Parsed
from pipelines.inputs.adapters.instances import load_instances
from pipelines.inputs.adapters.registry import detect_format, read_file
from pipelines.inputs.limits import InputLimits
from tests.conftest import examples
from tests.support.shared_data import fixture_path

P5 = "aws-p5-48xlarge-us-east-1"


@cache
def offer() -> bytes:
    """The offer file sample (a shared copy of a third-party file)."""
    return fixture_path("aws", "ec2_us-east-1_gpu_sample.json").read_bytes()


def read(data: bytes | None = None, **options) -> Parsed:
    return aws_offer.parse("index.json", offer() if data is None else data,
                           AdapterOptions(**options))


def by_item(parsed: Parsed) -> dict[str, dict]:
    return {row.fields["item"]: row.fields for row in parsed.pack.rows}


def offer_with(change) -> bytes:
    document = json.loads(offer())
    change(document)
    return json.dumps(document, indent=2).encode()


# --- detect ----------------------------------------------------------------------------------

def test_an_offer_file_is_recognised_by_its_content_whatever_its_name():
    assert aws_offer.detect("prices.dat", offer()) == "aws-price-list"
    assert detect_format("index.json", offer()) == "aws-price-list"
    assert detect_format("ec2-us-east-1.txt", offer()) == "aws-price-list"


@pytest.mark.parametrize("data", [
    b'{"BillingCurrency": "USD", "Items": [{"armSkuName": "x"}]}',
    b'{"system_name": "x", "number_of_nodes": "1"}', b"[]", b"",
])
def test_other_files_are_not_offer_files(data):
    assert aws_offer.detect("index.json", data) is None


# --- what becomes a row ----------------------------------------------------------------------

def test_each_kept_term_is_a_row_and_everything_else_is_counted():
    parsed = read()
    assert parsed.read == len(parsed.pack.rows) + len(parsed.rejected) == 4 + 2
    # 7 products out of scope (Windows, Dedicated, a capacity reservation, SQL, g5 untracked,
    # m5, storage) and 2 reserved terms other than standard No Upfront.
    assert parsed.skipped_lines == 9
    assert set(by_item(parsed)) == {f"{P5}-on-demand", f"{P5}-reserved-1y", f"{P5}-reserved-3y",
                                    "aws-p4d-24xlarge-us-east-1-on-demand"}


def test_the_hourly_instance_price_becomes_usd_per_gpu_hour():
    row = by_item(read())[f"{P5}-on-demand"]
    assert row["value"] == pytest.approx(98.32 / 8) == pytest.approx(12.29)
    assert row["offer"] == {
        "provider": "aws", "region": "us-east-1", "term": "on_demand",
        "instance_type": "p5.48xlarge", "gpu": "h100-sxm5", "gpus_per_instance": 8,
        "price_written": "98.3200000000", "currency": "USD", "unit_written": "Hrs"}
    assert row["quote"].startswith("p5.48xlarge us-east-1 on-demand: 98.3200000000 USD per Hrs "
                                   "= 12.29 USD/GPU-hour over 8 GPUs")


def test_only_standard_no_upfront_reservations_are_read():
    rows = by_item(read())
    assert rows[f"{P5}-reserved-1y"]["value"] == pytest.approx(61.9416 / 8)
    assert rows[f"{P5}-reserved-3y"]["value"] == pytest.approx(43.16 / 8)
    assert "30.25" not in json.dumps(rows)  # the Partial Upfront hourly part
    assert any("2 product(s) or term(s) skipped: reserved terms other than standard No "
               "Upfront" in note for note in read().notes)


def test_windows_dedicated_and_reserved_capacity_products_are_not_prices():
    parsed = read()
    skus = {row.column.split(".")[2] for row in parsed.pack.rows}  # terms.<kind>.<sku>...
    assert skus == {"P5LNX7XQ2R8KJ4ZD", "P4DLNX2Z9Y4F8KCV"}
    assert all(row.raw_text.startswith('{"term": {"offerTermCode"') for row in parsed.pack.rows)
    notes = " | ".join(parsed.notes)
    for reason in ("not Linux", "not Shared tenancy", "capacity reservation", "pre-installed",
                   "NVIDIA A10G", "not a GPU instance", "not a Compute Instance"):
        assert reason in notes


def test_an_unknown_gpu_instance_and_a_zero_price_are_rejected_rows():
    found = {r.field: r for r in read().rejected}
    unknown = found["products.P9LNX8Q5W2E6RTYU.attributes.instanceType"]
    assert unknown.reason == ("unknown GPU instance p9.48xlarge: add it to data/instances.yaml "
                              "with its source")
    assert unknown.line is None and json.loads(unknown.raw_text)["sku"] == "P9LNX8Q5W2E6RTYU"
    [zero] = [r for f, r in found.items() if f.startswith("terms.OnDemand.P5ENLX6T3R1WQ8ZB")]
    assert "'0.0000000000' is not a finite positive number" in zero.reason
    assert zero.field.endswith(".pricePerUnit.USD")


def test_the_file_is_the_source_dated_by_its_publication_date():
    parsed = read()
    [source] = parsed.pack.sources
    assert source.key == "aws-price-list-ec2-us-east-1-2025-05-30"
    assert source.url.endswith("/AmazonEC2/current/us-east-1/index.json")
    assert {row.fields["as_of"] for row in parsed.pack.rows} == {"2025-05-30"}
    later = read(as_of=date(2025, 6, 2))
    assert {row.fields["as_of"] for row in later.pack.rows} == {"2025-06-02"}
    assert later.pack.sources[0].key == source.key  # the file is still the file it is


def test_the_instance_table_decides_what_is_a_known_gpu_instance():
    table = load_instances("""
sources: {docs: {title: Docs}}
instances:
  aws:
    p9.48xlarge: {gpu: b300, gpus: 8, source: docs}
""")
    parsed = read(instances=table)
    assert set(by_item(parsed)) == set()  # p9 has no price in the file; p5 is unknown now
    # Not listed and not marked untracked: every GPU instance is an unknown one, g5 too.
    assert {r.field.split(".")[1] for r in parsed.rejected} == {
        "P5LNX7XQ2R8KJ4ZD", "P4DLNX2Z9Y4F8KCV", "P5ENLX6T3R1WQ8ZB", "G5XLNX4A7S2D9FGH"}
    assert any("have no on-demand" in note for note in parsed.notes)


def test_a_price_in_another_currency_is_rejected():
    def to_cny(document):
        dimensions = document["terms"]["OnDemand"]["P4DLNX2Z9Y4F8KCV"][
            "P4DLNX2Z9Y4F8KCV.JRTCKXETXF"]["priceDimensions"]
        next(iter(dimensions.values()))["pricePerUnit"] = {"CNY": "230.1"}
    [cny] = [r for r in read(offer_with(to_cny)).rejected if "CNY" in r.reason]
    assert "price in CNY: the ledger stores USD" in cny.reason


def test_a_byte_order_mark_is_allowed():
    assert len(read(b"\xef\xbb\xbf" + offer()).pack.rows) == 4


# --- what is refused -------------------------------------------------------------------------

@pytest.mark.parametrize("change, message", [
    (lambda data: data[: len(data) // 2], "truncated JSON at byte"),
    (lambda data: data[:200], "truncated JSON at byte"),
    (lambda data: data.replace(b'"AmazonEC2"', b'"AmazonRDS"', 1),
     "offer 'AmazonRDS': only the AmazonEC2"),
    (lambda data: data.replace(b'"publicationDate" : "2025-05-30T18:47:20Z",', b""),
     "no publicationDate"),
    (lambda _: b'{"offerCode": "AmazonEC2", "products": {}}', "no formatVersion"),
    (lambda _: b"  \n", "empty file"),
])
def test_a_file_that_cannot_be_read_is_an_adapter_error(change, message):
    with pytest.raises(AdapterError, match=message):
        read(change(offer()))


@pytest.mark.parametrize("data, message", [
    (b'{"formatVersion": "v1.0", "offerCode": "AmazonEC2", "products": {"A": '
     + b"[" * 50_000 + b"]" * 50_000 + b"}}", "nested deeper than 64 levels"),
    (b'{"formatVersion": "v1.0", "offerCode": "AmazonEC2", "products": {"A": {"x": '
     + b"9" * 5000 + b"}}}", "a number of 1,000\\+ digits"),
])
def test_what_would_crash_the_c_parser_is_refused_before_it_runs(data, message):
    # Run apart: were the guard missing, ijson's C backend would exhaust memory or segfault.
    code = ("import sys; from pipelines.inputs.adapters import aws_offer; "
            "from pipelines.inputs.adapters.base import AdapterError, AdapterOptions\n"
            "try:\n aws_offer.parse('index.json', sys.stdin.buffer.read(), AdapterOptions())\n"
            "except AdapterError as e:\n print(e)")
    result = subprocess.run([sys.executable, "-c", code], input=data, capture_output=True,
                            timeout=120, check=False)
    assert result.returncode == 0, result.stderr.decode()[-500:]
    with pytest.raises(AdapterError, match=message):
        read(data)


def test_the_depth_limit_is_the_setting():
    with pytest.raises(AdapterError, match="deeper than 3 levels"):
        read(limits=InputLimits(json_max_depth=3))


def test_a_file_beyond_the_row_limit_is_refused():
    with pytest.raises(AdapterError, match="more than 2 rows"):
        read(limits=InputLimits(max_rows_per_file=2))


# --- properties ------------------------------------------------------------------------------

FAST = settings(max_examples=examples(150), deadline=None,
                suppress_health_check=[HealthCheck.too_slow])


def _mutations(text: str) -> st.SearchStrategy[str]:
    alphabet = st.sampled_from('0123456789[]{}":,.-+eE \n\r\x00²InfaNLW\\u')
    return st.tuples(st.integers(0, len(text)), st.integers(0, 40),
                     st.text(alphabet=alphabet, max_size=40)).map(
        lambda m: text[:m[0]] + m[2] + text[m[0] + m[1]:])


def _read_or_refuse(data: bytes) -> None:
    try:
        parsed = read_file("index.json", data, AdapterOptions())
    except AdapterError:
        return
    assert parsed.read == len(parsed.pack.rows) + len(parsed.rejected)
    assert all(r.field for r in parsed.rejected)


@FAST
@given(st.deferred(lambda: _mutations(offer().decode())))
def test_a_mutated_offer_file_is_read_or_refused_never_a_crash(text):
    _read_or_refuse(text.encode("utf-8", "surrogatepass"))


@FAST
@given(st.binary(max_size=300))
def test_arbitrary_bytes_are_read_or_refused(data):
    """Any other exception fails the test; a refusal is the whole file's, with its reason; a
    file read has rows and rejections that add up to what it read."""
    try:
        parsed = aws_offer.parse("index.json", data, AdapterOptions())
    except AdapterError as refused:
        # A PackError refuses the file whole (field "file"; the ingest's report names it), at a
        # line of the data when it gives one.
        assert refused.field == "file" and refused.path is None
        assert refused.reason.strip() and str(refused).endswith(refused.reason)
        assert refused.line is None or 1 <= refused.line <= data.count(b"\n") + 1
        return
    assert parsed.format == aws_offer.FORMAT
    assert parsed.read == len(parsed.pack.rows) + len(parsed.rejected)
    assert all(r.field for r in parsed.rejected)


@FAST
@given(st.dictionaries(st.text("ABCDEFGH", min_size=1, max_size=4), st.fixed_dictionaries({
    "productFamily": st.sampled_from(["Compute Instance", "Storage", ""]),
    "attributes": st.fixed_dictionaries({
        "instanceType": st.sampled_from(["p5.48xlarge", "p9.48xlarge", "m5.large", "g5.xlarge"]),
        "operatingSystem": st.sampled_from(["Linux", "Windows"]),
        "tenancy": st.sampled_from(["Shared", "Dedicated"]),
        "preInstalledSw": st.just("NA"), "capacitystatus": st.just("Used"),
        "regionCode": st.sampled_from(["us-east-1", ""]),
        "gpu": st.sampled_from(["8", "0", "", "x"])})}), max_size=8))
def test_every_product_is_kept_rejected_or_skipped(products):
    document = {"formatVersion": "v1.0", "offerCode": "AmazonEC2",
                "publicationDate": "2025-06-01T00:00:00Z", "products": products, "terms": {}}
    parsed = read(json.dumps(document).encode())
    kept = sum(1 for p in products.values() if p["productFamily"] == "Compute Instance"
               and p["attributes"]["operatingSystem"] == "Linux"
               and p["attributes"]["tenancy"] == "Shared"
               and p["attributes"]["instanceType"] == "p5.48xlarge"
               and p["attributes"]["regionCode"])
    assert len(parsed.rejected) + parsed.skipped_lines + kept == len(products)
