"""The run summary's text: rows per file add up, table cells stay cells, big tables are cut."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from db.engine import LockWait
from models.observations import RowError
from pipelines.delivery.deliver import DeliveryOutcome, DeliveryReport
from pipelines.flows.run_summary import MAX_REJECTED_ROWS, rejected_rows_table, summary_markdown
from pipelines.jobs.flags import FlagReport
from pipelines.jobs.ingest import FileReport, IngestReport
from pipelines.jobs.ledger_update import LedgerUpdate
from pipelines.jobs.recompute import RecomputeReport
from pipelines.jobs.steps import RunResult

AT_ONCE = LockWait(False, 0.0)


def a_run(files: list[FileReport], wait: LockWait = AT_ONCE,
          delivery: DeliveryReport | None = None) -> RunResult:
    ingest = IngestReport(7, files, dataset_version=3, dataset_hash="ab" * 32,
                          dataset_changed=True)
    c2c = RecomputeReport(3, computed=["gpt3"], failed={"moe": "no figure for | nvlink-9"})
    ledger = LedgerUpdate(ingest, c2c, RecomputeReport(3, reused=["tco-a"]),
                          FlagReport(3, stored=2, already_stored=False), wait)
    return RunResult(ledger, Path("/srv/out/warehouse.duckdb"),
                     Path("/srv/out/briefings/briefing-2026-11-23.pdf"), delivery=delivery)


PACK = FileReport("data/sources/nvlink.yaml", "00", "ingested", read=5, accepted=3,
                  unchanged=1, rejected=1, errors=[RowError(4, "value", "must be > 0")])
EPOCH = FileReport("epoch/ml|hardware.csv", "11", "unchanged_file", read=2, unchanged=1,
                   rejected=1, errors=[RowError(9, "unit", "unknown unit 'GB/S'")])
FLAGS = [{"kind": "density_threshold", "severity": "critical", "subject": "gb200-nvl72",
          "message": "132 kW is above every cooling band"},
         {"kind": "result_moved", "severity": "warning", "subject": "gpt3-175b-tp8-nvl72",
          "message": "recommended fabric moved from scale-out to scale-up"},
         {"kind": "single_source", "severity": "info", "subject": "b200 tdp",
          "message": "one source"}]


def test_the_summary_shows_rows_per_file_with_totals_that_add_up():
    text = summary_markdown(a_run([PACK, EPOCH]), FLAGS)
    assert "| nvlink.yaml | ingested | 5 | 3 | 1 | 1 |" in text
    assert "| ml\\|hardware.csv | unchanged_file | 2 | 0 | 1 | 1 |" in text  # | escaped
    assert "| **total** | | **7** | **3** | **2** | **2** |" in text
    assert "2 rejected rows are kept in the ledger for review" in text


def test_the_summary_names_serious_flags_and_the_recommendations_that_moved():
    text = summary_markdown(a_run([PACK]), FLAGS)
    assert "3 flags on this version (1 critical, 1 warning, 1 info)." in text
    assert "- **critical** density_threshold: 132 kW is above every cooling band" in text
    assert "one source" not in text  # info flags stay in the briefing's appendix
    assert ("## Recommendations that changed\n\n- gpt3-175b-tp8-nvl72: recommended fabric "
            "moved from scale-out to scale-up") in text
    assert "**failed** moe: no figure for \\| nvlink-9" in text


def test_the_summary_says_when_nothing_moved_and_when_the_run_waited():
    text = summary_markdown(a_run([PACK], LockWait(True, 12.34, "specledger pid 42 on w2")),
                            FLAGS[:1])
    assert "No scenario's recommendation moved" in text
    assert "waited 12.3 s for specledger pid 42 on w2 to finish writing the ledger" in text
    assert "(file:///srv/out/briefings/briefing-2026-11-23.pdf)" in text


def test_the_rejected_rows_table_says_which_verdicts_are_new_and_is_cut_for_reading():
    assert rejected_rows_table([PACK, EPOCH]) == [
        {"file": "nvlink.yaml", "line": 4, "field": "value", "reason": "must be > 0",
         "verdict": "new"},
        {"file": "ml|hardware.csv", "line": 9, "field": "unit",
         "reason": "unknown unit 'GB/S'", "verdict": "standing"}]
    many = FileReport("big.csv", "22", "ingested", read=2000, rejected=2000,
                      errors=[RowError(n, "value", "bad") for n in range(2000)])
    assert len(rejected_rows_table([many])) == MAX_REJECTED_ROWS


SENT = datetime(2026, 11, 23, 6, 0, tzinfo=UTC)


def test_the_summary_lists_each_delivery_and_a_failure_first_with_where_the_briefing_is():
    report = DeliveryReport((
        DeliveryOutcome("email", "cfo@example.com, infra@example.com", "delivered", 2,
                        "<1.2@briefings.example>", None, SENT,
                        unrecorded="LedgerBusyError: the ledger stayed locked"),
        DeliveryOutcome("folder", "/mnt/share", "failed", 4, None,
                        "FileNotFoundError: [Errno 2] no such folder: '/mnt/share'", SENT)))
    text = summary_markdown(a_run([PACK], delivery=report), FLAGS)
    assert ("## Delivery\n\n- **failed** after 4 attempts: folder /mnt/share: "
            "FileNotFoundError: [Errno 2] no such folder: '/mnt/share' — the briefing is kept "
            "at `/srv/out/briefings/briefing-2026-11-23.pdf`\n- **not recorded** in the "
            "ledger: email cfo@example.com, infra@example.com: LedgerBusyError: the ledger "
            "stayed locked\n\n") in text
    assert ("| email | cfo@example.com, infra@example.com | delivered | 2 "
            "| <1.2@briefings.example> |") in text
    assert "| folder | /mnt/share | failed | 4 |  |" in text
    assert text.index("## Delivery") < text.index("## Rows per source file")


def test_the_summary_says_what_to_set_when_nothing_is_delivered():
    for delivery in (None, DeliveryReport()):
        text = summary_markdown(a_run([PACK], delivery=delivery), FLAGS)
        assert ("## Delivery\n\nNo delivery configured (SPECLEDGER_SMTP_HOST and "
                "SPECLEDGER_MAIL_TO for e-mail, SPECLEDGER_DELIVERY_DIR for a folder).") in text
