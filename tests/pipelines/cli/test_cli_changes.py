"""`specledger changes`: old -> new per item and metric for each version after --since (the
newest by default), the results that moved, and an unknown version exits 2."""

from __future__ import annotations

import json

import pytest

from tests.conftest import NVLINK_PACK
from tests.pipelines.cli.conftest import LONG_KEY, SCENARIO, said


@pytest.fixture
def changes(history, specledger_in):
    """`specledger changes ... --home <the history's ledger>`."""
    return specledger_in(history.home, "changes")


def test_changes_since_a_version_gives_old_and_new_per_item_and_metric(changes):
    result = changes("--since", "1", "--json")
    assert result.exit_code == 0, result.output
    second, third = json.loads(result.stdout)["versions"]
    assert (second["dataset_version"], second["previous"]) == (2, 1)
    assert second["counts"]["changed"] == {"observations": 1, "items": 1, "metrics": 1}
    moved, added = second["changes"]   # what a result read first
    assert {k: moved[k] for k in ("item", "metric", "kind", "source", "before_value",
                                  "after_value", "read_by")} == {
        "item": "test-dc", "metric": "pue", "kind": "changed", "source": "dc-survey",
        "before_value": 1.15, "after_value": 3.0, "read_by": [SCENARIO]}
    assert (added["item"], added["kind"], added["before_value"], added["after_value"],
            added["unit"]) == ("gb200-nvl72", "added", None, 132.0, "kW")
    assert [f["subject"] for f in second["results_moved"]] == [SCENARIO]
    assert third["changes"][0]["item"] == LONG_KEY and third["flags_computed"] is False
    # The resolved value, as `value` and the warehouse's `changes` give it: the survey's PUE
    # is the only one, so it moves with it.
    assert (moved["resolved_before"]["value"], moved["resolved_after"]["value"]) == (1.15, 3.0)
    assert added["resolved_after"] == {"value": 132.0, "unit": "kW", "source": "dc-survey"}


def test_changes_prints_the_moves_and_the_results_that_moved(changes):
    printed = said(changes("--since", "1"))
    assert "dataset version 2 against 1: 1 added, 1 changed, 0 superseded observations" \
        in printed
    # The source's figure, then the resolved value it made.
    assert ("test-dc pue changed dc-survey 1.15 → 3 dimensionless 1.15 → 3 dimensionless "
            "racks-vs-nodes") in printed
    assert "gb200-nvl72 rack_it_power added dc-survey → 132 kW → 132 kW" in printed
    assert ("results that moved: 1 warning result_moved racks-vs-nodes racks-vs-nodes: "
            "break-even speed-up 1.92 → 2.08") in printed
    assert "results that moved: not known for version 3" in printed


def test_changes_by_default_is_the_newest_version_against_the_one_before(changes):
    shown = json.loads(changes("--json").stdout)
    assert shown["since"] is None
    assert [(v["dataset_version"], v["previous"]) for v in shown["versions"]] == [(3, 2)]


def test_a_limit_keeps_the_changes_that_matter_most_and_counts_the_rest(changes):
    printed = said(changes("--since", "1", "--limit", "1"))
    assert "the 1 that matter most" in printed and "and 1 more (--limit, or --json)" in printed
    assert "test-dc pue changed" in printed and "gb200-nvl72 rack_it_power" not in printed


@pytest.mark.parametrize("columns", [80, 40])
def test_the_keys_print_whole_at_any_width(changes, columns):
    printed = changes(columns=columns).stdout
    [line] = [line for line in printed.splitlines() if LONG_KEY in line]
    assert line.split()[:3] == [LONG_KEY, "tdp", "added"]


@pytest.mark.parametrize(("args", "code", "message"), [
    (("--since", "9"), 2, "--since 9: no such dataset version; the ledger holds versions 1 to 3"),
    (("--since", "3"), 0, "nothing after version 3: it is the newest"),
])
def test_since_a_version_there_is_not_or_the_newest(changes, args, code, message):
    result = changes(*args)
    assert result.exit_code == code
    assert message in said(result)


def test_the_first_version_has_nothing_to_compare_with(cli, write_pack):
    cli("ingest", str(write_pack("nvlink.yaml", NVLINK_PACK)), "--no-publish")
    printed = said(cli("changes"))
    assert ("dataset version 1 is the first: 2 observations, nothing before it to compare "
            "with") in printed
