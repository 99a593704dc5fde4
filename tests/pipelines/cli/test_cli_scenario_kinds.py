"""A scenario file given to the command for another kind names the command that reads it
(`specledger tco` on a `kind: serving` file said "model: unknown key"), and exits 2."""

from __future__ import annotations

import pytest

from tests.pipelines.conftest import SHIPPED_SCENARIOS

SERVING = str(SHIPPED_SCENARIOS / "serving-deepseek-r1-fp4.yaml")
TCO = str(SHIPPED_SCENARIOS / "tco-gpt4-epoch.yaml")
C2C = str(SHIPPED_SCENARIOS / "13b-dp-only-nvl72.yaml")


def said(result) -> str:
    return " ".join(result.stderr.split())


@pytest.mark.parametrize(("command", "path", "use"), [
    ("tco", SERVING, f"is a `kind: serving` scenario: use `specledger serving {SERVING}`"),
    ("estimate", SERVING, f"use `specledger serving {SERVING}`"),
    ("sweep", TCO, f"is a `kind: tco` scenario: use `specledger tco {TCO}`"),
    ("serving", TCO, f"use `specledger tco {TCO}`"),
    ("tco", C2C, f"is a C2C scenario: use `specledger estimate {C2C}` or "
                 f"`specledger sweep {C2C}`"),
    ("serving", C2C, "or `specledger sweep"),
])
def test_a_file_of_another_kind_names_the_command_that_reads_it(cli, command, path, use):
    result = cli(command, path)
    assert result.exit_code == 2, result.output
    assert said(result).startswith(f"error: {path} ") and use in said(result)
    assert "unknown key" not in said(result) and result.stdout == ""


def test_a_kind_no_command_reads_is_named_with_the_kinds_there_are(cli, write_scenario):
    path = write_scenario("name: odd\nkind: inference\n")
    result = cli("tco", str(path))
    assert result.exit_code == 2
    assert (f"{path} says `kind: inference`: a scenario's kind is one of c2c (estimate or "
            "sweep), tco (tco), serving (serving)") in said(result)


def test_a_file_of_the_right_kind_still_meets_its_own_loaders_checks(cli, write_scenario):
    path = write_scenario("name: half\nkind: tco\n")
    result = cli("tco", str(path))
    assert result.exit_code == 2
    assert "missing: give options (a comparison) or training_run" in said(result)
