"""The sequence docker-compose.yml runs, as real processes on this machine: migrate the ledger,
create the Prefect server's database and start the server, deploy prefect.yaml, then let a
worker run the weekly briefing, and then an on-demand ingest, once each. The commands are read
from the compose file, so the file and this test cannot drift apart. The default suite runs the
sequence up to the weekly briefing; `./dev trials` runs it whole, the on-demand ingest too."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import duckdb
import httpx
import pytest
import yaml
from sqlalchemy import func, select
from sqlalchemy.engine import URL, make_url

from db.engine import make_engine
from db.schema import C2CResult, DatasetVersion, Item, ServingResult, TcoResult
from pipelines.settings import PROJECT_ROOT
from tests import pg_database
from tests.conftest import pg_url_or_skip, reset_pg
from tests.deploy.conftest import PLACEHOLDER_PASSWORD, parsed_config

pytestmark = [pytest.mark.slow(seconds=70), pytest.mark.postgres]

TEAM_PACK = """\
source: {key: team-test-datasheet, title: A team's own datasheet, publisher: Example,
         kind: vendor_datasheet, published_on: 2026-01-05}
items:
  - {key: team-test-switch, name: "Team test switch", kind: switch_silicon, vendor: Example}
observations:
  - {item: team-test-switch, metric: switch_capacity, value: 51.2, unit: Tb/s,
     as_of: 2026-01-05, status: C}
"""
# A password the local server (trust auth) never checks: it must still never be printed.
SENTINEL_PASSWORD = "sentinel-pw-0c7d2e"
BIN = Path(sys.executable).parent  # prefect, alembic: the commands the compose file names


@dataclass
class Team:
    """Everything the sequence started, and where their output goes."""

    tmp: Path
    ledger_url: str
    prefect_db: str
    api_url: str = ""
    processes: list[tuple[subprocess.Popen[bytes], Path]] = field(default_factory=list)
    outputs: dict[str, str] = field(default_factory=dict)  # what each process printed

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("PREFECT_", "SPECLEDGER_"))}
        (self.tmp / "prefect-client").mkdir(exist_ok=True)
        env.update(PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}",
                   PREFECT_HOME=str(self.tmp / "prefect-client"),
                   PREFECT_SERVER_ANALYTICS_ENABLED="false", DO_NOT_TRACK="1")
        if self.api_url:
            env["PREFECT_API_URL"] = self.api_url
        env.update(extra)
        return env

    def run(self, name: str, command: list[str], timeout: float = 120, **env: str) -> str:
        """A one-shot: its output, or a failure that shows it."""
        result = subprocess.run(command, cwd=PROJECT_ROOT, env=self.env(**env), timeout=timeout,
                                capture_output=True, text=True, check=False)
        output = result.stdout + result.stderr
        self.outputs[name] = self.outputs.get(name, "") + output
        assert result.returncode == 0, f"{command} exited {result.returncode}:\n{output}"
        return output

    def run_worker_once(self, name: str, command: list[str], home: Path) -> None:
        """A worker that takes the runs due now, from a folder that is not the project."""
        elsewhere = self.tmp / "elsewhere"
        elsewhere.mkdir(exist_ok=True)
        worker = self.start(name, command + ["--run-once"], elsewhere,
                            SPECLEDGER_DATABASE_URL=self.ledger_url, SPECLEDGER_HOME=str(home),
                            SPECLEDGER_PROJECT_DIR=str(PROJECT_ROOT))
        try:
            worker.wait(timeout=300)
        except subprocess.TimeoutExpired:
            pytest.fail("the worker did not finish its flow runs in 300 s")
        assert worker.returncode == 0, (self.tmp / f"{name}.log").read_text(errors="replace")

    def flow_run_state(self, created: str) -> str:
        """The state of the run `prefect deployment run` printed it created."""
        found = re.search(r"UUID: ([0-9a-f-]{36})", created)
        assert found, f"no flow run id in:\n{created}"
        flow_run_id = found.group(1)
        return httpx.get(f"{self.api_url}/flow_runs/{flow_run_id}").json()["state"]["type"]

    def start(self, name: str, command: list[str], cwd: Path = PROJECT_ROOT,
              **env: str) -> subprocess.Popen[bytes]:
        """A long-running process in its own process group, its output in a log file."""
        log = self.tmp / f"{name}.log"
        with log.open("wb") as sink:
            process = subprocess.Popen(command, cwd=cwd, env=self.env(**env),
                                       stdout=sink, stderr=subprocess.STDOUT,
                                       start_new_session=True)
        self.processes.append((process, log))
        return process

    def stop_all(self, out: IO[str]) -> None:
        """Stop what is still running (its process group) and show every log once."""
        while self.processes:
            process, log = self.processes.pop()
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait()
            # Shown by pytest only when the test failed.
            out.write(f"\n----- {log.name} (exit {process.returncode}) -----\n"
                      f"{log.read_text(errors='replace')[-20000:]}")
            self.outputs[log.stem] = log.read_text(errors="replace")


def with_password(url: str) -> URL:
    parsed = make_url(url)
    return parsed if parsed.password else parsed.set(password=SENTINEL_PASSWORD)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_health(api_url: str, server: subprocess.Popen[bytes], log: Path,
                    timeout: float = 90) -> float:
    """Seconds until the server answered /api/health."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        assert server.poll() is None, f"the Prefect server exited:\n{log.read_text()}"
        try:
            if httpx.get(f"{api_url}/health", timeout=2).status_code == 200:
                return time.monotonic() - start
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    pytest.fail(f"the Prefect server did not answer in {timeout}s:\n{log.read_text()}")


@pytest.fixture
def team(tmp_path: Path) -> Iterator[Team]:
    """The test ledger (emptied), a name for the Prefect database; stops what it started."""
    ledger_url = pg_url_or_skip()
    reset_pg(ledger_url)
    url = with_password(ledger_url)
    admin_url = make_url(ledger_url).set(drivername="postgresql").render_as_string(
        hide_password=False)
    team = Team(tmp=tmp_path, ledger_url=url.render_as_string(hide_password=False),
                prefect_db=f"{url.database}_prefect_{uuid.uuid4().hex[:6]}")
    try:
        yield team
    finally:
        team.stop_all(sys.stdout)
        pg_database.main("drop", admin_url, team.prefect_db)


def compose_services(tmp: Path, prefect_db: str) -> dict[str, Any]:
    return parsed_config(tmp, POSTGRES_PASSWORD=PLACEHOLDER_PASSWORD,
                         PREFECT_DB_NAME=prefect_db)["services"]


@pytest.mark.parametrize("then_ingest", [
    pytest.param(False, id="weekly"), pytest.param(True, id="weekly-then-ingest",
                                                   marks=pytest.mark.trials)])
def test_a_worker_runs_the_deployed_weekly_briefing_against_a_prefect_server_on_postgres(
        team: Team, then_ingest: bool):
    services = compose_services(team.tmp, team.prefect_db)
    ledger = make_url(team.ledger_url)
    timings: dict[str, float] = {}

    # a. migrate: the compose one-shot's own command, on the test ledger.
    start = time.monotonic()
    team.run("migrate", services["migrate"]["command"], SPECLEDGER_DATABASE_URL=team.ledger_url)
    timings["migrate"] = time.monotonic() - start

    # b. the Prefect server's database (the prefect-db one-shot's command), then the server.
    prefect_db = services["prefect-db"]
    pg_env = {"PGHOST": ledger.host or "127.0.0.1", "PGPORT": str(ledger.port or 5432),
              "PGUSER": ledger.username or "postgres", "PGDATABASE": ledger.database or "",
              "PGPASSWORD": ledger.password or ""}
    team.run("prefect-db", prefect_db["entrypoint"] + prefect_db["command"], **pg_env)
    server_db = ledger.set(drivername="postgresql+asyncpg", database=team.prefect_db)
    port = free_port()
    team.api_url = f"http://127.0.0.1:{port}/api"
    # The compose command, on loopback and a free port instead of 0.0.0.0:4200.
    command = services["prefect-server"]["command"]
    command[command.index("--host") + 1] = "127.0.0.1"
    command[command.index("--port") + 1] = str(port)
    start = time.monotonic()
    server = team.start("prefect-server", command,
                        PREFECT_HOME=str(team.tmp / "prefect-server"),
                        PREFECT_API_DATABASE_CONNECTION_URL=server_db.render_as_string(
                            hide_password=False))
    timings["server healthy"] = wait_for_health(team.api_url, server, team.tmp /
                                                "prefect-server.log")

    # c. the deploy one-shot: the work pool and prefect.yaml's deployments. Run twice, as
    # every `docker compose up` does: the second finds the pool and updates the deployments.
    start = time.monotonic()
    team.run("deploy", services["deploy"]["command"])
    team.run("deploy", services["deploy"]["command"])
    timings["deploy x2"] = time.monotonic() - start
    deployments = {d["name"]: d for d in
                   httpx.post(f"{team.api_url}/deployments/filter", json={}).json()}
    assert sorted(deployments) == ["ingest", "sweep", "weekly"]
    # A re-deploy replaces the schedule (an edit of prefect.yaml applies), never adds one.
    [declared] = next(d for d in yaml.safe_load((PROJECT_ROOT / "prefect.yaml").read_text())
                      ["deployments"] if d["name"] == "weekly")["schedules"]
    [schedule] = [s["schedule"] for s in deployments["weekly"]["schedules"]]
    assert (schedule["cron"], schedule["timezone"]) == (declared["cron"], declared["timezone"])
    assert deployments["ingest"]["schedules"] == []

    # d. an ad-hoc run of the weekly briefing, and a worker that runs it once. The worker
    # starts elsewhere: prefect.yaml's pull step must take the run to SPECLEDGER_PROJECT_DIR.
    created = team.run("deployment run", ["prefect", "deployment", "run",
                                          "weekly-briefing/weekly"])
    home = team.tmp / "home"
    start = time.monotonic()
    team.run_worker_once("worker", services["worker"]["command"], home)
    timings["worker: weekly run"] = time.monotonic() - start

    # e. the run completed, the ledger has a version with results, the outputs exist.
    assert team.flow_run_state(created) == "COMPLETED", \
        (team.tmp / "worker.log").read_text(errors="replace")[-5000:]
    engine = make_engine(team.ledger_url)
    try:
        with engine.connect() as conn:
            version = conn.scalar(select(func.max(DatasetVersion.id)))
            counts = [conn.scalar(select(func.count()).where(model.dataset_version_id == version))
                      for model in (C2CResult, TcoResult, ServingResult)]
    finally:
        engine.dispose()
    assert version is not None and min(counts) > 0, (version, counts)
    briefings = sorted(p.name for p in (home / "briefings").glob("*.pdf"))
    assert len(briefings) == 2 and briefings[0] == briefings[1].replace(".pdf", "-appendix.pdf")
    for pdf in briefings:   # the briefing and its companion appendix
        assert (home / "briefings" / pdf).read_bytes()[:5] == b"%PDF-"
    with duckdb.connect(str(home / "warehouse.duckdb"), read_only=True) as warehouse:
        assert warehouse.execute("select dataset_version from meta").fetchall() == [(version,)]

    if then_ingest:
        # The on-demand ingest, as README shows it: a file the worker can read, passed as `paths`.
        pack = team.tmp / "inbox" / "team-pack.yaml"
        pack.parent.mkdir()
        pack.write_text(TEAM_PACK)
        created = team.run("deployment run", [
            "prefect", "deployment", "run", "ingest-files/ingest", "-p", f'paths=["{pack}"]'])
        start = time.monotonic()
        team.run_worker_once("worker-ingest", services["worker"]["command"], home)
        timings["worker: ingest run"] = time.monotonic() - start
        assert team.flow_run_state(created) == "COMPLETED"
        engine = make_engine(team.ledger_url)
        try:
            with engine.connect() as conn:
                assert conn.scalar(select(Item.name).where(Item.key == "team-test-switch")) == \
                    "Team test switch"
        finally:
            engine.dispose()

    team.stop_all(sys.stdout)
    leaked = [name for name, text in team.outputs.items() if ledger.password in text]
    assert not leaked, f"the database password appears in the output of {leaked}"
    sys.stdout.write(f"timings (s): { {k: round(v, 1) for k, v in timings.items()} }\n")
