"""Flags and briefings in the warehouse: those of every dataset version up to the file's own,
the flags' evidence as a list of observation ids, each briefing with its sha256."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import ModuleLedger
from tests.db.test_warehouse import duckdb_cli, query
from tests.db.test_warehouse_checks import build_rich_ledger, publish


@pytest.fixture(scope="module")
def two_warehouses(module_ledgers: Callable[[str], ModuleLedger]) -> tuple[Path, Path]:
    """The warehouse of the first dataset version and that of the last one (built once per
    module and dialect: the tests only read them)."""
    module_ledger = module_ledgers("outputs")
    ledger, folder = module_ledger.engine, module_ledger.folder
    last = build_rich_ledger(ledger, module_ledger.ingest, module_ledger.write_pack,
                             module_ledger.clock)
    return (publish(ledger, 1, folder / "first.duckdb"),
            publish(ledger, last, folder / "last.duckdb"))


def test_flags_of_every_version_up_to_the_files_own_are_published(two_warehouses):
    first, last = two_warehouses
    sql = "select dataset_version_id, kind, severity, item, scenario from flag order by id"
    assert query(first, sql) == [
        (1, "single_source", "warning", "nvlink-5", None),
        (1, "result_moved", "info", None, "gpt-175b-nvl72")]
    assert query(last, sql) == query(first, sql) + [
        (4, "single_source", "warning", "nvlink-5", None),
        (4, "result_moved", "info", None, "gpt-175b-nvl72")]


def test_a_flags_evidence_is_a_list_of_observations_to_join(two_warehouses):
    _, last = two_warehouses
    assert query(last, "select typeof(observation_ids) from flag limit 1") == [("BIGINT[]",)]
    evidence = query(last, "select f.dataset_version_id, o.value, o.unit from flag f, "
                           "unnest(f.observation_ids) as e(id) "
                           "join observation o on o.observation_id = e.id "
                           "order by f.id, o.observation_id")
    # Version 1 rests on the first figure; version 4 also on its restatement and the nccl run.
    assert [(version, value) for version, value, _ in evidence[:1]] == [(1, 1800.0)]
    assert [value for version, value, _ in evidence if version == 4][:2] == [1800.0, 1900.0]
    assert {unit for _, _, unit in evidence} == {"GB/s"}
    assert query(last, "select len(observation_ids) from flag where kind = 'result_moved'") == [
        (0,), (0,)]


def test_briefings_are_published_with_their_sha256(two_warehouses):
    first, last = two_warehouses
    rows = query(last, "select dataset_version_id, as_of, length(sha256), size_bytes > 0, pages "
                       "from briefing order by id")
    assert [(v, str(d), n, positive, pages) for v, d, n, positive, pages in rows] == [
        (1, "2026-11-21", 64, True, 12), (4, "2026-11-24", 64, True, 12)]
    assert query(first, "select dataset_version_id from briefing") == [(1,)]


def test_the_cli_reads_flags_and_briefings(two_warehouses):
    _, last = two_warehouses
    assert duckdb_cli(last, "select severity, count(*) as n from flag group by all "
                            "order by severity") == [{"severity": "info", "n": 2},
                                                     {"severity": "warning", "n": 2}]
    assert duckdb_cli(last, "select len(sha256) as n from briefing limit 1") == [{"n": 64}]


def test_deliveries_are_published_with_their_briefings(two_warehouses):
    first, last = two_warehouses
    rows = query(last, "select b.dataset_version_id, x.channel, x.target, x.status, x.attempts, "
                       "x.message_id is not null, x.error from briefing_delivery x "
                       "join briefing b on b.id = x.briefing_id order by x.id")
    assert rows == [
        (1, "email", "a@example.com,b@example.com", "delivered", 1, True, None),
        (1, "folder", "/mnt/share", "failed", 4, False, "/mnt/share: No space left on device"),
        (4, "email", "a@example.com,b@example.com", "delivered", 1, True, None),
        (4, "folder", "/mnt/share", "failed", 4, False, "/mnt/share: No space left on device")]
    # A file lists the deliveries of the briefings it lists, no later ones.
    assert query(first, "select distinct b.dataset_version_id from briefing_delivery x "
                        "join briefing b on b.id = x.briefing_id") == [(1,)]
