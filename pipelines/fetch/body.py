"""A remote response body, decoded in bounded pieces: a gzip bomb never unpacks in memory.

httpx decompresses each received chunk whole, so 64 KiB of gzip can become 64 MiB at once; here
the raw bytes are inflated at most `PIECE_BYTES` at a time, and the caller counts the decoded
bytes as they come and stops as soon as they pass its limit.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator

from pipelines.fetch.guard import Refused

PIECE_BYTES = 64 * 1024
ACCEPT_ENCODING = "gzip, deflate"   # what we ask for; anything else sent anyway is refused
_WBITS = {"gzip": zlib.MAX_WBITS | 16, "x-gzip": zlib.MAX_WBITS | 16, "deflate": zlib.MAX_WBITS}


class Incomplete(Exception):
    """The compressed stream stopped before its end (a truncated body: worth a retry)."""


def content_codings(header: str | None) -> list[str]:
    """The Content-Encoding header's codings, in the order they were applied."""
    codings = [c.strip().lower() for c in (header or "").split(",") if c.strip()]
    codings = [c for c in codings if c != "identity"]
    for coding in codings:
        if coding not in _WBITS:
            raise Refused(f"the body is sent with Content-Encoding {coding!r}; only gzip and "
                          "deflate are read")
    return codings


def decoded(raw: Iterable[bytes], codings: list[str]) -> Iterator[bytes]:
    """The body as the file it stands for: every coding undone, last applied first, in
    pieces of at most PIECE_BYTES (raw chunks pass as they are when nothing is coded)."""
    pieces: Iterable[bytes] = raw
    for coding in reversed(codings):
        pieces = _inflate(pieces, coding)
    return iter(pieces)


def _inflate(chunks: Iterable[bytes], coding: str) -> Iterator[bytes]:
    inflater: zlib._Decompress | None = None
    for chunk in chunks:
        data, more = chunk, False
        while data or more:
            if inflater is None or inflater.eof:
                if inflater is not None and coding == "deflate":
                    raise Refused("the body has bytes after its deflate stream")
                inflater = _inflater(coding, data)  # gzip: the next member counts as well
            try:
                piece = inflater.decompress(data, PIECE_BYTES)
            except zlib.error as exc:
                raise Refused(f"the body is not valid {coding} ({exc})") from exc
            rest = inflater.unused_data if inflater.eof else inflater.unconsumed_tail
            if not piece and rest == data:  # no progress: never loop on it
                raise Refused(f"the body is not valid {coding}")
            # A full piece may leave output inside zlib even when all input is taken.
            data, more = rest, len(piece) == PIECE_BYTES and not inflater.eof
            if piece:
                yield piece
    if inflater is not None and not inflater.eof:
        raise Incomplete(f"the {coding} stream ends early")


def _inflater(coding: str, first: bytes) -> zlib._Decompress:
    """`deflate` is meant zlib-wrapped, yet some servers send it raw (as browsers accept)."""
    wrapped = len(first) < 2 or (first[0] & 0x0F == 8 and (first[0] << 8 | first[1]) % 31 == 0)
    wbits = _WBITS[coding] if coding != "deflate" or wrapped else -zlib.MAX_WBITS
    return zlib.decompressobj(wbits)
