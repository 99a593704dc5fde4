"""What an item's key and name may hold: text that prints as what it is.

A key is compared byte for byte, so two spellings of one letter (a precomposed é and an e with
a combining accent) would be two items: keys are NFC-normalised. A character that prints as
nothing (a zero-width space, a soft hyphen, a byte-order mark: Unicode's format characters,
Cf) would make a second item that prints as the first; a bidirectional control (U+202E
RIGHT-TO-LEFT OVERRIDE, the isolates, the marks: Cf too) prints the text after it reversed;
a control character (Cc, line and paragraph separators) breaks the line it is printed on.
All are refused, named by code point.
"""

from __future__ import annotations

import unicodedata

HIDDEN_CATEGORIES = ("Cc", "Cf", "Zl", "Zp")  # control, format, line/paragraph separator
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
                          "\u2066\u2067\u2068\u2069")


def normal(text: str) -> str:
    """`text` in Unicode's composed form (NFC): one spelling per key."""
    return unicodedata.normalize("NFC", text)


def hidden_characters(text: str) -> list[str]:
    """The characters of `text` that do not print as themselves, each as
    `U+200B ZERO WIDTH SPACE`, in order of first appearance."""
    if text.isascii() and text.isprintable():
        return []  # no Cf, Zl or Zp in ASCII, and isprintable() is False on its controls (Cc)
    found: list[str] = []
    for char in text:
        if unicodedata.category(char) in HIDDEN_CATEGORIES or char in BIDI_CONTROLS:
            said = f"U+{ord(char):04X} {unicodedata.name(char, 'control character')}"
            if said not in found:
                found.append(said)
    return found


def shown_escaped(text: str) -> str:
    """`text` quoted with its hidden characters as \\u escapes, so an error shows them."""
    return "'" + "".join(f"\\u{ord(c):04x}" if hidden_characters(c) else c
                         for c in text) + "'"


def text_problem(text: str, what: str) -> str | None:
    """Why `text` cannot be an item's key or name (`what`), or None."""
    hidden = hidden_characters(text)
    if not hidden:
        return None
    kinds = ("a bidirectional control" if any(c in BIDI_CONTROLS for c in text)
             else "an invisible or control character")
    return (f"{what} {shown_escaped(text)} holds {', '.join(hidden)} ({kinds}: it would "
            "print as another item's text or reversed); write it without")
