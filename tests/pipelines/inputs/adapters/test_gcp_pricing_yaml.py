"""The Google Cloud Pricing Cost Calculator `pricing.yml` adapter: each GPU machine type's
per-region prices become USD per GPU-hour offers, on-demand (`hour`), spot (`hour_spot`) and
1- and 3-year commitments (`month_1y`, `month_3y`, per month of 730 hours); machine types
without a GPU are skipped, unknown GPU machine types rejected, the file dated by its own
`about.generated`.

The real files are five weekly versions of July 2026 in the shared data
(`market/gcp-pricing-cyclenerd/`, SOURCES.md there); the expected figures are computed from the
file's own lines, read here independently of the adapter."""

from __future__ import annotations

import csv
import io
import re
from datetime import date
from decimal import Decimal
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipelines.inputs.adapters import gcp_pricing_yaml
from pipelines.inputs.adapters.base import AdapterError, AdapterOptions, Parsed
from pipelines.inputs.limits import DEFAULT_LIMITS
from tests.conftest import examples
from tests.support.shared_data import shared_bytes

FOLDER = ("market", "gcp-pricing-cyclenerd")
GENERATED = "Thu Jul  2 06:56:58 2026"


@cache
def real(day: str) -> bytes:
    return shared_bytes(*FOLDER, f"pricing_2026-07-{day}.yml.gz")


@cache
def real_parsed(day: str) -> Parsed:
    return gcp_pricing_yaml.parse(f"pricing_2026-07-{day}.yml", real(day), AdapterOptions())


def read(data: bytes, name: str = "pricing.yml", **options) -> Parsed:
    return gcp_pricing_yaml.parse(name, data, AdapterOptions(**options))


def by_item(parsed: Parsed) -> dict[str, dict]:
    return {row.fields["item"]: row.fields for row in parsed.pack.rows}


def accounted(parsed: Parsed) -> int:
    return len(parsed.pack.rows) + len(parsed.rejected) + parsed.skipped_lines


def file_prices(data: bytes, machine: str, region: str) -> dict[str, tuple[int, str]]:
    """What the file writes under compute.instance.<machine>.cost.<region>: key -> (line,
    text), read from its lines (the file's two-space indentation) without the adapter."""
    lines = data.decode().split("\n")
    start = lines.index(f"    {machine}:")
    at = lines.index(f"        {region}:", start)
    prices = {}
    for number, text in enumerate(lines[at + 1:], start=at + 2):
        match = re.fullmatch(r" {10}([a-z_0-9]+): (\S+)", text)
        if match is None:
            break
        prices[match.group(1)] = (number, match.group(2))
    return prices


def pricing_yml(machines: dict[str, dict], generated: str | None = GENERATED,
                region_section: bool = True) -> bytes:
    """A small document of pricing.yml's shape: machine type -> {GPU key: count, ...,
    "cost": {region: {price key: value}}}, values written as given (text); a region whose
    value is not a mapping is written as that value."""
    out = ["---", "about:"]
    if generated is not None:
        out.append(f"  generated: {generated}")
    out += ["  url: https://github.com/Cyclenerd/google-cloud-pricing-cost-calculator",
            "compute:", "  instance:"]
    for machine, entry in machines.items():
        out.append(f"    {machine}:")
        for key, value in entry.items():
            if key == "cost":
                out.append("      cost:")
                for region, prices in value.items():
                    if not isinstance(prices, dict):        # a block that is not a mapping
                        out.append(f"        {region}: {prices}")
                        continue
                    out.append(f"        {region}:")
                    out += [f"          {k}: {v}" for k, v in prices.items()]
            else:
                out.append(f"      {key}: {value}")
    if region_section:
        out += ["region:", "  us-central1:", "    location: Iowa"]
    return ("\n".join(out) + "\n").encode()


H100_VM = {"cost": {"us-central1": {"hour": "88.49", "hour_spot": "43.8", "month": "64597.7",
                                    "month_1y": "44810.08", "month_3y": "28370.99",
                                    "month_spot": "31977.2"}},
           "cpu": 208, "h100-80gb": 8, "local-ssd": 6000, "ram": 1872}


# --- detect -----------------------------------------------------------------------------------

def test_the_real_file_is_recognised_by_its_head_only():
    data = real("02")
    assert gcp_pricing_yaml.detect("pricing.yml", data) == "gcp-pricing-yaml"
    # Only the first kilobytes are looked at: a head with anything after it is still one.
    assert gcp_pricing_yaml.detect("x.yml", data[:16384] + b"\x00garbage") == "gcp-pricing-yaml"
    assert gcp_pricing_yaml.detect("pricing.yml", pricing_yml({})) == "gcp-pricing-yaml"


@pytest.mark.parametrize("data", [
    b"source:\n  key: s\nobservations: []\n",                       # a source pack
    b"quotes:\n  - {vendor: x, unit_price: 2}\n",                     # a YAML quote sheet
    b"about:\n  generated: today\nstorage:\n  bucket: {}\n",          # no compute.instance
    b"InstanceType,AcceleratorName,AcceleratorCount,Price,Region\n",  # a SkyPilot catalog
])
def test_other_files_are_not_this_format(data):
    assert gcp_pricing_yaml.detect("pricing.yml", data) is None


# --- the real file ----------------------------------------------------------------------------

@pytest.mark.parametrize("machine, gpu", [("a3-highgpu-8g", "h100-sxm5"),
                                          ("a2-ultragpu-8g", "a100-sxm4-80gb")])
def test_a_gpu_vm_is_priced_per_gpu_hour_from_the_files_hour_and_spot(machine, gpu):
    data, rows = real("02"), by_item(real_parsed("02"))
    written = file_prices(data, machine, "us-central1")
    on_demand = rows[f"gcp-{machine}-us-central1-on-demand"]
    spot = rows[f"gcp-{machine}-us-central1-spot"]
    assert on_demand["value"] == pytest.approx(float(Decimal(written["hour"][1]) / 8))
    assert spot["value"] == pytest.approx(float(Decimal(written["hour_spot"][1]) / 8))
    assert on_demand["offer"]["price_written"] == written["hour"][1]   # digits as written
    assert (on_demand["offer"]["gpu"], on_demand["offer"]["gpus_per_instance"]) == (gpu, 8)
    assert on_demand["as_of"] == spot["as_of"] == "2026-07-02"
    assert 0 < spot["value"] < on_demand["value"]


def test_commitments_are_per_month_prices_spread_over_730_hours():
    data, parsed = real("02"), real_parsed("02")
    rows = by_item(parsed)
    written = file_prices(data, "a3-highgpu-8g", "us-central1")
    hour, month = Decimal(written["hour"][1]), Decimal(written["month"][1])
    assert month == pytest.approx(hour * 730)          # the file's own month is 730 hours
    for term, key in (("reserved-1y", "month_1y"), ("reserved-3y", "month_3y")):
        row = rows[f"gcp-a3-highgpu-8g-us-central1-{term}"]
        assert row["value"] == pytest.approx(float(Decimal(written[key][1]) / 730 / 8))
        assert "per month (730 h)" in row["quote"]
        [source_row] = [r for r in parsed.pack.rows if r.fields is row]
        assert source_row.line == written[key][0]      # the line of that key
        assert source_row.column == f"compute.instance.a3-highgpu-8g.cost.us-central1.{key}"
    assert (rows["gcp-a3-highgpu-8g-us-central1-reserved-3y"]["value"]
            < rows["gcp-a3-highgpu-8g-us-central1-reserved-1y"]["value"]
            < rows["gcp-a3-highgpu-8g-us-central1-on-demand"]["value"])
    # a2-ultragpu (A100 80GB) has no commitment keys in the file: no commitment offer.
    assert "month_1y" not in file_prices(data, "a2-ultragpu-8g", "us-central1")
    assert "gcp-a2-ultragpu-8g-us-central1-reserved-1y" not in rows
    assert "gcp-a2-highgpu-8g-us-central1-reserved-1y" in rows


def test_on_demand_is_the_list_price_not_the_dws_flex_start_gpu_price():
    """SkyPilot's GCP catalog prices the H100s of a3-highgpu-8g at the DWS / flex-start SKU
    (its accelerator-only line); this file's `hour` is the on-demand VM and must stay apart."""
    on_demand = by_item(real_parsed("02"))["gcp-a3-highgpu-8g-us-central1-on-demand"]
    text = shared_bytes("market", "skypilot-anycloud", "gcp-vms-2026-05-20.csv.gz").decode()
    dws = {float(row["Price"]) for row in csv.DictReader(io.StringIO(text))
           if not row["InstanceType"] and row["AcceleratorName"] == "H100"
           and row["AcceleratorCount"] == "8" and row["Region"] == "us-central1"}
    [dws_gpus] = dws
    assert on_demand["offer"]["term"] == "on_demand"
    assert on_demand["value"] > 2 * dws_gpus / 8       # 11.06 vs 4.20 per GPU-hour
    # A price key of any other kind (a flex-start line, were the tool to add one) is no term.
    vm = {**H100_VM, "cost": {"us-central1": {"hour_dws": "33.6", "hour": "88.49"}}}
    parsed = read(pricing_yml({"a3-highgpu-8g": vm}))
    assert [r.fields["offer"]["term"] for r in parsed.pack.rows] == ["on_demand"]
    assert parsed.pack.rows[0].fields["offer"]["price_written"] == "88.49"
    assert any("hour_dws" in note for note in parsed.notes)


def test_every_price_of_the_real_file_is_an_offer_or_a_counted_skip():
    data, parsed = real("02"), real_parsed("02")
    start = data.index(b"\n  instance:\n")
    section = data[start:re.compile(rb"^  [a-z]", re.M).search(data, start + 2).start()]
    prices = len(re.findall(rb"^ {10}(?:hour|hour_spot|month_1y|month_3y): ", section, re.M))
    assert accounted(parsed) == prices and not parsed.rejected
    assert any("not a GPU machine type" in n for n in parsed.notes)   # n2-standard-8 ...
    assert any("NVIDIA L4" in n for n in parsed.notes)                # g2: untracked
    terms = {r.fields["offer"]["term"] for r in parsed.pack.rows}
    assert terms == {"on_demand", "spot", "reserved_1y", "reserved_3y"}
    [source] = parsed.pack.sources
    assert source.key == "gcp-pricing-yml-2026-07-02" and source.published_on == date(2026, 7, 2)
    assert source.url == "https://github.com/Cyclenerd/google-cloud-pricing-cost-calculator"


def test_the_date_is_the_files_own_generation_date():
    parsed = read(pricing_yml({"a3-highgpu-8g": H100_VM}), "pricing_2026-08-30.yml",
                  as_of=date(2026, 9, 1))
    assert {r.fields["as_of"] for r in parsed.pack.rows} == {"2026-07-02"}
    assert any("--as-of 2026-09-01 not used" in note for note in parsed.notes)
    # Without about.generated: --as-of, else the name's date; with neither, refused.
    undated = pricing_yml({"a3-highgpu-8g": H100_VM}, generated=None)
    assert read(undated, as_of=date(2026, 7, 9)).pack.rows[0].fields["as_of"] == "2026-07-09"
    assert read(undated, "pricing_2026-07-16.yml").pack.rows[0].fields["as_of"] == "2026-07-16"
    with pytest.raises(AdapterError, match="as_of needed"):
        read(undated)


def test_two_weekly_versions_give_the_same_offers_and_say_what_moved():
    first, last = real_parsed("02"), real_parsed("30")
    again = gcp_pricing_yaml.parse("pricing_2026-07-02.yml", real("02"), AdapterOptions())
    assert [r.fields for r in again.pack.rows] == [r.fields for r in first.pack.rows]
    before, after = by_item(first), by_item(last)
    assert set(before) == set(after)                   # the same offers, week to week
    moved = {key for key in before if before[key]["value"] != after[key]["value"]}
    assert moved == {key for key in before if before[key]["offer"]["price_written"]
                     != after[key]["offer"]["price_written"]}
    # What SOURCES.md reports: a3-highgpu-8g's spot moved in July, its on-demand did not.
    key = "gcp-a3-highgpu-8g-us-central1-"
    assert f"{key}spot" in moved and f"{key}on-demand" not in moved
    spot_then = file_prices(real("02"), "a3-highgpu-8g", "us-central1")["hour_spot"][1]
    spot_now = file_prices(real("30"), "a3-highgpu-8g", "us-central1")["hour_spot"][1]
    assert after[f"{key}spot"]["value"] == pytest.approx(float(spot_now) / 8)
    assert float(spot_now) != float(spot_then)
    assert {r.fields["as_of"] for r in last.pack.rows} == {"2026-07-30"}


# --- machine types and the instance table -----------------------------------------------------

def test_machines_without_a_gpu_are_skipped_and_unknown_gpu_machines_rejected():
    data = pricing_yml({
        "a3-highgpu-8g": H100_VM,
        "n2-standard-8": {"cost": {"us-central1": {"hour": "0.38", "hour_spot": "0.09"}},
                          "cpu": 8, "ram": 32},
        "g2-standard-4": {"cost": {"us-central1": {"hour": "0.7"}}, "cpu": 4, "l4": 1,
                          "ram": 16},
        "a9-hypergpu-8g": {"b300": 8, "cost": {"us-central1": {"hour": "120.5",
                                                                "hour_spot": "50"}}},
    })
    parsed = read(data)
    assert len(parsed.pack.rows) == 4                  # the H100 VM's four terms
    assert parsed.skipped_lines == 3                   # n2's two prices, g2's one
    assert any("2 price(s) skipped: not a GPU machine type" in n for n in parsed.notes)
    assert any("untracked GPU machine type (NVIDIA L4" in n for n in parsed.notes)
    lines = data.decode().split("\n")
    assert [(r.field, lines[r.line - 1].strip()) for r in parsed.rejected] == [
        ("compute.instance.a9-hypergpu-8g.cost.us-central1.hour", "hour: 120.5"),
        ("compute.instance.a9-hypergpu-8g.cost.us-central1.hour_spot", "hour_spot: 50")]
    assert "add it to data/instances.yaml" in parsed.rejected[0].reason
    assert "b300: 8" in parsed.rejected[0].reason


def test_a_listed_machine_must_agree_with_the_table_on_its_gpu_count():
    parsed = read(pricing_yml({"a3-highgpu-8g": {**H100_VM, "h100-80gb": 4}}))
    assert not parsed.pack.rows and len(parsed.rejected) == 4
    assert "h100-80gb: 4 here but data/instances.yaml says 8" in parsed.rejected[0].reason


# --- bad input --------------------------------------------------------------------------------

def test_a_price_that_is_not_a_positive_number_is_rejected_naming_its_line_and_field():
    vm = {**H100_VM, "cost": {"us-central1": {"hour": "-88.49", "hour_spot": "cheap",
                                              "month_1y": "0", "month_3y": "28370.99"},
                              "europe-west4": {"hour": ".inf", "hour_spot": "40.1"}}}
    data = pricing_yml({"a3-highgpu-8g": vm})
    parsed = read(data)
    lines = data.decode().split("\n")
    rejected = {r.field.rsplit(".", 2)[-2] + "." + r.field.rsplit(".", 1)[-1]:
                (lines[r.line - 1].strip(), r.reason) for r in parsed.rejected}
    assert rejected == {
        "us-central1.hour": ("hour: -88.49", "hour '-88.49' is not a finite positive number"),
        "us-central1.hour_spot": ("hour_spot: cheap",
                                  "hour_spot 'cheap' is not a finite positive number"),
        "us-central1.month_1y": ("month_1y: 0", "month_1y '0' is not a finite positive number"),
        "europe-west4.hour": ("hour: .inf", "hour '.inf' is not a finite positive number")}
    assert sorted(r.fields["offer"]["term"] for r in parsed.pack.rows) == ["reserved_3y", "spot"]
    assert "us-central1:" in parsed.rejected[0].raw_text   # the region's block, as written


def test_a_price_written_twice_is_rejected_not_guessed():
    text = pricing_yml({"a3-highgpu-8g": H100_VM}).decode()
    text = text.replace("          hour: 88.49\n", "          hour: 88.49\n          hour: 1\n")
    parsed = read(text.encode())
    [rejected] = parsed.rejected
    assert rejected.field.endswith("us-central1.hour") and "written twice" in rejected.reason
    assert len(parsed.pack.rows) == 3


@pytest.mark.parametrize("data, reason", [
    (b"", "empty file"),
    (b"  \n\n", "empty file"),
    (b"about:\n  generated: x\ncompute:\n  instance: {a3-highgpu-8g: [1, 2\n", "malformed YAML"),
    (b"\xff\xfe\x00a", "not UTF-8"),
    (b"- just\n- a list\n", "not a pricing.yml"),
    (b"about:\n  generated: x\nstorage: {}\n", "no `compute.instance`"),
])
def test_an_empty_or_non_yaml_file_is_refused_whole(data, reason):
    with pytest.raises(AdapterError, match=re.escape(reason)):
        read(data)


def test_a_truncated_file_is_refused_whole():
    data = real("02")
    # Cut inside compute.instance at a line end: still YAML, but without its later sections.
    cut = data[: data.index(b"\n", len(data) // 3) + 1]
    with pytest.raises(AdapterError, match="truncated pricing.yml"):
        read(cut)
    # Cut inside a quoted value: not YAML at all.
    with pytest.raises(AdapterError, match="malformed YAML"):
        read(pricing_yml({"a3-highgpu-8g": H100_VM}, region_section=False)
             + b'    a2-ultragpu-8g:\n      cost:\n        us-central1:\n          hour: "40.5')
    with pytest.raises(AdapterError, match="truncated"):
        read(pricing_yml({"a3-highgpu-8g": H100_VM}, region_section=False))


def test_a_file_beyond_the_size_limit_is_refused_unread():
    limits = DEFAULT_LIMITS.__class__(**{**DEFAULT_LIMITS.__dict__, "max_file_bytes": 100})
    with pytest.raises(AdapterError, match="SPECLEDGER_MAX_FILE_BYTES"):
        read(pricing_yml({"a3-highgpu-8g": H100_VM}), limits=limits)


# --- accounting, on synthesized documents -----------------------------------------------------

_MACHINES = {  # name -> its keys other than cost
    "a3-highgpu-8g": {"cpu": 208, "h100-80gb": 8},
    "a2-ultragpu-1g": {"a100-80gb": 1, "cpu": 12},
    "a2-highgpu-2g": {"a100": 4},                        # disagrees with the table (2)
    "n2-standard-8": {"cpu": 8, "ram": 32},              # no GPU
    "g4-standard-48": {"rtx6000": 1},                    # untracked
    "a9-hypergpu-8g": {"b300": 8},                       # unknown GPU machine
    "c3-weird": {},
}
_PRICE_KEYS = ("hour", "hour_spot", "month", "month_spot", "month_1y", "month_3y", "hour_dws")
_VALUES = st.one_of(st.decimals(min_value=Decimal("0.001"), max_value=Decimal("99999"),
                                places=4).map(str),
                    st.sampled_from(["0", "-1.5", "cheap", "~", ".nan", "1e400", "'12.5'"]))
_blocks = st.dictionaries(st.sampled_from(["us-central1", "europe-west4", "asia-east1"]),
                          st.one_of(st.dictionaries(st.sampled_from(_PRICE_KEYS), _VALUES,
                                                    max_size=7),
                                    st.just("not-a-block")), max_size=3)
_documents = st.dictionaries(st.sampled_from(sorted(_MACHINES)), _blocks, max_size=6)


@settings(max_examples=examples(60), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(_documents)
def test_every_price_read_is_an_offer_a_rejection_or_a_skip(document):
    machines = {name: {**_MACHINES[name], "cost": blocks} for name, blocks in document.items()}
    text = pricing_yml(machines).decode()
    if not machines:
        return
    parsed = read(text.encode())
    expected = 0  # a block that is not a mapping or holds no term counts once, as does no cost
    for blocks in document.values():
        terms = [sum(k in b for k in ("hour", "hour_spot", "month_1y", "month_3y"))
                 if isinstance(b, dict) else 1 for b in blocks.values()]
        expected += sum(max(1, n) for n in terms) if blocks else 1
    assert accounted(parsed) == expected
    for row in parsed.pack.rows:
        assert row.fields["value"] > 0 and row.fields["as_of"] == "2026-07-02"
        assert row.column.rsplit(".", 1)[-1] in ("hour", "hour_spot", "month_1y", "month_3y")
        assert row.fields["offer"]["instance_type"] in ("a3-highgpu-8g", "a2-ultragpu-1g")
