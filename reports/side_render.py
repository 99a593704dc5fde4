"""A document rendered in a forked child while the parent renders another: the briefing's
appendix takes three times its main document's layout, and the two are independent, so on a
machine with a second core the pair costs the appendix's time instead of both.

The child only lays out and writes PDF bytes to a pipe, then leaves with os._exit (no
atexit handlers, no flushing of the parent's buffers). Any failure there, or a platform
without fork, falls back to rendering in the calling process, which then raises what the
child would have met.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from reports.briefing import render
from reports.context import BriefingContext

_CHUNK = 1 << 16


def appendix_beside(context: BriefingContext, html: str | None = None) -> Callable[[], bytes]:
    """Start the appendix's render (from its `html` when given); the returned function waits
    for its PDF bytes."""
    if not hasattr(os, "fork") or os.cpu_count() == 1:
        return lambda: render(context, document="appendix", html=html).pdf
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: render, hand the bytes over, leave without cleanup
        status = 1
        try:
            os.close(read_end)
            pdf = render(context, document="appendix", html=html).pdf
            view = memoryview(pdf)
            while view:
                view = view[os.write(write_end, view):]
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)

    def collect() -> bytes:
        chunks = []
        with os.fdopen(read_end, "rb") as pipe:
            while chunk := pipe.read(_CHUNK):
                chunks.append(chunk)
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            return render(context, document="appendix", html=html).pdf
        return b"".join(chunks)

    return collect
