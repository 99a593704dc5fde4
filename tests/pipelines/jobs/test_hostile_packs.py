"""Hostile and careless packs: one bad value is one rejected row, never a stopped ingest.

Each case ingests the bad file beside a good one, on SQLite and PostgreSQL alike, and checks
that the good file landed, that the bad value is a rejected row with its line and field, and
that rows read = accepted + unchanged + rejected.
"""

import time
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from sqlalchemy import func, select

from db.engine import Session
from db.schema import MeasurementRun, Observation, RejectedRow
from pipelines.inputs.limits import InputLimits
from tests.conftest import NVLINK_PACK
from tests.pipelines.inputs.test_yaml_lines import BILLION_LAUGHS
from tests.support.shared_data import fixture_path

PACK_HEAD = """
source: {key: careless, title: A careless pack, kind: analyst}
items:
  - {key: h100-sxm5, name: H100, kind: gpu}
observations:
  - {item: h100-sxm5, metric: tdp, value: 700, unit: W, as_of: 2023-03-21, status: C}
"""


def adds_up(report):
    return all(f.read == f.accepted + f.unchanged + f.rejected for f in report.files)


def errors_of(report, name):
    file = next(f for f in report.files if f.path.endswith(name))
    return [(e.line, e.field, e.reason) for e in file.errors]


@pytest.mark.parametrize(("written", "field", "reason"), [
    ("as_of: 2024-02-30", "as_of", "not a calendar date"),
    ("as_of: 0000-01-01", "as_of", "not a calendar date"),
    ("as_of: 2024-01-01 10:00:00", "as_of", "not a date"),
    ("as_of: 2024-01-01, value: 1" + "0" * 400, "value", "not a finite number"),
    ("as_of: 2024-01-01, value: 0x2BC", "value", "not a number"),
    ("as_of: 2024-01-01, value: 7_00", "value", "not a number"),
    ("as_of: 2024-01-01, value: {low: 1}", "value", "must be a number, got a mapping"),
    ("as_of: 2024-01-01, quote: \"a\\0b\"", "quote", "NUL character"),
])
def test_one_odd_value_in_a_yaml_pack_is_one_rejected_row(ledger, ingest, write_pack, written,
                                                          field, reason):
    row = "  - {item: h100-sxm5, metric: tdp, unit: W, status: C, " + (
        written if "value" in written else written + ", value: 700") + "}\n"
    bad = write_pack("bad.yaml", PACK_HEAD + row)
    report = ingest(write_pack("good.yaml", NVLINK_PACK), bad)
    assert adds_up(report)
    assert report.total("accepted") == 3  # two from good.yaml, the first row of bad.yaml
    [(line, rejected_field, rejected_reason)] = errors_of(report, "bad.yaml")
    assert (line, rejected_field) == (6, field) and reason in rejected_reason
    assert "__line__" not in rejected_reason and len(rejected_reason) < 200


def test_a_scalar_row_is_rejected_with_its_line(ledger, ingest, write_pack):
    report = ingest(write_pack("bad.yaml", PACK_HEAD + "  - 42\n"))
    assert errors_of(report, "bad.yaml") == [
        (6, "row", "malformed row: expected a mapping of fields, got 42")]


def test_a_field_written_twice_in_a_row_is_rejected(ledger, ingest, write_pack):
    row = "  - {item: h100-sxm5, metric: tdp, value: 1, value: 2, unit: W, as_of: 2024}\n"
    report = ingest(write_pack("bad.yaml", PACK_HEAD + row))
    [(line, field, reason)] = errors_of(report, "bad.yaml")
    assert (line, field) == (6, "row") and "`value` is written twice" in reason


def test_an_alias_bomb_is_a_rejected_file_and_the_rest_lands(ledger, ingest, write_pack):
    started = time.perf_counter()
    report = ingest(write_pack("good.yaml", NVLINK_PACK), write_pack("bomb.yaml", BILLION_LAUGHS))
    assert time.perf_counter() - started < 10
    bomb = next(f for f in report.files if f.path.endswith("bomb.yaml"))
    assert bomb.outcome == "rejected_file" and "alias bomb" in bomb.errors[0].reason
    assert report.total("accepted") == 2 and adds_up(report)


def test_an_unterminated_csv_quote_loses_no_row(ledger, ingest, write_pack):
    pack = write_pack("quote.csv", """\
        source,source_title,source_kind,item,item_name,item_kind,metric,value,unit,as_of,status,quote
        s,S,analyst,h100-sxm5,H100,gpu,tdp,700,W,2023-03-21,C,"never closed
        s,S,analyst,h100-sxm5,H100,gpu,tdp,710,W,2023-04-21,C,fine
        s,S,analyst,h100-sxm5,H100,gpu,tdp,720,W,2023-05-21,C,fine
        """)
    [file] = ingest(pack).files
    assert (file.read, file.accepted, file.rejected) == (3, 2, 1)
    assert file.errors[0].line == 2 and "unterminated quote" in file.errors[0].reason


def test_a_csv_header_naming_a_column_twice_is_a_rejected_file(ledger, ingest, write_pack):
    pack = write_pack("twice.csv", "source,item,metric,value,unit,as_of,value\n"
                                   "s,h100-sxm5,tdp,1,W,2024,2\n")
    [file] = ingest(pack).files
    assert file.outcome == "rejected_file" and "twice: value" in file.errors[0].reason


def test_a_file_beyond_the_size_limit_is_rejected_unread(ledger, ingest, write_pack):
    small = InputLimits(max_file_bytes=200)
    report = ingest(write_pack("good.yaml", NVLINK_PACK.replace("NVLink and", "NVLink &")),
                    limits=small)
    [file] = report.files
    assert file.outcome == "rejected_file" and "SPECLEDGER_MAX_FILE_BYTES (200)" in \
        file.errors[0].reason
    assert ingest(write_pack("good.yaml", NVLINK_PACK)).total("accepted") == 2  # kept later


def test_a_file_beyond_the_row_limit_is_rejected(ledger, ingest, write_pack):
    [file] = ingest(write_pack("rows.yaml", NVLINK_PACK),
                    limits=InputLimits(max_rows_per_file=1)).files
    assert file.outcome == "rejected_file" and "SPECLEDGER_MAX_ROWS_PER_FILE" in \
        file.errors[0].reason


def test_text_of_any_length_lands_alike_on_both_backends(ledger, ingest, write_pack):
    long = "x" * 5000
    report = ingest(write_pack("long.yaml", f"""
        source: {{key: s-{long[:250]}, title: {long}, publisher: {long}, kind: analyst}}
        items: [{{key: k-{long[:250]}, name: {long}, kind: gpu}}]
        observations:
          - {{item: k-{long[:250]}, metric: tdp, value: 100, unit: W, as_of: 2024, status: U,
             quote: {long}}}
        """))
    assert [e for f in report.files for e in f.errors] == []
    assert report.total("accepted") == 1 and adds_up(report)


def test_a_key_too_long_to_index_is_rejected_alike_on_both_backends(ledger, ingest, write_pack):
    key = "k" * 3000
    bad_source = write_pack("source.yaml", NVLINK_PACK.replace("key: nvidia-nvlink-page",
                                                               f"key: {key}"))
    bad_item = write_pack("item.yaml", PACK_HEAD.replace("key: h100-sxm5", f"key: {key}"))
    report = ingest(bad_source, bad_item)
    item_file, source_file = report.files  # in path order
    assert source_file.accepted == 0 and source_file.rejected == 2
    assert "a key has at most 300" in source_file.errors[0].reason
    assert item_file.outcome == "rejected_file" and "at most 300" in item_file.errors[0].reason


def test_the_order_of_the_arguments_never_changes_the_ledger(ledger_url, tmp_path, write_pack,
                                                             metrics):
    from db.engine import make_engine
    from pipelines.jobs.ingest import ingest_paths

    first = write_pack("a.yaml", NVLINK_PACK)
    second = write_pack("b.yaml", NVLINK_PACK.replace("value: 1.8,", "value: 1.9,"))
    hashes = []
    for order in ([first, second], [second, first]):
        engine = make_engine(ledger_url)
        with Session(engine) as session:  # the same empty ledger for both orders
            session.execute(Observation.__table__.delete())
            session.commit()
        report = ingest_paths(engine, order, metrics=metrics, today=date(2026, 11, 23),
                              now=lambda: datetime(2026, 11, 1, tzinfo=UTC),
                              code_version="test")
        engine.dispose()
        hashes.append(report.files[0].path)
        conflict = [e for f in report.files for e in f.errors]
        assert [(e.line, e.field) for e in conflict] == [(12, "value")]
        assert "a.yaml line 12" in conflict[0].reason
    assert hashes[0] == hashes[1]  # a.yaml is read first whatever the order given


def test_two_files_of_one_ingest_that_disagree_keep_the_first_by_name(ledger, ingest,
                                                                       write_pack):
    later = write_pack("b.yaml", NVLINK_PACK.replace("value: 1.8,", "value: 1.9,"))
    report = ingest(later, write_pack("a.yaml", NVLINK_PACK))
    assert [Path(f.path).name for f in report.files] == ["a.yaml", "b.yaml"]
    with Session(ledger) as session:
        live = session.scalars(select(Observation.value_written).where(
            Observation.superseded_at.is_(None), Observation.unit_written == "TB/s")).all()
        assert live == ["1.8"]  # nothing superseded at the instant it was recorded
        assert session.scalar(select(func.count()).select_from(RejectedRow)) == 1


def test_the_same_measurement_bytes_are_never_stored_twice(ledger, ingest):
    nccl_log = fixture_path("nccl", "b_a3mega_h100_2node.txt")  # a shared copy of a real log
    ingest(nccl_log, item="h100-sxm5")
    again = ingest(nccl_log)
    twice_named = ingest(nccl_log, item="h100-sxm5", as_of=None)
    with Session(ledger) as session:
        runs = session.scalars(select(MeasurementRun.item_key)).all()
    assert runs == ["h100-sxm5"]
    assert again.total("accepted") == 0 and adds_up(again) and adds_up(twice_named)
