"""The weekly flow delivers its briefing: e-mailed through a real SMTP server on loopback, and a
folder copy that cannot be made retried, then reported in the run summary, the briefing kept;
the warehouse lists both deliveries."""

from __future__ import annotations

from datetime import date

import duckdb
import pytest

from pipelines.flows.artifacts import SUMMARY_KEY
from pipelines.flows.weekly_briefing import weekly_briefing
from tests.conftest import NVLINK_PACK
from tests.pipelines.delivery.smtp_server import smtp_server
from tests.pipelines.flows.test_weekly_briefing import artifacts_of

pytestmark = pytest.mark.slow(seconds=20)

READERS = ["cfo@example.com", "infra@example.com"]



def test_the_weekly_run_mails_its_briefing_and_reports_a_folder_it_could_not_copy_to(
        prefect_harness, tmp_path, write_pack, monkeypatch):
    monkeypatch.delenv("SPECLEDGER_DATABASE_URL", raising=False)
    sources = write_pack("nvlink.yaml", NVLINK_PACK).parent
    unmounted = tmp_path / "unmounted-share"
    with smtp_server() as (box, port):
        for name, value in {"SMTP_HOST": "127.0.0.1", "SMTP_PORT": port,
                            "MAIL_TO": ",".join(READERS), "DELIVERY_DIR": unmounted,
                            "DELIVERY_RETRIES": 1, "DELIVERY_RETRY_DELAY_SECONDS": 0}.items():
            monkeypatch.setenv(f"SPECLEDGER_{name}", str(value))
        state = weekly_briefing(as_of=date(2026, 11, 22), home=tmp_path / "home",
                                sources_dir=sources, return_state=True)
    result = state.result()  # a failed delivery does not fail the run

    [(envelope, message)] = box.messages
    assert envelope.rcpt_tos == READERS
    version = result.ingest.dataset_version
    assert message["Subject"] == f"specledger briefing 2026-11-22 (dataset version {version})"
    attached = {a.get_filename(): a.get_content() for a in message.iter_attachments()}
    assert set(attached) == {"briefing-2026-11-22.pdf", "briefing-2026-11-22-appendix.pdf"}
    assert all(content == (result.briefing.parent / name).read_bytes()
               for name, content in attached.items())
    verdicts, attached_line = message.get_body(("plain",)).get_content().split("\n\nAttached: ")
    assert "2026-11-22" in verdicts  # page 1 as text, then the files
    assert attached_line == "briefing-2026-11-22.pdf, briefing-2026-11-22-appendix.pdf.\n"

    assert [(o.channel, o.status, o.attempts) for o in result.delivery.outcomes] == [
        ("email", "delivered", 1), ("folder", "failed", 2)]
    summary = artifacts_of(state.state_details.flow_run_id)[SUMMARY_KEY].data
    assert (f"- **failed** after 2 attempts: folder {unmounted}: FileNotFoundError: [Errno 2] "
            f"no such folder: '{unmounted}' — the briefing is kept at `{result.briefing}`"
            ) in summary
    assert f"| email | {', '.join(READERS)} | delivered | 1 | {message['Message-ID']} |" in summary
    assert result.briefing.is_file() and not unmounted.exists()

    con = duckdb.connect(str(result.warehouse), read_only=True)
    rows = con.execute("select channel, status, attempts, message_id from briefing_delivery "
                       "order by id").fetchall()
    con.close()
    assert rows == [("email", "delivered", 1, message["Message-ID"]),
                    ("folder", "failed", 2, None)]
