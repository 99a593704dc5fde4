"""gpuhunt's published catalog layout, as the fetch reads it: `{base}/{provider}/version` names
the newest version, `{base}/{provider}/{version}/catalog.zip` holds it (gpuhunt 0.1.34,
gpuhunt/_internal/catalog.py). Pure helpers; the GETs are pipelines/fetch/remote.py's."""

from __future__ import annotations

import re
from datetime import date
from email.utils import parsedate_to_datetime

# A version names a folder: short, printable, no path separators (gpuhunt's are YYYYMMDD).
_VERSION = re.compile(r"[A-Za-z0-9._-]{1,64}")
_DAY = re.compile(r"(\d{4})(\d{2})(\d{2})")


def version_url(folder: str) -> str:
    return f"{folder.rstrip('/')}/version"


def catalog_url(folder: str, version: str) -> str:
    return f"{folder.rstrip('/')}/{version}/catalog.zip"


def parse_version(body: bytes) -> str:
    """The version a `version` file names; ValueError saying why when it names none."""
    text = body.decode("utf-8", errors="replace").strip()
    if not _VERSION.fullmatch(text):
        shown = text[:80] + ("…" if len(text) > 80 else "")
        raise ValueError(f"the version file does not name a version ({shown!r})")
    return text


def publication_date(version: str, last_modified: str | None) -> date | None:
    """When the catalog was published: its version when that is a date (20261130), else the
    archive's Last-Modified; None when neither says (the fetch's own date never stands in)."""
    day = _DAY.fullmatch(version)
    if day:
        try:
            return date(*map(int, day.groups()))
        except ValueError:
            pass
    if last_modified:
        try:
            return parsedate_to_datetime(last_modified).date()
        except (TypeError, ValueError, IndexError):
            return None
    return None
