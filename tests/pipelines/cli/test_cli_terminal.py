"""Whatever a file or the ledger says is printed as written: rich markup in it is text, never
styling, and `--json` is strict JSON. Failures name the ledger the command used."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipelines.cli import app as cli
from pipelines.cli.terminal import json_text
from tests.pipelines.conftest import GPT3_INLINE, edited

HOSTILE_PACK = """
source: {key: "evil-[bold]", title: "Evil [bold]datasheet[/bold] [red]", kind: vendor_datasheet,
         published_on: 2024-03-18}
items:
  - {key: nvlink-5, name: "NVLink [i]5", kind: scaleup_fabric, vendor: NVIDIA, family: NVLink}
observations:
  - {item: nvlink-5, metric: scaleup_bw_per_gpu_bidir, value: 1.8, unit: "[/bold]",
     as_of: 2024-03-18, status: C}
  - {item: nvlink-5, metric: scaleup_bw_per_gpu_bidir, value: [1, 2, 3], unit: TB/s,
     as_of: 2024-03-18, status: C}
  - {item: nvlink-5, metric: scaleup_bw_per_gpu_bidir, value: 1.8, unit: TB/s,
     as_of: 2024-03-18, status: C, quote: ":smile: [link=https://x]click[/link]"}
"""
HOSTILE_CSV = """\
source,source_title,source_kind,item,item_kind,metric,value,unit,as_of,status
csv-[b],CSV [b]title,dataset,gpu-[x],gpu,tdp,700,W,2024-06-01,S
csv-[b],,,gpu-[x],,tdp,-1,[/],2024-06-01,S
"""


def strict_json(text: str) -> Any:
    """Parse as JSON proper: NaN, Infinity and -Infinity are errors, not numbers."""
    def refuse(constant: str) -> None:
        raise ValueError(f"{constant} is not JSON")
    return json.loads(text, parse_constant=refuse)


def one_line(text: str) -> str:
    return " ".join(text.split())


def test_ledger_text_with_markup_is_ingested_and_printed_as_written(cli, write_pack):
    pack = str(write_pack("hostile.yaml", HOSTILE_PACK))
    ingested = cli("ingest", pack)
    assert ingested.exit_code == 1, ingested.output  # rejected rows: 1, never a crash (5)
    said = one_line(ingested.stderr)
    assert f"{pack}:6 unit: unknown unit '[/bold]'" in said
    assert f"{pack}:8 value: a range must be [low, high], got [1, 2, 3]" in said

    review = cli("review")
    assert review.exit_code == 0, review.output
    assert "unknown unit '[/bold]'" in review.stdout
    # The reason column folds at 80 columns; what matters is that no bracket went missing.
    assert "[low," in review.stdout and "high]," in review.stdout

    value = cli("value", "nvlink-5", "scaleup_bw_per_gpu_bidir")
    assert value.exit_code == 0, value.output
    assert "evil-[bold]" in value.stdout


def test_a_file_name_with_brackets_is_shown_whole(cli, tmp_path):
    path = tmp_path / "$(id)[bold].csv"
    path.write_text(HOSTILE_CSV, encoding="utf-8")
    result = cli("ingest", str(path))
    assert result.exit_code == 1, result.output
    assert "$(id)[bold].csv" in result.stdout  # the table's file column
    assert f"{path}:3 unit: unknown unit '[/]'" in one_line(result.stderr)
    review = cli("review", "--json")
    assert {r["path"] for r in strict_json(review.stdout)["rejected"]} == {str(path)}


def test_every_json_output_is_strict_json(cli, write_pack, write_scenario):
    pack = str(write_pack("hostile.yaml", HOSTILE_PACK))
    outputs = [cli("ingest", pack, "--json"), cli("review", "--json"),
               cli("value", "nvlink-5", "scaleup_bw_per_gpu_bidir", "--json"),
               cli("value", "nvlink-5", "tdp", "--json"),
               cli("estimate", str(write_scenario()), "--json")]
    assert [r.exit_code for r in outputs] == [1, 0, 0, 3, 0]
    for result in outputs:
        assert strict_json(result.stdout)


@given(st.recursive(st.none() | st.booleans() | st.floats() | st.text(),
                    lambda children: st.lists(children) | st.dictionaries(st.text(), children),
                    max_leaves=20))
def test_json_text_turns_non_finite_numbers_into_null(payload):
    parsed = strict_json(json_text(payload))
    def same(a: Any, b: Any) -> bool:
        if isinstance(a, float) and not math.isfinite(a):
            return b is None
        if isinstance(a, list):
            return len(a) == len(b) and all(map(same, a, b))
        if isinstance(a, dict):
            return a.keys() == b.keys() and all(same(v, b[k]) for k, v in a.items())
        return a == b
    assert same(payload, parsed)


def test_a_scenario_name_with_markup_is_a_table_title_as_written(cli, write_scenario):
    scenario = write_scenario(edited(GPT3_INLINE, "name: gpt3-175b-tp8-pp8",
                                     'name: "gpt3 [/bold] [red]x"'))
    result = cli("estimate", str(scenario), "--as-written")
    assert result.exit_code == 0, result.output
    assert "gpt3 [/bold] [red]x on 64 GPUs" in result.stdout


def test_a_figure_missing_from_the_ledger_names_the_home_ledger(cli, write_scenario, tmp_path,
                                                                monkeypatch):
    monkeypatch.chdir(tmp_path)
    scenario = write_scenario(edited(
        GPT3_INLINE, 'gpu_specs: {peak: "312 TFLOP/s", hbm: "80 GiB", hbm_bw: "2039 GB/s"}',
        "gpu: no-such-gpu"))
    result = cli("estimate", str(scenario))
    assert result.exit_code == 2, result.output
    said = one_line(result.stderr)
    assert "the ledger has no" in said
    assert f"(ledger sqlite:///{tmp_path / 'home' / 'specledger.sqlite'})" in said


def test_a_failure_names_the_home_ledger_not_the_working_folders(tmp_path, monkeypatch,
                                                                 capsys, write_pack):
    """Through `main`, as the installed command runs: one paragraph, exit 5."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SPECLEDGER_DATABASE_URL", raising=False)
    monkeypatch.delenv("SPECLEDGER_HOME", raising=False)
    home = tmp_path / "elsewhere"
    home.mkdir()
    (home / "specledger.sqlite").write_bytes(b"not a database [/bold]" * 100)
    pack = str(write_pack("hostile.yaml", HOSTILE_PACK))
    monkeypatch.setattr(sys, "argv", ["specledger", "ingest", pack, "--home", str(home)])
    with pytest.raises(SystemExit) as exited:
        cli.main()
    assert exited.value.code == cli.EXIT_FAILED
    said = one_line(capsys.readouterr().err)
    assert f"the ledger database sqlite:///{home / 'specledger.sqlite'} reported" in said
    assert str(Path("var").resolve()) not in said
