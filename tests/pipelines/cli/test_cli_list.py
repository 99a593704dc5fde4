"""`specledger list`: the keys the other commands take, whole at any width; the scenario
files of the scenarios folder without a ledger; an unknown item exits 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from typer.testing import CliRunner

from pipelines.cli import listing
from pipelines.cli.app import app
from tests.conftest import NVLINK_PACK
from tests.pipelines.cli.conftest import LONG_KEY
from tests.pipelines.conftest import SHIPPED_SCENARIOS

LONG_PACK = f"""
source: {{key: a-price-list, title: A price list, kind: dataset, published_on: 2026-01-05}}
items:
  - {{key: {LONG_KEY}, kind: cloud_offer,
     name: "gpu_8x_a100_80gb_sxm4 australia-southeast-1 on_demand (lambda), a name to wrap"}}
observations:
  - {{item: {LONG_KEY}, metric: tdp, value: 400, unit: W, as_of: 2026-01-05, status: S}}
"""


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """One ledger for the module: the NVLink pack and an item with a 60-character key."""
    folder = tmp_path_factory.mktemp("list")
    packs = folder / "packs"
    packs.mkdir()
    for name, text in (("nvlink.yaml", NVLINK_PACK), ("long.yaml", LONG_PACK)):
        (packs / name).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    result = CliRunner().invoke(app, ["ingest", str(packs), "--no-publish", "--home",
                                      str(folder / "home")])
    assert result.exit_code == 0, result.output
    return folder / "home"


@pytest.fixture
def specledger(home, specledger_in):
    """`specledger ... --home <the module's ledger>`, its tables `columns` wide."""
    return specledger_in(home)


def lines_with(text: str, word: str) -> list[str]:
    return [line for line in text.splitlines() if word in line]


@pytest.mark.parametrize("columns", [200, 80, 40])
def test_list_items_prints_every_key_whole_at_any_width(specledger, columns):
    shown = specledger("list", "items", columns=columns)
    assert shown.exit_code == 0, shown.output
    for key in (LONG_KEY, "gb200-nvl72", "nvlink-5"):
        assert lines_with(shown.stdout, key), (key, shown.stdout)
    assert "…" not in shown.stdout
    if columns == 200:   # room for everything: the name wraps, nothing is left out
        assert "GB200 NVL72" in shown.stdout and "left out" not in shown.stdout
    else:                # the name goes first, and the table says so
        assert "name, kind left out at" in " ".join(shown.stdout.split())
        assert max(map(len, shown.stdout.splitlines())) <= max(columns, len(LONG_KEY) + 20)


def test_list_metrics_keeps_metric_and_unit_whole_at_40_columns(specledger):
    shown = specledger("list", "metrics", columns=40)
    assert shown.exit_code == 0, shown.output
    [line] = lines_with(shown.stdout, "scaleup_bw_per_gpu_bidir")
    assert line.split()[:2] == ["scaleup_bw_per_gpu_bidir", "GB/s"]


@pytest.mark.parametrize("what", ["items", "metrics"])
def test_an_item_the_ledger_does_not_have_exits_2_naming_list_items(specledger, what):
    result = specledger("list", what, "--item", "h100")
    assert result.exit_code == 2
    assert ("no item 'h100' in the ledger (`specledger list items` lists them)"
            in " ".join(result.stderr.split()))
    assert result.stdout == ""


def test_list_scenarios_names_each_shipped_file_with_its_kind_and_no_ledger(tmp_path):
    result = CliRunner().invoke(app, ["list", "scenarios", "--json", "--home",
                                      str(tmp_path / "home")])
    assert result.exit_code == 0, result.output
    rows = {row["scenario"]: row for row in json.loads(result.stdout)}
    files = sorted(SHIPPED_SCENARIOS.glob("*.yaml"))
    assert sorted(rows) == [f.stem for f in files]
    assert rows["serving-deepseek-r1-fp4"]["kind"] == "serving"
    assert rows["tco-gpt4-epoch"]["kind"] == "tco"
    assert rows["13b-dp-only-nvl72"]["kind"] == "c2c"     # no `kind:`: a C2C scenario
    assert rows["13b-dp-only-nvl72"]["description"] == (
        "A 13B model on 64 nodes (512 GPUs) with data parallelism only")
    assert rows["tco-gpt4-epoch"]["file"] == str(SHIPPED_SCENARIOS / "tco-gpt4-epoch.yaml")
    assert not (tmp_path / "home").exists()   # no ledger opened, none created


def test_list_scenarios_says_a_description_a_broken_file_and_a_file_named_otherwise(
        tmp_path, monkeypatch):
    folder = tmp_path / "scenarios"
    folder.mkdir()
    (folder / "mine.yaml").write_text("name: my-comparison\nkind: tco\n"
                                      "description: Racks against nodes,\n  for the board\n")
    (folder / "broken.yaml").write_text("name: [unclosed\n")
    monkeypatch.setenv("SPECLEDGER_SCENARIOS_DIR", str(folder))
    monkeypatch.setattr(listing.console, "width", 80)
    result = CliRunner().invoke(app, ["list", "scenarios", "--home", str(tmp_path / "h")])
    assert result.exit_code == 0, result.output
    [mine] = lines_with(result.stdout, "my-comparison")
    assert mine.split()[:3] == ["my-comparison", "tco", "mine.yaml"]
    assert "Racks against nodes, for the board" in mine
    [broken] = lines_with(result.stdout, "broken.yaml")
    assert "(no name)" in broken and "cannot be read" in broken


def test_list_scenarios_at_40_columns_in_a_real_terminal_width(tmp_path):
    """COLUMNS as a user's shell sets it, in a process of its own: the names stay whole."""
    env = {**os.environ, "COLUMNS": "40"}
    shown = subprocess.run([sys.executable, "-c", "from pipelines.cli.app import main; main()",
                            "list", "scenarios"], env=env, capture_output=True, text=True,
                           check=True).stdout
    for path in SHIPPED_SCENARIOS.glob("*.yaml"):
        [line] = lines_with(shown, f"{path.stem} ")
        assert line.split()[0] == path.stem
    assert "description left out at 40 columns" in shown
