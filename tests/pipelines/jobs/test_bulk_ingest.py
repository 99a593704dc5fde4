"""A price list ingested in bulk stores what a row-by-row ingest of the same files stores: the
same observations on both clocks (a changed price superseding the old one), the same offer
items, the same rejected rows with their file, line and field, the same reports."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from db.engine import Engine, make_engine
from db.schema import Item, Observation, RejectedRow
from pipelines.inputs.adapters.base import AdapterOptions
from pipelines.jobs.ingest import ingest_paths
from tests.conftest import Clock, empty_pg_ledger, pg_url_or_skip
from tests.support.azure_price_list import price_list
from tests.support.shared_data import fixture_path

AS_OF = date(2026, 11, 23)


def _files(folder: Path) -> list[list[Path]]:
    """Two runs: the hand-written page (with its rejected and skipped items) and a generated
    list of 300 offers; then the same list with every tenth price changed (superseding)."""
    folder.mkdir()
    page = folder / "retail_prices_nd_gpu.json"
    page.write_bytes(fixture_path("azure", "retail_prices_nd_gpu.json").read_bytes())
    week = price_list(300)
    first = folder / "azure-list.json"
    first.write_text(json.dumps(week))
    for item in week["Items"][::10]:
        item["retailPrice"] = round(item["retailPrice"] * 1.1, 4)
    changed = folder / "azure-list-changed.json"
    changed.write_text(json.dumps(week))
    return [[page, first], [changed]]


def _ingest_all(engine: Engine, runs: list[list[Path]], metrics: dict, bulk: bool) -> list:
    clock = Clock()
    reports = []
    for paths in runs:
        clock.tick()
        report = ingest_paths(engine, paths, metrics=metrics, today=AS_OF, now=clock,
                              code_version="test", options=AdapterOptions(as_of=AS_OF),
                              bulk=bulk)
        reports.append(report.to_json())
    return reports


def _stored(engine: Engine) -> dict[str, list[tuple[Any, ...]]]:
    with engine.connect() as connection:
        return {table.__tablename__: [tuple(row) for row in connection.execute(
            select(table.__table__).order_by(table.__table__.c.id))]
            for table in (Observation, Item, RejectedRow)}


@pytest.mark.parametrize("dialect", ["sqlite", pytest.param("postgresql",
                                                            marks=pytest.mark.postgres)])
def test_bulk_and_row_by_row_ingests_store_the_same_rows(dialect, tmp_path, sqlite_template,
                                                          metrics):
    runs = _files(tmp_path / "files")
    stored, reports = [], []
    for bulk in (True, False):
        url = (sqlite_template.copy_to(tmp_path / f"ledger-{bulk}.sqlite")
               if dialect == "sqlite" else empty_pg_ledger(pg_url_or_skip()))
        engine = make_engine(url, lock_timeout_seconds=5)
        try:
            reports.append(_ingest_all(engine, runs, metrics, bulk))
            stored.append(_stored(engine))
        finally:
            engine.dispose()
    assert reports[0] == reports[1]
    assert stored[0] == stored[1]
    # What both stored is a real ingest: offers, rejections, a supersession.
    bulk_reports, rows = reports[0], stored[0]
    assert sum(f["accepted"] for f in bulk_reports[0]["files"]) > 300
    assert bulk_reports[1]["files"][0]["superseded"] == 30
    assert any(f["rejected"] for f in bulk_reports[0]["files"])
    assert len(rows["rejected_row"]) == sum(f["rejected"] for r in bulk_reports
                                            for f in r["files"])
    superseded = [row for row in rows["observation"]
                  if row[Observation.__table__.c.keys().index("superseded_at")] is not None]
    assert len(superseded) == 30
