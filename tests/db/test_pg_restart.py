"""PostgreSQL restarted while a run is in its ledger transaction.

The run either completes (its ledger update is retried once the server is back) or exits with
a clear one-paragraph message; either way a re-run completes with the dataset version an
undisturbed run makes. The server is always up again when the test ends: others use it.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from bench.fault_trials import (
    Run,
    check_ledger,
    copy_shipped_sources,
    latest_dataset_hash,
    scratch_databases,
    shipped_scenarios,
    undisturbed_run,
    wait_for_write_lock,
)
from tests.conftest import pg_url_or_skip, reset_pg

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

PASSWORD = "S3cr3t-P4ss"
DAY = date(2026, 11, 22)
BIG_PACK_ROWS = 20_000
# Retry sooner than the default 15 s: the test waits for it.
FAST_RETRY = {"SPECLEDGER_LEDGER_RETRY_DELAY_SECONDS": "3"}


def cluster() -> list[str]:
    version = sorted(p.name for p in Path("/etc/postgresql").iterdir())[-1]
    return ["pg_ctlcluster", "--skip-systemctl-redirect", version, "main"]


def server_ready(url: str) -> bool:
    host = make_url(url)
    return subprocess.run(["pg_isready", "-h", host.host or "127.0.0.1",
                           "-p", str(host.port or 5432)], capture_output=True).returncode == 0


def wait_until_ready(url: str, timeout: float = 60) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server_ready(url):
            return True
        time.sleep(0.5)
    return False


@pytest.fixture
def restartable_pg() -> Iterator[str]:
    """The test database, reset; the server is up again afterwards, whatever happened."""
    if not Path("/etc/postgresql").is_dir():
        pytest.skip("no local PostgreSQL cluster to restart")
    url = pg_url_or_skip()
    reset_pg(url)
    try:
        yield url
    finally:
        if not wait_until_ready(url, timeout=30):
            subprocess.run([*cluster(), "start"], capture_output=True)
        assert wait_until_ready(url), "PostgreSQL did not come back after the restart"


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
@pytest.mark.parametrize("retries", [2, 0])
def test_a_restart_during_the_ledger_update_retries_or_fails_clearly_and_a_rerun_matches(
        restartable_pg, tmp_path, retries):
    url = with_password(restartable_pg)
    sources = copy_shipped_sources(tmp_path / "sources")
    add_big_pack(sources)
    home = tmp_path / "home"

    run = Run(home, sources, DAY, url, env={"SPECLEDGER_LEDGER_RETRIES": str(retries),
                                            "SPECLEDGER_LEDGER_RETRY_DELAY_SECONDS": "3"})
    wait_for_write_lock(url, run)
    restart = subprocess.run([*cluster(), "restart"], capture_output=True, text=True)
    assert restart.returncode == 0, restart.stderr
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

    undisturbed_run(home, sources, DAY, url)  # raises unless it completes
    assert check_ledger(url, shipped_scenarios()) == []
    fresh_name = f"{make_url(restartable_pg).database}_fresh"
    with scratch_databases(restartable_pg, fresh_name) as (fresh_url,):
        undisturbed_run(tmp_path / "fresh-home", sources, DAY, fresh_url)
        assert latest_dataset_hash(url) == latest_dataset_hash(fresh_url)
