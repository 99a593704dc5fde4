"""The neocloud cheapest-price adapter (github.com/toolshedlabs-hash/gpu-price-feed,
data/history/v2/<month>.jsonl): each provider's cheapest on-demand price of a tracked GPU on a
day is one observation of an offer "the provider's cheapest listing of that GPU"; ambiguous GPU
names are rejected with why, untracked ones are counted skips, a broken line is one rejection
and the other lines stay.

The real file is the shared copy (market/neocloud-cheapest-toolshedlabs, SOURCES.md there): 4
lines, 2026-10-01 to 2026-10-04, 645 prices; GB300 only at DataCrunch (Verda), MI325X only at
DigitalOcean."""

from __future__ import annotations

import json
from datetime import date

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from models.bulk_rows import validate_rows
from pipelines.inputs.adapters import neocloud_cheapest
from pipelines.inputs.adapters.base import AdapterError, AdapterOptions, Parsed
from tests.conftest import examples
from tests.support.shared_data import shared_bytes

NAME = "2026-10.jsonl"


def real_file() -> bytes:
    return shared_bytes("market", "neocloud-cheapest-toolshedlabs", "2026-10.jsonl")


def real_lines() -> list[dict]:
    return [json.loads(line) for line in real_file().decode().splitlines() if line.strip()]


def read(data: bytes, **options) -> Parsed:
    return neocloud_cheapest.parse(NAME, data, AdapterOptions(**options))


def line(cheapest: dict, collected_at: str = "2026-10-01T13:13:26+00:00",
         version: object = 2) -> str:
    return json.dumps({"cheapest": cheapest, "collected_at": collected_at,
                       "schema_version": version}, sort_keys=True)


def jsonl(*lines: str, newline: str = "\n") -> bytes:
    return (newline.join(lines) + newline).encode()


def accounted(parsed: Parsed) -> int:
    return len(parsed.pack.rows) + len(parsed.rejected) + parsed.skipped_lines


def by_item_day(parsed: Parsed) -> dict[tuple[str, str], dict]:
    return {(r.fields["item"], r.fields["as_of"]): r.fields for r in parsed.pack.rows}


# --- the real file ---------------------------------------------------------------------------

def test_every_price_of_the_real_file_is_a_row_a_rejection_or_a_counted_skip(metrics):
    data = real_file()
    assert neocloud_cheapest.detect(NAME, data) == neocloud_cheapest.FORMAT
    parsed = read(data)
    prices = sum(len(gpus) for day in real_lines() for gpus in day["cheapest"].values())
    assert prices == 645
    assert accounted(parsed) == prices
    for row in parsed.pack.rows:                        # one GPU, anywhere, on demand
        offer = row.fields["offer"]
        assert (offer["gpus_per_instance"], offer["region"], offer["term"]) == (1, "any",
                                                                               "on_demand")
        assert offer["instance_type"] == f"cheapest-{offer['gpu']}"
        assert row.fields["value"] == float(offer["price_written"])
    source = parsed.pack.sources[0]
    assert (source.key, source.published_on) == ("gpu-price-feed-2026-10", date(2026, 10, 4))
    clean, errors = validate_rows([(r.line, r.fields) for r in parsed.pack.rows],
                                  metrics=metrics, items={i.key for i in parsed.pack.items},
                                  sources={source.key}, today=date(2026, 12, 1))
    assert errors == [] and len(clean) == len(parsed.pack.rows)


@pytest.mark.parametrize("provider_written, gpu_name, provider, gpu", [
    ("datacrunch", "GB300 288GB SXM", "verda", "gb300"),
    ("digitalocean", "MI325X 256GB", "digitalocean", "amd-mi325x"),
])
def test_the_only_gb300_and_mi325x_are_priced_with_their_provider_and_day(
        provider_written, gpu_name, provider, gpu):
    parsed = read(real_file())
    expected = {day["collected_at"][:10]: float(day["cheapest"][provider_written][gpu_name])
                for day in real_lines()}
    assert len(expected) == 4
    rows = [r.fields for r in parsed.pack.rows if r.fields["offer"]["gpu"] == gpu]
    assert {r["as_of"]: r["value"] for r in rows} == expected
    assert {r["offer"]["provider"] for r in rows} == {provider}
    assert {r["item"] for r in rows} == {f"{provider}-cheapest-{gpu}-any-on-demand"}
    assert all(f"cheapest listing ({gpu_name})" in r["quote"] for r in rows)


def test_the_real_files_gpu_names_are_mapped_rejected_or_skipped_as_the_tables_say():
    parsed = read(real_file())
    rows = by_item_day(parsed)
    first = real_lines()[0]["cheapest"]
    # Form stated: one item each. B200 "form unstated" is still a B200 (only made as SXM).
    assert rows[("runpod-cheapest-h100-sxm5-any-on-demand", "2026-10-01")]["value"] == \
        float(first["runpod"]["H100 80GB SXM"])
    assert rows[("runpod-cheapest-h100-pcie-any-on-demand", "2026-10-01")]["value"] == \
        float(first["runpod"]["H100 80GB PCIe"])
    assert rows[("runpod-cheapest-b200-any-on-demand", "2026-10-01")]["value"] == \
        float(first["runpod"]["B200 180GB (form unstated)"])
    assert rows[("lambda-cheapest-a100-sxm4-80gb-any-on-demand", "2026-10-01")]["value"] == \
        float(first["lambdalabs"]["A100 80GB SXM"])
    # H200 without its form could be the SXM item or the untracked NVL card: for review.
    h200 = [r for r in parsed.rejected if "H200 141GB (form unstated)" in r.field]
    assert len(h200) == 4 and {r.line for r in h200} == {1, 2, 3, 4}
    assert "SXM module or the NVL card" in h200[0].reason
    assert h200[0].raw_text == '"vastai": {"H200 141GB (form unstated)": 3.5556}'
    # Untracked GPUs are counted skips, never rows.
    notes = "\n".join(parsed.notes)
    assert "24 price(s) skipped: GPU the ledger does not track (NVIDIA L40S" in notes
    assert "8 price(s) skipped: GPU the ledger does not track (NVIDIA H100 NVL" in notes
    assert not any("l40s" in item or "nvl" in item for item, _ in rows)


# --- bad input -------------------------------------------------------------------------------

def test_crlf_line_endings_read_the_same_as_lf():
    lines = real_file().decode().splitlines()
    lf, crlf = read(jsonl(*lines)), read(jsonl(*lines, newline="\r\n"))
    assert [r.fields for r in crlf.pack.rows] == [r.fields for r in lf.pack.rows]
    assert len(crlf.pack.rows) == 136 and crlf.rejected == lf.rejected


@pytest.mark.parametrize("price, shown", [
    (None, "null"), ("", '""'), ("3.99", '"3.99"'), ("cheap", '"cheap"'), (True, "true"),
    (0, "0"), (-2.69, "-2.69"), ({"usd": 2.69}, '{"usd": 2.69}'), ([2.69], "[2.69]"),
])
def test_an_empty_or_non_number_price_is_rejected_naming_its_line_and_gpu(price, shown):
    data = jsonl(line({"runpod": {"H100 80GB SXM": 2.69}}),
                 line({"runpod": {"H100 80GB SXM": price, "B300 288GB SXM": 6.94}},
                      "2026-10-02T12:33:41+00:00"))
    parsed = read(data)
    [rejected] = parsed.rejected
    assert (rejected.line, rejected.field) == (2, "cheapest.runpod.H100 80GB SXM")
    assert f"price {shown} is not a finite positive number" in rejected.reason
    assert sorted(by_item_day(parsed)) == [
        ("runpod-cheapest-b300-any-on-demand", "2026-10-02"),
        ("runpod-cheapest-h100-sxm5-any-on-demand", "2026-10-01")]


def test_nan_and_infinity_are_not_prices():
    data = b'{"cheapest": {"runpod": {"H100 80GB SXM": NaN, "B200 180GB SXM": Infinity}}, ' \
           b'"collected_at": "2026-10-01T13:13:26+00:00", "schema_version": 2}\n'
    parsed = read(data)
    assert parsed.pack.rows == [] and len(parsed.rejected) == 2


@pytest.mark.parametrize("bad, field, reason", [
    ('{"cheapest": {"runpod": {"H100 80GB SXM": 2.69}', "line", "malformed JSON"),
    ("[1, 2, 3]", "line", "not a JSON object"),
    (line({"runpod": {"H100 80GB SXM": 2.69}}, "yesterday"), "collected_at", "cannot be dated"),
    (line({"runpod": {"H100 80GB SXM": 2.69}}, version=1), "schema_version", "version 2"),
    (line([["runpod", 2.69]]), "cheapest", "not an object of providers"),
    ('{"cheapest": {"runpod": {"H100 80GB SXM": 2.69, "H100 80GB SXM": 1.0}}, '
     '"collected_at": "2026-10-02T00:00:00Z", "schema_version": 2}', "line", "written twice"),
    ("[" * 100 + "]" * 100, "line", "deeper"),
])
def test_a_line_that_cannot_be_read_is_one_rejection_and_the_others_stay(bad, field, reason):
    good = line({"runpod": {"H100 80GB SXM": 2.69}, "digitalocean": {"MI325X 256GB": 3.8}})
    parsed = read(jsonl(good, bad, good.replace("10-01", "10-03")))
    [rejected] = parsed.rejected
    assert (rejected.line, rejected.field) == (2, field) and reason in rejected.reason
    assert rejected.raw_text == bad
    assert len(parsed.pack.rows) == 4 and {r.line for r in parsed.pack.rows} == {1, 3}


@pytest.mark.parametrize("data, reason", [
    (b"", "empty file"),
    (b"\n\r\n  \n", "empty file"),
    (b'{"cheapest": {"runpod": \n', "no line can be read"),
])
def test_an_empty_or_wholly_broken_file_is_refused(data, reason):
    with pytest.raises(AdapterError, match=reason):
        read(data)


def test_unknown_and_ambiguous_names_are_rejected_untracked_ones_skipped():
    parsed = read(jsonl(line({"runpod": {"H100": 2.5, "MI355X 288GB": 5.0, "L4 24GB": 0.49,
                                         "RTX PRO 6000 Blackwell 24GB Server MIG": 0.59,
                                         "A100 80GB PCIe": 1.19}})))
    reasons = {r.field.rsplit(".", 1)[1]: r.reason for r in parsed.rejected}
    assert "ambiguous" in reasons["H100"] and "SXM5 module or the PCIe card" in reasons["H100"]
    assert "unknown GPU name 'MI355X 288GB'" in reasons["MI355X 288GB"]
    assert parsed.pack.rows == [] and parsed.skipped_lines == 3
    assert any("a MIG slice" in note for note in parsed.notes)


def test_two_names_of_one_gpu_keep_the_lower_price_and_a_day_its_last_collection():
    parsed = read(jsonl(
        line({"vastai": {"B200 180GB SXM": 6.25, "B200 180GB (form unstated)": 5.98}},
             "2026-10-01T18:00:00+00:00"),
        line({"vastai": {"B200 180GB SXM": 7.00}}, "2026-10-01T06:00:00+00:00"),
        line({"vastai": {"B200 180GB SXM": 6.50}}, "2026-10-02T01:30:00+02:00")))
    rows = by_item_day(parsed)
    # 18:00 is the 1st's last collection; 01:30+02:00 is 23:30 UTC on the 1st, later still.
    assert list(rows) == [("vast-cheapest-b200-any-on-demand", "2026-10-01")]
    [row] = parsed.pack.rows
    assert (row.line, row.fields["value"]) == (3, 6.5)
    assert "a single host's ask" in row.fields["quote"]
    assert accounted(parsed) == 4


def test_detect_claims_only_the_feeds_lines():
    assert neocloud_cheapest.detect(NAME, real_file()) == "neocloud-cheapest"
    assert neocloud_cheapest.detect("x.json", b'{"formatVersion": "v1.0", "offerCode": "E"}') \
        is None
    assert neocloud_cheapest.detect("x.json", b'[{"cheapest": 1}]') is None
    assert neocloud_cheapest.detect("x.csv", b"source,item,metric,unit,as_of\n") is None
    assert neocloud_cheapest.detect("x.jsonl", b'{"hw": "h100", "cheapest": 1}') is None


# --- accounting on synthesized files ---------------------------------------------------------

def _mostly(good: list, bad: list) -> st.SearchStrategy:
    """Good values three times as often as bad ones, so that a GPU priced twice on a day (two
    names, two collections) is common."""
    return st.sampled_from(good * 3 + bad)


_names = _mostly(["H100 80GB SXM", "B200 180GB SXM", "B200 180GB (form unstated)",
                  "GB300 288GB SXM", "MI325X 256GB"],
                 ["H200 141GB (form unstated)", "V100 16GB (form unstated)", "L40S 48GB",
                  "RTX 4090 24GB", "H100 94GB NVL", "Mystery GPU", "H100"])
_prices = st.one_of(_mostly(["2.69", 3.8, 9.915], [None, "", 0, -1, True, 1e308]),
                    st.floats(0.01, 50, allow_nan=False), st.integers(1, 20))
_providers = _mostly(["runpod", "datacrunch", "vastai"], ["digitalocean", "Bad Name"])
_day = st.tuples(st.dictionaries(_providers, st.dictionaries(_names, _prices, max_size=5),
                                 max_size=3),
                 _mostly(["2026-10-01T13:13:26+00:00", "2026-10-01T20:00:00Z",
                          "2026-10-02T12:33:41+00:00", "2026-10-03"], ["not a time"]),
                 _mostly([True], [False]))  # False: the line is broken


@settings(max_examples=examples(60), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_day, min_size=1, max_size=6), st.sampled_from(["\n", "\r\n"]))
def test_every_price_read_is_a_row_a_rejection_or_a_counted_skip(days, newline):
    lines, expected = [], 0
    for cheapest, collected_at, whole in days:
        text = line(cheapest, collected_at)
        if not whole:
            lines.append(text[: len(text) // 2])
            expected += 1                               # one rejection for the whole line
        elif collected_at == "not a time":
            lines.append(text)
            expected += 1
        else:
            lines.append(text)
            prices = sum(len(gpus) for gpus in cheapest.values())
            expected += prices or 1                     # a line with no price is one skip
    try:
        parsed = read(jsonl(*lines, newline=newline))
    except AdapterError as refused:
        assert "no line can be read" in str(refused)   # only when every line is unreadable
        assert all(not whole or at == "not a time" for _, at, whole in days)
        return
    assert accounted(parsed) == expected
    facts = [(r.fields["item"], r.fields["as_of"]) for r in parsed.pack.rows]
    assert len(facts) == len(set(facts))                # one observation per offer and day
    assert all(r.fields["value"] > 0 for r in parsed.pack.rows)
