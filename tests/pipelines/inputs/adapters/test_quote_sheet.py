"""The quote sheet adapter (the shared quotes' README): each vendor quote gives its unit price in
USD, its lead time and its validity in days; a price in another currency needs the rate the
quote used; a quote is read whole or rejected naming its column."""

from __future__ import annotations

import csv
import io
from datetime import date

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from models.observations import OfferTerms, validate_row
from pipelines.inputs.adapters import quote_sheet
from pipelines.inputs.adapters.base import AdapterError, AdapterOptions, Parsed
from pipelines.inputs.adapters.registry import SOURCE_PACK, detect_format, read_file
from pipelines.inputs.catalog import load_metrics
from pipelines.inputs.packs import PackError
from pipelines.settings import PROJECT_ROOT
from tests.conftest import examples
from tests.support.shared_data import fixture_path

# quotes.csv's header, the columns of the sheets the tests write.
HEADER = ["item", "vendor", "quantity", "unit_price", "currency", "lead_time_weeks", "quoted_on",
          "valid_until", "incoterms", "notes", "source", "metric", "usd_rate"]
METRICS = load_metrics(PROJECT_ROOT / "data" / "catalog.yaml")


def quote_file(name: str) -> bytes:
    """A sample sheet, quotes.csv or quotes.yaml (shared copies the project keeps none of)."""
    return fixture_path("quotes", name).read_bytes()


def read(data: bytes | None = None, name: str = "quotes.csv") -> Parsed:
    return quote_sheet.parse(name, quote_file("quotes.csv") if data is None else data,
                             AdapterOptions())


def rows_of(parsed: Parsed, line: int) -> dict[str, dict]:
    """A quote's rows by metric."""
    return {r.fields["metric"]: r.fields for r in parsed.pack.rows if r.line == line}


def sheet(*rows: dict[str, str]) -> bytes:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=HEADER, lineterminator="\n")
    writer.writeheader()
    writer.writerows({column: row.get(column, "") for column in HEADER} for row in rows)
    return out.getvalue().encode()


GOOD = {"item": "hgx-h100-8gpu", "vendor": "Acme", "quantity": "2", "unit_price": "280000",
        "currency": "USD", "lead_time_weeks": "10", "quoted_on": "2025-09-01",
        "valid_until": "2025-09-30", "source": "acme-q"}


# --- detect ----------------------------------------------------------------------------------

def test_the_sheets_the_tests_write_have_the_samples_columns():
    assert quote_file("quotes.csv").decode().splitlines()[0].split(",") == HEADER


def test_a_quote_sheet_is_recognised_by_its_content():
    csv_sheet, yaml_sheet = quote_file("quotes.csv"), quote_file("quotes.yaml")
    assert quote_sheet.detect("supplier.txt", csv_sheet) == "quote-sheet"
    assert detect_format("q3-quotes.csv", csv_sheet) == "quote-sheet"
    assert detect_format("quotes.yaml", yaml_sheet) == "quote-sheet"  # a .yaml, not a pack
    assert detect_format("renamed.txt", yaml_sheet) == "quote-sheet"


def test_a_line_starting_with_quotes_inside_another_file_is_not_a_sheet():
    epoch_like = b'Hardware name,Notes\nNVIDIA B200,"Prices vary.\nquotes: from resellers"\n'
    assert quote_sheet.detect("ml_hardware.csv", epoch_like) is None
    assert quote_sheet.detect("notes.yaml", b"# sheet\nquotes:\n  - {}\n") == "quote-sheet"
    assert quote_sheet.detect("sheet.txt", b"# sheet\n---\nquotes:\n  - {}\n") == "quote-sheet"


def test_source_packs_stay_source_packs():
    pack = b"source: {key: s, title: S, kind: analyst}\nobservations: []\n"
    assert detect_format("pack.yaml", pack) == SOURCE_PACK
    assert detect_format("pack.csv", b"source,item,metric,value,unit,as_of\n") == SOURCE_PACK


# --- rows ------------------------------------------------------------------------------------

def test_a_quote_gives_its_price_lead_time_and_validity():
    parsed = read()
    rows = rows_of(parsed, 2)
    price = rows["system_price"]
    assert (price["item"], price["value"], price["unit"], price["as_of"]) == (
        "hgx-h100-8gpu", "289,500.00", "USD", "2025-09-15")  # as written: the ledger reads it
    assert (rows["lead_time"]["value"], rows["lead_time"]["unit"]) == ("12", "week")
    assert (rows["quote_validity"]["value"], rows["quote_validity"]["unit"]) == (30, "day")
    assert {r["valid_to"] for r in rows.values()} == {"2025-10-16"}  # holds through 10-15
    assert price["quote"] == ("Acme Systems: 4 x hgx-h100-8gpu at 289,500.00 USD each, valid "
                              "until 2025-10-15, lead time 12 weeks, FOB San Jose. Includes "
                              "3-year support")


def test_every_quote_is_rows_or_one_rejection():
    parsed = read()
    written = len(quote_file("quotes.csv").decode().splitlines()) - 1
    assert parsed.read == len(parsed.pack.rows) + len(parsed.rejected) == 8 + 3
    assert len({r.line for r in parsed.pack.rows}) + len(parsed.rejected) == written


def test_a_price_in_euros_is_stored_in_usd_at_the_quotes_rate_and_kept_as_written():
    price = rows_of(read(), 3)["gpu_price"]
    assert price["value"] == pytest.approx(27500 * 1.08)
    assert price["offer"] == {
        "vendor": "Example Reseller GmbH", "term": "quote", "gpu": "h100-sxm5", "quantity": 64,
        "price_written": "27500", "currency": "EUR", "usd_rate": "1.08",
        "incoterms": "DAP Frankfurt", "valid_until": "2025-10-20", "lead_time_written": "8 weeks"}
    assert "27500 EUR (x 1.08 USD/EUR)" in price["quote"]


def test_the_offer_terms_are_what_the_validator_reads():
    price = rows_of(read(), 3)["gpu_price"]
    clean = validate_row(price, line=3, metrics=METRICS, items={"h100-sxm5"},
                         sources={"example-reseller-q-4711"}, today=date(2026, 11, 23))
    assert clean.offer == OfferTerms(provider="example reseller gmbh", term="quote",
                                     gpu="h100-sxm5", units=64, currency="EUR",
                                     valid_until=date(2025, 10, 20))
    assert clean.value == pytest.approx(29700.0)


def test_no_lead_time_no_lead_time_row():
    assert set(rows_of(read(), 4)) == {"system_price", "quote_validity"}


def test_one_source_per_quote_document():
    sources = {s.key: s for s in read().pack.sources}
    assert set(sources) == {"acme-quote-2025-09-15", "example-reseller-q-4711",
                            "acme-quote-2025-10-01"}
    acme = sources["acme-quote-2025-09-15"]
    assert (acme.kind, acme.publisher, acme.published_on) == (
        "vendor_datasheet", "Acme Systems", date(2025, 9, 15))


def test_bad_quotes_are_rejected_naming_the_column():
    found = {(r.line, r.field): r.reason for r in read().rejected}
    assert found == {
        (5, "currency"): ("EUR without usd_rate: the ledger stores USD; give the rate the quote "
                          "used"),
        (6, "unit_price"): "unit_price 'n/a' is not a finite positive number",
        (7, "valid_until"): "valid_until 2025-09-01 is before quoted_on 2025-09-25"}


@pytest.mark.parametrize("change, column, reason", [
    ({"item": ""}, "item", "item is missing"),
    ({"quantity": "2.5"}, "quantity", "not a whole number"),
    ({"quoted_on": "15/09/2025"}, "quoted_on", "not a date"),
    ({"valid_until": "2025-02-30"}, "valid_until", "not a calendar date"),
    ({"currency": "dollars"}, "currency", "not an ISO 4217 code"),
    ({"currency": "EUR", "usd_rate": "-1"}, "usd_rate", "not a finite positive number"),
    ({"unit_price": "7_00"}, "unit_price", "not a finite positive number"),
    ({"lead_time_weeks": "soon"}, "lead_time_weeks", "not a finite positive number"),
    ({"metric": "gpu_hour_price"}, "metric", "is not system_price or gpu_price"),
])
def test_each_check_names_its_column(change, column, reason):
    [rejected] = read(sheet({**GOOD, **change})).rejected
    assert rejected.field == column and reason in rejected.reason


def test_a_source_kind_can_be_given():
    data = sheet(GOOD).replace(b"usd_rate\n", b"usd_rate,source_kind\n").replace(
        b"acme-q,,\n", b"acme-q,,,analyst\n")
    assert read(data).pack.sources[0].kind == "analyst"


# --- YAML ------------------------------------------------------------------------------------

def test_a_yaml_sheet_reads_like_the_csv():
    parsed = read(quote_file("quotes.yaml"), "quotes.yaml")
    rows = rows_of(parsed, 3)
    assert (rows["lead_time"]["value"], rows["lead_time"]["unit"]) == ("45", "day")
    assert rows["system_price"]["value"] == "287000"
    eur = rows_of(parsed, 14)["gpu_price"]
    assert eur["value"] == pytest.approx(26900.5 * 1.0825)
    assert rows_of(parsed, 14)["quote_validity"]["value"] == 14
    [both] = parsed.rejected
    assert (both.line, both.field) == (26, "lead_time_days")


@pytest.mark.parametrize("data, message", [
    (b"quotes: {a: 1}\n", "a mapping with a `quotes:` list"),
    (b"quotes:\n  - [\n", "line"),
    (b"item,vendor,unit_price,quoted_on,valid_until\n", "header lacks currency, source"),
    (b"vendor,unit_price,quoted_on,valid_until,vendor\n", "names vendor twice"),
])
def test_an_unreadable_sheet_is_an_adapter_error(data, message):
    with pytest.raises(AdapterError, match=message):
        read(data, "quotes.yaml" if data.startswith(b"quotes") else "quotes.csv")


def test_a_nested_yaml_value_is_a_rejected_quote():
    data = b"quotes:\n  - {item: b200, vendor: [a, b], unit_price: 1}\n"
    [rejected] = read(data, "quotes.yaml").rejected
    assert (rejected.line, rejected.field) == (2, "vendor")


# --- properties ------------------------------------------------------------------------------

FAST = settings(max_examples=examples(150), deadline=None,
                suppress_health_check=[HealthCheck.too_slow])
value = st.one_of(st.sampled_from(["", "USD", "EUR", "1.08", "0", "-5", "1,000.00", "2025-09-01",
                                   "2025-13-01", "12", "gpu_price", "h100-sxm5", "nan", "1e400"]),
                  st.text(st.characters(blacklist_characters="\r", blacklist_categories=("Cs",)),
                          max_size=6))


@FAST
@given(st.lists(st.fixed_dictionaries(dict.fromkeys(HEADER, value)), max_size=8))
def test_every_quote_is_read_or_rejected(quotes):
    parsed = read(sheet(*quotes))
    given_quotes = sum(1 for q in quotes if any(v.strip() for v in q.values()))
    assert parsed.read == len(parsed.pack.rows) + len(parsed.rejected)
    assert len({r.line for r in parsed.pack.rows}) + len(parsed.rejected) == given_quotes


@FAST
@given(st.binary(max_size=300), st.sampled_from(["quotes.csv", "quotes.yaml"]))
def test_arbitrary_bytes_are_read_or_refused(data, name):
    try:
        parsed = read_file(name, b"quotes:\n" + data if name.endswith("yaml") else data,
                           AdapterOptions())
    except PackError:  # AdapterError, or a source pack's own error: a rejected file either way
        return
    assert parsed.read == len(parsed.pack.rows) + len(parsed.rejected)
