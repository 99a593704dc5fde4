"""Delivering a briefing: an e-mail through a real SMTP server on loopback (aiosmtpd) and a copy
into a folder, each retried, recorded in the ledger on both dialects, and never losing the
briefing or showing the SMTP password."""

from __future__ import annotations

import logging
from datetime import date
from pathlib import Path

import pytest

from pipelines.delivery.deliver import (
    DeliveryReport,
    briefing_body,
    briefing_id_of,
    briefing_subject,
)
from tests.pipelines.delivery.conftest import (
    APPENDIX,
    AT,
    PASSWORD,
    PDF,
    READERS,
    by_mail,
    configured,
    deliver,
    recorded,
)
from tests.pipelines.delivery.smtp_server import free_port


def test_the_briefing_is_mailed_to_its_readers_with_the_pdfs_attached_and_recorded(
        tmp_path, ledger_url, briefing, mailbox):
    box, port = mailbox
    settings = configured(tmp_path, ledger_url, **by_mail(port))
    report = deliver(settings, briefing)

    [(envelope, message)] = box.messages
    assert envelope.rcpt_tos == READERS
    assert envelope.mail_from == "specledger@briefings.example"
    assert message["Subject"] == "specledger briefing 2026-11-23 (dataset version 1)"
    assert message["To"] == "cfo@example.com, infra@example.com"
    assert message["Date"] == "Mon, 23 Nov 2026 06:00:00 +0000"
    assert message.get_body(("plain",)).get_content() == (
        "Verdicts: scale-up wins.\n\nAttached: two PDFs.\n")
    attached = [(a.get_filename(), a.get_content_type(), a.get_content())
                for a in message.iter_attachments()]
    assert attached == [("briefing-2026-11-23.pdf", "application/pdf", PDF),
                        ("briefing-2026-11-23-appendix.pdf", "application/pdf", APPENDIX)]
    assert message["Message-ID"].endswith("@briefings.example>")

    [outcome] = report.outcomes
    assert report.failed == ()
    assert recorded(settings, briefing[0]) == [
        ("email", "cfo@example.com, infra@example.com", "delivered", 1, message["Message-ID"],
         None, AT)]
    assert outcome.describe() == ("email to cfo@example.com, infra@example.com: delivered "
                                  f"(1 attempt), Message-ID {message['Message-ID']}")


def test_a_server_that_refuses_is_retried_then_reported_and_the_briefing_is_kept(
        tmp_path, ledger_url, briefing, caplog):
    settings = configured(tmp_path, ledger_url, **by_mail(free_port()), delivery_retries=3,
                          delivery_retry_delay_seconds=5)
    waits: list[float] = []
    with caplog.at_level(logging.WARNING, logger="pipelines.delivery.deliver"):
        report = deliver(settings, briefing, sleep=waits.append)  # nothing raised

    [outcome] = report.failed
    assert (outcome.status, outcome.attempts) == ("failed", 4)
    assert waits == [5, 10, 20]  # doubled after each retry
    assert "Connection refused" in outcome.error
    assert outcome.describe().startswith("email to cfo@example.com, infra@example.com: failed "
                                         "after 4 attempts: 127.0.0.1:")
    [row] = recorded(settings, briefing[0])
    assert row[:4] == ("email", "cfo@example.com, infra@example.com", "failed", 4)
    assert row[5] == outcome.error
    assert briefing[1].read_bytes() == PDF and briefing[2].read_bytes() == APPENDIX
    assert [r.levelname for r in caplog.records] == ["WARNING"] * 3 + ["ERROR"]


def test_a_server_that_says_try_again_once_takes_the_second_attempt(tmp_path, ledger_url,
                                                                    briefing, mailbox):
    box, port = mailbox
    box.replies = ["451 try again later"]
    settings = configured(tmp_path, ledger_url, **by_mail(port))
    [outcome] = deliver(settings, briefing).outcomes

    assert (outcome.status, outcome.attempts, outcome.error) == ("delivered", 2, None)
    [(_, message)] = box.messages  # once: the refused attempt left nothing
    assert recorded(settings, briefing[0])[0][2:5] == ("delivered", 2, message["Message-ID"])


def test_a_reader_the_server_refuses_is_a_failed_delivery_of_its_own(tmp_path, ledger_url,
                                                                     briefing, mailbox):
    box, port = mailbox
    box.refuse = {"infra@example.com"}
    settings = configured(tmp_path, ledger_url, **by_mail(port))
    report = deliver(settings, briefing)

    [(envelope, _)] = box.messages  # not sent again to the reader who got it
    assert envelope.rcpt_tos == ["cfo@example.com"]
    assert [(o.target, o.status, o.attempts, o.error) for o in report.outcomes] == [
        ("cfo@example.com", "delivered", 1, None),
        ("infra@example.com", "failed", 1,
         f"127.0.0.1:{port}: refused infra@example.com: 550 no such user here")]
    assert [row[2] for row in recorded(settings, briefing[0])] == ["delivered", "failed"]


def test_a_login_is_made_and_a_wrong_password_never_shows(tmp_path, ledger_url, briefing,
                                                         mailbox, caplog):
    box, port = mailbox
    good = configured(tmp_path, ledger_url, **by_mail(port), smtp_user="specledger",
                      smtp_password=PASSWORD)
    assert deliver(good, briefing).failed == ()
    assert len(box.messages) == 1

    wrong = "hunter2-not-the-password"
    bad = configured(tmp_path, ledger_url, **by_mail(port, mail_to=["ops@example.com"]),
                     smtp_user="specledger", smtp_password=wrong, delivery_retries=0)
    with caplog.at_level(logging.WARNING, logger="pipelines.delivery.deliver"):
        [outcome] = deliver(bad, briefing).outcomes
    assert (outcome.status, outcome.attempts) == ("failed", 1)
    assert "SMTPAuthenticationError: 535" in outcome.error
    said = [outcome.describe(), caplog.text, *map(str, recorded(bad, briefing[0]))]
    assert not [text for text in said if wrong in text or PASSWORD in text]
    assert "**********" in repr(bad)  # the settings print masked too


def test_the_folder_gets_atomic_copies_replacing_an_earlier_file_of_that_name(
        tmp_path, ledger_url, briefing):
    share = tmp_path / "share"
    share.mkdir()
    (share / "briefing-2026-11-23.pdf").write_bytes(b"%PDF-1.7 an earlier render\n")
    settings = configured(tmp_path, ledger_url, delivery_dir=share)
    [outcome] = deliver(settings, briefing).outcomes

    assert (outcome.channel, outcome.target, outcome.status) == ("folder", str(share),
                                                                 "delivered")
    copies = {p.name: p.read_bytes() for p in share.iterdir()}
    assert copies == {"briefing-2026-11-23.pdf": PDF,  # replaced, no -<sha> copy beside it
                      "briefing-2026-11-23-appendix.pdf": APPENDIX}  # no temporary file left
    again = deliver(settings, briefing)  # the copies are there already: nothing new
    assert again.failed == () and len(list(share.iterdir())) == 2
    assert briefing[1].read_bytes() == PDF  # the briefing itself stays where it was
    assert [row[:4] for row in recorded(settings, briefing[0])] == [
        ("folder", str(share), "delivered", 1)] * 2


def test_a_missing_folder_is_a_failed_delivery_not_a_new_folder(tmp_path, ledger_url, briefing):
    share = tmp_path / "unmounted-share"
    settings = configured(tmp_path, ledger_url, delivery_dir=share)
    [outcome] = deliver(settings, briefing).outcomes

    assert (outcome.status, outcome.attempts) == ("failed", 3)
    assert outcome.error == f"FileNotFoundError: [Errno 2] no such folder: '{share}'"
    assert not share.exists()


def test_a_delivery_the_ledger_cannot_record_is_still_reported(tmp_path, ledger_url, briefing):
    share = tmp_path / "share"
    share.mkdir()
    settings = configured(tmp_path, ledger_url, delivery_dir=share)
    _, pdf, appendix = briefing
    report = deliver(settings, (999, pdf, appendix))  # no such briefing row: refused

    [outcome] = report.outcomes
    assert outcome.status == "delivered" and "foreign key" in outcome.unrecorded.lower()
    assert "INSERT" not in outcome.unrecorded  # the driver's words, not the statement
    assert outcome.describe().endswith(f"; not recorded in the ledger ({outcome.unrecorded})")
    assert (share / pdf.name).read_bytes() == PDF


def test_without_settings_nothing_is_delivered_or_recorded(tmp_path, ledger_url, briefing):
    settings = configured(tmp_path, ledger_url, smtp_host="127.0.0.1")  # but no readers
    report = deliver(settings, briefing)
    assert report == DeliveryReport(())
    assert report.describe() == "no delivery configured"
    assert recorded(settings, briefing[0]) == []


def test_the_subject_names_the_date_and_version_and_the_body_the_files():
    assert briefing_subject(date(2026, 11, 23), 7) == (
        "specledger briefing 2026-11-23 (dataset version 7)")
    pdf, appendix = Path("/b/briefing-2026-11-23.pdf"), Path("/b/briefing-2026-11-23-appendix.pdf")
    assert briefing_body("Scale-up wins.\n", pdf, appendix) == (
        "Scale-up wins.\n\nAttached: briefing-2026-11-23.pdf, "
        "briefing-2026-11-23-appendix.pdf.\n")
    assert briefing_body("", pdf) == "Attached: briefing-2026-11-23.pdf.\n"


def test_the_briefing_to_deliver_is_the_latest_recorded_at_its_path(tmp_path, ledger_url,
                                                                    briefing):
    settings = configured(tmp_path, ledger_url)
    briefing_id, pdf, _ = briefing
    assert briefing_id_of(settings, pdf) == briefing_id
    with pytest.raises(LookupError, match="no briefing is recorded at .*/elsewhere.pdf"):
        briefing_id_of(settings, pdf.with_name("elsewhere.pdf"))
