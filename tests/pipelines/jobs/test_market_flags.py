"""A dataset version's flags include the market's: a GPU-hour price index that moved beyond
the threshold since the version before, and a new cheapest provider."""

from __future__ import annotations

from db.engine import Session
from models.trends import TrendParams
from pipelines.jobs.flags import flags_for_version
from tests.pipelines.jobs.test_tco_rent import PRICES


def test_a_price_move_and_a_new_cheapest_provider_are_flagged(ledger, ingest, write_pack,
                                                              clock):
    first = ingest(write_pack("prices-1.yaml", PRICES))
    clock.tick(days=7)
    # Provider c cuts its 1-year price from 6.0 to 2.0: the median falls from 4.0 to 3.0.
    second = ingest(write_pack("prices-2.yaml", PRICES.replace(
        "value: 6.0, unit: USD/hour, as_of: 2026-11-01", "value: 2.0, unit: USD/hour, "
        "as_of: 2026-11-08")))
    assert second.dataset_version == first.dataset_version + 1
    with Session(ledger) as session:
        flags = flags_for_version(session, second.dataset_version, TrendParams())
        earlier = flags_for_version(session, first.dataset_version, TrendParams())
    market = {f.kind: f for f in flags if f.kind in ("price_move", "new_cheapest")}
    assert set(market) == {"price_move", "new_cheapest"}
    assert ("median fell 25.0 % (beyond 10 %) over the offers priced a week apart (same "
            "provider, region, instance and term); the index median went from 4.00 to 3.00 "
            "USD/GPU-hour") in market["price_move"].message
    assert market["new_cheapest"].subject == "h100-sxm5 / reserved_1y"
    assert not [f for f in earlier if f.kind in ("price_move", "new_cheapest")]


QUOTES = """
source: {key: acme-quotes, title: Quotes from Acme, kind: vendor_datasheet, publisher: Acme}
items:
  - {key: hgx-b200-8gpu, name: HGX B200 8-GPU, kind: system}
observations:
  - {item: hgx-b200-8gpu, metric: system_price, value: 390000, unit: USD, as_of: 2026-09-01,
     status: C, offer: {vendor: Acme, term: quote, quantity: 16, valid_until: 2026-10-31}}
  - {item: hgx-b200-8gpu, metric: lead_time, value: 8, unit: week, as_of: 2026-09-01,
     status: C, offer: {vendor: Acme, term: quote, valid_until: 2026-10-31}}
  - {item: hgx-b200-8gpu, metric: system_price, value: 380000, unit: USD, as_of: 2026-10-25,
     status: C, offer: {vendor: Acme, term: quote, quantity: 16, valid_until: 2026-11-10}}
  - {item: hgx-b200-8gpu, metric: lead_time, value: 20, unit: week, as_of: 2026-10-25,
     status: C, offer: {vendor: Acme, term: quote, valid_until: 2026-11-10}}
"""


def test_a_quote_about_to_expire_and_a_lead_time_that_grew_are_flagged(ledger, ingest,
                                                                       write_pack):
    report = ingest(write_pack("quotes.yaml", QUOTES))
    with Session(ledger) as session:
        flags = flags_for_version(session, report.dataset_version, TrendParams())
    kinds = {f.kind: f for f in flags if f.kind in ("quote_expiring", "lead_time_grew")}
    assert set(kinds) == {"quote_expiring", "lead_time_grew"}
    assert "2026-11-10" in kinds["quote_expiring"].message
    assert kinds["lead_time_grew"].severity == "warning"  # 8 -> 20 weeks: more than doubled
