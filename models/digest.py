"""Content digests: one per observation, and an order-free digest of a set of them.

The dataset digest is the sum of the observations' sha256 values modulo 2^256 (a multiset
hash): adding or removing an observation adds or subtracts its digest, so a new dataset
version costs O(changes), not O(ledger), and the same facts give the same digest whatever
their ids, timestamps, insertion order or database dialect.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import date
from typing import Any

_MODULUS = 1 << 256
EMPTY_DIGEST = f"{0:064x}"


def _canonical(value: Any) -> str:
    if value.__class__ is str:
        return value
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return value.isoformat() if isinstance(value, date) else str(value)


# _canonical of the usual types, as the types' own methods (a C call, not a Python one: a
# 100k-offer list has 700,000 values that are not text). Exact classes only: a subclass
# (datetime, bool) goes through _canonical.
_CANONICAL_OF: dict[type, Any] = {float: float.__repr__, int: int.__str__,
                                  date: date.isoformat, type(None): lambda _: ""}


def observation_digest(fields: Iterable[Any]) -> str:
    """sha256 of an observation's identifying and content fields, in a fixed order."""
    # Text as itself without a call: most fields, 2.2 million values in a 100k-offer list.
    canonical = _CANONICAL_OF.get
    text = "\x1f".join([value if value.__class__ is str
                        else canonical(value.__class__, _canonical)(value)
                        for value in fields])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def combine(digest: str, added: Iterable[str] = (), removed: Iterable[str] = ()) -> str:
    """The set digest after adding and removing observation digests."""
    total = int(digest, 16)
    total += sum(int(d, 16) for d in added)
    total -= sum(int(d, 16) for d in removed)
    return f"{total % _MODULUS:064x}"
