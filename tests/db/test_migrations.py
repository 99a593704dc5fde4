"""One Alembic chain on both dialects: up, down with rows present, up again, and no drift."""

from alembic import command
from alembic.script import ScriptDirectory
from sqlalchemy import func, inspect, select

from db.engine import Session, alembic_config, make_engine, upgrade
from db.schema import Base, Observation
from pipelines.ingest import ingest_paths
from tests.conftest import TODAY


def test_the_chain_has_a_single_head():
    script = ScriptDirectory.from_config(alembic_config("sqlite://"))
    assert len(script.get_heads()) == 1
    assert script.get_current_head() is not None


def test_upgrade_downgrade_upgrade_with_rows_and_check_is_clean(ledger_url, nvlink_pack, metrics,
                                                                clock):
    config = alembic_config(ledger_url)
    engine = make_engine(ledger_url)
    ingest_paths(engine, [nvlink_pack], metrics=metrics, today=TODAY, now=clock,
                 code_version="test")
    command.check(config)  # raises if the models and the migrations disagree

    command.downgrade(config, "base")
    assert set(inspect(engine).get_table_names()) <= {"alembic_version"}

    upgrade(ledger_url)
    assert set(Base.metadata.tables) <= set(inspect(engine).get_table_names())
    ingest_paths(engine, [nvlink_pack], metrics=metrics, today=TODAY, now=clock,
                 code_version="test")
    with Session(engine) as session:
        assert session.scalar(select(func.count()).select_from(Observation)) == 2
    command.check(config)
    engine.dispose()
