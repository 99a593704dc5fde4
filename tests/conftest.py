"""Tiny fixtures: a migrated ledger on each dialect, a metric catalogue, a pack writer."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import textwrap
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from sqlalchemy.engine import make_url

from db.engine import Engine, make_engine, normalize_url, upgrade
from models.observations import MetricDef
from pipelines.inputs.adapters.base import AdapterOptions
from pipelines.inputs.catalog import load_metrics
from pipelines.jobs.ingest import IngestReport, ingest_paths
from pipelines.settings import PROJECT_ROOT
from tests import pg_database

# No per-example deadline: how fast a case runs is a benchmark's question (bench/), and on two
# busy cores a 200 ms deadline failed a band-shape property on a case that took 52 ms again.
settings.register_profile("specledger", deadline=None)
settings.load_profile("specledger")

# Quiet, offline Prefect in a throwaway home; set before anything imports prefect. The home
# is removed when the process ends (each xdist worker makes its own).
if "PREFECT_HOME" not in os.environ:
    os.environ["PREFECT_HOME"] = tempfile.mkdtemp(prefix="specledger-prefect-")
    atexit.register(shutil.rmtree, os.environ["PREFECT_HOME"], ignore_errors=True)
for _name, _value in {"PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "1",
                      "PREFECT_LOGGING_LEVEL": "WARNING",
                      "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "90"}.items():
    os.environ.setdefault(_name, _value)
# The tests never reach the public internet: the shipped remote sources (gpuhunt's catalogs,
# Azure's price API) are off unless a test turns them on (offline=False) against its own
# loopback server. A user's network must not make a test's result.
os.environ.setdefault("SPECLEDGER_OFFLINE", "true")
# specledger's cache (a migrated Prefect database any new home starts from) in a throwaway
# folder of this test process and the commands it starts, not the user's ~/.cache.
if "SPECLEDGER_CACHE_DIR" not in os.environ:
    os.environ["SPECLEDGER_CACHE_DIR"] = tempfile.mkdtemp(prefix="specledger-cache-")
    atexit.register(shutil.rmtree, os.environ["SPECLEDGER_CACHE_DIR"], ignore_errors=True)

TODAY = date(2026, 11, 22)
PG_URL = os.environ.get("SPECLEDGER_TEST_PG_URL")
# Under `pytest -n N` (pytest-xdist) each worker gets a database of its own beside the run's,
# created when the worker starts and dropped when it ends, so workers never share a ledger.
_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
if PG_URL and _WORKER:
    _run_db = make_url(PG_URL)
    _worker_db = f"{_run_db.database}_{_WORKER}"
    if pg_database.main("create", pg_database.plain(PG_URL), _worker_db) != 0:
        raise RuntimeError(f"cannot create the worker database {_worker_db}")
    atexit.register(pg_database.main, "drop", pg_database.plain(PG_URL), _worker_db)
    PG_URL = _run_db.set(database=_worker_db).render_as_string(hide_password=False)
# `./dev trials` sets it: the full kill trials, PostgreSQL restarts and team sequences run
# (tests marked `trials`); the default suite runs their samples only.
FULL_TRIALS = os.environ.get("SPECLEDGER_FULL_TRIALS") == "1"


def examples(full: int) -> int:
    """How many examples a Hypothesis property test draws: `full` with SPECLEDGER_FULL_TRIALS=1
    (`SPECLEDGER_FULL_TRIALS=1 ./dev test` runs every test, the trials too), a third of it
    (at least 10) in the default run. Use: `@settings(max_examples=examples(150))`."""
    return full if FULL_TRIALS else max(10, full // 3)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "trials: a full fault trial, run by `./dev trials` "
                                       "(SPECLEDGER_FULL_TRIALS=1); the default run samples it")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without SPECLEDGER_FULL_TRIALS=1 the full trials are deselected (their samples run).
    Then the files that take longest come first (see `heaviest_files_first`)."""
    if not FULL_TRIALS:
        trials = [item for item in items if item.get_closest_marker("trials")]
        if trials:
            config.hook.pytest_deselected(items=trials)
            items[:] = [item for item in items if not item.get_closest_marker("trials")]
    items[:] = heaviest_files_first(items)


# A `slow` test that does not say how long it takes counts as this many seconds.
SLOW_TEST_SECONDS = 5.0


def heaviest_files_first(items: list[pytest.Item]) -> list[pytest.Item]:
    """`items` with whole files ordered by their `slow` tests' seconds (`slow(seconds=N)`:
    about how long the test takes alone), the heaviest first; other files keep their order.

    ./dev test hands whole files to its workers in this order (--no-loadscope-reorder), so
    the long ones start at once and the many short ones fill in beside them: the longest
    file then ends with the rest instead of starting when they are done."""
    def seconds(item: pytest.Item) -> float:
        marker = item.get_closest_marker("slow")
        return 0.0 if marker is None else float(marker.kwargs.get("seconds", SLOW_TEST_SECONDS))

    def file_of(item: pytest.Item) -> str:
        return item.nodeid.split("::")[0]

    weight: dict[str, float] = {}
    for item in items:
        weight[file_of(item)] = weight.get(file_of(item), 0.0) + seconds(item)
    # A stable sort: a file's tests stay together and in order, as do files of equal weight.
    return sorted(items, key=lambda item: -weight[file_of(item)])


def pg_url_or_skip() -> str:
    """The throwaway PostgreSQL database; required (not skipped) when CI asks for it."""
    if PG_URL:
        return normalize_url(PG_URL)
    if os.environ.get("SPECLEDGER_REQUIRE_PG") or os.environ.get("CI"):
        pytest.fail("SPECLEDGER_TEST_PG_URL is not set: the tests must run on PostgreSQL")
    pytest.skip("SPECLEDGER_TEST_PG_URL is not set")


def reset_pg(url: str) -> None:
    """An empty database: no schema at all (for tests of the migrations or of what migrates)."""
    pg_database.drop_schema(url)


def empty_pg_ledger(url: str) -> str:
    """The PostgreSQL database at `url` as an empty ledger at head. The Alembic chain runs
    once per session (and again only after a test changed the schema); otherwise the tables
    are emptied, which is ~10x faster than dropping the schema and migrating."""
    pg_database.reset_to_empty_head(url, upgrade)
    return url


class SqliteTemplate:
    """One SQLite ledger migrated per session; each test gets a byte copy of it."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "template.sqlite"
        self.migrated = False

    def copy_to(self, path: Path) -> str:
        if not self.migrated:
            upgrade(f"sqlite:///{self.path}")
            self.migrated = True
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(self.path, path)
        return f"sqlite:///{path}"


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> SqliteTemplate:
    return SqliteTemplate(tmp_path_factory.mktemp("sqlite-template"))


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def ledger_url(request: pytest.FixtureRequest, tmp_path: Path,
               sqlite_template: SqliteTemplate) -> str:
    """An empty, migrated ledger on SQLite (a file) and on PostgreSQL (the test database).
    tests/db/test_migrations.py runs the real chain; here it runs once per session."""
    if request.param == "sqlite":
        return sqlite_template.copy_to(tmp_path / "ledger.sqlite")
    return empty_pg_ledger(pg_url_or_skip())


@pytest.fixture
def ledger(ledger_url: str) -> Iterator[Engine]:
    engine = make_engine(ledger_url, lock_timeout_seconds=5)
    yield engine
    engine.dispose()


@pytest.fixture(scope="session")
def metrics() -> dict[str, MetricDef]:
    return load_metrics(PROJECT_ROOT / "data" / "catalog.yaml")


@dataclass
class ModuleLedger:
    """A migrated ledger of one module's own, with what the `ingest`, `write_pack` and `clock`
    fixtures give a test: for a warehouse built once per module and dialect that its tests
    only read (publishing one costs about a second; many tests read the same one)."""

    engine: Engine
    folder: Path
    metrics: dict[str, MetricDef]
    clock: Clock = field(default_factory=lambda: Clock())

    def ingest(self, *paths: Path, **options: Any) -> IngestReport:
        return ingest_into(self.engine, paths, self.metrics, self.clock, **options)

    def write_pack(self, name: str, content: str) -> Path:
        return write_pack_in(self.folder, name, content)


@pytest.fixture(scope="module",
                params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def module_ledgers(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
                   sqlite_template: SqliteTemplate, metrics: dict[str, MetricDef]
                   ) -> Iterator[Callable[[str], ModuleLedger]]:
    """`make(name)`: an empty ledger of the module's own on each dialect, a SQLite file or a
    PostgreSQL database beside the test one (which every `ledger` test empties), dropped at
    the module's end. One per warehouse a module builds once."""
    module = request.module.__name__.rsplit(".", 1)[-1].removeprefix("test_")
    with ExitStack() as stack:

        def make(name: str) -> ModuleLedger:
            folder = tmp_path_factory.mktemp(name)
            if request.param == "sqlite":
                url = sqlite_template.copy_to(folder / "ledger.sqlite")
            else:
                url = stack.enter_context(pg_database.extra_database(
                    pg_url_or_skip(), f"{module}_{name}"))
                upgrade(url)
            engine = make_engine(url, lock_timeout_seconds=5)
            stack.callback(engine.dispose)
            return ModuleLedger(engine, folder, metrics)

        yield make


class Clock:
    """A knowledge clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def tick(self, **delta: float) -> datetime:
        self.now += timedelta(**delta) if delta else timedelta(hours=1)
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def write_pack(tmp_path: Path) -> Callable[[str, str], Path]:
    """Write a pack file from an indented literal; returns its path."""

    def write(name: str, content: str) -> Path:
        return write_pack_in(tmp_path, name, content)

    return write


def write_pack_in(folder: Path, name: str, content: str) -> Path:
    """`content` (an indented literal) as the pack `folder`/packs/`name`."""
    path = folder / "packs" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(content).lstrip(), encoding="utf-8")
    return path


@pytest.fixture
def ingest(ledger: Engine, metrics: dict[str, MetricDef],
           clock: Clock) -> Callable[..., IngestReport]:
    """Ingest paths into the test ledger at the clock's current time."""

    def run(*paths: Path, **options: Any) -> IngestReport:
        return ingest_into(ledger, paths, metrics, clock, **options)

    return run


def ingest_into(engine: Engine, paths: Sequence[Path], metrics: dict[str, MetricDef],
                clock: Callable[[], datetime], **options: Any) -> IngestReport:
    """Ingest `paths` into the ledger at `engine` at the clock's time; `options` are
    AdapterOptions' fields: item=, as_of=, aliases=."""
    return ingest_paths(engine, list(paths), metrics=metrics, today=TODAY, now=clock,
                        code_version="test", lock_timeout_seconds=5,
                        options=AdapterOptions(**options))


NVLINK_PACK = """
source:
  key: nvidia-nvlink-page
  title: NVIDIA NVLink and NVLink Switch
  publisher: NVIDIA
  url: https://www.nvidia.com/en-us/data-center/nvlink/
  kind: vendor_datasheet
  published_on: 2024-03-18
items:
  - {key: nvlink-5, name: "NVLink 5.0", kind: scaleup_fabric, vendor: NVIDIA, family: NVLink}
  - {key: gb200-nvl72, name: "GB200 NVL72", kind: rack, vendor: NVIDIA, family: Blackwell}
observations:
  - {item: nvlink-5, metric: scaleup_bw_per_gpu_bidir, value: 1.8, unit: TB/s, as_of: 2024-03-18,
     status: C, quote: "up to 18 NVLink 100 GB/s connections for a total bandwidth of 1.8 TB/s"}
  - {item: gb200-nvl72, metric: rack_it_power, value: [120, 132], unit: kW, as_of: 2024-03-18,
     status: S}
"""


@pytest.fixture
def nvlink_pack(write_pack: Callable[[str, str], Path]) -> Path:
    return write_pack("nvlink.yaml", NVLINK_PACK)
