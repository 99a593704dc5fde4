"""Weekly price feeds end to end, served by a real HTTP server on 127.0.0.1: an Azure Retail
Prices query followed page by page and a SkyPilot catalog dated by the fetch, fetched,
ingested as offers with their terms, and a changed price the next week superseding the old one
while the history stays; a truncated page fails the feed and keeps last week's prices."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
import yaml
from sqlalchemy import select

from db.engine import Session
from db.schema import Observation
from pipelines.fetch.remote import fetch_remote_sources
from pipelines.inputs.catalog import load_metrics
from pipelines.jobs.ingest import ingest_paths
from pipelines.ledger.market import market_index
from pipelines.settings import PROJECT_ROOT, Settings
from tests.pipelines.fetch.http_server import reply
from tests.pipelines.fetch.test_remote_sources import WEEK1
from tests.support.shared_data import fixture_path


@pytest.fixture
def azure_pages() -> list[dict]:
    """Two Azure Retail Prices pages (a shared copy: the project keeps none)."""
    return json.loads(fixture_path("azure", "retail_prices_two_pages.json").read_text())


@pytest.fixture
def skypilot_aws() -> bytes:
    """A SkyPilot AWS catalog sample (a shared copy)."""
    return fixture_path("skypilot", "aws-vms.csv").read_bytes()


@pytest.fixture
def settings(ledger_url: str, tmp_path: Path) -> Settings:
    return Settings(home=tmp_path / "home", database_url=ledger_url, offline=False,
                    remote_sources_path=tmp_path / "remote_sources.yaml",
                    fetch_timeout_seconds=2.0, fetch_retries=0, fetch_backoff_seconds=0.1)


def serve_azure(server, pages: list[dict]) -> None:
    """The pages at /prices?page=N, each linking the next one."""
    for n, page in enumerate(pages, start=1):
        following = server.url(f"/prices?page={n + 1}") if n < len(pages) else None
        body = json.dumps({**page, "NextPageLink": following}).encode()
        server.routes[f"/prices?page={n}"] = (lambda b: lambda h: reply(h, 200, b))(body)


def declare(settings: Settings, server) -> None:
    entries = [{"name": "azure-nd", "url": server.url("/prices?page=1"), "local": True,
                "paging": "next_link", "file_name": "azure-retail-prices.json"},
               {"name": "skypilot-aws", "url": server.url("/aws/vms.csv"), "local": True,
                "file_name": "aws-vms-{date}.csv"}]
    settings.remote_sources_path.write_text(yaml.safe_dump({"sources": entries}))


def week(settings: Settings, ledger, now):
    fetched = fetch_remote_sources(settings, now=now, sleep=lambda _: None)
    report = ingest_paths(ledger, fetched.paths_to_ingest,
                          metrics=load_metrics(PROJECT_ROOT / "data" / "catalog.yaml"),
                          today=now.date(), now=lambda: now, code_version="test")
    return fetched, report


def offers(ledger):
    with Session(ledger) as session:
        return session.execute(select(
            Observation.offer_provider, Observation.offer_region, Observation.offer_term,
            Observation.offer_gpu, Observation.value, Observation.superseded_at)
            .where(Observation.offer_provider.is_not(None))).all()


def test_two_weeks_of_price_feeds(settings, server, ledger, azure_pages, skypilot_aws):
    serve_azure(server, azure_pages)
    server.routes["/aws/vms.csv"] = lambda h: reply(h, 200, skypilot_aws)
    declare(settings, server)

    fetched, report = week(settings, ledger, WEEK1)
    assert [s.outcome for s in fetched.sources] == ["fetched", "fetched"]
    assert report.total("read") == (report.total("accepted") + report.total("rejected")
                                    + report.total("unchanged"))
    first = offers(ledger)
    assert {o.offer_provider for o in first} == {"azure", "aws"}
    assert all(o.superseded_at is None for o in first)

    # A week later Azure cuts a price; SkyPilot's catalog is unchanged (not ingested again).
    changed = json.loads(json.dumps(azure_pages))
    item = changed[0]["Items"][0]
    item["retailPrice"] = item["unitPrice"] = round(item["retailPrice"] * 0.8, 4)
    serve_azure(server, changed)
    fetched, report = week(settings, ledger, WEEK1 + timedelta(days=7))
    assert [s.outcome for s in fetched.sources] == ["fetched", "unchanged"]
    assert report.files[0].superseded == 1
    history = offers(ledger)
    assert len(history) == len(first) + 1  # the old price stays, closed
    assert sum(o.superseded_at is not None for o in history) == 1
    with Session(ledger) as session:
        index = market_index(session)
    assert index["dataset_version"].nunique() == 2


def test_a_truncated_page_fails_the_feed_and_last_weeks_prices_stand(settings, server, ledger,
                                                                      azure_pages, skypilot_aws):
    serve_azure(server, azure_pages)
    server.routes["/aws/vms.csv"] = lambda h: reply(h, 200, skypilot_aws)
    declare(settings, server)
    week(settings, ledger, WEEK1)
    before = offers(ledger)

    def truncated(h) -> None:
        h.send_response(200)
        h.send_header("Content-Length", "5000")
        h.end_headers()
        h.wfile.write(b'{"Items": [')
        h.close_connection = True

    server.routes["/prices?page=2"] = truncated
    fetched, report = week(settings, ledger, WEEK1 + timedelta(days=7))
    azure = fetched.sources[0]
    assert azure.outcome == "failed" and "page 2" in azure.error
    assert offers(ledger) == before


def test_a_gpuhunt_mirror_feeds_the_market_index_dated_by_its_catalogs(settings, server, ledger):
    """gpuhunt's layout on a loopback mirror (GPUHUNT_CATALOG_URL), holding Lambda's real
    2026-04-28 offers: fetched, ingested as offers of the catalog's date, and indexed."""
    from tests.pipelines.fetch.test_gpuhunt_feed import Bucket

    Bucket(server)
    settings.gpuhunt_catalog_url = server.url("/v3")
    settings.market_max_age_days = 36500   # the catalog is of 2026-04: keep it in the index
    settings.remote_sources_path.write_text(yaml.safe_dump(
        {"sources": [{"name": "gpuhunt-lambdalabs", "gpuhunt": "lambdalabs"}]}))
    fetched, report = week(settings, ledger, WEEK1)
    assert [s.outcome for s in fetched.sources] == ["fetched"]
    assert report.total("rejected") == 0 and report.total("accepted") > 0
    rows = offers(ledger)
    assert {o.offer_provider for o in rows} == {"lambdalabs"}
    assert {"h100-sxm5", "h100-pcie", "b200"} <= {o.offer_gpu for o in rows}
    with Session(ledger) as session:
        dated = set(session.scalars(select(Observation.as_of)
                                    .where(Observation.offer_provider == "lambdalabs")))
        index = market_index(session)
    assert {str(d)[:10] for d in dated} == {"2026-04-28"}   # the catalog's, not the fetch's
    assert "b200" in set(index["gpu"])
