"""`specledger flags`: a version's flags most severe first, those on one scenario's verdict,
of a severity and up; an unknown scenario, severity or version exits 2."""

from __future__ import annotations

import json

import pytest

from db.schema import FLAG_SEVERITIES
from pipelines.cli.flags import SEVERITIES
from tests.pipelines.cli.conftest import SCENARIO, said


@pytest.fixture
def flags(history, specledger_in):
    """`specledger flags ... --home <the history's ledger>`."""
    return specledger_in(history.home, "flags")


def test_flags_are_the_newest_flagged_versions_most_severe_first(flags):
    result = flags("--json")
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)
    # Version 3 is a standalone ingest's: no flags; version 2, made by a run, has them.
    assert (shown["dataset_version"], shown["newest_version"]) == (2, 3)
    ranks = [SEVERITIES.index(f["severity"]) for f in shown["flags"]]
    assert ranks == sorted(ranks) and ranks[0] == SEVERITIES.index("warning")
    assert {("changed", "test-dc / pue"), ("result_moved", SCENARIO)} <= {
        (f["kind"], f["subject"]) for f in shown["flags"]}
    printed = said(flags())
    assert "flags of dataset version 2" in printed
    assert "version 3, the newest, has none computed yet" in printed
    assert "warning result_moved racks-vs-nodes" in printed
    assert "break-even speed-up 1.92 → 2.08" in printed


def test_the_flags_on_a_verdict_are_about_the_scenario_or_a_figure_it_read(flags):
    shown = json.loads(flags("--scenario", SCENARIO, "--json").stdout)
    assert {(f["kind"], f["subject"]) for f in shown["flags"]} == {
        ("result_moved", SCENARIO), ("changed", "test-dc / pue"),
        ("single_source", "test-dc / pue")}
    # The rack power added beside it is flagged, but the scenario does not read it.
    every = json.loads(flags("--json").stdout)["flags"]
    assert ("added", "source dc-survey") in {(f["kind"], f["subject"]) for f in every}


def test_a_severity_keeps_it_and_what_is_more_severe(flags):
    shown = json.loads(flags("--severity", "warning", "--json").stdout)
    assert shown["flags"] and {f["severity"] for f in shown["flags"]} == {"warning"}
    assert "info" in {f["severity"] for f in json.loads(flags("--json").stdout)["flags"]}
    assert "flags of dataset version 2 (2 warning), warning or worse" in said(
        flags("--severity", "warning"))


def test_a_version_without_flags_says_who_computes_them(flags):
    result = flags("--version", "3")
    assert result.exit_code == 0
    assert ("0 flags of dataset version 3; version 3 has no flags computed (an ingest's "
            "version: `specledger run` computes them)") in said(result)
    older = json.loads(flags("--version", "1", "--json").stdout)
    assert older["dataset_version"] == 1 and older["flags"]


@pytest.mark.parametrize(("args", "message"), [
    (("--scenario", "nosuch"), f"no scenario 'nosuch' in the ledger (it knows {SCENARIO})"),
    (("--severity", "severe"), "'severe' is not one of 'critical', 'warning', 'info'"),
    (("--version", "9"), "--version 9: no such dataset version; the ledger holds versions 1 "
                         "to 3"),
    (("--version", "0"), "Invalid value for '--version'"),
])
def test_what_the_ledger_does_not_have_exits_2_naming_it(flags, args, message):
    result = flags(*args)
    assert result.exit_code == 2
    assert message in said(result)


def test_an_empty_ledger_exits_3_saying_how_to_make_a_version(cli):
    result = cli("flags")
    assert result.exit_code == 3
    assert "run `specledger run` or `specledger ingest` first" in said(result)


def test_the_cli_knows_the_severities_the_ledger_does():
    assert SEVERITIES == FLAG_SEVERITIES


def test_a_flags_subject_prints_whole_at_40_columns(flags):
    printed = flags("--scenario", SCENARIO, columns=40).stdout
    assert "warning result_moved  racks-vs-nodes" in printed
    assert "single_source  test-dc / pue" in printed
