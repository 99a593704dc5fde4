"""The InferenceX results the project ships are its own transcriptions of the artifacts: the
fields the InferenceX reader reads, every value as the artifact wrote it. Each gives the
reader the same serving points as the original (kept in the shared data folder), and its
README names the original by its SHA-256."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from pathlib import Path

import pytest

from pipelines.inputs.adapters import inferencex
from pipelines.inputs.adapters.base import AdapterOptions
from pipelines.settings import PROJECT_ROOT
from tests.support.shared_data import fixture_path, shared_path

GPT_OSS = (PROJECT_ROOT / "data" / "sources" / "inference"
           / "inferencemax_gpt-oss-120b_2026-01-02.json")
KIMI = PROJECT_ROOT / "data" / "inference" / "inferencex_mi355x_kimi-k2.5_2026-06-01.json"
# What the reader reads of an artifact row (pipelines/inputs/adapters/inferencex.py): what
# ran where, the request shape and concurrency, the layout and the five figures it keeps.
READ = {"hw", "conc", "image", "model", "infmax_model_prefix", "framework", "precision",
        "spec_decoding", "disagg", "isl", "osl", "is_multinode", "tp", "pp", "pcp_size", "ep",
        "dp_attention", "tput_per_gpu", "output_tput_per_gpu", "median_ttft", "median_tpot",
        "median_intvty"}


def original(shipped: Path) -> Path:
    if shipped == GPT_OSS:
        return shared_path("fixtures", "data", "sources", "inference", GPT_OSS.name)
    return fixture_path("inferencex", "agg_bmk_kimik2.5_mi355x.json")


def points(path: Path, name: str) -> list[dict]:
    """The reader's points of the file, read under the shipped file's name (which dates
    them), without the line each starts at."""
    parsed = inferencex.parse(name, path.read_bytes(), AdapterOptions())
    assert parsed.rejected == []
    [run] = parsed.runs
    return [{k: v for k, v in asdict(p).items() if k != "line"} for p in run.points]


@pytest.mark.parametrize("shipped", [GPT_OSS, KIMI], ids=lambda p: p.name)
def test_a_transcription_holds_only_what_the_reader_reads_as_the_artifact_wrote_it(shipped):
    rows = json.loads(shipped.read_text())
    source = json.loads(original(shipped).read_text())
    assert len(rows) == len(source)
    for mine, theirs in zip(rows, source, strict=True):
        assert set(mine) <= READ
        assert mine == {k: v for k, v in theirs.items() if k in READ}
        assert all(type(v) is type(theirs[k]) for k, v in mine.items())


@pytest.mark.parametrize("shipped", [GPT_OSS, KIMI], ids=lambda p: p.name)
def test_a_transcription_gives_the_reader_the_originals_points(shipped):
    assert points(shipped, shipped.name) == points(original(shipped), shipped.name)
    assert inferencex.detect(shipped.name, shipped.read_bytes()) == inferencex.FORMAT


@pytest.mark.parametrize("shipped", [GPT_OSS, KIMI], ids=lambda p: p.name)
def test_the_readme_beside_it_names_the_originals_sha256(shipped):
    readme = (shipped.parent / "README.md").read_text()
    digest = hashlib.sha256(original(shipped).read_bytes()).hexdigest()
    assert f"`{shipped.name}`" in readme and digest in readme
    assert "transcription" in readme
