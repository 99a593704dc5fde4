from datetime import date

import pytest
from hypothesis import given
from hypothesis import strategies as st

from models.bulk_rows import validate_rows
from models.observations import (
    UNDATED,
    CleanObservation,
    MetricDef,
    OfferTerms,
    RowError,
    validate_row,
)

TODAY = date(2026, 11, 22)
METRICS = {
    "scaleup_bw_per_gpu_bidir": MetricDef("scaleup_bw_per_gpu_bidir", "GB/s", "per_gpu",
                                          "bidirectional", "per-GPU NVLink", "bytes", 1, 100000),
    "rack_it_power": MetricDef("rack_it_power", "kW", "per_rack", "n/a", "rack power", None,
                               0.1, 10000),
}
GOOD = {"source": "nvidia", "item": "nvlink-5", "metric": "scaleup_bw_per_gpu_bidir",
        "value": 1.8, "unit": "TB/s", "as_of": date(2024, 3, 18), "status": "C"}


def check(row, line=7):
    return validate_row(row, line=line, metrics=METRICS, items={"nvlink-5"},
                        sources={"nvidia"}, today=TODAY)


def test_a_good_row_is_converted_to_the_canonical_unit_and_keeps_what_was_written():
    clean = check(GOOD)
    assert isinstance(clean, CleanObservation)
    assert (clean.value, clean.low, clean.high) == (1800, 1800, 1800)
    assert (clean.value_written, clean.unit_written) == ("1.8", "TB/s")
    assert clean.value_kind == "reported"


def test_a_range_keeps_low_and_high_and_its_midpoint():
    clean = check({**GOOD, "metric": "rack_it_power", "value": [120, 132], "unit": "kW"})
    assert (clean.low, clean.high, clean.value) == (120, 132, 126)


def test_thousands_separators_in_a_quoted_number_are_read():
    clean = check({**GOOD, "value": "1,800", "unit": "GB/s"})
    assert (clean.value, clean.value_written) == (1800, "1,800")


@pytest.mark.parametrize(("as_of", "expected", "precision"), [
    ("2021-11", date(2021, 11, 1), "month"),
    ("2016", date(2016, 1, 1), "year"),
    ("2024-03-18", date(2024, 3, 18), "day"),
])
def test_partial_dates_keep_their_precision(as_of, expected, precision):
    clean = check({**GOOD, "as_of": as_of})
    assert (clean.as_of, clean.as_of_precision) == (expected, precision)


@pytest.mark.parametrize("written", ["undated", "Undated", " undated "])
def test_an_undated_figure_keeps_where_its_valid_time_starts_and_no_date_of_its_own(written):
    """`as_of: undated` (the source gives no date): valid_from is stored where the date would
    be, with precision "none", so nothing reads it as the figure's date."""
    clean = check({**GOOD, "as_of": written, "valid_from": "2024"})
    assert (clean.as_of, clean.as_of_precision) == (date(2024, 1, 1), UNDATED)


@pytest.mark.parametrize(("change", "field", "reason"), [
    ({"unit": "wibbles/s"}, "unit", "unknown unit 'wibbles/s'"),
    ({"unit": "kW"}, "unit", "is not a data unit"),
    ({"unit": "Tb/s"}, "unit", "Gb/s vs GB/s is never converted"),
    ({"unit": None}, "unit", "unit is missing"),
    ({"value": -1}, "value", "negative value"),
    ({"value": 5000, "unit": "TB/s"}, "value", "above the plausible maximum"),
    ({"value": "lots"}, "value", "is not a number"),
    ({"value": None}, "value", "value is missing"),
    ({"value": [3, 2]}, "value", "range low 3 is above high 2"),
    ({"as_of": "2027-01-01"}, "as_of", "is in the future"),
    ({"as_of": None}, "as_of", "is not a date"),
    ({"as_of": "2024-02-30"}, "as_of", "is not a calendar date"),
    ({"source": None}, "source", "source is missing"),
    ({"source": "blog"}, "source", "unknown source 'blog'"),
    ({"item": "nvlink-9"}, "item", "unknown item 'nvlink-9'"),
    ({"metric": "speed"}, "metric", "unknown metric 'speed'"),
    ({"status": "maybe"}, "status", "is not one of C, S, U"),
    ({"status": None}, "status", "status is missing"),
    ({"value_kind": "guess"}, "value_kind", "is not one of reported"),
    ({"valid_to": "2020-01-01"}, "valid_to", "is not after as_of"),
    ({"as_of": "undated"}, "valid_from", "an undated figure (as_of: undated) needs valid_from"),
    ({"as_of": "undated", "valid_from": "2027"}, "valid_from", "is in the future"),
    ({"as_of": "undated", "valid_from": "soon"}, "valid_from", "is not a date"),
    ({"valid_from": "2024"}, "valid_from", "valid_from is for an undated figure"),
])
def test_bad_rows_are_rejected_with_field_and_reason(change, field, reason):
    error = check({**GOOD, **change})
    assert isinstance(error, RowError)
    assert (error.line, error.field) == (7, field)
    assert reason in error.reason


def test_a_second_row_for_the_same_fact_is_a_duplicate_naming_the_first_line():
    clean, errors = validate_rows([(3, GOOD), (4, {**GOOD, "value": 1.9})], metrics=METRICS,
                                  items={"nvlink-5"}, sources={"nvidia"}, today=TODAY)
    assert len(clean) == 1
    assert errors == [RowError(4, "item", errors[0].reason)]
    assert "line 3 already gives nvlink-5" in errors[0].reason


OFFER = {"provider": "aws", "region": "us-east-1", "term": "reserved_1y", "gpu": "h100-sxm5",
         "units": 8, "instance_type": "p5.48xlarge", "currency": "usd",
         "price_written": "352000.00"}


def test_a_market_price_keeps_its_offer_terms():
    clean = check({**GOOD, "offer": OFFER})
    assert isinstance(clean, CleanObservation)
    assert clean.offer == OfferTerms(provider="aws", term="reserved_1y", region="us-east-1",
                                     gpu="h100-sxm5", units=8, instance="p5.48xlarge",
                                     currency="USD")
    assert check(GOOD).offer is None


@given(st.sampled_from(["lambda", "Lambda", "LAMBDA", " lambda ", "LaMbDa"]),
       st.sampled_from(["us-east-1", "US-East-1", "us-east-1 "]),
       st.sampled_from(["h100-sxm5", "H100-SXM5"]))
def test_an_offers_identity_is_one_spelling_whatever_the_case(provider, region, gpu):
    """Issue 43, case 4: `lambda` and `Lambda` are one provider in the market's median; the
    identity (provider, region, GPU) is normalised once, when the row is read."""
    clean = check({**GOOD, "offer": {**OFFER, "provider": provider, "region": region,
                                     "gpu": gpu}})
    assert (clean.offer.provider, clean.offer.region, clean.offer.gpu) == (
        "lambda", "us-east-1", "h100-sxm5")


def test_a_quote_names_its_vendor_quantity_and_validity():
    quote = {"vendor": "ExampleReseller", "term": "quote", "quantity": 72,
             "valid_until": "2026-12-31", "incoterms": "DAP"}
    clean = check({**GOOD, "offer": quote})
    assert clean.offer.provider == "examplereseller" and clean.offer.units == 72
    assert clean.offer.valid_until == date(2026, 12, 31)


@pytest.mark.parametrize("change,field,reason", [
    ({"provider": None}, "offer.provider", "missing"),
    ({"term": "weekly"}, "offer.term", "not one of"),
    ({"units": 2.5}, "offer.units", "not a count"),
    ({"units": 0}, "offer.units", "not a count"),
    ({"currency": "dollars"}, "offer.currency", "ISO 4217"),
    ({"valid_until": "soon"}, "offer.valid_until", "not a date"),
    ({"colour": "blue"}, "offer.colour", "unknown offer key"),
])
def test_bad_offer_terms_are_rejected_naming_the_offer_field(change, field, reason):
    error = check({**GOOD, "offer": {**OFFER, **change}})
    assert isinstance(error, RowError) and error.field == field and reason in error.reason


def test_an_offer_that_is_not_a_mapping_is_rejected():
    error = check({**GOOD, "offer": "aws on demand"})
    assert isinstance(error, RowError) and error.field == "offer"
