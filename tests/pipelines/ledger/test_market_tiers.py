"""The offers a dataset version knew, as the serving stage and the briefing read them: one read
of the offer history per session and version, however many scenarios ask, and each version
still sees only what it knew."""

from __future__ import annotations

from pathlib import Path

import pytest

from db import queries
from db.engine import Session
from pipelines.ledger.market_tiers import known_offers
from tests.pipelines.jobs.test_price_index_valid_time import catalog


@pytest.fixture
def count_history_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The real offer-history query, counted."""
    reads: list[int] = []
    real = queries.offer_history

    def counted(session):
        reads.append(1)
        return real(session)

    monkeypatch.setattr(queries, "offer_history", counted)
    return reads


def test_many_askers_in_one_session_share_one_read_of_the_history(
        ingest, ledger, tmp_path: Path, count_history_reads):
    version = ingest(catalog(tmp_path, "lambda_vms_2026-10-25.csv",
                             {"us-east-1": 23.92, "us-west-1": 20.00})).dataset_version
    count_history_reads.clear()  # the ingest's own price-index stage read it too
    with Session(ledger) as session:
        first = known_offers(session, version)
        for _ in range(5):  # five serving scenarios and the briefing
            again = known_offers(session, version)
        assert len(count_history_reads) == 1
        assert again.equals(first)
        assert len(first) == 2
        # A caller's change to its copy does not reach the next one.
        dropped = first.columns[0]
        del first[dropped]
        assert dropped in known_offers(session, version).columns
    with Session(ledger) as session:  # a new session reads afresh
        known_offers(session, version)
    assert len(count_history_reads) == 2


def test_each_version_sees_only_the_offers_it_knew(ingest, ledger, tmp_path: Path, clock):
    older = ingest(catalog(tmp_path, "lambda_vms_2026-10-25.csv",
                           {"us-east-1": 23.92})).dataset_version
    clock.tick(days=7)
    newer = ingest(catalog(tmp_path, "lambda_vms_2026-11-01.csv",
                           {"us-east-1": 21.52, "us-west-1": 16.00})).dataset_version
    with Session(ledger) as session:
        assert len(known_offers(session, newer)) == 2
        assert len(known_offers(session, older)) == 1
