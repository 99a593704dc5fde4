"""One Alembic chain on both dialects: up, down with rows present, up again, and no drift."""

from datetime import UTC, datetime
from pathlib import Path

import pytest
from alembic import command
from alembic.script import ScriptDirectory
from sqlalchemy import MetaData, func, insert, inspect, select, table, text

from db import outputs
from db.engine import (
    SCHEMA_HEAD,
    Engine,
    Session,
    alembic_config,
    make_engine,
    upgrade,
    write_session,
)
from db.schema import Base, C2CResult, Observation, Scenario, Source, TcoResult
from pipelines.jobs import steps as jobs
from pipelines.jobs.ingest import ingest_paths
from pipelines.settings import PROJECT_ROOT, Settings
from tests.conftest import NVLINK_PACK, TODAY, pg_url_or_skip, reset_pg
from tests.db.test_results import add, scenario
from tests.db.test_tco_results import add_tco

SHIPPED_SOURCES = PROJECT_ROOT / "data" / "sources"
MOMENT = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)


def test_the_chain_has_a_single_head():
    script = ScriptDirectory.from_config(alembic_config("sqlite://"))
    assert len(script.get_heads()) == 1
    assert script.get_current_head() is not None


def test_the_engine_knows_the_head_without_importing_alembic():
    """db.engine.SCHEMA_HEAD lets a command skip Alembic on a current ledger: it must be the
    chain's real head, or a ledger one migration behind would be taken as current."""
    script = ScriptDirectory.from_config(alembic_config("sqlite://"))
    assert SCHEMA_HEAD == script.get_current_head()


def seed_results(engine, dataset_version: int, models: tuple[str, ...] = ("c2c", "tco")) -> None:
    """A scenario and two results of each model, one reusing the other (a self-reference to
    drop)."""
    adders = {"c2c": add, "tco": add_tco}
    with write_session(engine) as session:
        target = scenario(session)
        for model in models:
            original = adders[model](session, target, None)
            adders[model](session, target, dataset_version, reused_from=original)


def count(engine, model) -> int:
    with Session(engine) as session:
        return session.scalar(select(func.count()).select_from(model))


def test_upgrade_downgrade_upgrade_with_rows_and_check_is_clean(ledger_url, nvlink_pack, metrics,
                                                                clock):
    config = alembic_config(ledger_url)
    engine = make_engine(ledger_url)
    report = ingest_paths(engine, [nvlink_pack], metrics=metrics, today=TODAY, now=clock,
                          code_version="test")
    seed_results(engine, report.dataset_version)
    command.check(config)  # raises if the models and the migrations disagree

    command.downgrade(config, "base")
    assert set(inspect(engine).get_table_names()) <= {"alembic_version"}

    upgrade(ledger_url)
    assert set(Base.metadata.tables) <= set(inspect(engine).get_table_names())
    report = ingest_paths(engine, [nvlink_pack], metrics=metrics, today=TODAY, now=clock,
                          code_version="test")
    seed_results(engine, report.dataset_version)
    assert (count(engine, Observation), count(engine, C2CResult), count(engine, TcoResult)) == (
        2, 2, 2)
    command.check(config)
    engine.dispose()


# Each results migration goes down alone: its tables go, the earlier ones keep their rows.
@pytest.mark.parametrize("revision, dropped, kept, models", [
    ("0002", {"tco_result"}, C2CResult, ("tco",)),
    ("0001", {"scenario", "c2c_result", "tco_result"}, Observation, ("c2c", "tco")),
])
def test_a_results_migration_goes_down_alone_and_keeps_the_rest(ledger_url, nvlink_pack,
                                                                 metrics, clock, revision,
                                                                 dropped, kept, models):
    config = alembic_config(ledger_url)
    engine = make_engine(ledger_url)
    report = ingest_paths(engine, [nvlink_pack], metrics=metrics, today=TODAY, now=clock,
                          code_version="test")
    seed_results(engine, report.dataset_version)

    command.downgrade(config, revision)
    assert dropped.isdisjoint(inspect(engine).get_table_names())
    assert count(engine, kept) == 2

    upgrade(ledger_url)
    seed_results(engine, report.dataset_version, models)  # the dropped tables take rows again
    assert (count(engine, Scenario), count(engine, C2CResult), count(engine, TcoResult)) == (
        1, 2, 2)
    command.check(config)
    engine.dispose()


# --- upgrading from every earlier revision with data present ----------------------------

def chain() -> list[str]:
    """Every revision of the chain, base first (a new migration is covered automatically)."""
    script = ScriptDirectory.from_config(alembic_config("sqlite://"))
    return [s.revision for s in reversed(list(script.walk_revisions()))]


EARLIER = chain()[:-1]
BAD_PACK = NVLINK_PACK.replace("value: 1.8,", "value: -1.8,")  # a rejected row
NEW_PACK = NVLINK_PACK.replace("nvidia-nvlink-page", "nvlink-blog").replace(
    "kind: vendor_datasheet", "kind: secondary_press")


@pytest.fixture(scope="module")
def head_ledger(tmp_path_factory) -> tuple[str, list[Path]]:
    """A SQLite ledger at head with data made by the real code: the shipped packs and a bad
    one ingested, every shipped scenario recomputed, flags, a briefing record."""
    folder = tmp_path_factory.mktemp("head")
    url = f"sqlite:///{folder / 'ledger.sqlite'}"
    bad = folder / "bad.yaml"
    bad.write_text(BAD_PACK, encoding="utf-8")
    paths = [SHIPPED_SOURCES, bad]
    settings = Settings(home=folder, database_url=url)
    update = jobs.update(settings, paths, as_of=TODAY, now=lambda: MOMENT)
    assert update.ingest.total("rejected") == 1 and update.c2c.computed
    engine = make_engine(url)
    with write_session(engine) as session:
        outputs.record_briefing(session, dataset_version=update.ingest.dataset_version,
                                as_of=TODAY, path=str(folder / "briefing.pdf"), sha256="0" * 64,
                                size_bytes=1, pages=1, code_version="test", rendered_at=MOMENT)
    engine.dispose()
    return url, paths


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def empty_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty database, not migrated, on SQLite (a file) and on PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'ledger.sqlite'}"
    url = pg_url_or_skip()
    reset_pg(url)
    return url


# Values a CHECK constraint accepts only from a revision on: (table, column) -> (revision,
# values). A ledger at an earlier revision cannot have held such rows, so they are not copied.
NEWER_VALUES = [(("scenario", "kind"), "0012", {"serving"}),
                # a SkyPilot catalog (data/sources ships none: market_2023.yaml transcribes six)
                (("ingest_file", "format"), "0009", {"skypilot-catalog"}),
                # the shipped InferenceMAX run (data/sources/inference) and its points
                (("ingest_file", "format"), "0011", {"inferencex"}),
                (("measurement_run", "kind"), "0011", {"inference"})]


def held_then(table: str, row: dict[str, object], revision: str) -> bool:
    """Whether a ledger at `revision` could hold `row` of `table`."""
    return all(row.get(column) not in values
               for (name, column), since, values in NEWER_VALUES
               if name == table and revision < since)


# Values a newer revision gave rows an older one held under another: a personal notes page
# was filed as secondary press before 0015.
RENAMED_VALUES = {("source", "kind"): ("0015", {"personal_notes": "secondary_press"})}


def as_then(table: str, row: dict[str, object], revision: str) -> dict[str, object]:
    """`row` as a ledger at `revision` held it."""
    for (name, column), (since, renamed) in RENAMED_VALUES.items():
        if name == table and revision < since and row.get(column) in renamed:
            row = {**row, column: renamed[row[column]]}
    return row


def copy_rows(source: Engine, target: Engine, revision: str) -> dict[str, int]:
    """Copy every table the target has (the columns it has) from the source at head, parents
    first, as a dump and restore would, leaving out rows the target's revision could not have
    held and their results; returns the rows copied per table."""
    present = MetaData()
    present.reflect(target)
    copied = {}
    with source.connect() as reading, target.begin() as writing:
        for table in present.sorted_tables:
            if table.name == "alembic_version":
                continue
            model = Base.metadata.tables[table.name]  # the head's types read SQLite's text
            columns = [c.name for c in table.columns if c.name in model.columns]
            rows = [dict(r._mapping) for r in reading.execute(
                select(*(model.columns[c] for c in columns)))]
            rows = [as_then(table.name, r, revision) for r in rows
                    if held_then(table.name, r, revision)]
            if rows:
                writing.execute(insert(table), rows)
            if writing.dialect.name == "postgresql" and "id" in table.columns:
                # Explicit ids do not move the sequence: the next insert must not collide.
                writing.execute(text("select setval(pg_get_serial_sequence(:t, 'id'), "
                                     "coalesce(max(id), 1)) from " + table.name),
                                {"t": table.name})
            copied[table.name] = len(rows)
    return copied


def row_counts(engine: Engine, tables: list[str]) -> dict[str, int]:
    with engine.connect() as conn:
        return {t: conn.scalar(select(func.count()).select_from(table(t))) for t in tables}


@pytest.mark.parametrize("revision", EARLIER)
def test_a_ledger_with_data_at_an_earlier_revision_upgrades_and_keeps_working(
        head_ledger, empty_url, revision, metrics, clock, tmp_path):
    source_url, paths = head_ledger
    config = alembic_config(empty_url)
    upgrade(empty_url, revision)
    source, target = make_engine(source_url), make_engine(empty_url)
    copied = copy_rows(source, target, revision)
    # A ledger from before inference_point could not hold the shipped run's points: the
    # re-ingest below adds them, and nothing else.
    not_held = 0 if "inference_point" in copied else row_counts(
        source, ["inference_point"])["inference_point"]
    source.dispose()
    assert sum(copied.values()) > 0

    upgrade(empty_url)
    assert row_counts(target, list(copied)) == copied
    command.check(config)  # no drift between the models and the upgraded schema

    again = ingest_paths(target, paths, metrics=metrics, today=TODAY, now=clock,
                         code_version="test")
    assert again.total("accepted") == not_held and again.total("unchanged") > 0
    new = tmp_path / "new.yaml"
    new.write_text(NEW_PACK, encoding="utf-8")
    clock.tick()
    assert ingest_paths(target, [new], metrics=metrics, today=TODAY, now=clock,
                        code_version="test").total("accepted") == 2
    target.dispose()


def test_unbounded_text_goes_down_cut_to_the_old_lengths_and_up_again(ledger_url, clock):
    """0007 made source text TEXT; going back to 0006 cuts a longer title to 500 characters
    on PostgreSQL (SQLite never enforced the length), and the ledger upgrades again."""
    config = alembic_config(ledger_url)
    engine = make_engine(ledger_url)
    title = "A title longer than the old column " * 20
    with write_session(engine) as session:
        session.add(Source(key="long", title=title, kind="dataset", recorded_at=clock()))

    command.downgrade(config, "0006")
    with engine.connect() as conn:
        kept = conn.scalar(text("select title from source"))
    assert kept == (title[:500] if engine.dialect.name == "postgresql" else title)

    upgrade(ledger_url)
    command.check(config)
    engine.dispose()
