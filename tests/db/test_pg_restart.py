"""PostgreSQL restarted while a run is in its ledger transaction.

The run either completes (its ledger update is retried once the server is back) or exits with
a clear one-paragraph message and a re-run completes; either way the ledger then holds the
dataset version an undisturbed run makes. The server restarted is a throwaway cluster of the
tests' own (tests/pg_cluster.py), never the machine's: other programs use that one. The default
suite restarts once (with retries); `./dev trials` also runs the restart without retries.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from db.engine import normalize_url
from tests.conftest import reset_pg
from tests.pg_cluster import Cluster, binaries, throwaway_cluster
from tests.support.fault_trials import (
    Run,
    check_ledger,
    copy_shipped_sources,
    fresh_dataset_hash,
    latest_dataset_hash,
    scratch_databases,
    shipped_scenarios,
    undisturbed_run,
    wait_for_write_lock,
)

pytestmark = [pytest.mark.slow(seconds=50), pytest.mark.postgres]

PASSWORD = "S3cr3t-P4ss"
DAY = date(2026, 11, 22)
BIG_PACK_ROWS = 20_000
# Retry sooner than the default 15 s: the test waits for it.
FAST_RETRY = {"SPECLEDGER_LEDGER_RETRY_DELAY_SECONDS": "3"}


@pytest.fixture(scope="module")
def own_cluster() -> Iterator[Cluster]:
    """A PostgreSQL cluster of the module's own, on a free port, removed afterwards."""
    if binaries() is None:
        message = "initdb/pg_ctl are not installed (Debian's postgresql package)"
        if os.environ.get("SPECLEDGER_REQUIRE_PG") or os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    with throwaway_cluster() as cluster:
        yield cluster


@pytest.fixture
def restartable_pg(own_cluster: Cluster) -> Iterator[str]:
    """An empty database on the module's own cluster; the cluster is up again afterwards."""
    url = normalize_url(own_cluster.url("specledger"))
    reset_pg(url)
    try:
        yield url
    finally:
        if not own_cluster.running():
            own_cluster.start()
        assert own_cluster.running(), own_cluster.log()


def add_big_pack(sources: Path, rows: int = BIG_PACK_ROWS) -> None:
    """A CSV pack large enough that the ledger transaction lasts seconds, so that the restart
    lands inside it, not after its commit."""
    lines = ["source,source_title,source_kind,item,item_kind,metric,value,unit,as_of,status"]
    for r in range(rows):
        as_of = date(2010, 1, 1) + timedelta(days=r // 500)  # unique per (item, as_of)
        lines.append(f"restart-bench,Restart bench,dataset,bench-gpu-{r % 500},gpu,tdp,"
                     f"{100 + r % 900},W,{as_of},S")
    (sources / "big.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")


def lost(text: str) -> bool:
    """Whether `text` tells of the connection the restart cut (psycopg words it either way,
    depending on whether the server's goodbye arrived before the socket closed)."""
    return ("terminating connection due to administrator command" in text
            or "server closed the connection unexpectedly" in text)


def with_password(url: str) -> str:
    return (make_url(url).set(drivername="postgresql", password=PASSWORD)
            .render_as_string(hide_password=False))


# With retries the ledger update starts again once the server is back; without, the run
# stops with one paragraph. One restart each: the server is shared.
@pytest.mark.parametrize("retries", [2, pytest.param(0, marks=pytest.mark.trials)])
def test_a_restart_during_the_ledger_update_retries_or_fails_clearly_and_the_ledger_matches(
        own_cluster, restartable_pg, tmp_path, retries):
    url = with_password(restartable_pg)
    sources = copy_shipped_sources(tmp_path / "sources")
    add_big_pack(sources)
    home = tmp_path / "home"

    run = Run(home, sources, DAY, url, env={"SPECLEDGER_LEDGER_RETRIES": str(retries),
                                            "SPECLEDGER_LEDGER_RETRY_DELAY_SECONDS": "3"})
    wait_for_write_lock(url, run)
    restart = own_cluster.restart()
    assert restart.returncode == 0, restart.stderr + own_cluster.log()
    code, stdout = run.wait()
    output = stdout + "\n".join(run.stderr)

    assert PASSWORD not in output and "Traceback" not in output
    if retries:
        assert code == 0, output
        assert any("Retry 1/2" in line and lost(line) for line in run.stderr), run.stderr
    else:
        assert code != 0
        (message,) = [line for line in run.stderr if line.startswith("error:")]
        assert message.startswith("error: specledger run failed at step update-ledger: the "
                                  "connection to the ledger database postgresql://postgres:***@"
                                  ), message
        assert lost(message), message

    if not retries:  # the run stopped: the next one must complete (raises unless it does)
        undisturbed_run(home, sources, DAY, url)
    assert check_ledger(url, shipped_scenarios()) == []
    fresh_name = f"{make_url(restartable_pg).database}_fresh"
    with scratch_databases(restartable_pg, fresh_name) as (fresh_url,):
        assert latest_dataset_hash(url) == fresh_dataset_hash(tmp_path / "fresh-home", sources,
                                                              fresh_url)
