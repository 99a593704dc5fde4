"""What one GET of a remote source came to (pipelines/fetch/remote.py makes them; paging joins
them, pipelines/fetch/pages.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Attempt:
    """What one GET came to: a status and maybe a body, or an error (status None: no response).
    `final` errors (a refusal) are never retried; the same request would be refused again."""

    status: int | None
    body: Path | None = None          # the decoded bytes, spooled to a file beside the cache
    sha256: str | None = None
    size_bytes: int | None = None
    etag: str | None = None
    last_modified: str | None = None
    retry_after: float | None = None
    error: str | None = None
    final: bool = False
    unreachable: bool = False         # no connection could be made (the host, not the file)
