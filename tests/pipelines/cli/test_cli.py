"""The CLI contract other issues and users rely on: JSON shapes and exit codes."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from typer.testing import CliRunner

from pipelines.cli.app import app
from tests.conftest import NVLINK_PACK, pg_url_or_skip, reset_pg

BAD_ROW = """\
  - {item: nvlink-5, metric: scaleup_bw_per_link_bidir, value: 100, unit: Gb/s,
     as_of: 2024-03-18, status: C}
"""


def test_every_command_has_help():
    runner = CliRunner()
    for command in ("run", "ingest", "value", "review", "report", "serve", "migrate"):
        result = runner.invoke(app, [command, "--help"])
        assert result.exit_code == 0, command
        assert "Usage" in result.output


def test_ingest_json_reports_each_file_and_exits_0_when_clean(cli, write_pack):
    result = cli("ingest", str(write_pack("nvlink.yaml", NVLINK_PACK)), "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert set(report) >= {"run_id", "files", "dataset_version"}
    (file,) = report["files"]
    assert {k: file[k] for k in ("read", "accepted", "unchanged", "rejected", "errors")} == {
        "read": 2, "accepted": 2, "unchanged": 0, "rejected": 0, "errors": []}
    assert len(file["sha256"]) == 64 and file["path"].endswith("nvlink.yaml")


def test_ingest_exits_1_on_rejected_rows_unless_allowed(cli, write_pack):
    path = str(write_pack("bad.yaml", NVLINK_PACK + BAD_ROW))
    rejected = cli("ingest", path, "--json")
    assert rejected.exit_code == 1
    (error,) = json.loads(rejected.stdout)["files"][0]["errors"]
    assert error["line"] == 16 and error["field"] == "unit"
    assert "Gb/s vs GB/s" in error["reason"]
    allowed = cli("ingest", path, "--allow-rejects")
    assert allowed.exit_code == 0
    assert f"{path}:16 unit" in allowed.stderr


def test_reingesting_a_file_says_nothing_changed(cli, write_pack):
    path = str(write_pack("nvlink.yaml", NVLINK_PACK))
    first = json.loads(cli("ingest", path, "--json").stdout)
    again = json.loads(cli("ingest", path, "--json").stdout)
    assert again["files"][0]["outcome"] == "unchanged_file"
    assert (again["files"][0]["accepted"], again["files"][0]["unchanged"]) == (0, 2)
    assert again["dataset_version"] == first["dataset_version"]
    assert "already ingested" in cli("ingest", path).stdout


def test_value_json_gives_the_resolved_value_with_alternatives(cli, write_pack):
    cli("ingest", str(write_pack("nvlink.yaml", NVLINK_PACK)))
    result = cli("value", "gb200-nvl72", "rack_it_power", "--json")
    assert result.exit_code == 0, result.output
    value = json.loads(result.stdout)
    assert {k: value[k] for k in ("item", "metric", "value", "low", "high", "unit", "as_of",
                                  "source", "status", "alternatives")} == {
        "item": "gb200-nvl72", "metric": "rack_it_power", "value": 126.0, "low": 120.0,
        "high": 132.0, "unit": "kW", "as_of": "2024-03-18", "source": "nvidia-nvlink-page",
        "status": "S", "alternatives": []}
    assert value["recorded_at"].endswith("+00:00")


def test_value_known_at_before_the_first_ingest_has_no_value_and_exits_3(cli, write_pack):
    cli("ingest", str(write_pack("nvlink.yaml", NVLINK_PACK)))
    result = cli("value", "nvlink-5", "scaleup_bw_per_gpu_bidir", "--known-at",
                 "2000-01-01T00:00:00")
    assert result.exit_code == 3
    assert "no value for nvlink-5" in result.stderr


def test_value_rejects_a_malformed_date_naming_the_option(cli):
    result = cli("value", "nvlink-5", "tdp", "--as-of", "yesterday")
    assert result.exit_code == 2
    assert "--as-of" in result.output


def test_review_lists_rejected_rows_and_conflicts(cli, write_pack):
    cli("ingest", str(write_pack("bad.yaml", NVLINK_PACK + BAD_ROW)))
    cli("ingest", str(write_pack("blog.yaml", """
        source: {key: blog, title: A blog, kind: secondary_press}
        items: [{key: gb200-nvl72, name: "GB200 NVL72", kind: rack}]
        observations:
          - {item: gb200-nvl72, metric: rack_it_power, value: 142, unit: kW, as_of: 2025-03-18,
             status: U}
        """)))
    result = cli("review", "--json")
    assert result.exit_code == 0
    review = json.loads(result.stdout)
    assert [(r["line"], r["field"]) for r in review["rejected"]] == [(16, "unit")]
    (conflict,) = review["conflicts"]
    assert (conflict["item"], conflict["source"]) == ("gb200-nvl72", "nvidia-nvlink-page")
    assert [a["value"] for a in conflict["alternatives"]] == [142.0]


def test_a_missing_path_is_an_error_naming_it(cli):
    result = cli("ingest", "no/such/pack.yaml")
    assert result.exit_code == 2
    assert "no/such/pack.yaml" in result.stderr


@pytest.mark.postgres
def test_database_url_points_the_ledger_at_postgresql(cli, write_pack, monkeypatch):
    url = pg_url_or_skip()
    reset_pg(url)
    monkeypatch.setenv("SPECLEDGER_DATABASE_URL", url)
    assert cli("ingest", str(write_pack("nvlink.yaml", NVLINK_PACK))).exit_code == 0
    result = cli("value", "nvlink-5", "scaleup_bw_per_gpu_bidir", "--json")
    assert json.loads(result.stdout)["value"] == 1800.0


def test_report_before_any_dataset_version_exits_3_and_says_what_to_do(cli):
    result = cli("report", "--as-of", "2020-01-01")
    assert result.exit_code == 3
    assert "no dataset version on 2020-01-01" in result.output
    assert "specledger run" in result.output


def test_ingest_republishes_the_warehouse_unless_told_not_to(cli, write_pack, tmp_path):
    import duckdb

    path = str(write_pack("nvlink.yaml", NVLINK_PACK))
    quiet = cli("ingest", path, "--no-publish")
    assert quiet.exit_code == 0 and "not rebuilt (--no-publish)" in quiet.stdout
    report = json.loads(cli("ingest", path, "--json").stdout)
    assert report["warehouse"]["published"]
    with duckdb.connect(report["warehouse"]["path"], read_only=True) as warehouse:
        version = warehouse.execute("select dataset_version from meta").fetchone()[0]
        values = warehouse.execute("select count(*) from current_value").fetchone()[0]
    assert version == report["dataset_version"] and values == 2


def test_export_writes_a_file_per_table_or_says_there_is_no_warehouse(cli, write_pack,
                                                                       tmp_path):
    missing = cli("export", str(tmp_path / "none"))
    assert missing.exit_code == 1 and "no warehouse" in missing.stderr
    cli("ingest", str(write_pack("nvlink.yaml", NVLINK_PACK)))
    result = cli("export", str(tmp_path / "out"), "--format", "csv", "--json")
    assert result.exit_code == 0, result.output
    files = {f["table"]: f for f in json.loads(result.stdout)["files"]}
    assert {"observation", "gpu_spec_wide", "gpu_hour_price", "price_index"} <= set(files)
    assert files["observation"]["rows"] == 2
    assert (tmp_path / "out" / "observation.csv").read_text().count("\n") == 3  # header + 2


# One home for both checks: the two briefings of the first are what the second compares
# with, so its own first ingest and briefing (a report is seconds of rendering) are not needed.
@pytest.mark.slow(seconds=35)
def test_a_second_briefing_the_same_day_gets_its_own_name_and_both_reproduce_and_a_later_one(
        cli, write_pack, tmp_path):
    """... compares with the last briefing and completes the versions it reads."""
    import subprocess

    today = datetime.now(UTC).date().isoformat()
    cli("ingest", str(write_pack("v1.yaml", NVLINK_PACK)))
    report = cli("report")
    assert report.exit_code == 0 and "first briefing recorded for this date" in report.output
    first = tmp_path / "home" / "briefings" / f"briefing-{today}.pdf"
    first_bytes = first.read_bytes()
    v2 = json.loads(cli("ingest", str(write_pack("v2.yaml", NVLINK_PACK.replace(
        "value: 1.8,", "value: 1.9,"))), "--json").stdout)["dataset_version"]
    second = cli("report", "--version", str(v2))
    assert second.exit_code == 0, (second.output, second.exception)
    named = tmp_path / "home" / "briefings" / f"briefing-{today}-v{v2}.pdf"
    assert named.name in second.output.replace("\n", "") and named.is_file()
    assert first.read_bytes() == first_bytes  # the first briefing was not overwritten
    again = cli("report", "--version", str(v2), "--output", str(tmp_path / "again.pdf"))
    assert "identical to the briefing recorded for this date and version" in again.output
    assert (tmp_path / "again.pdf").read_bytes() == named.read_bytes()
    # The date's first briefing again, from its date (version 1 was cut today).
    again = cli("report", "--as-of", today, "--output", str(tmp_path / "first.pdf"))
    assert again.exit_code == 0
    assert "identical to the briefing recorded for this date and version" in again.output
    assert (tmp_path / "first.pdf").read_bytes() == first_bytes

    # A briefing compares with the last briefing and completes the versions it reads: two
    # standalone ingests (versions 3 and 4), no briefing between, then version 4's briefing.
    for n, value in ((3, "2.0"), (4, "2.1")):
        cli("ingest", str(write_pack(f"v{n}.yaml", NVLINK_PACK.replace(
            "value: 1.8,", f"value: {value},"))))
    assert cli("report", "--version", "4").exit_code == 0
    pdf = tmp_path / "home" / "briefings" / f"briefing-{today}-v4.pdf"
    text = " ".join(subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True,
                                   text=True, check=True).stdout.split())
    assert f"compared with the briefing of {today} (version {v2})" in text
    assert "compared with dataset version 3" not in text


@pytest.mark.parametrize(("option", "written", "shown"), [
    ("--known-at", "9999-12-31T23:59:59-14:00", "not an ISO timestamp specledger can use"),
    ("--known-at", "2300-01-01T00:00:00", "after 2261-12-31"),
    ("--as-of", "9999-12-31", "after 2261-12-31"),
])
def test_value_refuses_a_moment_past_the_calendar_naming_the_option(cli, option, written,
                                                                     shown):
    result = cli("value", "nvlink-5", "scaleup_bw_per_gpu_bidir", option, written)
    assert result.exit_code == 2
    text = " ".join(result.output.replace("│", " ").split())  # unwrapped from rich's box
    assert option in text and shown in text


def test_validate_prints_the_same_bytes_whatever_the_hash_seed():
    """No set or dict order leaks into what is printed (a cited URL used to be picked by
    max() over a set, so two processes could cite two different ones)."""
    import os
    import subprocess
    import sys

    def printed(seed: str) -> bytes:
        return subprocess.run(
            [sys.executable, "-c", "from pipelines.cli.app import main; main()", "validate",
             "--json"], capture_output=True, check=True,
            env={**os.environ, "PYTHONHASHSEED": seed}).stdout

    first = printed("0")
    assert json.loads(first)["sets"] and first == printed("1") == printed("12345")


@pytest.mark.parametrize(("written", "shown"), [
    ("9223372036854775808", "less than or equal to 2147483647"),   # past SQLite's integers
    ("2147483648", "less than or equal to 2147483647"),            # past PostgreSQL's
    ("-1", "greater than or equal to 1"), ("0", "greater than or equal to 1")])
def test_a_version_the_ledger_cannot_hold_is_a_usage_error_before_any_query(cli, written,
                                                                             shown):
    """Issue 43, case 2: a number past what the database holds exits 2 naming the option
    (it crashed with SQLite's OverflowError), before the ledger is opened."""
    result = cli("report", "--version", written)
    assert result.exit_code == 2
    assert "Invalid value for '--version'" in result.output
    assert shown in " ".join(result.output.replace("│", " ").split())


@pytest.mark.parametrize("written", ["inf", "nan", "1.5", "-0.1"])
def test_a_tolerance_that_cannot_mean_anything_is_a_usage_error(cli, written):
    """A neighbour of issue 43, case 2: `review --tolerance inf` (or nan) would call every
    pair of sources agreeing, silently; a relative tolerance is 0 to 1 (at 1 all agree)."""
    result = cli("review", "--tolerance", written)
    assert result.exit_code == 2
    assert "Invalid value for '--tolerance'" in result.output


@pytest.mark.slow(seconds=25)  # a real process, for its exit code
def test_ingest_json_says_what_was_committed_when_publishing_then_fails(cli, write_pack,
                                                                        tmp_path):
    """Issue 43, case 9: the version is committed before the warehouse is published; when
    the publish fails, `--json` still prints the counts and the version, with
    `published: false` and why, and the command exits 5 (it printed nothing)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    (tmp_path / "home" / "warehouse.duckdb").mkdir(parents=True)   # cannot be written
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPECLEDGER_")}
    result = subprocess.run([str(Path(sys.executable).parent / "specledger"), "ingest",
                             str(write_pack("nvlink.yaml", NVLINK_PACK)), "--json", "--home",
                             str(tmp_path / "home")], env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 5, result.stderr
    assert "error: specledger ingest failed:" in result.stderr
    printed = json.loads(result.stdout)
    assert printed["dataset_version"] == 1 and printed["files"][0]["accepted"] == 2
    assert printed["warehouse"]["published"] is False
    assert printed["warehouse"]["outcome"] == "failed"
    assert "could not be written" in printed["warehouse"]["error"]
    # The commit stands: the next ingest of the same file changes nothing.
    (tmp_path / "home" / "warehouse.duckdb").rmdir()
    again = json.loads(cli("ingest", str(write_pack("nvlink.yaml", NVLINK_PACK)),
                           "--json").stdout)
    assert again["dataset_version"] == 1 and again["warehouse"]["published"] is True
