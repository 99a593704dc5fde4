"""docker-compose.yml as Debian's `docker-compose config` reads it (no Docker engine needed)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from pipelines.settings import PROJECT_ROOT

COMPOSE_FILE = PROJECT_ROOT / "docker-compose.yml"
# A value only the tests' env file holds: seen in `config` output, it came by interpolation.
PLACEHOLDER_PASSWORD = "placeholder-pw-4b1e9c"

ComposeConfig = Callable[..., subprocess.CompletedProcess[str]]


def docker_compose() -> str:
    """Debian's docker-compose (./dev setup installs it); required in CI."""
    found = shutil.which("docker-compose")
    if found:
        return found
    if os.environ.get("CI") or os.environ.get("SPECLEDGER_REQUIRE_PG"):
        pytest.fail("docker-compose is not installed: run ./dev setup")
    pytest.skip("docker-compose is not installed (./dev setup installs it)")


def compose_variables() -> set[str]:
    """Every variable docker-compose.yml interpolates."""
    return set(re.findall(r"\$\{(\w+)", COMPOSE_FILE.read_text()))


def run_compose_config(env_dir: Path, **variables: str) -> subprocess.CompletedProcess[str]:
    """`docker-compose config` with an env file holding exactly `variables`."""
    env_file = env_dir / "compose.env"
    env_file.write_text("".join(f"{name}={value}\n" for name, value in variables.items()))
    # The shell's values would win over the env file's: keep only the file's.
    env = {k: v for k, v in os.environ.items() if k not in compose_variables()}
    return subprocess.run(
        [docker_compose(), "-f", str(COMPOSE_FILE), "--env-file", str(env_file), "config"],
        capture_output=True, text=True, env=env, cwd=env_dir, timeout=60, check=False)


def parsed_config(env_dir: Path, **variables: str) -> dict[str, Any]:
    """The resolved compose file; fails with docker-compose's own message when it is invalid."""
    result = run_compose_config(env_dir, **variables)
    assert result.returncode == 0, result.stderr
    return yaml.safe_load(result.stdout)


@pytest.fixture
def compose_config(tmp_path: Path) -> ComposeConfig:
    """Run `docker-compose config` with the given variables in a throwaway env file."""

    def run(**variables: str) -> subprocess.CompletedProcess[str]:
        return run_compose_config(tmp_path, **variables)

    return run


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The resolved compose file with only the required variable set."""
    return parsed_config(tmp_path_factory.mktemp("compose"),
                         POSTGRES_PASSWORD=PLACEHOLDER_PASSWORD)
