"""Scenario fixtures: the issue's fully inline GPT-3 scenario and a writer for variants of it."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipelines.cli.app import app
from pipelines.settings import PROJECT_ROOT

SOURCES = PROJECT_ROOT / "data" / "sources"
SHIPPED_SCENARIOS = PROJECT_ROOT / "data" / "scenarios"

# Every figure inline, so no ledger is needed. Line numbers matter to the error tests.
GPT3_INLINE = """\
name: gpt3-175b-tp8-pp8
model: {layers: 96, hidden: 12288, heads: 96, seq_len: 2048, vocab: 51200}
parallel: {tp: 8, pp: 8, dp: 1, ep: 1, micro_batch: 1, global_batch: 64, interleave: 1,
           sequence_parallel: false, recompute: full, zero: 1}
cluster:
  gpu_specs: {peak: "312 TFLOP/s", hbm: "80 GiB", hbm_bw: "2039 GB/s"}
  scale_up: {domain_gpus: 8, bw_per_gpu_bidir: "600 GB/s"}
  scale_out: {nic_rate: "200 Gb/s", nics_per_gpu: 1}
  gpus: 1024
tokens: 300e9
"""

# A figure no scenario reads: a new dataset version, the same inputs for every scenario.
B200_TDP_PACK = """
source: {key: some-blog, title: A blog, kind: secondary_press, published_on: 2026-06-01}
items:
  - {key: b200, name: "B200 (HGX)", kind: gpu, vendor: NVIDIA, family: Blackwell}
observations:
  - {item: b200, metric: tdp, value: 1100, unit: W, as_of: 2026-06-01, status: U}
"""


def edited(text: str, old: str, new: str) -> str:
    """`text` with one occurrence of `old` replaced; fails loudly if `old` is not there."""
    assert old in text, old
    return text.replace(old, new, 1)


@pytest.fixture
def write_scenario(tmp_path: Path) -> Callable[..., Path]:
    """Write a scenario file from an indented literal; returns its path."""

    def write(content: str = GPT3_INLINE, name: str = "scenario.yaml") -> Path:
        path = tmp_path / "scenarios" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(content).lstrip(), encoding="utf-8")
        return path

    return write


@pytest.fixture
def cli(tmp_path, monkeypatch):
    """Run `specledger ...` with a fresh --home; returns the click Result."""
    monkeypatch.delenv("SPECLEDGER_DATABASE_URL", raising=False)
    runner = CliRunner()

    def invoke(*args: str):
        return runner.invoke(app, [*args, "--home", str(tmp_path / "home")])

    return invoke
