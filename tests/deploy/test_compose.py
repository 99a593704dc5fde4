"""docker-compose.yml, the Dockerfile and .env.example: what a team deployment starts, in which
order, from which image, and that no secret is written in any of them."""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Any

import psycopg
import pytest
import yaml
from sqlalchemy.engine import make_url

from pipelines.settings import PROJECT_ROOT
from tests import pg_database
from tests.conftest import pg_url_or_skip
from tests.deploy.conftest import (
    COMPOSE_FILE,
    PLACEHOLDER_PASSWORD,
    ComposeConfig,
    parsed_config,
)

DOCKERFILE = PROJECT_ROOT / "Dockerfile"
REPO_IMAGE_SERVICES = {"prefect-server", "migrate", "deploy", "worker"}
# In ./dev's DEBIAN_PACKAGES for the tests only; the image must not carry them.
TEST_ONLY_PACKAGES = {"docker-compose"}


def dockerfile_instructions(name: str) -> list[str]:
    """The arguments of every `name` instruction, continuation lines joined."""
    joined = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    return [line.split(None, 1)[1] for line in joined.splitlines()
            if line.split(None, 1)[:1] == [name]]


def dockerfile_env() -> dict[str, str]:
    return dict(pair.split("=", 1) for args in dockerfile_instructions("ENV")
                for pair in shlex.split(args))


def depends_on(service: dict[str, Any]) -> dict[str, str]:
    return {name: dep["condition"] for name, dep in service.get("depends_on", {}).items()}


def test_the_team_deployment_declares_the_ledger_the_prefect_server_its_one_shots_and_a_worker(
        config):
    assert set(config["services"]) == {"postgres", "prefect-db", "prefect-server", "migrate",
                                       "deploy", "worker"}
    assert set(config["volumes"]) == {"ledger-data", "outputs"}


def test_postgres_and_the_prefect_server_have_health_checks(config):
    services = config["services"]
    assert "pg_isready" in " ".join(services["postgres"]["healthcheck"]["test"])
    assert "/api/health" in " ".join(services["prefect-server"]["healthcheck"]["test"])


@pytest.mark.parametrize("service, waits_for", [
    ("prefect-db", {"postgres": "service_healthy"}),
    ("prefect-server", {"postgres": "service_healthy",
                        "prefect-db": "service_completed_successfully"}),
    ("migrate", {"postgres": "service_healthy"}),
    ("deploy", {"prefect-server": "service_healthy"}),
    ("worker", {"prefect-server": "service_healthy",
                "migrate": "service_completed_successfully",
                "deploy": "service_completed_successfully"}),
])
def test_each_service_starts_only_once_what_it_needs_is_ready(config, service, waits_for):
    assert depends_on(config["services"][service]) == waits_for


def test_the_server_the_one_shots_and_the_worker_run_this_repository_image(config):
    for name in REPO_IMAGE_SERVICES:
        service = config["services"][name]
        assert Path(service["build"]["context"]).resolve() == PROJECT_ROOT, name
        assert service["image"] == config["services"]["worker"]["image"], name


def test_the_worker_serves_the_work_pool_prefect_yaml_deploys_to(config):
    prefect_yaml = yaml.safe_load((PROJECT_ROOT / "prefect.yaml").read_text())
    [pool] = {d["work_pool"]["name"] for d in prefect_yaml["deployments"]}
    services = config["services"]
    assert services["worker"]["command"] == ["prefect", "worker", "start", "--pool", pool]
    deploy_script = services["deploy"]["command"][-1]
    assert f"prefect work-pool create {pool} --type process" in deploy_script
    assert "prefect --no-prompt deploy --all" in deploy_script
    assert services["deploy"]["environment"]["PREFECT_API_URL"] == \
        services["worker"]["environment"]["PREFECT_API_URL"] == "http://prefect-server:4200/api"


def test_outputs_land_on_a_named_volume_at_the_workers_specledger_home(config):
    worker = config["services"]["worker"]
    home = worker["environment"]["SPECLEDGER_HOME"]
    assert [v.split(":")[:2] for v in worker["volumes"]] == [["outputs", home]]
    assert dockerfile_env()["SPECLEDGER_HOME"] == home
    # The worker runs the flows from the image's checkout, where WORKDIR put the code.
    assert worker["environment"]["SPECLEDGER_PROJECT_DIR"] == \
        dockerfile_env()["SPECLEDGER_PROJECT_DIR"] == dockerfile_instructions("WORKDIR")[0]
    assert [v.split(":")[:2] for v in config["services"]["postgres"]["volumes"]] == \
        [["ledger-data", "/var/lib/postgresql/data"]]


def test_the_password_reaches_every_service_that_needs_it_only_by_interpolation(config):
    text = yaml.safe_dump(config)
    services = config["services"]
    assert services["postgres"]["environment"]["POSTGRES_PASSWORD"] == PLACEHOLDER_PASSWORD
    for name, key in [("migrate", "SPECLEDGER_DATABASE_URL"),
                      ("worker", "SPECLEDGER_DATABASE_URL"),
                      ("prefect-server", "PREFECT_API_DATABASE_CONNECTION_URL")]:
        assert make_url(services[name]["environment"][key]).password == PLACEHOLDER_PASSWORD
    assert PLACEHOLDER_PASSWORD in text
    assert PLACEHOLDER_PASSWORD not in COMPOSE_FILE.read_text()


def test_no_password_is_written_in_the_compose_file():
    raw = yaml.safe_load(COMPOSE_FILE.read_text())  # anchors resolved, nothing interpolated
    for name, service in raw["services"].items():
        for key, value in service.get("environment", {}).items():
            if "PASSWORD" in key:
                assert value.startswith("${POSTGRES_PASSWORD:?"), (name, key)
            if "://" in str(value) and "@" in str(value):
                credentials = str(value).split("://", 1)[1].split("@", 1)[0]
                assert credentials.split(":", 1)[1].startswith("${POSTGRES_PASSWORD:?"), \
                    (name, key)


@pytest.mark.parametrize("env", [{}, {"POSTGRES_PASSWORD": ""}], ids=["missing", "empty"])
def test_config_fails_clearly_without_a_postgres_password(compose_config: ComposeConfig, env):
    result = compose_config(**env)
    assert result.returncode != 0
    assert "set POSTGRES_PASSWORD in .env (copy .env.example)" in result.stderr


def test_env_example_sets_every_required_variable_and_mentions_the_optional_ones(tmp_path):
    example = (PROJECT_ROOT / ".env.example").read_text()
    required = set(re.findall(r"^(\w+)=", example, re.M))
    optional = set(re.findall(r"^# (\w+)=", example, re.M))
    variables = set(re.findall(r"\$\{(\w+)", COMPOSE_FILE.read_text()))
    assert required | optional == variables
    # .env.example copied as is is a valid configuration: placeholders, no real secret.
    parsed_config(tmp_path, **dict(re.findall(r"^(\w+)=(.*)$", example, re.M)))
    assert dict(re.findall(r"^(\w+)=(.*)$", example, re.M))["POSTGRES_PASSWORD"] == "change-me"


def test_the_image_installs_every_debian_package_the_dev_script_installs():
    dev_packages = subprocess.run(
        ["bash", "-c", 'eval "$(grep "^DEBIAN_PACKAGES=" dev)"; '
                       'printf "%s\\n" "${DEBIAN_PACKAGES[@]}"'],
        cwd=PROJECT_ROOT, capture_output=True, text=True, check=True).stdout.split()
    [install] = [step for args in dockerfile_instructions("RUN") for step in args.split("&&")
                 if "apt-get install" in step]
    image_packages = [w for w in shlex.split(install)[3:] if not w.startswith("-")]
    assert TEST_ONLY_PACKAGES <= set(dev_packages)
    assert set(image_packages) == set(dev_packages) - TEST_ONLY_PACKAGES
    assert "--no-install-recommends" in install


def test_the_image_bakes_in_no_secret_and_runs_as_a_non_root_user():
    env = dockerfile_env()
    assert not [k for k in env if "PASSWORD" in k or "DATABASE_URL" in k]
    assert not dockerfile_instructions("ARG")
    assert dockerfile_instructions("USER") and dockerfile_instructions("USER")[-1] != "root"
    ignored = [line for line in (PROJECT_ROOT / ".dockerignore").read_text().splitlines()
               if line and not line.startswith("#")]

    def excluded(path: str) -> bool:
        # .dockerignore semantics for top-level names: the last matching pattern wins.
        verdict = False
        for pattern in ignored:
            if fnmatch.fnmatch(path, pattern.lstrip("!")):
                verdict = not pattern.startswith("!")
        return verdict

    assert excluded(".env") and excluded(".env.local") and excluded(".git")
    # What the image needs to install and run the flows is sent to the build.
    needed = ["pyproject.toml", "requirements/runtime.lock", "README.md", "prefect.yaml", "data",
              "pipelines", "db", "models", "reports"]
    assert not [path for path in needed if excluded(path)]


@pytest.mark.postgres
def test_the_prefect_database_one_shot_creates_it_when_missing_and_leaves_it_alone_after(
        tmp_path):
    if not shutil.which("psql"):
        pytest.skip("psql (postgresql-client) is not installed")
    url = make_url(pg_url_or_skip())
    name = f"specledger_prefect_{uuid.uuid4().hex[:8]}"
    one_shot = parsed_config(tmp_path, POSTGRES_PASSWORD=PLACEHOLDER_PASSWORD,
                             PREFECT_DB_NAME=name)["services"]["prefect-db"]
    # The same command the container runs, against the local server instead of `postgres`.
    env = {**os.environ, **one_shot["environment"], "PGHOST": url.host or "127.0.0.1",
           "PGPORT": str(url.port or 5432), "PGUSER": url.username or "postgres",
           "PGDATABASE": url.database or "postgres"}
    if url.password is None:
        del env["PGPASSWORD"]  # the compose placeholder; the local server trusts the user
    else:
        env["PGPASSWORD"] = url.password
    admin_url = url.set(drivername="postgresql").render_as_string(hide_password=False)
    try:
        runs = [subprocess.run(one_shot["entrypoint"] + one_shot["command"], env=env,
                               capture_output=True, text=True, timeout=60, check=False)
                for _ in range(2)]
        assert [r.returncode for r in runs] == [0, 0], [r.stderr for r in runs]
        assert "CREATE DATABASE" in runs[0].stdout
        assert "CREATE DATABASE" not in runs[1].stdout
        with psycopg.connect(admin_url) as conn:
            assert conn.execute("select count(*) from pg_database where datname = %s",
                                (name,)).fetchone() == (1,)
    finally:
        pg_database.main("drop", admin_url, name)
