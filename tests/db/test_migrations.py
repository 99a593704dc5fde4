"""One Alembic chain on both dialects: up, down with rows present, up again, and no drift."""

import pytest
from alembic import command
from alembic.script import ScriptDirectory
from sqlalchemy import func, inspect, select

from db.engine import Session, alembic_config, make_engine, upgrade, write_session
from db.schema import Base, C2CResult, Observation, Scenario, TcoResult
from pipelines.ingest import ingest_paths
from tests.conftest import TODAY
from tests.db.test_results import add, scenario
from tests.db.test_tco_results import add_tco


def test_the_chain_has_a_single_head():
    script = ScriptDirectory.from_config(alembic_config("sqlite://"))
    assert len(script.get_heads()) == 1
    assert script.get_current_head() is not None


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
