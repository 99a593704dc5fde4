"""Hostile adapter files through the real ingest, on SQLite and PostgreSQL alike: numbers beyond
64 bits are rejected rows and the rest of the file lands; JSON nested 100,000 deep is a rejected
file; the CLI exits 1 for both, never 5."""

from __future__ import annotations

import json
from datetime import date

from sqlalchemy import select

from db.engine import Session
from db.schema import IngestFile, NcclPoint, RejectedRow
from tests.support.shared_data import fixture_path

# nccl-tests outputs the tests read (shared copies: the project keeps none).
H200_JSON = ("nccl", "json_h200_single_node.json")
CPUTIME = ("nccl", "d_cputime_timestamp_h100.txt")
DEEP = "[" * 100_000 + "]" * 100_000


def oversized_json(tmp_path):
    """The -J fixture with size 10**30 in its first element and count 2**63 in its second."""
    document = json.loads(fixture_path(*H200_JSON).read_text())
    document["results"][0]["size"] = 10**30
    document["results"][1]["count"] = 2**63
    path = tmp_path / "h200-allreduce.json"
    path.write_text(json.dumps(document, indent=1))
    return path


def test_integers_beyond_64_bits_are_rejected_rows_and_the_rest_lands(ledger, ingest,
                                                                      nvlink_pack, tmp_path):
    ingest(nvlink_pack)
    text = tmp_path / "all_reduce_perf.log"
    text.write_text(fixture_path(*CPUTIME).read_text().replace(
        "  8589934592    2147483648", "  123456789012345678901234567 2147483648"))

    report = ingest(oversized_json(tmp_path), text, item="nvlink-5", as_of=date(2026, 1, 5))

    by_suffix = {file.path.rsplit(".", 1)[1]: file for file in report.files}
    json_file, text_file = by_suffix["json"], by_suffix["log"]
    assert [(e.field, "beyond a 64-bit integer" in e.reason) for e in json_file.errors] == [
        ("size", True), ("count", True)]
    assert [(e.line, e.field) for e in text_file.errors] == [(22, "size")]
    for file in report.files:
        assert file.outcome == "ingested" and file.read == file.accepted + file.rejected
    with Session(ledger) as session:
        sizes = session.scalars(select(NcclPoint.size_bytes)).all()
        kept = " ".join(session.scalars(select(RejectedRow.raw_text)).all())
    assert sorted(sizes) == [1073741824, 2147483648, 4294967296, 4294967296, 8589934592]
    assert str(10**30) in kept and str(2**63) in kept and "123456789012345678901234567" in kept


def test_json_nested_100000_deep_is_a_rejected_file(ledger, ingest, tmp_path):
    path = tmp_path / "run.json"
    path.write_text('{"nccl_version": 22807,\n "results": [' + DEEP + "]}")

    [file] = ingest(path).files

    assert (file.outcome, file.read, file.rejected) == ("rejected_file", 1, 1)
    [error] = file.errors
    assert error.line == 2 and "nested deeper than 64 levels" in error.reason
    with Session(ledger) as session:
        assert session.scalars(select(IngestFile.outcome)).one() == "rejected_file"


def test_the_cli_exits_1_for_hostile_numbers_and_depth_never_5(cli, tmp_path):
    deep = tmp_path / "system.json"
    deep.write_text('{"system_name": "x", "number_of_nodes": "1", "a": ' + DEEP + "}")

    result = cli("ingest", str(oversized_json(tmp_path)), str(deep), "--as-of", "2026-01-05",
                 "--item", "nvlink-5", "--json")

    assert result.exit_code == 1, result.output
    files = json.loads(result.stdout)["files"]
    assert [f["outcome"] for f in files] == ["ingested", "rejected_file"]
    # size and count, and the summary row: the CLI's fresh ledger has no item nvlink-5
    assert sorted(e["field"] for e in files[0]["errors"]) == ["count", "item", "size"]
