"""Declarative checks (unique, not_null, accepted_values, relationships, row_count,
expression_is_true) run on every built warehouse before it replaces the previous one."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import get_args

import duckdb
import pytest
from sqlalchemy import select

from db.engine import Engine, Session, make_engine, upgrade, write_session
from db.outputs import record_delivery
from db.queries import dataset_version
from db.schema import Briefing, Flag, Item, Observation
from db.warehouse import WarehouseMeta, publish_warehouse
from db.warehouse_checks import (
    AS_OF_PRECISIONS,
    C2C_CLASSES,
    CHECKS,
    COUNTS,
    CheckFailure,
    WarehouseCheckError,
    declared_checks,
    run_checks,
)
from models.resolve import SOURCE_KIND_RANK
from pipelines.inputs.adapters.base import AdapterOptions
from pipelines.jobs.ingest import ingest_paths
from tests.conftest import NVLINK_PACK, TODAY, Clock
from tests.db.test_results import add, estimate, scenario
from tests.db.test_tco_results import add_tco, tco_scenario
from tests.db.test_warehouse import query
from tests.support.shared_data import fixture_path

# The real files the tests ingest, by their path in the shared folder (a copy of each is there;
# the project keeps none).
H200_JSON = ("nccl", "json_h200_single_node.json")
INFERENCEX = ("inferencex", "agg_bmk_kimik2.5_mi355x.json")
# A weaker source beside the datasheet, with a bounded figure and a row the ingest rejects.
PRESS_PACK = """
source: {key: press, title: A trade article, kind: secondary_press, published_on: 2024-06-01}
items: [{key: gb200-nvl72, name: "GB200 NVL72", kind: rack}]
observations:
  - {item: gb200-nvl72, metric: rack_it_power, value: 140, unit: kW, as_of: 2024-06-01,
     valid_to: 2025-06-01, status: U}
  - {item: gb200-nvl72, metric: rack_it_power, value: lots, unit: kW, as_of: 2024-06-01,
     status: U}
"""


def add_flag(session: Session, version: int, subject: str, observation_ids: list[int],
             **fields: str) -> None:
    session.add(Flag(dataset_version_id=version, kind=fields.get("kind", "single_source"),
                     severity=fields.get("severity", "warning"), subject=subject,
                     item_key=fields.get("item"), metric_key=fields.get("metric"),
                     scenario_name=fields.get("scenario"),
                     message=f"{subject} rests on one source", code_version="test",
                     observation_ids=json.dumps(sorted(observation_ids)),
                     computed_at=clock_at(version)))


def add_briefing(session: Session, version: int, as_of: date) -> Briefing:
    pdf = f"briefing {as_of} of version {version}".encode()
    row = Briefing(dataset_version_id=version, as_of=as_of, path=f"b-{as_of}.pdf",
                   sha256=hashlib.sha256(pdf).hexdigest(), size_bytes=len(pdf), pages=12,
                   code_version="test", rendered_at=clock_at(version))
    session.add(row)
    session.flush()
    return row


def add_deliveries(session: Session, briefing: Briefing) -> None:
    """An e-mail that reached its readers and a folder copy that failed."""
    at = clock_at(briefing.dataset_version_id)
    record_delivery(session, briefing_id=briefing.id, channel="email",
                    target="a@example.com,b@example.com", status="delivered", attempts=1,
                    message_id=f"<{briefing.id}@specledger>", error=None, delivered_at=at)
    record_delivery(session, briefing_id=briefing.id, channel="folder", target="/mnt/share",
                    status="failed", attempts=4, message_id=None,
                    error="/mnt/share: No space left on device", delivered_at=at)


def clock_at(version: int) -> datetime:
    return datetime(2026, 11, 20 + version, 12, tzinfo=UTC)


def build_rich_ledger(engine: Engine, ingest: Callable[..., object], write_pack, clock) -> int:
    """Four dataset versions filling every published table: observations (one superseded,
    one with a valid_to), a rejected row, InferenceX serving points (a version of their own),
    an nccl-tests run; C2C
    results, flags and briefings (each e-mailed, its folder copy failed) on the first and the
    last version, a TCO comparison on the last. Returns the last."""
    first = ingest(write_pack("v1.yaml", NVLINK_PACK)).dataset_version
    evidence = {first: observation_ids(engine, "nvlink-5")}
    clock.tick()
    ingest(write_pack("v2.yaml", NVLINK_PACK.replace("value: 1.8,", "value: 1.9,")),
           write_pack("press.yaml", PRESS_PACK))
    clock.tick()
    ingest(fixture_path(*INFERENCEX), as_of=date(2026, 6, 1))
    last = ingest(fixture_path(*H200_JSON), item="nvlink-5").dataset_version
    evidence[last] = observation_ids(engine, "nvlink-5")
    with write_session(engine) as session:
        nvl72 = scenario(session, at=clock.now)
        add(session, nvl72, first, figures=estimate(c2c=0.25))
        add(session, nvl72, last, figures=estimate(c2c=0.3, **{"class":
                                                                "performance-sensitive"}))
        add_tco(session, tco_scenario(session, at=clock.now), last)
        for version, ids in evidence.items():
            add_flag(session, version, "nvlink-5 / scaleup_bw_per_gpu_bidir", ids,
                     item="nvlink-5", metric="scaleup_bw_per_gpu_bidir")
            add_flag(session, version, "gpt-175b-nvl72", [], kind="result_moved",
                     severity="info", scenario="gpt-175b-nvl72")
            add_deliveries(session, add_briefing(session, version, date(2026, 11, 20 + version)))
    return last


def observation_ids(engine: Engine, item: str) -> list[int]:
    with Session(engine) as session:
        return list(session.scalars(select(Observation.id).join(Item).where(Item.key == item)))


def publish(engine: Engine, version: int, target: Path, **kwargs) -> Path:
    with Session(engine) as session:
        row = dataset_version(session, version)
        meta = WarehouseMeta(row.id, row.content_hash, row.cutoff_at, date(2026, 11, 22),
                             clock_at(version), "test")
    return publish_warehouse(engine, target, meta, kwargs.pop("ranks", SOURCE_KIND_RANK),
                             **kwargs)


@pytest.fixture
def rich(ledger, ingest, write_pack, clock, tmp_path) -> Path:
    version = build_rich_ledger(ledger, ingest, write_pack, clock)
    return publish(ledger, version, tmp_path / "out" / "warehouse.duckdb")


@pytest.fixture(scope="module")
def generic(tmp_path_factory, metrics) -> Iterator[Path]:
    """The rich warehouse once per module (SQLite), for the per-check tests."""
    folder = tmp_path_factory.mktemp("checks")
    url = f"sqlite:///{folder / 'ledger.sqlite'}"
    upgrade(url)
    engine, clock = make_engine(url), Clock()

    def ingest(*paths: Path, **options: object):
        return ingest_paths(engine, list(paths), metrics=metrics, today=TODAY, now=clock,
                            code_version="test", options=AdapterOptions(**options))

    def write_pack(name: str, content: str) -> Path:
        path = folder / name
        path.write_text(content.lstrip(), encoding="utf-8")
        return path

    version = build_rich_ledger(engine, ingest, write_pack, clock)
    yield publish(engine, version, folder / "warehouse.duckdb")
    engine.dispose()


def test_a_published_warehouse_passes_every_check(rich):
    con = duckdb.connect(str(rich), read_only=True)
    try:
        assert run_checks(con) == []
    finally:
        con.close()


@pytest.mark.parametrize("check", declared_checks(), ids=lambda check: check.name)
def test_each_declared_check_holds_on_the_published_warehouse(generic, check):
    assert query(generic, check.sql) == [(0,)]


@pytest.mark.parametrize("table", sorted(CHECKS))
def test_no_check_passes_on_an_empty_table(generic, table):
    assert query(generic, f"select count(*) > 0 from {table}") == [(True,)]


def test_a_failing_check_keeps_the_previous_warehouse(rich, ledger, monkeypatch, tmp_path):
    # A warehouse of version 1 is in place; the newer version's build fails a check. (A
    # publisher never builds an older version over a newer one, so the older goes first.)
    [(newest,)] = query(rich, "select dataset_version from meta")
    older = publish(ledger, 1, tmp_path / "older" / "warehouse.duckdb")
    before = older.read_bytes()
    monkeypatch.setitem(CHECKS, "observation", {"accepted_values": {"status": ("S",)}})
    with pytest.raises(WarehouseCheckError) as raised:
        publish(ledger, newest, older)
    [failure] = raised.value.failures
    assert failure.check == "accepted_values: observation.status in (S)"
    assert failure.failing_rows > 1
    assert (f"accepted_values: observation.status in (S): {failure.failing_rows} failing "
            "row(s)") in str(raised.value)
    assert older.read_bytes() == before
    assert query(older, "select dataset_version from meta") == [(1,)]
    assert sorted(p.name for p in older.parent.iterdir()) == ["warehouse.duckdb"]


@pytest.mark.parametrize(("breakage", "message"), [
    ("a flag names an unknown observation",
     "relationships: flag(unnest(observation_ids)) -> observation(observation_id): 1 failing"),
    ("a source kind has no rank",
     "relationships: source(kind) -> source_kind_rank(kind): 1 failing"),
])
def test_the_checks_catch_what_the_ledger_allows(rich, ledger, breakage, message):
    before, ranks = rich.read_bytes(), dict(SOURCE_KIND_RANK)
    (version, current), = query(rich, "select dataset_version, (select count(*) from "
                                      "current_value) from meta")
    if breakage == "a flag names an unknown observation":
        with write_session(ledger) as session:
            add_flag(session, version, "stale evidence", [1, 999_999], kind="stale")
    else:
        del ranks["secondary_press"]  # its values would vanish from every resolved view
    with pytest.raises(WarehouseCheckError, match=re.escape(message)):
        publish(ledger, version, rich, ranks=ranks)
    assert rich.read_bytes() == before
    assert query(rich, "select count(*) from current_value") == [(current,)]


@pytest.mark.parametrize(("checks", "failing"), [
    ({"t": {"unique": [("k",)]}}, 2),                   # the two rows with k = 1
    ({"t": {"unique": [("k", "v")]}}, 0),
    ({"t": {"not_null": ["v"]}}, 1),
    ({"t": {"accepted_values": {"v": ("a", "b")}}}, 1),  # 'c' (NULL is not_null's business)
    ({"t": {"relationships": [("k", "p", "id")]}}, 1),   # k = 3
    ({"t": {"relationships": [(("k", "v"), "p", ("id", "v"))]}}, 2),  # (1, b), (2, c)
    ({"t": {"relationships": [("unnest(ids)", "p", "id")]}}, 1),      # 9
    ({"t": {"row_count": 1}}, 3),
    ({"t": {"expression_is_true": ["k < 3"]}}, 1),
])
def test_each_kind_of_check_counts_its_failing_rows(checks, failing):
    con = duckdb.connect()
    con.execute("create table p (id integer, v varchar); insert into p values (1, 'a'), (2, 'b');"
                "create table t (k integer, v varchar, ids integer[]); insert into t values "
                "(1, 'a', [1]), (1, 'b', [2, 9]), (3, null, []), (2, 'c', null)")
    expected = [CheckFailure(declared_checks(checks)[0].name, failing)] if failing else []
    assert run_checks(con, checks) == expected


def test_the_vocabularies_match_the_models():
    from models import observations
    from models.c2c import classify
    from models.units import Counts

    assert C2C_CLASSES == (classify.COMPUTE_BOUND, classify.PERFORMANCE_SENSITIVE,
                           classify.COMMUNICATION_BOUND)
    assert COUNTS == get_args(Counts)
    assert AS_OF_PRECISIONS == observations.AS_OF_PRECISIONS
    # Every offer term ingest accepts (a vendor's quote too) is one the marts publish.
    from db.marts import PRICE_TERMS
    assert PRICE_TERMS == observations.OFFER_TERMS
