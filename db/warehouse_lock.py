"""The lock that serialises publishers of one warehouse file: an OS file lock (flock) on
`<warehouse>.lock` beside it, held while a publisher builds, checks and swaps in its file.

The lock file names its holder while it is held and is removed before the lock is released, so
an idle home has no lock file. A waiter that gets the lock on a file already removed (its
holder finished meanwhile) tries again on the path's current file: flock locks an inode, not a
name. A killed holder's lock is released by the kernel; its file stays and is reused.
"""

from __future__ import annotations

import fcntl
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

POLL_SECONDS = 0.05  # how often a waiter tries the lock again


@dataclass(frozen=True)
class PublishWait:
    """How a publisher got the warehouse's lock: at once, or after waiting for `holder`."""

    waited: bool
    seconds: float
    holder: str | None = None  # who held it when we asked, as its lock file says

    def describe(self) -> str:
        who = self.holder or "another publisher"
        return f"waited {self.seconds:.1f} s for {who} to finish publishing the warehouse"


class WarehouseBusyError(OSError):
    """Another publisher held the warehouse's lock for longer than we were willing to wait."""


def lock_path(target: Path) -> Path:
    return target.with_name(target.name + ".lock")


def holder_name() -> str:
    """How this process appears to a publisher waiting for it."""
    return f"specledger pid {os.getpid()} on {socket.gethostname()}"


@contextmanager
def publish_lock(target: Path, timeout_seconds: float) -> Iterator[PublishWait]:
    """Hold the lock of the warehouse at `target` (its folder must exist), waiting up to
    `timeout_seconds` for another publisher; yields how long it waited.

    Raises:
        WarehouseBusyError: the lock stayed held for longer than `timeout_seconds`.
    """
    path = lock_path(target)
    started = time.monotonic()
    waited, holder = False, None
    fd = _open(path)
    try:
        # The file stays open while waiting: `fuser` (or /proc) shows who queues on it.
        while True:
            if _try_lock(fd):
                if _still_named(fd, path):
                    break
                os.close(fd)  # its holder removed this file meanwhile: take the new one
                fd = _open(path)
                continue
            waited, holder = True, holder or _read_holder(fd)
            if time.monotonic() - started >= timeout_seconds:
                raise WarehouseBusyError(
                    0, f"was being published by {holder or 'another publisher'} for more "
                       f"than {timeout_seconds:g} s; try again when it has finished",
                    str(target))
            time.sleep(POLL_SECONDS)
    except BaseException:
        os.close(fd)
        raise
    seconds = time.monotonic() - started
    try:
        _write_holder(fd)
        yield PublishWait(waited, seconds, holder)
    finally:
        # Removed while still held: a waiter that then gets this inode sees it is gone.
        path.unlink(missing_ok=True)
        os.close(fd)  # closing releases the flock


def _open(path: Path) -> int:
    return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)


def _try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _still_named(fd: int, path: Path) -> bool:
    """Whether the locked file is still the one at `path` (not removed by its last holder)."""
    try:
        named = path.stat()
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)


def _write_holder(fd: int) -> None:
    """Name this process in the lock file; a full disk only costs waiters the name."""
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, holder_name().encode(), 0)
    except OSError:
        pass


def _read_holder(fd: int) -> str | None:
    try:
        return os.pread(fd, 200, 0).decode(errors="replace").strip() or None
    except OSError:
        return None
