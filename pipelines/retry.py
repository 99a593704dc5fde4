"""One retry loop for whatever talks to the outside world: remote fetches and deliveries.

An action is called until its result is good, its retries are spent, or the other side asks
for a longer wait than `Backoff.cap_seconds` allows. The waits double from a base (settings),
each at most the cap, and are taken through an injected `sleep`, so a test runs the whole loop
without waiting and sees every wait. Results, not exceptions, drive it: an action that raises
is wrapped by its caller, which decides what its failure says. (Prefect's task retries are
another thing: a flow re-running a whole step after a lost database connection.)
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")

BACKOFF_CAP_SECONDS = 60.0  # no wait between two attempts is longer, a server's request included


def backoff_delays(retries: int, base: float, cap: float = BACKOFF_CAP_SECONDS) -> list[float]:
    """The wait before each retry: base, 2 x base, 4 x base, ... each at most `cap`."""
    return [min(base * 2**n, cap) for n in range(max(retries, 0))]


@dataclass(frozen=True)
class Backoff:
    """`retries` more attempts after a failed first one, waiting by `backoff_delays`."""

    retries: int
    base_seconds: float
    cap_seconds: float = BACKOFF_CAP_SECONDS

    def delays(self) -> list[float]:
        return backoff_delays(self.retries, self.base_seconds, self.cap_seconds)


@dataclass(frozen=True)
class Tried(Generic[T]):
    """The last attempt's result and how many attempts were made."""

    last: T
    attempts: int
    # The wait the last result asked for when it passed the cap: why retrying stopped early.
    refused_wait: float | None = None


def _no_wait_asked(_result: object) -> float | None:
    return None


def _nothing(_result: object, _number: int, _wait: float) -> None:
    return None


def with_retries(action: Callable[[], T], backoff: Backoff, *,
                 failed: Callable[[T], bool],
                 asked_wait: Callable[[T], float | None] = _no_wait_asked,
                 before_retry: Callable[[T, int, float], None] = _nothing,
                 sleep: Callable[[float], None] = time.sleep) -> Tried[T]:
    """Call `action` until a result is not `failed`, or `backoff.retries` retries are spent.

    Before retry n the wait is the n-th backoff delay, or longer if the failed result asks for
    more (`asked_wait`, e.g. a Retry-After); a result asking for more than the cap ends the loop
    at once. `before_retry(result, attempt number, wait)` sees each failure that is retried
    (to log it) just before the wait.
    """
    delays = backoff.delays()
    number = 0
    while True:
        result = action()
        number += 1
        if not failed(result) or number > len(delays):
            return Tried(result, number)
        wait = delays[number - 1]
        asked = asked_wait(result)
        if asked is not None:
            if asked > backoff.cap_seconds:
                return Tried(result, number, refused_wait=asked)
            wait = max(wait, asked)
        before_retry(result, number, wait)
        sleep(wait)
