"""The AWS price series adapter (github.com/amorton45/aws-gpu-price-tracker, gpu_prices.csv):
each dated row is one observation of one offer, the p5.48xlarge on demand in us-east-1, dated by
its own timestamp; empty prices are counted skips, a day read twice keeps its last reading, bad
rows are rejected naming their line, an empty file is refused.

The real file is the shared copy (market/aws-p5-ondemand-daily, SOURCES.md there): 500 rows,
98.32 USD per instance-hour to 2025-06-04 and 55.04 from 2025-06-05, CRLF, 13 empty prices."""

from __future__ import annotations

import csv
import io
from datetime import date

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from models.bulk_rows import validate_rows
from pipelines.inputs.adapters import aws_price_series, skypilot_catalog
from pipelines.inputs.adapters.base import AdapterError, AdapterOptions, Parsed
from tests.conftest import examples
from tests.support.shared_data import shared_bytes

NAME = "gpu_prices.csv"
ITEM = "aws-p5-48xlarge-us-east-1-on-demand"
HEADER = "timestamp,instance,price_usd"


def real_file() -> bytes:
    return shared_bytes("market", "aws-p5-ondemand-daily", "gpu_prices.csv")


def read(data: bytes, **options) -> Parsed:
    return aws_price_series.parse(NAME, data, AdapterOptions(**options))


def csv_file(*rows: str, newline: str = "\n") -> bytes:
    return newline.join([HEADER, *rows, ""]).encode()


def accounted(parsed: Parsed) -> int:
    return len(parsed.pack.rows) + len(parsed.rejected) + parsed.skipped_lines


def file_rows(data: bytes) -> list[list[str]]:
    """The file's rows as the csv module reads them (the test's own reading)."""
    return list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")))[1:]


# --- the real file ---------------------------------------------------------------------------

def test_every_dated_day_of_the_real_file_is_an_observation_of_one_offer(metrics):
    data = real_file()
    assert aws_price_series.detect(NAME, data) == aws_price_series.FORMAT
    parsed = read(data)
    rows = file_rows(data)
    priced_days = {date.fromisoformat(r[0][:10]) for r in rows if r[2].strip()}
    assert accounted(parsed) == len(rows) == 500        # every row is a row, a reject or a skip
    assert parsed.rejected == []
    assert {r.fields["item"] for r in parsed.pack.rows} == {ITEM}
    got_days = [date.fromisoformat(r.fields["as_of"]) for r in parsed.pack.rows]
    assert sorted(got_days) == sorted(priced_days)      # one observation per dated day
    assert len(got_days) == len(set(got_days))
    for row in parsed.pack.rows:                        # each dated by its own row
        assert row.raw_text.startswith(row.fields["as_of"])
        assert row.fields["offer"]["gpus_per_instance"] == 8
    source = parsed.pack.sources[0]
    assert (source.key, source.kind, source.published_on) == (
        "aws-gpu-price-tracker", "dataset", max(priced_days))
    clean, errors = validate_rows([(r.line, r.fields) for r in parsed.pack.rows],
                                  metrics=metrics, items={i.key for i in parsed.pack.items},
                                  sources={source.key}, today=date(2026, 12, 1))
    assert errors == [] and len(clean) == len(priced_days)


def test_the_june_2025_cut_is_visible_per_gpu_hour():
    data = real_file()
    rows = [r for r in file_rows(data) if r[2].strip()]
    by_day = {r[0][:10]: float(r[2]) for r in rows}
    before, after = by_day["2025-06-04"], by_day["2025-06-05"]
    assert before != after                              # the file's own figures
    series = {r.fields["as_of"]: r.fields["value"] for r in read(data).pack.rows}
    assert series["2025-06-04"] == pytest.approx(before / 8)   # 98.32 / 8 = 12.29
    assert series["2025-06-05"] == pytest.approx(after / 8)    # 55.04 / 8 = 6.88
    assert (before / 8, after / 8) == pytest.approx((12.29, 6.88))
    changes = [day for (_, a), (day, b) in zip(sorted(series.items()),
                                                sorted(series.items())[1:], strict=False)
               if a != b]
    assert changes == ["2025-06-05"]                    # the only move in the whole series
    assert min(series) == "2025-04-23" and max(series) == "2026-08-22"


def test_the_real_files_empty_prices_and_second_reading_are_counted_skips():
    parsed = read(real_file())
    notes = "\n".join(parsed.notes)
    assert "13 row(s) skipped: no price" in notes        # 12 placeholders and a failed run
    assert "1 row(s) skipped: an earlier reading of the same day" in notes
    first_day = next(r for r in parsed.pack.rows if r.fields["as_of"] == "2025-04-23")
    assert first_day.raw_text.startswith("2025-04-23T19:41:48")   # the day's last reading


def test_the_series_is_the_same_offer_item_as_the_price_list_readers_give():
    catalog = (b"InstanceType,AcceleratorName,AcceleratorCount,Price,SpotPrice,Region\n"
               b"p5.48xlarge,H100,8,98.32,,us-east-1\n")
    sky = skypilot_catalog.parse("aws-vms.csv", catalog, AdapterOptions(as_of=date(2025, 5, 1)))
    ours = read(csv_file("2025-05-01T07:00:00,p5.48xlarge,98.32"))
    assert [r.fields["item"] for r in sky.pack.rows] == [r.fields["item"] for r in ours.pack.rows]
    assert ours.pack.rows[0].fields["value"] == sky.pack.rows[0].fields["value"] == 12.29


# --- bad input -------------------------------------------------------------------------------

def test_crlf_line_endings_do_not_reach_the_price():
    parsed = read(csv_file("2025-05-01T07:00:00,p5.48xlarge,98.32",
                           "2025-05-02T07:00:00,p5.48xlarge,55.04", newline="\r\n"))
    assert [r.fields["offer"]["price_written"] for r in parsed.pack.rows] == ["98.32", "55.04"]
    assert [r.fields["value"] for r in parsed.pack.rows] == [12.29, 6.88]
    assert parsed.rejected == []


def test_an_empty_price_is_a_counted_skip_not_a_zero():
    parsed = read(csv_file("2025-04-01,p5.48xlarge,", "2025-05-01,p5.48xlarge,  "))
    assert parsed.pack.rows == [] and parsed.rejected == [] and parsed.skipped_lines == 2
    assert parsed.notes == ["2 row(s) skipped: no price (a placeholder row or a failed run of "
                            "the tracker: not a price, not zero)"]
    assert parsed.pack.sources == []                    # nothing priced, nothing declared


@pytest.mark.parametrize("row, field, reason", [
    ("2025-05-01,p5.48xlarge,cheap", "price_usd", "'cheap' is not a finite positive number"),
    ("2025-05-01,p5.48xlarge,0", "price_usd", "'0' is not a finite positive number"),
    ("2025-05-01,p5.48xlarge,-98.32", "price_usd", "is not a finite positive number"),
    ("2025-05-01,p5.48xlarge,1e999", "price_usd", "is not a finite positive number"),
    ("2025-02-30T07:00:00,p5.48xlarge,98.32", "timestamp", "is not a date"),
    ("yesterday,p5.48xlarge,98.32", "timestamp", "is not a date"),
    ("2025-05-01,p9.mystery,98.32", "instance", "unknown instance 'p9.mystery'"),
    ("2025-05-01,,98.32", "instance", "instance is blank"),
    ("2025-05-01,p5.48xlarge,98.32,extra", "row", "expected 3 fields"),
    ('2025-05-01,"p5.48xlarge,98.32', "row", "unterminated quote"),
])
def test_a_bad_row_is_rejected_naming_its_line_and_column(row, field, reason):
    parsed = read(csv_file("2025-04-30T07:00:00,p5.48xlarge,98.32", row))
    [rejected] = parsed.rejected
    assert (rejected.line, rejected.field) == (3, field)
    assert reason in rejected.reason and rejected.raw_text.startswith(row[:10])
    assert [r.fields["as_of"] for r in parsed.pack.rows] == ["2025-04-30"]   # the other stays


def test_an_untracked_instance_is_skipped_with_its_reason():
    parsed = read(csv_file("2025-05-01,g5.xlarge,1.006"))
    assert parsed.pack.rows == [] and parsed.rejected == []
    assert parsed.notes == ["1 row(s) skipped: untracked GPU instance (NVIDIA A10G: no ledger "
                            "item)"]


@pytest.mark.parametrize("data, reason", [
    (b"", "empty file"),
    (b"\r\n", "empty file"),
    (HEADER.encode() + b"\r\n", "no rows"),
    (b"timestamp,price_usd\n2025-05-01,98.32\n", "the header lacks instance"),
])
def test_a_file_without_rows_or_columns_is_refused_whole(data, reason):
    with pytest.raises(AdapterError, match=reason):
        read(data)


def test_a_day_read_twice_keeps_its_last_reading_and_says_both_prices():
    parsed = read(csv_file("2025-06-05T19:00:00,p5.48xlarge,55.04",
                           "2025-06-05T07:00:00,p5.48xlarge,98.32",
                           "2025-06-05,p5.48xlarge,98.32"))
    [row] = parsed.pack.rows
    assert (row.line, row.fields["offer"]["price_written"]) == (2, "55.04")
    assert "55.04, 98.32 USD per hour that day" in row.fields["quote"]
    assert parsed.skipped_lines == 2


def test_detect_claims_only_the_trackers_csv():
    assert aws_price_series.detect(NAME, b"\xef\xbb\xbf" + csv_file()) == "aws-price-series"
    pack = b"source,item,metric,value,unit,as_of,timestamp,instance,price_usd\n"
    sky = b"InstanceType,AcceleratorName,AcceleratorCount,Price,Region\n"
    assert aws_price_series.detect(NAME, pack) is None
    assert aws_price_series.detect("aws-vms.csv", sky) is None
    assert aws_price_series.detect(NAME, b'{"timestamp": 1}') is None
    assert skypilot_catalog.detect(NAME, real_file()) is None


def test_as_of_is_not_used_and_says_so():
    parsed = read(csv_file("2025-05-01T07:00:00,p5.48xlarge,98.32"), as_of=date(2026, 1, 1))
    assert parsed.pack.rows[0].fields["as_of"] == "2025-05-01"
    assert any("--as-of not used" in note for note in parsed.notes)


# --- accounting on synthesized files ---------------------------------------------------------

def _mostly(good: list[str], bad: list[str]) -> st.SearchStrategy[str]:
    """Good values three times as often as bad ones, so that days read twice are common."""
    return st.sampled_from(good * 3 + bad)


_row = st.tuples(
    _mostly(["2025-04-23T18:52:57", "2025-04-23T19:41:48", "2025-04-23", "2025-06-05",
             "2025-06-05T07:22:36"], ["2026-13-01", "", "2025-6-5", "later"]),
    _mostly(["p5.48xlarge", "p4d.24xlarge"], ["g5.xlarge", "p9.mystery", ""]),
    _mostly(["98.32", "55.04", "32.7726"], ["", " ", "0", "-1", "abc", "NaN", "inf", "1e400"]))


@settings(max_examples=examples(60), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_row, min_size=1, max_size=20), st.sampled_from(["\n", "\r\n"]))
def test_every_row_read_is_an_observation_a_rejection_or_a_counted_skip(rows, newline):
    data = csv_file(*(",".join(row) for row in rows), newline=newline)
    parsed = read(data)
    assert accounted(parsed) == len(rows)
    facts = [(r.fields["item"], r.fields["as_of"]) for r in parsed.pack.rows]
    assert len(facts) == len(set(facts))                # one observation per offer and day
    for row in parsed.pack.rows:
        assert row.fields["value"] > 0
        assert row.raw_text.startswith(row.fields["as_of"])
