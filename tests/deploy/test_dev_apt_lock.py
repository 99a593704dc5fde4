"""`./dev` on a fresh machine where another apt holds the dpkg lock: it waits for the lock
(apt-get -o DPkg::Lock::Timeout=300) and says why, instead of failing in a second. apt-get,
dpkg-query and fuser are stand-ins on PATH that record what they were asked."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from pipelines.settings import PROJECT_ROOT

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="./dev calls sudo when not root")


def stand_in(folder: Path, name: str, script: str) -> None:
    path = folder / name
    path.write_text(f"#!/bin/sh\n{script}\n")
    path.chmod(0o755)


def test_dev_setup_waits_for_the_dpkg_lock_and_says_why(tmp_path):
    bin_dir, venv = tmp_path / "bin", tmp_path / "venv"
    bin_dir.mkdir()
    (venv / "bin").mkdir(parents=True)
    stand_in(venv / "bin", "python", "exit 0")
    time.sleep(0.01)
    (venv / ".specledger-installed").touch()  # the Python side is installed already
    asked = tmp_path / "apt-get.args"
    stand_in(bin_dir, "dpkg-query", "exit 1")  # no Debian package installed
    stand_in(bin_dir, "fuser", "exit 0")       # someone holds the lock
    stand_in(bin_dir, "apt-get", f'echo "$@" >> {asked}')
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}",
           "SPECLEDGER_VENV": str(venv)}
    done = subprocess.run([str(PROJECT_ROOT / "dev"), "setup"], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "waiting for another apt/dpkg process to release the dpkg lock (up to 300 s" in (
        done.stdout)
    [install] = asked.read_text().splitlines()
    assert install.startswith("-o DPkg::Lock::Timeout=300 install -y")
