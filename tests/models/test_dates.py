"""How old a set of figures is: the span page 1 prints beside a cost."""

from __future__ import annotations

from models.dates import date_span, span_text


def test_a_span_counts_ledger_and_market_figures_at_their_sources_precision():
    figures = [
        {"origin": "ledger", "as_of": "2024-07-01", "as_of_precision": "month"},
        {"origin": "market", "as_of": "2026-08-19", "as_of_precision": "day"},
        {"origin": "ledger", "as_of": "2023-01-01", "as_of_precision": "year"},
        {"origin": "ledger", "as_of": None},
        {"origin": "default", "as_of": "1999-01-01"},   # the model's, not evidence
    ]
    assert date_span(figures) == ("2023", "2026-08", 1)
    assert date_span([{"origin": "inline"}]) == (None, None, 0)


def test_a_span_of_one_month_is_said_once():
    assert span_text("2026-05", "2026-05") == "2026-05"
    assert span_text("2024", "2026-05") == "2024–2026-05"
    assert span_text(None, None) == ""
