"""Mask credentials in text that may quote a database URL (error messages, logs).

A URL's password (`scheme://user:password@host/...`) becomes `***`; the passwords of URLs we
know (the configured ledger URL) are masked wherever they appear, in any form.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import quote

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError

MASK = "***"
# Shorter secrets are masked inside URLs only: masking every "a" would garble the message.
MIN_FREE_SECRET = 4
# The authority's password runs to the last "@" before the path, query or whitespace.
_URL_PASSWORD = re.compile(
    r"(?P<head>\b[a-z][a-z0-9+.\-]*://[^\s:/?#@]*):(?P<password>[^\s/?#]*)@", re.IGNORECASE)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with every URL password and every one of `secrets` replaced by ***."""
    for secret in sorted((s for s in secrets if len(s) >= MIN_FREE_SECRET), key=len,
                         reverse=True):
        text = text.replace(secret, MASK)
    return _URL_PASSWORD.sub(lambda m: f"{m['head']}:{MASK}@", text)


def secrets_of(url: str | None) -> list[str]:
    """The password in `url`, as written and percent-encoded (empty when it has none)."""
    if not url:
        return []
    try:
        password = make_url(url).password
    except (ArgumentError, ValueError):
        # Not parseable as a URL: mask what sits where a password would.
        match = _URL_PASSWORD.search(url)
        return [match["password"]] if match and match["password"] else []
    if not password:
        return []
    password = str(password)
    return sorted({password, quote(password, safe="")}, key=len, reverse=True)


def redact_url(url: str) -> str:
    """A URL safe to print: its password masked."""
    return redact(url, secrets_of(url))


def database_error(exc: BaseException) -> str | None:
    """What the database driver said, on one line, when `exc` is a database error (the SQL
    and SQLAlchemy's help link left out); None for any other exception."""
    if not isinstance(exc, DBAPIError):
        return None
    return f"{type(exc.orig).__name__}: {' '.join(str(exc.orig).split())}"
