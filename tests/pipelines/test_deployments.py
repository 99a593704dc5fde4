"""prefect.yaml and `specledger serve`: the weekly schedule and the on-demand ingest."""

from __future__ import annotations

import importlib
import inspect

import pytest
import yaml
from prefect.cli.deploy._models import PrefectYamlModel
from prefect.settings import PREFECT_API_URL, temporary_settings
from typer.testing import CliRunner

from pipelines.cli.app import app
from pipelines.flows.serve_checks import WEEKLY_CRON, schedule_timezone
from pipelines.settings import PROJECT_ROOT

PREFECT_YAML = PROJECT_ROOT / "prefect.yaml"


@pytest.fixture(scope="module")
def deployments() -> dict[str, dict]:
    model = PrefectYamlModel.model_validate(yaml.safe_load(PREFECT_YAML.read_text()))
    return {d.name: d.model_dump(exclude_unset=True) for d in model.deployments}


def test_prefect_yaml_declares_the_weekly_briefing_and_the_on_demand_ingest(deployments):
    assert set(deployments) == {"weekly", "ingest", "sweep"}
    [schedule] = deployments["weekly"]["schedules"]
    assert (schedule["cron"], schedule["timezone"]) == (WEEKLY_CRON, "UTC")
    assert "schedules" not in deployments["ingest"] and "schedules" not in deployments["sweep"]
    assert {d["work_pool"]["name"] for d in deployments.values()} == {"specledger"}


@pytest.mark.parametrize("name, flow_name", [("weekly", "weekly-briefing"),
                                             ("ingest", "ingest-files"), ("sweep", "c2c-sweep")])
def test_each_entrypoint_is_a_flow_that_runs_without_parameters_it_cannot_get(
        deployments, name, flow_name):
    path, attribute = deployments[name]["entrypoint"].split(":")
    flow = getattr(importlib.import_module(path.removesuffix(".py").replace("/", ".")),
                   attribute)
    assert flow.name == flow_name
    required = {p.name for p in inspect.signature(flow.fn).parameters.values()
                if p.default is inspect.Parameter.empty}
    # A scheduled run passes only what prefect.yaml gives: every other parameter has a default.
    # An on-demand run names its files (ingest) or its scenario (sweep).
    assert required <= set(deployments[name].get("parameters", {})) | {"paths", "scenario_file"}


def test_serve_without_a_prefect_server_explains_why_and_exits_2(monkeypatch, tmp_path):
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    # Even inside another test's Prefect harness, this process has no server to talk to.
    with temporary_settings(restore_defaults={PREFECT_API_URL}):
        result = CliRunner().invoke(app, ["serve", "--home", str(tmp_path)])
    assert result.exit_code == 2
    assert "PREFECT_API_URL is not set" in result.output
    assert "prefect server start" in result.output


def test_serve_rejects_a_time_zone_that_does_not_exist(tmp_path):
    result = CliRunner().invoke(app, ["serve", "--timezone", "Mars/Olympus", "--home",
                                      str(tmp_path)])
    assert result.exit_code == 2
    assert "not an IANA time zone" in result.output


def test_schedule_time_zones_are_iana_names():
    assert str(schedule_timezone("Europe/Paris")) == "Europe/Paris"
    with pytest.raises(ValueError, match="IANA"):
        schedule_timezone("CEST+2")


def test_the_on_demand_ingest_flow_ingests_into_the_ledger_its_settings_name(
        tmp_path, write_pack, monkeypatch):
    from pipelines.flows.ingest_files import ingest_files
    from tests.conftest import NVLINK_PACK

    monkeypatch.delenv("SPECLEDGER_DATABASE_URL", raising=False)
    report = ingest_files.fn(paths=[write_pack("nvlink.yaml", NVLINK_PACK)],
                             home=tmp_path / "home")
    assert report.total("accepted") == 2
    assert (tmp_path / "home" / "specledger.sqlite").is_file()
