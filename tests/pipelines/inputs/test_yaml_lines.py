"""The bounded YAML reader: lines without internal keys, data-file scalars, refusals by line."""

import time

import pytest

from pipelines.inputs.limits import InputLimits
from pipelines.inputs.yaml_lines import YamlError, YamlList, YamlMap, load_yaml

BILLION_LAUGHS = "\n".join(
    ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    + [f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 9)}]" for i in range(8)]
)


def test_mappings_and_lists_know_their_lines_and_hold_only_the_data():
    document = load_yaml("source: {key: s}\nobservations:\n  - {item: a, value: 1}\n  - 42\n")
    rows = document["observations"]
    assert isinstance(document, YamlMap) and isinstance(rows, YamlList)
    assert rows.item_lines == [3, 4]
    assert rows[0].line == 3 and rows[0] == {"item": "a", "value": 1}
    assert document.key_line("observations") == 2
    assert "__line__" not in str(document)


def test_plain_scalars_are_data_file_values_and_everything_else_stays_text():
    # Floats need a point and a signed exponent (YAML 1.1, as PyYAML reads them): "1.5e3" and
    # "300e9" stay as written, which keeps what a file wrote and the hashes of what it said.
    document = load_yaml(
        "a: 2024-02-30\nb: 0x2BC\nc: 7_00\nd: 1" + "0" * 400 + "\ne: 2024-01-01 10:00:00\n"
        "f: 1e400\ng: '12'\nh: yes\ni: 1.5e3\nj: -7\nk: ~\nl: true\nm: .nan\nn: 1.5e+3\n")
    assert document["a"] == "2024-02-30" and document["b"] == "0x2BC" and document["c"] == "7_00"
    assert document["d"] == "1" + "0" * 400 and document["f"] == "1e400"
    assert document["e"] == "2024-01-01 10:00:00" and document["g"] == "12"
    assert document["h"] == "yes" and document["i"] == "1.5e3" and document["j"] == -7
    assert document["k"] is None and document["l"] is True and document["m"] != document["m"]
    assert document["n"] == 1500.0


def test_an_alias_bomb_is_refused_at_its_line_quickly():
    started = time.perf_counter()
    with pytest.raises(YamlError) as refused:
        load_yaml(BILLION_LAUGHS)
    assert time.perf_counter() - started < 2
    assert "SPECLEDGER_YAML_MAX_ALIAS_NODES" in refused.value.reason
    assert refused.value.line is not None and refused.value.line <= 9


def test_a_few_aliases_and_merge_keys_still_work():
    document = load_yaml("base: &b {unit: W, status: C}\nrow: {<<: *b, value: 3, unit: kW}\n")
    assert document["row"] == {"unit": "kW", "status": "C", "value": 3}


def test_deep_nesting_is_refused_without_recursion():
    with pytest.raises(YamlError, match="SPECLEDGER_YAML_MAX_DEPTH") as refused:
        load_yaml("[" * 100_000)
    assert refused.value.line == 1
    assert load_yaml("[" * 10 + "]" * 10, InputLimits(yaml_max_depth=10)) == [[[[[[[[[[]]]]]]]]]]


def test_a_key_written_twice_is_recorded_not_silently_overwritten():
    row = load_yaml("{value: 1,\n value: 2}")
    assert row == {"value": 1} and row.duplicates == [("value", 2)]


@pytest.mark.parametrize(("text", "reason"), [
    ("a: 1\n---\nb: 2\n", "more than one YAML document"),
    ("x: *nope\n", "refers to no anchor"),
    ("!!python/object:os.system x\n", "unsupported YAML tag"),
    ("a: [1, 2\n", "malformed YAML"),
])
def test_unreadable_text_says_why(text, reason):
    with pytest.raises(YamlError, match=reason):
        load_yaml(text)


def test_a_scenario_style_reader_gets_the_line_of_every_key():
    from pipelines.inputs.yaml_lines import LINES, with_line_maps

    mapped = with_line_maps(load_yaml("name: x\nmodel:\n  layers: 2\n  hidden: 8\n"))
    assert mapped[LINES] == {"name": 1, "model": 2, "": 1}
    assert mapped["model"][LINES] == {"layers": 3, "hidden": 4, "": 3}
    assert mapped["model"]["layers"] == 2
