"""Delivery of a rendered briefing to its readers: by e-mail and into a folder.

E-mail (SPECLEDGER_SMTP_HOST and SPECLEDGER_MAIL_TO set): one message with the text body (page
1's verdicts) and the PDFs attached, sent through the configured SMTP server. Folder
(SPECLEDGER_DELIVERY_DIR set): a copy of the PDFs, each written atomically under its own name,
or beside a different file of that name as <stem>-<sha256 prefix>.pdf; the folder must exist
(an unmounted share is a failed delivery, not a new empty folder).

Each channel is tried SPECLEDGER_DELIVERY_RETRIES more times after a failure, waiting
SPECLEDGER_DELIVERY_RETRY_DELAY_SECONDS, doubled after each retry (at most a minute). Its
final outcome, delivered or failed, is recorded in the ledger (briefing_delivery) and returned;
a failure is logged and reported, never raised. The briefing's own files are only read: a
failed delivery never loses the briefing. The SMTP password never reaches an error, a record
or a log.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import smtplib
import ssl
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid, parseaddr
from pathlib import Path
from typing import Generic, TypeVar

from db import outputs
from db.engine import LEDGER_ERRORS, Session, write_session
from db.redact import database_error, redact
from pipelines.ledger.connection import connect_ledger, utc_now
from pipelines.retry import Backoff, with_retries
from pipelines.settings import Settings

log = logging.getLogger(__name__)

MAX_ERROR_CHARS = 1000
# What a failed attempt raises: the network, the server's refusal, the disk (smtplib's
# errors are OSErrors too; both are named for the reader).
RETRIED = (OSError, smtplib.SMTPException)

T = TypeVar("T")


@dataclass(frozen=True)
class DeliveryOutcome:
    """How one channel's delivery of a briefing ended, all its attempts included."""

    channel: str                  # email | folder
    target: str                   # the recipients (comma-joined) or the folder
    status: str                   # delivered | failed
    attempts: int
    message_id: str | None        # the e-mail's Message-ID header
    error: str | None             # why the last attempt failed
    delivered_at: datetime        # when the last attempt ended
    unrecorded: str | None = None  # why the ledger could not record it, if it could not

    @property
    def delivered(self) -> bool:
        return self.status == "delivered"

    def describe(self) -> str:
        """`email to a@example.com: delivered (1 attempt), Message-ID <...>`, or `... failed
        after 4 attempts: <why>`."""
        to = "to " if self.channel == "email" else ""
        tries = f"{self.attempts} attempt{'s' if self.attempts != 1 else ''}"
        said = (f"delivered ({tries})" if self.delivered
                else f"failed after {tries}: {self.error}")
        if self.delivered and self.message_id:
            said += f", Message-ID {self.message_id}"
        if self.unrecorded:
            said += f"; not recorded in the ledger ({self.unrecorded})"
        return f"{self.channel} {to}{self.target}: {said}"


@dataclass(frozen=True)
class DeliveryReport:
    """Every channel's outcome for one briefing (none when no channel is configured)."""

    outcomes: tuple[DeliveryOutcome, ...] = ()

    @property
    def failed(self) -> tuple[DeliveryOutcome, ...]:
        return tuple(o for o in self.outcomes if not o.delivered)

    def describe(self) -> str:
        """One line per outcome."""
        return "\n".join(o.describe() for o in self.outcomes) or "no delivery configured"


# --- what the readers get ----------------------------------------------------------------------

def briefing_subject(as_of: date, dataset_version: int) -> str:
    return f"specledger briefing {as_of.isoformat()} (dataset version {dataset_version})"


def briefing_body(digest: str, pdf: Path, appendix: Path | None = None) -> str:
    """Page 1's verdicts (`digest`, plain text), then a line naming the attached files."""
    attached = "Attached: " + ", ".join(f.name for f in _files(pdf, appendix)) + "."
    return f"{digest.strip()}\n\n{attached}\n" if digest.strip() else f"{attached}\n"


def channels(settings: Settings) -> tuple[str, ...]:
    """The channels the settings configure: email, folder, both or none."""
    email = ("email",) if settings.smtp_host and settings.mail_to else ()
    return email + (("folder",) if settings.delivery_dir is not None else ())


def briefing_id_of(settings: Settings, pdf: Path) -> int:
    """The ledger id of the latest briefing recorded as written to `pdf`."""
    engine = connect_ledger(settings)
    try:
        with Session(engine) as session:
            row = outputs.briefing_at(session, str(pdf))
            if row is None:
                raise LookupError(f"no briefing is recorded at {pdf}")
            return row.id
    finally:
        engine.dispose()


# --- delivering --------------------------------------------------------------------------------

def deliver_briefing(settings: Settings, briefing_id: int, pdf: Path, appendix: Path | None,
                     subject: str, body: str, *, now: Callable[[], datetime] = utc_now,
                     sleep: Callable[[float], None] = time.sleep) -> DeliveryReport:
    """Deliver the briefing `pdf` (and its `appendix`) on every configured channel, each
    retried with backoff, and record each outcome for `briefing_id`. Never raises for a
    failed delivery: the report says what failed and why."""
    files = _files(pdf, appendix)
    attempt = Attempts(settings.delivery_retries, settings.delivery_retry_delay_seconds, sleep,
                       _secrets(settings))
    found: list[DeliveryOutcome] = []
    if "email" in channels(settings):
        found += _by_email(settings, files, subject, body, attempt, now)
    if settings.delivery_dir is not None:
        folder = settings.delivery_dir
        tries, error, _ = attempt(f"folder {folder}", lambda: copy_into(folder, files))
        found.append(_outcome("folder", str(folder), tries, None, error, now()))
    return DeliveryReport(tuple(_recorded(settings, briefing_id, o) for o in found))


@dataclass(frozen=True)
class Attempts:
    """Runs an action until it succeeds or its retries are spent, waiting between tries
    (pipelines/retry.py), and logs each failure with the secrets masked."""

    retries: int
    delay_seconds: float
    sleep: Callable[[float], None]
    secrets: tuple[str, ...]        # masked in every error and log line

    def __call__(self, what: str, action: Callable[[], T]) -> tuple[int, str | None, T | None]:
        """(attempts made, the last error or None, the action's result or None)."""

        def once() -> _Try[T]:
            try:
                return _Try(action())
            except RETRIED as exc:
                return _Try(error=redact(_reason(exc), self.secrets)[:MAX_ERROR_CHARS])

        def before_retry(failed: _Try[T], number: int, wait: float) -> None:
            log.warning("Delivery %s: attempt %d failed (%s); retrying in %g s", what, number,
                        failed.error, wait)

        tried = with_retries(once, Backoff(self.retries, self.delay_seconds),
                             failed=lambda t: t.error is not None, before_retry=before_retry,
                             sleep=self.sleep)
        last = tried.last
        if last.error is not None:
            log.error("Delivery %s failed after %d attempts: %s", what, tried.attempts,
                      last.error)
        return tried.attempts, last.error, last.value


@dataclass(frozen=True)
class _Try(Generic[T]):
    """One attempt: the action's result, or why it raised (an error never escapes a retry)."""

    value: T | None = None
    error: str | None = None


def _by_email(settings: Settings, files: list[Path], subject: str, body: str,
              attempt: Attempts, now: Callable[[], datetime]) -> list[DeliveryOutcome]:
    """One message to every recipient; those the server refused (when it took the others) are
    a failed outcome of their own, not retried: the others must not get it twice."""
    recipients = list(settings.mail_to)
    sender = parseaddr(settings.mail_from)[1] or settings.mail_from
    message_id = make_msgid(domain=sender.rpartition("@")[2] or "localhost")
    where = f"{settings.smtp_host}:{settings.smtp_port}"

    def send() -> dict[str, tuple[int, bytes]]:
        return send_message(settings, compose(settings, files, subject, body, message_id,
                                              now()))

    tries, error, refused = attempt(f"e-mail via {where}", send)
    at = now()
    if error is not None:
        return [_outcome("email", ", ".join(recipients), tries, message_id,
                         f"{where}: {error}", at)]
    found = [_outcome("email", ", ".join(r for r in recipients if r not in (refused or {})),
                      tries, message_id, None, at)]
    if refused:
        why = _refusals(refused)
        log.error("Delivery e-mail via %s: recipients refused: %s", where, why)
        found.append(_outcome("email", ", ".join(refused), tries, message_id,
                              redact(f"{where}: refused {why}", attempt.secrets), at))
    return found


def compose(settings: Settings, files: Sequence[Path], subject: str, body: str,
            message_id: str, at: datetime) -> EmailMessage:
    """The e-mail: From, To, Subject, Date and Message-ID, the text body, each PDF attached
    under its file name."""
    message = EmailMessage()
    message["From"] = settings.mail_from
    message["To"] = ", ".join(settings.mail_to)
    message["Subject"] = subject
    message["Date"] = format_datetime(at)
    message["Message-ID"] = message_id
    message.set_content(body)
    for path in files:
        message.add_attachment(path.read_bytes(), maintype="application", subtype="pdf",
                               filename=path.name)
    return message


def send_message(settings: Settings, message: EmailMessage) -> dict[str, tuple[int, bytes]]:
    """Send `message` through the configured server (TLS and login as configured); returns
    the recipients it refused while taking the others (smtplib raises when it takes none)."""
    host, port = settings.smtp_host or "", settings.smtp_port
    timeout = settings.smtp_timeout_seconds
    if settings.smtp_security == "ssl":
        server: smtplib.SMTP = smtplib.SMTP_SSL(host, port, timeout=timeout,
                                                context=ssl.create_default_context())
    else:
        server = smtplib.SMTP(host, port, timeout=timeout)
    with server:
        if settings.smtp_security == "starttls":
            server.starttls(context=ssl.create_default_context())
        if settings.smtp_user:
            password = settings.smtp_password.get_secret_value() if settings.smtp_password else ""
            server.login(settings.smtp_user, password)
        return server.send_message(message)


def copy_into(folder: Path, files: Sequence[Path]) -> list[Path]:
    """Copy `files` into `folder` (which must exist), each written atomically: to a temporary
    name there, synced, then renamed. A file of the same name holding other bytes is kept and
    the copy written beside it as <stem>-<sha256 prefix><suffix>; one holding the same bytes
    is the copy already. Returns where each landed."""
    if not folder.is_dir():
        raise FileNotFoundError(2, "no such folder", str(folder))
    return [_copy_one(path.read_bytes(), folder / path.name) for path in files]


def _copy_one(content: bytes, target: Path) -> Path:
    digest = hashlib.sha256(content).hexdigest()
    if target.exists() and _sha256_of(target) != digest:
        target = target.with_name(f"{target.stem}-{digest[:12]}{target.suffix}")
    if target.exists() and _sha256_of(target) == digest:
        return target
    handle, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(content)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def _files(pdf: Path, appendix: Path | None) -> list[Path]:
    return [pdf] if appendix is None else [pdf, appendix]


def _sha256_of(path: Path) -> str:
    with open(path, "rb") as held:
        return hashlib.file_digest(held, "sha256").hexdigest()


def _outcome(channel: str, target: str, attempts: int, message_id: str | None,
             error: str | None, at: datetime) -> DeliveryOutcome:
    return DeliveryOutcome(channel, target, "failed" if error else "delivered", attempts,
                           message_id, error, at)


def _recorded(settings: Settings, briefing_id: int, outcome: DeliveryOutcome
              ) -> DeliveryOutcome:
    """Record `outcome` in its own short write transaction. A ledger that cannot take it
    does not undo the delivery: the outcome says so, and the log."""
    engine = connect_ledger(settings)
    try:
        with write_session(engine, settings.lock_timeout_seconds) as session:
            outputs.record_delivery(
                session, briefing_id=briefing_id, channel=outcome.channel,
                target=outcome.target, status=outcome.status, attempts=outcome.attempts,
                message_id=outcome.message_id, error=outcome.error,
                delivered_at=outcome.delivered_at)
    except LEDGER_ERRORS as exc:
        why = redact(database_error(exc) or _reason(exc), _secrets(settings))[:MAX_ERROR_CHARS]
        log.error("Delivery %s not recorded in the ledger: %s", outcome.describe(), why)
        return dataclasses.replace(outcome, unrecorded=why)
    finally:
        engine.dispose()
    return outcome


def _secrets(settings: Settings) -> tuple[str, ...]:
    password = settings.smtp_password.get_secret_value() if settings.smtp_password else ""
    return (password,) if password else ()


def _reason(exc: BaseException) -> str:
    """What went wrong, on one line: the server's reply for an SMTP refusal."""
    if isinstance(exc, smtplib.SMTPResponseException):
        reply = exc.smtp_error.decode(errors="replace") if isinstance(
            exc.smtp_error, bytes) else str(exc.smtp_error)
        said = f"{type(exc).__name__}: {exc.smtp_code} {reply}"
    elif isinstance(exc, smtplib.SMTPRecipientsRefused):
        said = f"every recipient refused: {_refusals(exc.recipients)}"
    else:
        said = f"{type(exc).__name__}: {exc}"
    return " ".join(said.split())


def _refusals(refused: dict[str, tuple[int, bytes]]) -> str:
    """`b@example.com: 550 no such user; ...`: each refused recipient with the reply."""
    return "; ".join(f"{recipient}: {code} {reply.decode(errors='replace')}"
                     for recipient, (code, reply) in refused.items())
