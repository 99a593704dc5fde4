"""Where a remote source may connect, and for how long: the network side of a fetch.

A `Guard` is the httpcore network backend of one source's client. It resolves each host itself,
refuses loopback, link-local, private and other non-public addresses (unless the source is
declared `local: true`) and connects only to the addresses it checked, so a name that resolves
differently the second time cannot slip through. Every redirect hop opens its connection here,
so every hop is checked. It also ends each socket operation (the name lookup included) by the
attempt's deadline: httpx's timeouts are per operation, and a server sending a header byte a
second would otherwise never time out.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import httpcore
import httpx

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
HOW_TO_ALLOW = "declare the source with `local: true` to allow it"


class Refused(Exception):
    """A source went where it may not (an address, a scheme, a body too large): not retried."""


def address_problem(address: Address) -> str | None:
    """Why a remote source may not connect to `address` (None: a public address)."""
    if isinstance(address, ipaddress.IPv6Address):
        # ::ffff:127.0.0.1 and 2002:7f00:1:: carry an IPv4 address the stack may reach.
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is not None:
            return address_problem(embedded)
    for problem, applies in (("a loopback", address.is_loopback),
                             ("a link-local", address.is_link_local),
                             ("an unspecified", address.is_unspecified),
                             ("a multicast", address.is_multicast),
                             ("a private", address.is_private)):
        if applies:
            return f"{problem} address"
    return None if address.is_global else "not a public address"


def parse_address(text: str) -> Address:
    """An address as getaddrinfo writes it (an IPv6 zone, `fe80::1%eth0`, dropped)."""
    return ipaddress.ip_address(text.partition("%")[0])


class Deadline:
    """The moment the current attempt must end (None: no attempt under way)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.ends_at: float | None = None
        self.seconds = 0.0

    @contextmanager
    def of(self, seconds: float) -> Iterator[None]:
        self.ends_at, self.seconds = self.clock() + seconds, seconds
        try:
            yield
        finally:
            self.ends_at = None

    def cap(self, timeout: float | None, expired: type[Exception]) -> float | None:
        """`timeout` cut to what is left; raises `expired` once nothing is."""
        if self.ends_at is None:
            return timeout
        left = self.ends_at - self.clock()
        if left <= 0:
            raise expired(f"the attempt's {self.seconds:g} s are up")
        return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    """A connection whose every read, write and TLS handshake ends by the deadline."""

    def __init__(self, inner: httpcore.NetworkStream, deadline: Deadline) -> None:
        self.inner, self.deadline = inner, deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self.inner.read(max_bytes, self.deadline.cap(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.inner.write(buffer, self.deadline.cap(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self.inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        tls = self.inner.start_tls(ssl_context, server_hostname,
                                   self.deadline.cap(timeout, httpcore.ConnectTimeout))
        return _Stream(tls, self.deadline)

    def get_extra_info(self, info: str) -> Any:
        return self.inner.get_extra_info(info)


Resolver = Callable[[str, int], list[str]]


def resolve(host: str, port: int) -> list[str]:
    """The addresses `host` resolves to, in the order to try them."""
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in found))


class Guard(httpcore.NetworkBackend):
    """Connects only to addresses a source may reach, and only until the attempt's deadline."""

    def __init__(self, allow_private: bool = False, resolver: Resolver = resolve,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.allow_private = allow_private
        self.resolver = resolver
        self.deadline = Deadline(clock)
        self.inner = httpcore.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        addresses = self._lookup(host, port, timeout)
        if not self.allow_private:
            for text in addresses:
                problem = address_problem(parse_address(text))
                if problem:
                    where = text if text == host.strip("[]") else f"{host} resolves to {text}"
                    raise Refused(f"{where}, {problem}; a remote source may reach only public "
                                  f"addresses ({HOW_TO_ALLOW})")
        error: Exception = httpcore.ConnectError(f"{host} has no address")
        for text in addresses:  # the checked addresses themselves, never the name again
            try:
                stream = self.inner.connect_tcp(
                    text, port, self.deadline.cap(timeout, httpcore.ConnectTimeout),
                    local_address, socket_options)
            except httpcore.ConnectError as exc:
                error = exc
                continue
            return _Stream(stream, self.deadline)
        raise error

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None
                            ) -> httpcore.NetworkStream:
        raise Refused("a remote source is fetched over TCP only")

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)

    def _lookup(self, host: str, port: int, timeout: float | None) -> list[str]:
        """Resolve in a helper thread, so a slow resolver cannot outlast the deadline (the
        thread is left to finish on its own)."""
        wait = self.deadline.cap(timeout, httpcore.ConnectTimeout)
        found: list[list[str] | Exception] = []

        def work() -> None:
            try:
                found.append(self.resolver(host.strip("[]"), port))
            except (OSError, UnicodeError) as exc:
                found.append(exc)

        worker = threading.Thread(target=work, name=f"resolve {host}", daemon=True)
        worker.start()
        worker.join(wait)
        if not found:
            raise httpcore.ConnectTimeout(f"looking up {host} took too long")
        if isinstance(found[0], Exception):
            raise httpcore.ConnectError(f"cannot resolve {host} ({found[0]})")
        return found[0]


class _Transport(httpx.HTTPTransport):
    def __init__(self, guard: Guard) -> None:
        super().__init__()
        # httpx takes no network backend; its pool does. Same TLS context (certificates from
        # SSL_CERT_FILE / SSL_CERT_DIR as httpx reads them), our backend.
        self._pool = httpcore.ConnectionPool(ssl_context=httpx.create_ssl_context(),
                                             network_backend=guard)


def guarded_client(guard: Guard, timeout: float, headers: dict[str, str]) -> httpx.Client:
    """A client whose every connection goes through `guard`: redirects are left to the caller
    (each hop's scheme is checked there), proxies from the environment are not used (they
    would connect on our behalf, past the guard)."""
    return httpx.Client(transport=_Transport(guard), timeout=timeout, headers=headers,
                        follow_redirects=False, trust_env=False)
