"""Delivery of a rendered briefing to its readers: by e-mail and into a folder.

E-mail (SPECLEDGER_SMTP_HOST and SPECLEDGER_MAIL_TO set): one message with the text body (page
1's verdicts) and the PDFs attached, sent through the configured SMTP server. Folder
(SPECLEDGER_DELIVERY_DIR set): a copy of the PDFs, each written atomically under its own name
(a file of that name holding other bytes, an earlier render's, is replaced: never a second
copy), readable as the umask allows (0644 under the usual 022); the folder must exist (an
unmounted share is a failed delivery, not a new empty folder).

SPECLEDGER_SMTP_TIMEOUT_SECONDS bounds a whole SMTP exchange (connect, greeting, login, the
message), not each read: a server that keeps talking (`220-` lines without end) is cut off at
the deadline. A dataset version is e-mailed once: readers the ledger records as having been
sent it are not sent it again when a run re-renders the same version.

Each channel is tried SPECLEDGER_DELIVERY_RETRIES more times after a failure, waiting
SPECLEDGER_DELIVERY_RETRY_DELAY_SECONDS, doubled after each retry (at most a minute). Its
final outcome, delivered or failed, is recorded in the ledger (briefing_delivery) and returned;
a failure, whatever raised it, is logged and reported, never raised, and the next channel is
still tried. The briefing's own files are only read: a
failed delivery never loses the briefing. The SMTP password never reaches an error, a record
or a log.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import secrets
import smtplib
import socket
import ssl
import threading
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
SENT_BEFORE = "sent before"  # an outcome of no attempt: the ledger says these readers have it


@dataclass(frozen=True)
class DeliveryOutcome:
    """How one channel's delivery of a briefing ended, all its attempts included."""

    channel: str                  # email | folder
    target: str                   # the recipients (comma-joined) or the folder
    status: str                   # delivered | failed | sent before (not recorded again)
    attempts: int
    message_id: str | None        # the e-mail's Message-ID header
    error: str | None             # why the last attempt failed
    delivered_at: datetime        # when the last attempt ended
    unrecorded: str | None = None  # why the ledger could not record it, if it could not

    @property
    def delivered(self) -> bool:
        return self.status in ("delivered", SENT_BEFORE)

    def describe(self) -> str:
        """`email to a@example.com: delivered (1 attempt), Message-ID <...>`, or `... failed
        after 4 attempts: <why>`."""
        to = "to " if self.channel == "email" else ""
        tries = f"{self.attempts} attempt{'s' if self.attempts != 1 else ''}"
        said = (f"delivered ({tries})" if self.status == "delivered"
                else "sent this dataset version before, not sent again"
                if self.status == SENT_BEFORE else f"failed after {tries}: {self.error}")
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


def not_attempted(settings: Settings, why: str, *,
                  now: Callable[[], datetime] = utc_now) -> DeliveryReport:
    """Every configured channel failed without an attempt, for `why` (e.g. the briefing is
    not in the ledger): the run reports it and goes on to publish."""
    at = now()
    email = [("email", ", ".join(settings.mail_to))] if "email" in channels(settings) else []
    folder = ([("folder", str(settings.delivery_dir))]
              if settings.delivery_dir is not None else [])
    return DeliveryReport(tuple(DeliveryOutcome(channel, target, "failed", 0, None, why, at,
                                                unrecorded=why)
                                for channel, target in email + folder))


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
        sent = _sent_before(settings, briefing_id)
        found += _by_email(settings, files, subject, body, attempt, now, sent)
    if settings.delivery_dir is not None:
        folder = settings.delivery_dir
        tries, error, _ = attempt(f"folder {folder}", lambda: copy_into(folder, files))
        found.append(_outcome("folder", str(folder), tries, None, error, now()))
    return DeliveryReport(tuple(o if o.status == SENT_BEFORE else
                                _recorded(settings, briefing_id, o) for o in found))


def _sent_before(settings: Settings, briefing_id: int) -> dict[str, str | None]:
    """The readers the ledger records as e-mailed the dataset version of `briefing_id`
    (by any rendering of it), with the Message-ID they got it under. A ledger that cannot
    say is logged and taken as none: a reader may get the version twice, never not at all,
    and the run goes on to publish."""
    try:
        engine = connect_ledger(settings)
        try:
            with Session(engine) as session:
                return outputs.emailed_readers(session, briefing_id)
        finally:
            engine.dispose()
    except LEDGER_ERRORS as exc:
        why = redact(database_error(exc) or _reason(exc), _secrets(settings))[:MAX_ERROR_CHARS]
        log.error("Delivery: which readers had this version could not be read (%s); "
                  "e-mailing every reader", why)
        return {}


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
            except Exception as exc:  # noqa: BLE001 - a channel's bug must not stop the run
                return _Try(error=redact(_reason(exc), self.secrets)[:MAX_ERROR_CHARS],
                            again=False)

        def before_retry(failed: _Try[T], number: int, wait: float) -> None:
            log.warning("Delivery %s: attempt %d failed (%s); retrying in %g s", what, number,
                        failed.error, wait)

        tried = with_retries(once, Backoff(self.retries, self.delay_seconds),
                             failed=lambda t: t.error is not None and t.again,
                             before_retry=before_retry,
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
    again: bool = True  # whether trying again may help (not for an error of our own making)


def _by_email(settings: Settings, files: list[Path], subject: str, body: str,
              attempt: Attempts, now: Callable[[], datetime],
              sent: dict[str, str | None] | None = None) -> list[DeliveryOutcome]:
    """One message to every recipient not `sent` the version before; those the server refused
    (when it took the others) are a failed outcome of their own, not retried: the others must
    not get it twice."""
    sent = sent or {}
    found = []
    if any(r in sent for r in settings.mail_to):
        before = [r for r in settings.mail_to if r in sent]
        ids = sorted({sent[r] for r in before if sent[r]})
        found.append(DeliveryOutcome("email", ", ".join(before), SENT_BEFORE, 0,
                                     ", ".join(ids) or None, None, now()))
    recipients = [r for r in settings.mail_to if r not in sent]
    if not recipients:
        return found
    sender = parseaddr(settings.mail_from)[1] or settings.mail_from
    message_id = make_msgid(domain=sender.rpartition("@")[2] or "localhost")
    where = f"{settings.smtp_host}:{settings.smtp_port}"

    def send() -> dict[str, tuple[int, bytes]]:
        return send_message(settings, compose(settings, files, subject, body, message_id,
                                              now(), recipients))

    tries, error, refused = attempt(f"e-mail via {where}", send)
    at = now()
    if error is not None:
        return [*found, _outcome("email", ", ".join(recipients), tries, message_id,
                                 f"{where}: {error}", at)]
    found.append(_outcome("email", ", ".join(r for r in recipients if r not in (refused or {})),
                          tries, message_id, None, at))
    if refused:
        why = _refusals(refused)
        log.error("Delivery e-mail via %s: recipients refused: %s", where, why)
        found.append(_outcome("email", ", ".join(refused), tries, message_id,
                              redact(f"{where}: refused {why}", attempt.secrets), at))
    return found


def compose(settings: Settings, files: Sequence[Path], subject: str, body: str,
            message_id: str, at: datetime, to: Sequence[str] | None = None) -> EmailMessage:
    """The e-mail to `to` (else every reader): From, To, Subject, Date and Message-ID, the
    text body, each PDF attached under its file name."""
    message = EmailMessage()
    message["From"] = settings.mail_from
    message["To"] = ", ".join(settings.mail_to if to is None else to)
    message["Subject"] = subject
    message["Date"] = format_datetime(at)
    message["Message-ID"] = message_id
    message.set_content(body)
    for path in files:
        message.add_attachment(path.read_bytes(), maintype="application", subtype="pdf",
                               filename=path.name)
    return message


def send_message(settings: Settings, message: EmailMessage) -> dict[str, tuple[int, bytes]]:
    """Send `message` through the configured server (TLS and login as configured) within
    one deadline, smtp_timeout_seconds for the whole exchange; returns the recipients it
    refused while taking the others (smtplib raises when it takes none). Past the deadline
    the connection is shut and TimeoutError raised (retried like any network error)."""
    host, port = settings.smtp_host or "", settings.smtp_port
    timeout = settings.smtp_timeout_seconds
    if settings.smtp_security == "ssl":
        server: smtplib.SMTP = smtplib.SMTP_SSL(timeout=timeout,
                                                context=ssl.create_default_context())
    else:
        server = smtplib.SMTP(timeout=timeout)
    with _Deadline(server, timeout) as deadline, server:
        try:
            server.connect(host, port)
            if settings.smtp_security == "starttls":
                server.starttls(context=ssl.create_default_context())
            if settings.smtp_user:
                password = (settings.smtp_password.get_secret_value()
                            if settings.smtp_password else "")
                server.login(settings.smtp_user, password)
            return server.send_message(message)
        except RETRIED as exc:
            if deadline.passed:
                raise TimeoutError(f"the SMTP exchange took longer than {timeout:g} s "
                                   "(SPECLEDGER_SMTP_TIMEOUT_SECONDS); cut off") from exc
            raise


class _Deadline:
    """Shuts `server`'s socket once `seconds` have passed: smtplib's timeout bounds each read,
    so a server answering a line at a time (`220-` continuation lines without end) would
    hold the exchange forever. Shutting the socket (never closing it: its descriptor stays
    the reader's) wakes the blocked read, which fails."""

    def __init__(self, server: smtplib.SMTP, seconds: float) -> None:
        self.server, self.passed, self._over = server, False, threading.Event()
        self._timer = threading.Timer(seconds, self._cut)
        self._timer.daemon = True

    def _cut(self) -> None:
        self.passed = True
        # The socket exists once connect() has made it: until then its own timeout bounds it.
        while not self._over.is_set():
            sock = getattr(self.server, "sock", None)
            if sock is not None:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass  # already closed: the exchange ended as the deadline fell
                return
            self._over.wait(0.05)

    def __enter__(self) -> _Deadline:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._over.set()
        self._timer.cancel()


def copy_into(folder: Path, files: Sequence[Path]) -> list[Path]:
    """Copy `files` into `folder` (which must exist), each written atomically: to a temporary
    name there, synced, then renamed over the file of that name. One holding the same bytes
    is the copy already (left as it is); one holding other bytes (an earlier render of the
    same briefing) is replaced, never kept beside as a second copy. Returns where each
    landed."""
    if not folder.is_dir():
        raise FileNotFoundError(2, "no such folder", str(folder))
    return [_copy_one(path.read_bytes(), folder / path.name) for path in files]


def _copy_one(content: bytes, target: Path) -> Path:
    if target.is_file() and _sha256_of(target) == hashlib.sha256(content).hexdigest():
        return target
    tmp = target.with_name(f".{target.name}.{secrets.token_hex(6)}.tmp")
    # os.open with 0o666 applies the umask (0644 under 022), as any file the user writes;
    # mkstemp's 0600 would keep the readers of a shared folder out.
    handle = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(content)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
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
