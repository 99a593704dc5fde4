"""A real SMTP server on 127.0.0.1 for the delivery tests (aiosmtpd): it keeps each message it
takes, can answer "try again" first or refuse a recipient, and checks a login when given one;
and a hostile one that never ends its greeting."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from email import message_from_bytes, policy
from email.message import EmailMessage

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import Envelope


class Mailbox:
    """What an SMTP handler does: keeps each message it takes, answers `replies` to DATA first
    (e.g. "451 try again"), refuses the recipients in `refuse`."""

    def __init__(self) -> None:
        self.messages: list[tuple[Envelope, EmailMessage]] = []
        self.replies: list[str] = []
        self.refuse: set[str] = set()

    async def handle_RCPT(self, server, session, envelope, address, options):  # noqa: N802
        if address in self.refuse:
            return "550 no such user here"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):  # noqa: N802
        if self.replies:
            return self.replies.pop(0)
        wire = envelope.content.replace(b"\r\n", b"\n")  # lines as a mail client shows them
        self.messages.append((envelope, message_from_bytes(wire, policy=policy.default)))
        return "250 Message accepted for delivery"


def free_port() -> int:
    """A port nothing listens on (a server that refuses every connection)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def smtp_server(authenticator: Callable[..., object] | None = None
                ) -> Iterator[tuple[Mailbox, int]]:
    """A server on 127.0.0.1 (a free port) and its mailbox; with `authenticator`, it takes a
    login without TLS (loopback only)."""
    box = Mailbox()
    options = {"authenticator": authenticator, "auth_require_tls": False} if authenticator else {}
    controller = Controller(box, hostname="127.0.0.1", port=free_port(), **options)
    controller.start()
    try:
        yield box, controller.port
    finally:
        controller.stop()


@contextmanager
def endless_greeting() -> Iterator[tuple[int, list[int]]]:
    """A server on 127.0.0.1 that greets with `220-` continuation lines, one every 50 ms,
    and never ends its greeting; yields its port and how many lines it has sent."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop, sent = threading.Event(), [0]

    def serve() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                while not stop.is_set():
                    try:
                        conn.sendall(b"220-still greeting you\r\n")
                    except OSError:
                        break  # the client hung up
                    sent[0] += 1
                    time.sleep(0.05)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1], sent
    finally:
        stop.set()
        thread.join(5)
        listener.close()
