import pytest

from pipelines.inputs.packs import PackError, parse_pack


def test_yaml_rows_carry_their_line_and_their_source():
    pack = parse_pack("p.yaml", b"""source: {key: s, title: S, kind: dataset}
items:
  - {key: a, name: A, kind: gpu}
observations:
  - {item: a, metric: tdp, value: 700, unit: W, as_of: 2022-03-22, status: C}
  - item: a
    metric: gpu_price
    value: 33600
""")
    assert [r.line for r in pack.rows] == [5, 6]
    assert {r.fields["source"] for r in pack.rows} == {"s"}
    assert pack.items[0].kind == "gpu"


def test_csv_rows_declare_sources_and_items_and_keep_their_physical_line():
    pack = parse_pack("p.csv", (
        b"source,source_title,source_kind,item,item_kind,metric,value,unit,as_of,status,quote\n"
        b"s,S,dataset,a,gpu,tdp,700,W,2022-03-22,C,\"two\nlines\"\n"
        b"s,,,a,,gpu_price,33600,USD,2023-05,S,\n"))
    assert [r.line for r in pack.rows] == [2, 4]
    assert [s.key for s in pack.sources] == ["s"]
    assert pack.rows[0].fields["quote"] == "two\nlines"


@pytest.mark.parametrize(("name", "data", "line", "reason"), [
    ("p.yaml", b"", None, "empty file"),
    ("p.yaml", b"   \n\n", None, "empty file"),
    ("p.yaml", b"source: {key: s\nobservations: [", 2, "malformed YAML"),
    ("p.yaml", b"- just\n- a list\n", 1, "expected a mapping"),
    ("p.yaml", b"source: {key: s}\n# caf\xe9\n", 2, "not UTF-8 text: byte 0xe9 at line 2"),
    ("p.csv", b"item,value\na,1\n", 1, "lacks required column(s): source, metric, unit, as_of"),
    ("p.txt", b"hello", None, "unsupported file type '.txt'"),
])
def test_unreadable_files_are_rejected_whole_with_the_line(name, data, line, reason):
    with pytest.raises(PackError) as raised:
        parse_pack(name, data)
    assert raised.value.line == line
    assert reason in raised.value.reason


def test_a_garbled_csv_row_is_kept_as_a_malformed_row_not_dropped():
    pack = parse_pack("p.csv", b"source,item,metric,value,unit,as_of,status\n"
                               b"s,a,tdp,700,W,2022-03-22,C\ns,a,tdp\n")
    assert pack.rows[1].fields == {"__malformed__": "expected 7 fields, got 3"}
    assert pack.rows[1].raw_text == "s,a,tdp"


def test_an_invalid_source_declaration_is_remembered_for_its_rows():
    pack = parse_pack("p.yaml", b"source: {key: s, title: S, kind: blog}\n"
                                b"observations:\n  - {item: a}\n")
    assert "kind 'blog' is not one of" in pack.invalid_sources["s"].reason
