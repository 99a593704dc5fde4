"""CSV records with their first line; damage stays on the line where it starts."""

from pipelines.inputs.csv_records import CsvDamage, csv_records


def test_an_unterminated_quote_damages_one_line_and_the_rows_after_it_are_read():
    text = 'a,b\n1,"open\n2,x\n3,y\n'
    records = list(csv_records(text))
    assert [(line, values) for line, _, values in records if not isinstance(values, CsvDamage)] \
        == [(1, ["a", "b"]), (3, ["2", "x"]), (4, ["3", "y"])]
    damaged = [(line, raw) for line, raw, values in records if isinstance(values, CsvDamage)]
    assert damaged == [(2, '1,"open')]
    assert "unterminated quote" in records[1][2].reason


def test_a_quoted_field_may_span_lines_and_counts_as_one_record():
    records = list(csv_records('a,b\n"two\nlines",x\n3,y\r\n'))
    assert [(line, values) for line, _, values in records] == [
        (1, ["a", "b"]), (2, ["two\nlines", "x"]), (4, ["3", "y"])]
    assert records[1][1] == '"two\nlines",x'


def test_text_after_a_closing_quote_is_damage_not_a_silent_merge():
    records = list(csv_records('a,b\n"x"y,1\n2,3\n'))
    assert isinstance(records[1][2], CsvDamage) and records[1][0] == 2
    assert records[2][:3:2] == (3, ["2", "3"])


def test_every_line_lands_in_exactly_one_record():
    text = 'h\n"a\n"b"c\nd\n"e\n'
    lines = [line for line, _, _ in csv_records(text)]
    assert lines == sorted(set(lines)) and set(lines) == {1, 2, 3, 4, 5}
