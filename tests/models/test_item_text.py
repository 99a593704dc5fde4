"""What an item's key and name may hold: composed (NFC), and nothing that prints as nothing or
reverses the text after it."""

from __future__ import annotations

from models.item_text import hidden_characters, normal, shown_escaped, text_problem


def test_two_spellings_of_one_letter_are_one_key():
    assert normal("gb200-caf\u0065\u0301") == normal("gb200-caf\u00e9") == "gb200-caf\u00e9"


def test_invisible_bidirectional_and_control_characters_are_named():
    assert hidden_characters("h100\u200b-sxm5") == ["U+200B ZERO WIDTH SPACE"]
    assert hidden_characters("\u202eNVL72") == ["U+202E RIGHT-TO-LEFT OVERRIDE"]
    assert hidden_characters("a\u00adb\ufeff") == ["U+00AD SOFT HYPHEN",
                                                  "U+FEFF ZERO WIDTH NO-BREAK SPACE"]
    assert hidden_characters("line\nbreak") == ["U+000A control character"]
    assert hidden_characters("H100 SXM5 80 GB (Hopper) — 700 W") == []


def test_the_reason_shows_where_the_hidden_character_is():
    said = text_problem("h100\u200b-sxm5", "item key")
    assert said is not None and said.startswith("item key 'h100\\u200b-sxm5' holds U+200B")
    assert "bidirectional" in text_problem("x\u202ey", "item name")
    assert text_problem("h100-sxm5", "item key") is None
    assert shown_escaped("a\u2066b") == "'a\\u2066b'"
