"""Progress by stage on a terminal: a spinner naming the stage running now and, as each one
ends, a line with how long it took, all on standard error. Piped, redirected or with --json,
nothing: standard output keeps what the command prints, standard error its errors alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.status import Status
from rich.text import Text

OnStage = Callable[[str], None]


class Unwatched:
    """The stages of a command nobody watches (piped, or --json): nothing is shown."""

    def __call__(self, stage: str, spinner: bool = True) -> None:
        """Start `stage`: nothing to show."""

    def close(self, failed: bool = False) -> None:
        """End the stage running now: nothing to show."""


class StageLines:
    """The stages of one command under `title`: calling it with a stage's name ends the
    stage before (its line printed) and shows the new one (without the spinner when the
    stage shows its own progress bar); `close` ends the last."""

    def __init__(self, console: Console, title: str) -> None:
        self.console, self.title = console, title
        self.stage: str | None = None
        self.started = 0.0
        self.status: Status | None = None

    def __call__(self, stage: str, spinner: bool = True) -> None:
        self.close()
        self.stage, self.started = stage, time.perf_counter()
        if spinner:
            self.status = Status(Text(f"{self.title}: {stage}…"), console=self.console)
            self.status.start()

    def close(self, failed: bool = False) -> None:
        """End the stage running now: ✓ and its seconds, or ✗ when it `failed`."""
        if self.status is not None:
            self.status.stop()
            self.status = None
        if self.stage is not None:
            seconds = time.perf_counter() - self.started
            mark = ("✗ ", "red") if failed else ("✓ ", "green")
            self.console.print(Text.assemble(mark, f"{self.title}: {self.stage}",
                                             (f" {seconds:.2f} s", "dim")))
            self.stage = None


def stage_console() -> Console:
    """Standard error as it is now (a test or a caller may have replaced sys.stderr), read
    as written (no markup)."""
    return Console(stderr=True, markup=False, emoji=False, highlight=False)


@contextmanager
def stages(title: str, *, quiet: bool = False) -> Iterator[StageLines | Unwatched]:
    """Yield the callback that starts each stage of `title`; a no-op when `quiet` (--json)
    or when standard error is not a terminal."""
    console = stage_console()
    if quiet or not console.is_terminal:
        yield Unwatched()
        return
    lines = StageLines(console, title)
    try:
        yield lines
    except BaseException:
        lines.close(failed=True)
        raise
    lines.close()


def watched(quiet: bool = False) -> bool:
    """Whether progress would show: standard error is a terminal and the command is not
    printing JSON."""
    return not quiet and stage_console().is_terminal
