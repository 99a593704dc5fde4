"""Delivery against a hostile server and careless settings: one deadline covers the whole SMTP
exchange, a failing channel never stops the next, folder copies are readable and replace an
earlier render's, and a dataset version is e-mailed once (SQLite and PostgreSQL)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import date

import pytest
from pydantic import ValidationError

from db import outputs
from db.engine import Session, write_session
from pipelines.cli.app import settings_problem
from pipelines.delivery.deliver import SENT_BEFORE
from pipelines.ledger.connection import connect_ledger
from pipelines.settings import PROJECT_ROOT, Settings
from tests.pipelines.delivery.conftest import (
    APPENDIX,
    AT,
    PDF,
    READERS,
    by_mail,
    configured,
    deliver,
    recorded,
)
from tests.pipelines.delivery.smtp_server import endless_greeting


@pytest.fixture
def chatty_server() -> Iterator[tuple[int, list[int]]]:
    with endless_greeting() as served:
        yield served


def test_a_server_that_never_ends_its_greeting_is_cut_off_and_the_folder_still_gets_it(
        tmp_path, ledger_url, briefing, chatty_server):
    port, sent = chatty_server
    share = tmp_path / "share"
    share.mkdir()
    settings = configured(tmp_path, ledger_url, **by_mail(port), smtp_timeout_seconds=1,
                          delivery_retries=1, delivery_dir=share)
    started = time.monotonic()
    email, folder = deliver(settings, briefing).outcomes
    took = time.monotonic() - started

    assert sent[0] > 20  # each line came well within the 1 s a read may take
    assert took < 6  # two attempts of 1 s each, not forever
    assert (email.status, email.attempts) == ("failed", 2)
    assert "the SMTP exchange took longer than 1 s (SPECLEDGER_SMTP_TIMEOUT_SECONDS)" in (
        email.error)
    assert folder.delivered and (share / "briefing-2026-11-23.pdf").read_bytes() == PDF
    assert [row[2] for row in recorded(settings, briefing[0])] == ["failed", "delivered"]


def test_a_channel_that_raises_anything_is_a_failed_delivery_and_the_next_is_tried(
        tmp_path, ledger_url, briefing, mailbox):
    box, port = mailbox
    share = tmp_path / "share"
    share.mkdir()
    settings = configured(tmp_path, ledger_url, **by_mail(port), delivery_dir=share)
    # Settings read from the environment refuse it (below); made in code, it reaches compose.
    broken = settings.model_copy(update={"mail_from": "a@example.com\r\nBcc: x@example.com"})
    email, folder = deliver(broken, briefing).outcomes

    assert (email.status, email.attempts) == ("failed", 1)  # our own error: not retried
    assert "linefeed or carriage return" in email.error and box.messages == []
    assert folder.delivered and {p.name for p in share.iterdir()} == {
        "briefing-2026-11-23.pdf", "briefing-2026-11-23-appendix.pdf"}


@pytest.mark.parametrize("name", ["MAIL_TO", "MAIL_FROM"])
def test_a_line_break_in_an_address_is_refused_when_the_settings_are_read(monkeypatch, name):
    monkeypatch.setenv(f"SPECLEDGER_{name}", "cfo@example.com\r\nBcc: all@example.com")
    with pytest.raises(ValidationError) as refused:
        Settings()
    said = settings_problem(refused.value)
    assert said.startswith(f"invalid setting SPECLEDGER_{name}=")
    assert "holds control characters (U+000A, U+000D)" in said


def test_run_exits_2_naming_the_variable_before_doing_anything(tmp_path):
    env = {**os.environ, "SPECLEDGER_MAIL_TO": "cfo@example.com\nBcc: all@example.com",
           "SPECLEDGER_HOME": str(tmp_path / "home")}
    done = subprocess.run([sys.executable, "-c", "from pipelines.cli.app import main; main()",
                           "run"], env=env,
                          cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "SPECLEDGER_MAIL_TO" in done.stderr and "control characters" in done.stderr
    assert not (tmp_path / "home" / "warehouse.duckdb").exists()


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o027, 0o640)])
def test_folder_copies_are_as_readable_as_the_umask_allows(tmp_path, ledger_url, briefing,
                                                            umask, mode):
    share = tmp_path / "share"
    share.mkdir()
    settings = configured(tmp_path, ledger_url, delivery_dir=share)
    before = os.umask(umask)
    try:
        deliver(settings, briefing)
    finally:
        os.umask(before)
    assert {p.name: p.stat().st_mode & 0o777 for p in share.iterdir()} == {
        "briefing-2026-11-23.pdf": mode, "briefing-2026-11-23-appendix.pdf": mode}


def test_a_rerender_with_other_bytes_replaces_the_copy_and_leaves_no_second_one(
        tmp_path, ledger_url, briefing):
    share = tmp_path / "share"
    share.mkdir()
    settings = configured(tmp_path, ledger_url, delivery_dir=share)
    deliver(settings, briefing)
    briefing[1].write_bytes(PDF + b"% re-rendered by a newer code version\n")
    deliver(settings, briefing)
    assert {p.name: p.read_bytes() for p in share.iterdir()} == {
        "briefing-2026-11-23.pdf": briefing[1].read_bytes(),
        "briefing-2026-11-23-appendix.pdf": APPENDIX}


def test_a_version_is_emailed_once_however_often_it_is_rerendered(tmp_path, ledger_url,
                                                                  briefing, mailbox):
    box, port = mailbox
    settings = configured(tmp_path, ledger_url, **by_mail(port))
    deliver(settings, briefing)
    [(_, first)] = box.messages
    # A re-render of the same version (other bytes, another row) in a later run.
    engine = connect_ledger(settings)
    with write_session(engine) as session:
        version = session.get(outputs.Briefing, briefing[0]).dataset_version_id
        again = outputs.record_briefing(
            session, dataset_version=version, as_of=date(2026, 11, 23), path=str(briefing[1]),
            sha256="1" * 64, size_bytes=len(PDF), pages=1, code_version="newer",
            rendered_at=AT).id
    engine.dispose()
    [outcome] = deliver(settings, (again, briefing[1], briefing[2])).outcomes

    assert len(box.messages) == 1  # the second run sent nothing
    assert (outcome.status, outcome.target, outcome.message_id) == (
        SENT_BEFORE, ", ".join(READERS), first["Message-ID"])
    assert outcome.describe() == ("email to cfo@example.com, infra@example.com: sent this "
                                  "dataset version before, not sent again, Message-ID "
                                  f"{first['Message-ID']}")
    assert recorded(settings, again) == []  # nothing sent, nothing recorded


def test_a_new_reader_gets_the_version_the_others_already_have(tmp_path, ledger_url,
                                                               briefing, mailbox):
    box, port = mailbox
    deliver(configured(tmp_path, ledger_url, **by_mail(port)), briefing)
    more = configured(tmp_path, ledger_url, **by_mail(port, mail_to=[*READERS,
                                                                     "ceo@example.com"]))
    skipped, sent = deliver(more, briefing).outcomes
    assert (skipped.status, sent.status, sent.target) == (SENT_BEFORE, "delivered",
                                                          "ceo@example.com")
    assert [envelope.rcpt_tos for envelope, _ in box.messages] == [READERS,
                                                                   ["ceo@example.com"]]


def test_the_same_rendering_recorded_twice_is_one_row(tmp_path, ledger_url, briefing):
    settings = configured(tmp_path, ledger_url)
    engine = connect_ledger(settings)
    with Session(engine) as session:
        first = session.get(outputs.Briefing, briefing[0])
        same = {"dataset_version": first.dataset_version_id, "as_of": first.as_of,
                "path": first.path, "sha256": first.sha256, "size_bytes": first.size_bytes,
                "pages": first.pages, "code_version": first.code_version}
    with write_session(engine) as session:
        assert outputs.record_briefing(session, **same, rendered_at=AT).id == briefing[0]
    with Session(engine) as session:
        assert len(outputs.briefings(session)) == 1
    engine.dispose()


@pytest.mark.parametrize("ledger_url", ["sqlite"], indirect=True)
def test_a_ledger_that_cannot_say_who_had_the_version_sends_and_goes_on(tmp_path, briefing,
                                                                          mailbox):
    box, port = mailbox
    unreachable = "postgresql://specledger@127.0.0.1:1/nowhere"  # nothing listens on port 1
    settings = Settings(home=tmp_path / "home", database_url=unreachable, delivery_retries=0,
                        smtp_timeout_seconds=5, **by_mail(port))
    [outcome] = deliver(settings, briefing).outcomes
    assert outcome.status == "delivered" and len(box.messages) == 1
    assert outcome.unrecorded  # and it says the ledger did not take the record
