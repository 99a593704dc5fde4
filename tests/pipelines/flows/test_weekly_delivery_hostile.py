"""The weekly run against a hostile mail server, run twice on one version: the server that
never ends its greeting is cut off at the deadline, the folder still gets its copies (mode
0644 under umask 022, no -<sha> copies after the re-render) and the warehouse is published;
a second run of the same version e-mails nobody again."""

from __future__ import annotations

import os
from datetime import date

import duckdb
import pytest

from pipelines.flows.weekly_briefing import weekly_briefing
from tests.conftest import NVLINK_PACK
from tests.pipelines.delivery.smtp_server import endless_greeting, smtp_server

pytestmark = pytest.mark.slow(seconds=16)

DAY = date(2026, 11, 22)



def configure(monkeypatch, port: int, share) -> None:
    monkeypatch.delenv("SPECLEDGER_DATABASE_URL", raising=False)
    for name, value in {"SMTP_HOST": "127.0.0.1", "SMTP_PORT": port,
                        "MAIL_TO": "cfo@example.com", "DELIVERY_DIR": share,
                        "SMTP_TIMEOUT_SECONDS": 1, "DELIVERY_RETRIES": 0}.items():
        monkeypatch.setenv(f"SPECLEDGER_{name}", str(value))


def test_a_server_that_never_ends_its_greeting_never_stops_the_run(
        prefect_harness, tmp_path, write_pack, monkeypatch):
    sources = write_pack("nvlink.yaml", NVLINK_PACK).parent
    share = tmp_path / "share"
    share.mkdir()
    before = os.umask(0o022)
    try:
        with endless_greeting() as (port, _):
            configure(monkeypatch, port, share)
            result = weekly_briefing(as_of=DAY, home=tmp_path / "home", sources_dir=sources)
    finally:
        os.umask(before)

    email, folder = result.delivery.outcomes
    assert email.status == "failed" and "took longer than 1 s" in email.error
    assert folder.delivered
    assert {p.name: p.stat().st_mode & 0o777 for p in share.iterdir()} == {
        "briefing-2026-11-22.pdf": 0o644, "briefing-2026-11-22-appendix.pdf": 0o644}
    with duckdb.connect(str(result.warehouse), read_only=True) as con:
        assert con.execute("select dataset_version from meta").fetchone() == (
            result.ingest.dataset_version,)


def test_a_second_run_of_the_same_version_emails_nobody(prefect_harness, tmp_path, write_pack,
                                                        monkeypatch):
    sources = write_pack("nvlink.yaml", NVLINK_PACK).parent
    share = tmp_path / "share"
    share.mkdir()
    with smtp_server() as (box, port):
        configure(monkeypatch, port, share)
        first = weekly_briefing(as_of=DAY, home=tmp_path / "home", sources_dir=sources)
        second = weekly_briefing(as_of=DAY, home=tmp_path / "home", sources_dir=sources)

    assert second.ingest.dataset_version == first.ingest.dataset_version
    assert len(box.messages) == 1  # the second run sent nothing
    assert [o.status for o in second.delivery.outcomes] == ["sent before", "delivered"]
    assert sorted(p.name for p in share.iterdir()) == [
        "briefing-2026-11-22-appendix.pdf", "briefing-2026-11-22.pdf"]


def test_a_briefing_missing_from_the_ledger_is_reported_not_delivered_and_the_run_goes_on(
        prefect_harness, tmp_path, monkeypatch):
    from prefect import flow

    from db.engine import upgrade
    from pipelines.flows.weekly_briefing import deliver_briefing
    from pipelines.jobs.steps import RenderedBriefing
    from pipelines.settings import Settings

    share = tmp_path / "share"
    share.mkdir()
    configure(monkeypatch, 2525, share)
    settings = Settings(home=tmp_path / "home")
    settings.home.mkdir()
    upgrade(settings.resolved_database_url)
    unrecorded = RenderedBriefing(tmp_path / "elsewhere.pdf", "0" * 64, 1, None)

    report = flow(lambda: deliver_briefing(settings, unrecorded, DAY))()

    assert [(o.channel, o.status, o.attempts) for o in report.outcomes] == [
        ("email", "failed", 0), ("folder", "failed", 0)]
    assert all("no briefing is recorded at" in o.error for o in report.outcomes)
    assert list(share.iterdir()) == []
