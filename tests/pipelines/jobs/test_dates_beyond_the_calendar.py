"""Dates the stack cannot compute with: refused at the reader, never stored.

A date past 2262-04-11 (pandas' last day) used to be accepted once and then stop every later
run of the append-only ledger. Readers refuse it with the file, line and field; a ledger that
already holds one (written before) still runs; a quote is stored whole or not at all.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from models import observations
from models.trends import TrendParams
from pipelines.jobs.flags import compute_flags
from tests.pipelines.jobs.test_hostile_packs import PACK_HEAD, adds_up, errors_of

SYSTEMS_PACK = """
source: {key: careless, title: A careless pack, kind: analyst}
items:
  - {key: hgx-h100-8gpu, name: HGX H100 8-GPU, kind: system}
observations: []
"""
QUOTE_HEADER = "vendor,item,unit_price,currency,lead_time_weeks,quoted_on,valid_until,source\n"


def row(**fields: str) -> str:
    written = {"item": "h100-sxm5", "metric": "tdp", "value": "700", "unit": "W",
               "status": "C", "as_of": "2023-03-21", **fields}
    return "  - {" + ", ".join(f"{k}: {v}" for k, v in written.items()) + "}\n"


@pytest.mark.parametrize(("fields", "field", "reason"), [
    ({"as_of": "2024-01-01", "valid_to": "9999-12-31"}, "valid_to",
     "valid_to 9999-12-31 is after 2261-12-31, the latest date specledger can compute with; "
     "leave it empty for a figure with no end date"),
    ({"as_of": "2024-01-01", "valid_to": "2262-04-12"}, "valid_to", "is after 2261-12-31"),
    ({"as_of": "1600-01-01"}, "as_of", "as_of 1600-01-01 is before 1678-01-01"),
    ({"as_of": "2024-01-01", "offer": "{provider: acme, term: quote, valid_until: 9999-12-31}",
      "metric": "gpu_price", "value": "30000", "unit": "USD"},
     "offer.valid_until", "is after 2261-12-31"),
])
def test_a_date_past_the_calendar_is_one_rejected_row(ledger, ingest, write_pack, fields,
                                                      field, reason):
    report = ingest(write_pack("far.yaml", PACK_HEAD + row(**fields)))
    assert adds_up(report)
    [(line, rejected_field, rejected_reason)] = errors_of(report, "far.yaml")
    assert (line, rejected_field) == (6, field)
    assert reason in rejected_reason


def test_the_next_run_still_computes_its_flags(ledger, ingest, write_pack):
    ingest(write_pack("far.yaml", PACK_HEAD + row(as_of="2024-01-01", valid_to="9999-12-31")))
    report = ingest(write_pack("more.yaml", PACK_HEAD + row(as_of="2024-06-01", value="710")))
    flags = compute_flags(ledger, report.dataset_version, params=TrendParams(),
                          code_version="test", now=datetime(2026, 11, 2, tzinfo=UTC))
    assert flags.dataset_version == report.dataset_version and not flags.already_stored


def test_a_ledger_that_already_holds_such_a_date_still_runs(ledger, ingest, write_pack,
                                                            monkeypatch):
    # As an earlier reader did: the row is stored with its far end date.
    monkeypatch.setattr(observations, "out_of_range", lambda day, field: None)
    stored = ingest(write_pack("far.yaml", PACK_HEAD + row(as_of="2024-01-01",
                                                           valid_to="9999-12-31")))
    assert stored.total("accepted") == 2
    flags = compute_flags(ledger, stored.dataset_version, params=TrendParams(),
                          code_version="test", now=datetime(2026, 11, 2, tzinfo=UTC))
    assert flags.stored > 0  # a 9999-12-31 end reads as "no end": the figure is live


@pytest.mark.parametrize(("valid_until", "field", "reason"), [
    ("9999-12-31", "valid_until", "is after 2261-12-31"),
    # Within the calendar, but a validity beyond what the catalogue allows (1,100 days): the
    # price and lead time of that quote are not stored either.
    ("2029-12-31", "valid_until", "above the plausible maximum"),
])
def test_a_quote_is_stored_whole_or_not_at_all(ledger, ingest, write_pack, tmp_path,
                                               valid_until, field, reason):
    ingest(write_pack("systems.yaml", SYSTEMS_PACK))
    sheet = tmp_path / "quotes.csv"
    sheet.write_text(QUOTE_HEADER
                     + "Acme,hgx-h100-8gpu,250000,USD,10,2025-09-01,2025-09-30,acme-q\n"
                     + f"Acme,hgx-h100-8gpu,260000,USD,12,2025-10-01,{valid_until},acme-q\n")
    report = ingest(sheet)
    assert adds_up(report)
    assert report.total("accepted") == 3  # the first quote: price, lead time, validity
    errors = errors_of(report, "quotes.csv")
    assert {line for line, _, _ in errors} == {3}
    assert any(f == field and reason in why for _, f, why in errors), errors
    assert len(errors) == (1 if valid_until.startswith("9999") else 3)
