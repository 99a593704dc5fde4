"""The database counts and ranks a version's observation changes exactly as the model
classifies them (models.trends.changes), on both dialects, without reading the window."""

from __future__ import annotations

from db import changes, outputs, queries
from db.engine import Engine, Session
from models.trends import observation_changes
from models.trends.types import SEVERITIES, Flag

PACK = """
source:
  key: {source}
  title: Survey {source}
  kind: dataset
  published_on: 2026-01-10
items:
  - {{key: gpu-a, name: "GPU A", kind: gpu}}
  - {{key: gpu-b, name: "GPU B", kind: gpu}}
  - {{key: gpu-c, name: "GPU C", kind: gpu}}
observations:
{rows}
"""


def pack(source: str, *rows: str) -> str:
    return PACK.format(source=source, rows="\n".join(f"  - {row}" for row in rows))


def row(item: str, metric: str, value: float, unit: str, as_of: str) -> str:
    return (f"{{item: {item}, metric: {metric}, value: {value}, unit: {unit}, as_of: {as_of}, "
            "status: S}")


FIRST = pack("survey",
             row("gpu-a", "tdp", 700, "W", "2025-01-01"),
             row("gpu-a", "hbm_capacity", 80, "GB", "2025-01-01"),
             row("gpu-b", "tdp", 1000, "W", "2025-01-01"),
             row("gpu-b", "hbm_capacity", 192, "GB", "2025-01-01"))
# The same file a week later: one figure corrected (+20 %), one restated, one dropped (it
# stays live: a file restates, it does not withdraw), one new item, and a newer-dated figure
# that moves by 10 %.
SECOND = pack("survey",
              row("gpu-a", "tdp", 840, "W", "2025-01-01"),
              row("gpu-a", "hbm_capacity", 80, "GB", "2025-01-01"),
              row("gpu-b", "tdp", 1100, "W", "2025-06-01"),
              row("gpu-b", "tdp", 1000, "W", "2025-01-01"),
              row("gpu-c", "tdp", 1200, "W", "2025-06-01"),
              row("gpu-c", "hbm_capacity", 288, "GB", "2025-06-01"))


def two_versions(ledger: Engine, ingest, write_pack, clock) -> tuple[int, int]:
    first = ingest(write_pack("survey.yaml", FIRST)).dataset_version
    clock.tick(days=7)
    second = ingest(write_pack("survey.yaml", SECOND)).dataset_version
    return first, second


def as_model_rows(change_list) -> set[tuple]:
    return {(c.kind, c.item, c.metric, c.source, c.before, c.after, c.as_of,
             c.observation_ids) for c in change_list}


def test_counts_and_rows_match_the_models_classification(ledger, ingest, write_pack, clock):
    first, second = two_versions(ledger, ingest, write_pack, clock)
    with Session(ledger) as session:
        v1, v2 = (queries.dataset_version(session, v) for v in (first, second))
        window = {"previous": v1.cutoff_at, "cutoff": v2.cutoff_at}
        model = observation_changes(queries.observations_frame(session),
                                    previous_cutoff=v1.cutoff_at, cutoff=v2.cutoff_at)
        counted = changes.change_counts(session, **window)
        rows = changes.top_changes(session, **window, version_id=second, decisive=(),
                                   limit=100)
    expected = as_model_rows(model.observations)
    got = {(r["kind"], r["item"], r["metric"], r["source"], r["before_value"], r["after_value"],
            r["as_of"], tuple(i for i in (r["before_id"], r["observation_id"]) if i))
           for r in rows}
    assert got == expected
    assert {kind for kind, *_ in expected} == {"added", "changed"}
    assert counted["added"] == (2, 1, 2)       # gpu-c: tdp and hbm_capacity
    assert sum(n for n, _, _ in counted.values()) == len(expected)


def test_the_first_rows_are_what_the_decisions_read_then_the_largest_moves(
        ledger, ingest, write_pack, clock):
    first, second = two_versions(ledger, ingest, write_pack, clock)
    with Session(ledger) as session:
        v1, v2 = (queries.dataset_version(session, v) for v in (first, second))
        window = {"previous": v1.cutoff_at, "cutoff": v2.cutoff_at}
        plain = changes.top_changes(session, **window, version_id=second, decisive=(),
                                    limit=2)
        decisive = changes.top_changes(session, **window, version_id=second,
                                       decisive={("gpu-c", "hbm_capacity")}, limit=2)
    # Changed before added; the +20 % correction before the +10 % move.
    assert [(r["kind"], r["item"], r["after_value"]) for r in plain] == [
        ("changed", "gpu-a", 840.0), ("changed", "gpu-b", 1100.0)]
    assert [(r["item"], r["metric"]) for r in decisive][0] == ("gpu-c", "hbm_capacity")


def test_flags_are_counted_per_kind_and_read_a_few_of_each(ledger, ingest, write_pack, clock):
    _, second = two_versions(ledger, ingest, write_pack, clock)
    flags = [Flag("single_source", "info", f"gpu-{n:03d} / tdp", "one source.")
             for n in range(40)]
    flags += [Flag("conflicting", "warning", "gpu-a / tdp", "two figures."),
              Flag("single_source", "warning", "gpu-zzz / tdp", "a warning of the kind.")]
    with Session(ledger) as session, session.begin():
        outputs.record_flags(session, second, flags, code_version="test",
                             computed_at=clock())
    with Session(ledger) as session:
        counts = outputs.flag_counts(session, second)
        few = outputs.first_flags_per_kind(session, second, 3, SEVERITIES)
    assert counts == {"single_source": {"info": 40, "warning": 1},
                      "conflicting": {"warning": 1}}
    # Three of a kind, the most severe kept whatever order they were stored in (the
    # warning stored last); returned in the order stored.
    assert [(f["kind"], f["subject"]) for f in few] == [
        ("single_source", "gpu-000 / tdp"), ("single_source", "gpu-001 / tdp"),
        ("conflicting", "gpu-a / tdp"), ("single_source", "gpu-zzz / tdp")]
