"""Every set of real price files people keep (the shared data's market/ folder, each with its
SOURCES.md) ingests right into a ledger, on SQLite and PostgreSQL: read by the reader its
content needs, every row accounted for (accepted + rejected + unchanged = read), dated by the
file's own dates, and the quirks each set has handled by its reader (its tests say how)."""

from __future__ import annotations

import pytest

from tests.support.shared_data import shared_path

# (set, file, reader, the fewest offers it must give, the most rows it may leave for review)
SETS = [
    ("skypilot-anycloud", "azure-vms-2026-05-05.csv.gz", "skypilot-catalog", 200, 0),
    ("skypilot-anycloud", "lambda-vms-2026-04-28.csv", "skypilot-catalog", 200, 0),
    ("azure-retail-api-sample", "azure_prices_2026-08-22.json.gz", "azure-retail-prices", 3, 1),
    ("azure-pricing-radar-eu", "vm-swedencentral_2026-08-22.json.gz", "azure-pricing-radar", 5,
     2),
    ("gcp-pricing-cyclenerd", "pricing_2026-07-30.yml.gz", "gcp-pricing-yaml", 1000, 0),
    ("aws-p5-ondemand-daily", "gpu_prices.csv", "aws-price-series", 400, 0),
    ("neocloud-cheapest-toolshedlabs", "2026-10.jsonl", "neocloud-cheapest", 100, 24),
]


@pytest.mark.parametrize("folder, name, reader, fewest, review", SETS,
                         ids=[f"{s[0]}/{s[1]}" for s in SETS])
def test_each_shared_market_set_ingests_with_every_row_accounted_for(
        ingest, folder, name, reader, fewest, review):
    [file] = ingest(shared_path("market", folder, name)).files
    assert (file.outcome, file.format) == ("ingested", reader), file.errors[:3]
    assert file.read == file.accepted + file.rejected + file.unchanged
    assert file.accepted >= fewest
    assert file.rejected <= review   # kept for review, each with its reason
    # The same bytes again change nothing: an unchanged file is not read twice.
    [again] = ingest(shared_path("market", folder, name)).files
    assert again.outcome == "unchanged_file"
