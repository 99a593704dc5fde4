"""Ingest into a real ledger on SQLite and PostgreSQL: two clocks, supersession, idempotence,
rejections that lose nothing."""

from datetime import date
from pathlib import Path

from sqlalchemy import func, select

from db.engine import Session, make_engine, upgrade
from db.queries import live_digests, observations_frame
from db.schema import IngestFile, IngestRun, Observation, RawFile, RejectedRow
from models.digest import EMPTY_DIGEST, combine
from pipelines.jobs.ingest import ingest_paths
from pipelines.ledger.resolved import resolved_value
from tests.conftest import NVLINK_PACK, pg_url_or_skip, reset_pg

ON = date(2026, 11, 22)


def value_of(engine, item, metric, known, on=ON):
    with Session(engine) as session:
        resolved = resolved_value(session, item, metric, on=on, known=known)
    return None if resolved is None else (resolved.winner["low"], resolved.winner["high"])


def count(engine, model):
    with Session(engine) as session:
        return session.scalar(select(func.count()).select_from(model))


def test_a_pack_lands_with_values_in_canonical_units(ledger, ingest, nvlink_pack, clock):
    report = ingest(nvlink_pack)
    assert (report.total("read"), report.total("accepted"), report.total("rejected")) == (2, 2, 0)
    assert value_of(ledger, "nvlink-5", "scaleup_bw_per_gpu_bidir", clock.now) == (1800, 1800)
    assert value_of(ledger, "gb200-nvl72", "rack_it_power", clock.now) == (120, 132)


def test_known_at_between_two_recordings_gives_the_first_value(ledger, ingest, write_pack,
                                                               clock):
    first = write_pack("v1.yaml", NVLINK_PACK)
    recorded_a = clock.now
    ingest(first)
    between = clock.tick(hours=1)
    corrected = write_pack("v2.yaml", NVLINK_PACK.replace("value: 1.8,", "value: 1.9,"))
    recorded_b = clock.tick(hours=1)
    report = ingest(corrected)

    assert report.files[0].superseded == 1
    assert value_of(ledger, "nvlink-5", "scaleup_bw_per_gpu_bidir", recorded_a) == (1800, 1800)
    assert value_of(ledger, "nvlink-5", "scaleup_bw_per_gpu_bidir", between) == (1800, 1800)
    assert value_of(ledger, "nvlink-5", "scaleup_bw_per_gpu_bidir", recorded_b) == (1900, 1900)
    assert value_of(ledger, "nvlink-5", "scaleup_bw_per_gpu_bidir", clock.tick()) == (1900, 1900)


def test_supersession_closes_the_old_row_and_never_rewrites_its_value(ledger, ingest,
                                                                      write_pack, clock):
    ingest(write_pack("v1.yaml", NVLINK_PACK))
    closed_at = clock.tick()
    ingest(write_pack("v2.yaml", NVLINK_PACK.replace("value: 1.8,", "value: 1.9,")))
    with Session(ledger) as session:
        rows = session.execute(select(Observation.value, Observation.superseded_at)
                               .order_by(Observation.id)).all()
    bandwidth = [r for r in rows if r.value in (1800, 1900)]
    assert bandwidth == [(1800, closed_at), (1900, None)]
    # The unchanged rack-power row was not touched: one row, still live.
    assert [r.superseded_at for r in rows if r.value == 126] == [None]


def test_reingesting_the_same_file_changes_nothing_and_says_so(ledger, ingest, nvlink_pack,
                                                               clock):
    first = ingest(nvlink_pack)
    observations = count(ledger, Observation)
    clock.tick()
    again = ingest(nvlink_pack)
    assert again.files[0].outcome == "unchanged_file"
    assert (again.total("read"), again.total("accepted"), again.total("unchanged")) == (2, 0, 2)
    assert count(ledger, Observation) == observations
    assert count(ledger, RawFile) == 1
    assert again.dataset_version == first.dataset_version and not again.dataset_changed


def test_same_facts_in_a_different_file_are_unchanged_rows(ledger, ingest, write_pack):
    ingest(write_pack("a.yaml", NVLINK_PACK))
    report = ingest(write_pack("b.yaml", "# same facts, new bytes\n" + NVLINK_PACK))
    assert report.files[0].outcome == "ingested"
    assert (report.total("accepted"), report.total("unchanged")) == (0, 2)
    assert not report.dataset_changed


BAD_ROWS = NVLINK_PACK + """\
  - {item: nvlink-5, metric: scaleup_bw_per_link_bidir, value: 100, unit: Gb/s, as_of: 2024-03-18,
     status: C}
  - {item: nvlink-5, metric: tdp, value: 1000000, unit: W, as_of: 2024-03-18, status: C}
  - {item: nvlink-5, metric: rack_it_power, value: 5, unit: kW, as_of: 2031-01-01, status: C}
  - {item: nvlink-5, metric: scaleup_links_per_gpu, value: 18, unit: count, status: C}
  - {item: gb200-nvl72, metric: rack_it_power, value: 125, unit: kW, as_of: 2024-03-18, status: S}
"""


def test_bad_rows_are_rejected_kept_and_counted_while_good_rows_land(ledger, ingest,
                                                                     write_pack):
    report = ingest(write_pack("bad.yaml", BAD_ROWS))
    errors = [(e.line, e.field) for e in report.files[0].errors]
    assert errors == [(16, "unit"), (18, "value"), (19, "as_of"), (20, "as_of"), (21, "item")]
    f = report.files[0]
    assert (f.read, f.accepted, f.unchanged, f.rejected) == (7, 2, 0, 5)
    with Session(ledger) as session:
        kept = session.scalars(select(RejectedRow).order_by(RejectedRow.line)).all()
        run = session.scalars(select(IngestRun)).one()
    assert [r.line for r in kept] == [16, 18, 19, 20, 21]
    assert '"unit": "Gb/s"' in kept[0].raw_text
    assert run.rows_read == run.rows_accepted + run.rows_unchanged + run.rows_rejected == 7


def test_a_file_that_cannot_be_parsed_is_rejected_whole_and_its_bytes_kept(ledger, ingest,
                                                                           tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_bytes(b"source: {key: s\nobservations: [\n")
    report = ingest(broken)
    f = report.files[0]
    assert (f.outcome, f.read, f.rejected, f.errors[0].field) == ("rejected_file", 1, 1, "file")
    with Session(ledger) as session:
        assert session.scalars(select(RawFile.content)).one() == broken.read_bytes()
        assert session.scalars(select(IngestFile.outcome)).one() == "rejected_file"


def test_rows_read_always_add_up_across_a_mixed_run(ledger, ingest, write_pack, tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    latin1 = tmp_path / "latin1.yaml"
    latin1.write_bytes("source: {key: s, title: Caf\xe9, kind: dataset}\n".encode("latin-1"))
    report = ingest(write_pack("a.yaml", NVLINK_PACK), write_pack("bad.yaml", BAD_ROWS), empty,
                    latin1)
    for f in report.files:
        assert f.read == f.accepted + f.unchanged + f.rejected, f.path
    outcomes = {Path(f.path).name: f.outcome for f in report.files}
    assert outcomes == {"a.yaml": "ingested", "bad.yaml": "ingested",
                        "empty.csv": "rejected_file", "latin1.yaml": "rejected_file"}
    latin1_report = next(f for f in report.files if f.path.endswith("latin1.yaml"))
    assert latin1_report.errors[0].reason.startswith("not UTF-8 text: byte 0xe9 at line 1")


def test_conflicting_sources_stay_side_by_side_and_the_rule_picks_one(ledger, ingest,
                                                                      write_pack, clock):
    ingest(write_pack("vendor.yaml", NVLINK_PACK))
    ingest(write_pack("blog.yaml", """
        source: {key: some-blog, title: A blog, kind: secondary_press, published_on: 2025-01-01}
        items:
          - {key: gb200-nvl72, name: "GB200 NVL72", kind: rack, vendor: NVIDIA, family: Blackwell}
        observations:
          - {item: gb200-nvl72, metric: rack_it_power, value: 142, unit: kW, as_of: 2025-01-01,
             status: U}
        """))
    with Session(ledger) as session:
        resolved = resolved_value(session, "gb200-nvl72", "rack_it_power", on=ON,
                                  known=clock.now)
    assert resolved.winner["source"] == "nvidia-nvlink-page"
    assert [a["source"] for a in resolved.alternatives] == ["some-blog"]
    assert "vendor_datasheet outranks secondary_press" in resolved.resolution.reason


def test_valid_time_hides_figures_announced_after_the_date_asked(ledger, ingest, nvlink_pack,
                                                                 clock):
    ingest(nvlink_pack)
    assert value_of(ledger, "nvlink-5", "scaleup_bw_per_gpu_bidir", clock.now,
                    on=date(2024, 3, 17)) is None
    assert value_of(ledger, "nvlink-5", "scaleup_bw_per_gpu_bidir", clock.now,
                    on=date(2024, 3, 18)) == (1800, 1800)


def test_the_dataset_version_hash_is_the_same_on_sqlite_and_postgresql(tmp_path, metrics,
                                                                       write_pack, clock):
    pack = write_pack("nvlink.yaml", NVLINK_PACK)
    pg = pg_url_or_skip()
    reset_pg(pg)
    hashes = []
    for url in (f"sqlite:///{tmp_path / 'a.sqlite'}", pg):
        upgrade(url)
        engine = make_engine(url)
        report = ingest_paths(engine, [pack], metrics=metrics, today=ON, now=clock,
                              code_version="test")
        hashes.append(report.dataset_hash)
        engine.dispose()
    assert hashes[0] == hashes[1]


def test_a_changed_value_makes_a_new_dataset_version(ledger, ingest, write_pack, clock):
    first = ingest(write_pack("v1.yaml", NVLINK_PACK))
    clock.tick()
    second = ingest(write_pack("v2.yaml", NVLINK_PACK.replace("value: 1.8,", "value: 1.9,")))
    assert second.dataset_changed
    assert second.dataset_version != first.dataset_version
    assert second.dataset_hash != first.dataset_hash


def test_the_incremental_dataset_digest_equals_a_full_recount(ledger, ingest, write_pack, clock):
    ingest(write_pack("v1.yaml", NVLINK_PACK))
    clock.tick()
    ingest(write_pack("v2.yaml", NVLINK_PACK.replace("value: 1.8,", "value: 1.9,")))
    clock.tick()
    last = ingest(write_pack("v3.yaml", NVLINK_PACK.replace("value: 1.8,", "value: 2.0,")
                                                   .replace("[120, 132]", "[120, 140]")))
    with Session(ledger) as session:
        digests = live_digests(session, clock.now)
    assert last.dataset_hash == combine(EMPTY_DIGEST, digests)
    assert len(digests) == 2


def test_the_history_of_an_item_keeps_every_value_with_both_clocks(ledger, ingest, write_pack,
                                                                   clock):
    ingest(write_pack("v1.yaml", NVLINK_PACK))
    clock.tick()
    ingest(write_pack("v2.yaml", NVLINK_PACK.replace("value: 1.8,", "value: 1.9,")))
    with Session(ledger) as session:
        history = observations_frame(session, item="nvlink-5")
    assert history["value"].tolist() == [1800.0, 1900.0]
    assert history["superseded_at"].notna().tolist() == [True, False]
    assert history["recorded_at"].is_monotonic_increasing
