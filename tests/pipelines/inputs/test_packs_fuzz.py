"""Property tests of the pack readers: whatever the bytes, nothing escapes and nothing is lost.

For any text, a CSV or YAML pack either is a rejected file (PackError) or reads into rows of
which every one is accepted or rejected: read = accepted + unchanged + rejected. The fast
properties run the readers and the validator; one runs the whole ingest on a real SQLite ledger.
"""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, date, datetime
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from db.engine import make_engine, upgrade
from models.bulk_rows import validate_rows
from pipelines.inputs.catalog import load_metrics
from pipelines.inputs.limits import InputLimits
from pipelines.inputs.packs import PackError, parse_pack
from pipelines.jobs.ingest import _precheck, ingest_paths
from pipelines.settings import PROJECT_ROOT
from tests.conftest import examples

METRICS = load_metrics(PROJECT_ROOT / "data" / "catalog.yaml")
TODAY = date(2026, 11, 23)
SMALL = InputLimits(max_rows_per_file=500, yaml_max_depth=16, yaml_max_alias_nodes=200)
HEADER = ["source", "source_title", "source_kind", "item", "item_kind", "metric", "value",
          "unit", "as_of", "status", "quote"]

hostile_text = st.one_of(
    st.sampled_from(["", " ", "700", "1.8", "[1, 2]", "[1, 2, 3]", "0x2BC", "7_00", "1e400",
                     "nan", "-inf", "2024-02-30", "0000-01-01", "2024-01-01 10:00:00", "2024",
                     "[/bold]", "a\x00b", '"', "'", "&a", "*a", "{", "- 42", "W", "TB/s", ")",
                     "9^9^9", "1/0",
                     "h100-sxm5", "tdp", "C", "analyst", "1" + "0" * 400]),
    st.text(max_size=30))
valid_row = st.fixed_dictionaries({
    "source": st.just("fuzz"), "source_title": st.just("Fuzz"), "source_kind": st.just("analyst"),
    "item": st.sampled_from(["h100-sxm5", "b200"]), "item_kind": st.just("gpu"),
    "metric": st.sampled_from(["tdp", "hbm_capacity", "nope"]),
    "value": st.one_of(st.integers(0, 2000).map(str), hostile_text),
    "unit": st.sampled_from(["W", "kW", "GB", "GiB", ""]) | hostile_text,
    "as_of": st.dates(date(2015, 1, 1), date(2027, 1, 1)).map(str) | hostile_text,
    "status": st.sampled_from("CSU") | hostile_text, "quote": hostile_text})


def counts(name: str, data: bytes) -> tuple[int, int, int] | None:
    """(read, accepted, rejected) as the ingest would count them, or None for a rejected file."""
    try:
        pack = parse_pack(name, data, SMALL)
    except PackError as exc:
        assert exc.reason and len(str(exc)) < 2000
        return None
    prechecked, rows = _precheck(pack)
    items = {i.key for i in pack.items} | {"h100-sxm5"}
    sources = {s.key for s in pack.sources}
    clean, errors = validate_rows([(r.line, r.fields) for r in rows], metrics=METRICS,
                                  items=items, sources=sources, today=TODAY)
    for error in prechecked + errors:
        assert error.field and error.reason and "__line__" not in error.reason
    return len(pack.rows), len(clean), len(prechecked) + len(errors)


def as_csv(rows: list[dict[str, str]], damage: str) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(HEADER)
    writer.writerows([[row[c] for c in HEADER] for row in rows])
    text = out.getvalue()
    cut = len(text) // 2
    return (text[:cut] + damage + text[cut:]).encode("utf-8", "surrogatepass")


def as_yaml(rows: list[dict[str, str]], damage: str) -> bytes:
    lines = ["source: {key: fuzz, title: Fuzz, kind: analyst}",
             "items: [{key: b200, name: B200, kind: gpu}]", "observations:"]
    for row in rows:
        fields = {k: row[k] for k in ("item", "metric", "value", "unit", "as_of", "status",
                                      "quote")}
        lines.append(f"  - {json.dumps(fields)}")
    text = "\n".join(lines) + "\n"
    cut = len(text) // 2
    return (text[:cut] + damage + text[cut:]).encode("utf-8", "surrogatepass")


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(valid_row, max_size=12), st.sampled_from(["", '"', "\n", "\x00", ",", "\r"])
       | st.text(max_size=5))
def test_every_csv_row_is_accepted_or_rejected(rows, damage):
    try:
        data = as_csv(rows, damage)
    except UnicodeEncodeError:
        return
    result = counts("fuzz.csv", data)
    if result is not None:
        read, accepted, rejected = result
        assert read == accepted + rejected
        assert read >= len(rows) - 1 or damage  # undamaged rows are all read


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(valid_row, max_size=12), st.sampled_from(["", "[", "{", ": ", "&a", "*a", "\t",
                                                          "- ", "\x00", "---\n"])
       | st.text(max_size=5))
def test_every_yaml_row_is_accepted_or_rejected(rows, damage):
    try:
        data = as_yaml(rows, damage)
    except UnicodeEncodeError:
        return
    result = counts("fuzz.yaml", data)
    if result is not None:
        read, accepted, rejected = result
        assert read == accepted + rejected
        if not damage:
            assert read == len(rows)


@settings(max_examples=examples(300), deadline=None)
@given(st.binary(max_size=300), st.sampled_from(["x.csv", "x.yaml"]))
def test_arbitrary_bytes_never_raise_anything_but_a_rejected_file(data, name):
    result = counts(name, data)
    assert result is None or result[0] == result[1] + result[2]


@settings(max_examples=examples(20), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(valid_row, min_size=1, max_size=6), st.sampled_from(["", '"', "\x00", "\n"]))
def test_the_ingest_adds_up_on_a_real_ledger(tmp_path_factory, rows, damage):
    folder = tmp_path_factory.mktemp("fuzz")
    url = f"sqlite:///{folder / 'ledger.sqlite'}"
    upgrade(url)
    engine = make_engine(url)
    (folder / "a.csv").write_bytes(as_csv(rows, damage))
    (folder / "b.yaml").write_bytes(as_yaml(rows, damage))
    try:
        report = ingest_paths(engine, [folder / "a.csv", folder / "b.yaml"], metrics=METRICS,
                              today=TODAY, now=lambda: datetime(2026, 11, 1, tzinfo=UTC),
                              code_version="fuzz")
    finally:
        engine.dispose()
    for file in report.files:
        assert file.read == file.accepted + file.unchanged + file.rejected, Path(file.path).name
