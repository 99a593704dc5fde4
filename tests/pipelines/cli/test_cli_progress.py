"""Progress by stage on a terminal (standard error), nothing extra when piped or with --json:
`run`, `ingest`, `sweep`, `tco`, `serving`.

TTY_COMPATIBLE=1 is how rich is told a stream is a terminal; one test uses a real one (a
pseudo-terminal) to show that the test's terminal is the user's."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from tests.conftest import NVLINK_PACK
from tests.pipelines.conftest import SHIPPED_SCENARIOS

WORKED = str(SHIPPED_SCENARIOS / "tco-worked-illustration.yaml")
TCO_STAGES = ["✓ tco: read the scenario", "✓ tco: resolve the inputs",
              "✓ tco: evaluate the options"]


@pytest.fixture
def terminal(monkeypatch):
    """Standard error (and out) taken for a terminal, as rich decides it."""
    monkeypatch.setenv("TTY_COMPATIBLE", "1")


def done(stderr: str) -> list[str]:
    """The stage lines a terminal shows: `✓ tco: read the scenario` (colours, cursor moves
    and the seconds dropped)."""
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", stderr)
    lines = [line.strip() for line in re.split(r"[\r\n]+", plain)]
    return [line.rsplit(" ", 2)[0] for line in lines if line[:1] in ("✓", "✗") and line]


def test_tco_on_a_terminal_says_each_stage_as_it_ends(cli, terminal):
    result = cli("tco", WORKED)
    assert result.exit_code == 0, result.output
    assert done(result.stderr) == TCO_STAGES
    assert "s* = (R_U + K) / (R_O + K) = 1.92" in " ".join(result.stdout.split())
    assert "✓" not in result.stdout   # standard output keeps the answer alone


def test_tco_piped_or_with_json_prints_nothing_on_standard_error(cli, monkeypatch):
    assert cli("tco", WORKED).stderr == ""
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    printed = cli("tco", WORKED, "--json")
    assert printed.stderr == "" and json.loads(printed.stdout)["scenario"]


def test_a_stage_that_fails_is_marked_and_its_error_follows(cli, terminal):
    result = cli("serving", str(SHIPPED_SCENARIOS / "serving-deepseek-r1-fp4.yaml"))
    assert result.exit_code == 2
    lines = done(result.stderr)
    assert lines[0] == "✓ serving: read the scenario" and lines[-1].startswith("✗ serving: ")
    assert result.stderr.rstrip().splitlines()[-1].startswith("error: ")


def test_sweep_on_a_terminal_names_its_stages(cli, write_scenario, terminal):
    result = cli("sweep", str(write_scenario()), "--top", "1")
    assert result.exit_code == 0, result.output
    assert done(result.stderr) == ["✓ sweep: read the scenario",
                                   "✓ sweep: read the hardware figures",
                                   "✓ sweep: search the layouts"]


def test_ingest_on_a_terminal_names_reading_and_publishing(cli, write_pack, terminal):
    path = str(write_pack("nvlink.yaml", NVLINK_PACK))
    result = cli("ingest", path)
    assert result.exit_code == 0, result.output
    assert done(result.stderr) == ["✓ ingest: read 1 file", "✓ ingest: publish warehouse.duckdb"]
    assert done(cli("ingest", path, "--no-publish").stderr) == ["✓ ingest: read 1 file"]
    quiet = cli("ingest", path, "--json")
    assert quiet.stderr == "" and json.loads(quiet.stdout)["dataset_version"] == 1


def test_a_runs_ledger_update_names_each_step_in_order(history):
    assert history.stages == ["ingest", "recompute C2C", "recompute TCO", "recompute serving",
                              "flags"]


@pytest.mark.slow(seconds=3)
def test_a_real_terminal_gets_the_stages_and_a_pipe_gets_none(tmp_path):
    import pty

    command = [sys.executable, "-c", "from pipelines.cli.app import main; main()", "tco", WORKED,
               "--home", str(tmp_path / "home")]
    env = {k: v for k, v in os.environ.items() if k not in ("TTY_COMPATIBLE", "FORCE_COLOR")}
    leader, follower = pty.openpty()
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=follower, env=env) as shown:
        os.close(follower)
        seen = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:   # the command ended and closed its end
                break
            if not chunk:
                break
            seen += chunk
        stdout = shown.stdout.read().decode()
    os.close(leader)
    assert shown.returncode == 0
    assert done(seen.decode()) == TCO_STAGES
    assert "✓" not in stdout and "s* = (R_U + K) / (R_O + K)" in " ".join(stdout.split())
    piped = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    assert piped.stderr == ""


@pytest.mark.slow(seconds=10)   # Prefect's temporary server and a briefing's rendering
def test_run_on_a_terminal_names_each_stage_of_the_flow(cli, write_pack, terminal,
                                                        monkeypatch, tmp_path):
    (tmp_path / "scenarios-none").mkdir()
    monkeypatch.setenv("SPECLEDGER_SOURCES_DIR", str(write_pack("nvlink.yaml",
                                                                NVLINK_PACK).parent))
    monkeypatch.setenv("SPECLEDGER_SCENARIOS_DIR", str(tmp_path / "scenarios-none"))
    result = cli("run", "--offline", "--as-of", "2026-11-22")
    assert result.exit_code == 0, result.output
    stages = [line.removeprefix("✓ run 2026-11-22: ") for line in done(result.stderr)]
    assert stages == ["start Prefect", "fetch remote sources", "ingest", "recompute C2C",
                      "recompute TCO", "recompute serving", "flags", "render the briefing",
                      "deliver the briefing", "publish warehouse.duckdb"]
