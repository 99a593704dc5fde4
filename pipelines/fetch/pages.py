"""Paged APIs: a first page that links the next one (Azure's Retail Prices API ends each page
with `NextPageLink`). The pages are fetched with the source's own fetcher (its guard, deadline
and byte limit) and kept as one JSON array of pages, so the ingest sees the whole price list
at once. A page that cannot be fetched fails the whole source: half a price list would read as
prices that vanished.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from pipelines.fetch.attempt import Attempt

NEXT_LINK = "NextPageLink"


def follow_next_links(get: Callable[[str], tuple[Attempt, int]], url: str, first: Attempt, *,
                      spool: Path, max_bytes: int, max_pages: int) -> tuple[Attempt, int]:
    """The first page (fetched from `url`) and every page it links, each fetched by `get`
    (the source's own client, guard, deadline and retries), as one Attempt whose body is
    `[page, ...]` within `max_bytes`, with the number of GETs made. A failed page, a page
    that is not a JSON object, a loop or more than `max_pages` pages fail the whole fetch (its
    spooled pages are removed)."""
    assert first.body is not None
    pages, seen, gets = [first.body], {url}, 0
    try:
        link = _next_link(first.body)
        while link:
            if link in seen:
                return _failed(pages, f"page {len(pages)} links back to an earlier page"), gets
            if len(pages) >= max_pages:
                return _failed(pages, f"more than max_pages = {max_pages} pages"), gets
            seen.add(link)
            attempt, tries = get(link)
            gets += tries
            if attempt.status != 200 or attempt.body is None:
                reason = attempt.error or f"HTTP {attempt.status}"
                return _failed(pages, f"page {len(pages) + 1}: {reason}", attempt.status), gets
            pages.append(attempt.body)
            link = _next_link(attempt.body)
        return _joined(spool, max_bytes, pages, first), gets
    except _NotAPage as exc:
        return _failed(pages, str(exc)), gets


class _NotAPage(Exception):
    pass


def _next_link(page: Path) -> str | None:
    """The page's NextPageLink (None on the last page); the page was size-checked already."""
    try:
        document = json.loads(page.read_bytes())
    except (ValueError, UnicodeDecodeError) as exc:
        raise _NotAPage(f"a page is not JSON ({exc})") from exc
    if not isinstance(document, dict):
        raise _NotAPage("a page is not a JSON object")
    link = document.get(NEXT_LINK)
    return link if isinstance(link, str) and link.strip() else None


def _joined(spool: Path, max_bytes: int, pages: list[Path], first: Attempt) -> Attempt:
    """The pages written as one JSON array, within the byte limit."""
    digest, size = hashlib.sha256(), 0
    handle, name = tempfile.mkstemp(dir=spool, suffix=".part")
    path = Path(name)
    try:
        with os.fdopen(handle, "wb") as out:
            for n, page in enumerate(pages):
                piece = (b"[" if n == 0 else b",") + page.read_bytes()
                size += len(piece)
                if size + 1 > max_bytes:
                    path.unlink(missing_ok=True)
                    return _failed(pages, f"the pages passed {max_bytes} bytes, the "
                                          "limit SPECLEDGER_FETCH_MAX_BYTES sets")
                digest.update(piece)
                out.write(piece)
            out.write(b"]")
            digest.update(b"]")
            out.flush()
            os.fsync(out.fileno())
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    _remove(pages)
    return Attempt(200, path, digest.hexdigest(), size + 1, first.etag, first.last_modified)


def _failed(pages: list[Path], reason: str, status: int | None = None) -> Attempt:
    _remove(pages)
    return Attempt(status, error=f"paging: {reason}", final=True)


def _remove(pages: list[Path]) -> None:
    for page in pages:
        page.unlink(missing_ok=True)
