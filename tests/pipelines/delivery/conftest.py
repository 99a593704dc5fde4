"""What the delivery tests share: a briefing recorded in a ledger (SQLite, PostgreSQL) with its
PDF and appendix, a real SMTP server on loopback that takes a login, and settings for both."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from aiosmtpd.smtp import AuthResult

from db import outputs
from db.engine import Session, write_session
from pipelines.delivery.deliver import DeliveryReport, briefing_id_of, deliver_briefing
from pipelines.ledger.connection import connect_ledger
from pipelines.settings import Settings
from tests.pipelines.delivery.smtp_server import Mailbox, smtp_server

AT = datetime(2026, 11, 23, 6, 0, tzinfo=UTC)
PDF = b"%PDF-1.7 a tiny briefing\n%%EOF\n"
APPENDIX = b"%PDF-1.7 its appendix\n%%EOF\n"
READERS = ["cfo@example.com", "infra@example.com"]
PASSWORD = "correct horse battery staple"


def check_password(server, session, envelope, mechanism, auth_data) -> AuthResult:
    ok = (auth_data.login, auth_data.password) == (b"specledger", PASSWORD.encode())
    return AuthResult(success=ok, handled=False)


@pytest.fixture
def mailbox() -> Iterator[tuple[Mailbox, int]]:
    """A local SMTP server on 127.0.0.1 that takes a login (without TLS, on loopback only)."""
    with smtp_server(authenticator=check_password) as served:
        yield served


@pytest.fixture
def briefing(tmp_path: Path, ledger_url: str, ingest, nvlink_pack) -> tuple[int, Path, Path]:
    """A briefing recorded in a ledger (SQLite, PostgreSQL) with its PDF and appendix."""
    version = ingest(nvlink_pack).dataset_version
    folder = tmp_path / "home" / "briefings"
    folder.mkdir(parents=True)
    pdf, appendix = folder / "briefing-2026-11-23.pdf", folder / "briefing-2026-11-23-appendix.pdf"
    pdf.write_bytes(PDF)
    appendix.write_bytes(APPENDIX)
    settings = Settings(home=tmp_path / "home", database_url=ledger_url)
    engine = connect_ledger(settings)
    with write_session(engine) as session:
        outputs.record_briefing(session, dataset_version=version, as_of=date(2026, 11, 23),
                                path=str(pdf), sha256="0" * 64, size_bytes=len(PDF), pages=1,
                                code_version="test", rendered_at=AT)
    engine.dispose()
    return briefing_id_of(settings, pdf), pdf, appendix


def configured(tmp_path: Path, ledger_url: str, **fields: object) -> Settings:
    """Two retries without waiting, unless `fields` say otherwise."""
    return Settings(**{"home": tmp_path / "home", "database_url": ledger_url,
                       "delivery_retries": 2, "delivery_retry_delay_seconds": 0,
                       "smtp_timeout_seconds": 5, **fields})


def by_mail(port: int, **fields: object) -> dict[str, object]:
    return {"smtp_host": "127.0.0.1", "smtp_port": port, "mail_to": READERS,
            "mail_from": "specledger@briefings.example", **fields}


def deliver(settings: Settings, briefing: tuple[int, Path, Path], **options) -> DeliveryReport:
    briefing_id, pdf, appendix = briefing
    return deliver_briefing(settings, briefing_id, pdf, appendix,
                            "specledger briefing 2026-11-23 (dataset version 1)",
                            "Verdicts: scale-up wins.\n\nAttached: two PDFs.\n",
                            now=lambda: AT, **options)


def recorded(settings: Settings, briefing_id: int) -> list[tuple]:
    engine = connect_ledger(settings)
    with Session(engine) as session:
        rows = [(r.channel, r.target, r.status, r.attempts, r.message_id, r.error,
                 r.delivered_at) for r in outputs.deliveries_of(session, briefing_id)]
    engine.dispose()
    return rows
