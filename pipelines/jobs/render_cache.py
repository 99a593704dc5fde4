"""Briefings kept by what they were laid out from, so that a run which would lay out the same
documents again reuses their bytes instead (the appendix's layout is most of a repeat run).

The key is the digest of both documents' HTML and of everything else their PDFs depend on
(reports.briefing.layout_digest: the template folder's files, the layout libraries'
versions). WeasyPrint writes the same bytes for the same input, which `specledger report`
checks by rendering a past briefing again (it never reads this cache): equal keys, equal
bytes. An entry is its two PDFs and a record of their sha256 and page count; an entry whose
files do not match its record is ignored and laid out again. The newest KEEP entries stay.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from reports.briefing import RenderedPdf

KEEP: Final = 4
FOLDER: Final = "render-cache"


@dataclass(frozen=True)
class Entry:
    main: RenderedPdf
    appendix: bytes


def render_key(htmls: Sequence[str], layout: str) -> str:
    """The key of documents laid out from `htmls` with `layout` (their layout digest)."""
    digest = hashlib.sha256(layout.encode())
    for html in htmls:
        encoded = html.encode()
        digest.update(len(encoded).to_bytes(8, "big") + encoded)
    return digest.hexdigest()


def read_entry(folder: Path, key: str) -> Entry | None:
    """The documents kept under `key`, or None (none kept, or files that do not match)."""
    try:
        record = json.loads((folder / f"{key}.json").read_text(encoding="utf-8"))
        main = (folder / f"{key}.pdf").read_bytes()
        appendix = (folder / f"{key}-appendix.pdf").read_bytes()
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("main") != _sha(main) \
            or record.get("appendix") != _sha(appendix) or not isinstance(record.get("pages"),
                                                                       int):
        return None
    return Entry(RenderedPdf(main, record["pages"]), appendix)


def keep_entry(folder: Path, key: str, entry: Entry) -> None:
    """Keep the documents under `key` (the record last, so a half-written entry is never
    read), then drop all but the newest KEEP entries. A cache that cannot be written is no
    error: the run has its documents."""
    files = [folder / f"{key}{suffix}" for suffix in (".json", ".pdf", "-appendix.pdf")]
    try:
        folder.mkdir(parents=True, exist_ok=True)
        _write(folder / f"{key}.pdf", entry.main.pdf)
        _write(folder / f"{key}-appendix.pdf", entry.appendix)
        _write(folder / f"{key}.json", json.dumps(
            {"main": _sha(entry.main.pdf), "appendix": _sha(entry.appendix),
             "pages": entry.main.pages}).encode())
        records = sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in records[KEEP:]:
            stem = old.stem
            for path in (old, folder / f"{stem}.pdf", folder / f"{stem}-appendix.pdf"):
                path.unlink(missing_ok=True)
    except OSError:
        # Nothing of the entry stays (a full disk): the home holds what it held.
        for path in files:
            try:
                path.unlink(missing_ok=True)
            except OSError:
                pass


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _write(path: Path, data: bytes) -> None:
    """`data` at `path`, whole or not at all (a full disk leaves no partial file behind)."""
    partial = path.with_name(f".{path.name}.partial")
    try:
        partial.write_bytes(data)
        os.replace(partial, path)
    except OSError:
        partial.unlink(missing_ok=True)
        raise
