"""The real third-party files the tests read (price catalogs, serving measurements) from the
workspace's shared data folder, `shared/data` beside the project's folder, or where
SPECLEDGER_SHARED_DATA points. The project keeps no copies of them.

A test that needs one skips when the folder is absent (a user's clone), except under CI=true,
where the folder is part of the machine and its absence is a failure."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest

from pipelines.settings import PROJECT_ROOT

SHARED_DATA = Path(os.environ.get("SPECLEDGER_SHARED_DATA")
                   or PROJECT_ROOT.parent / "shared" / "data")
# Where the adapters' third-party test inputs are in the shared folder (the path they once had
# in the project, under a "fixtures" folder).
FIXTURES = ("fixtures", "tests", "pipelines", "inputs", "adapters", "fixtures")


def shared_path(*parts: str) -> Path:
    """The path of a shared file, or a skip (a failure under CI) when it is not there."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.is_file():
        message = f"{path} is not here (the shared data folder; SPECLEDGER_SHARED_DATA)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    return path


def fixture_path(*parts: str) -> Path:
    """A copy of a third-party file the tests read (a SkyPilot catalog, a price sample, a
    benchmark result); the project keeps none. `parts` name it in the shared FIXTURES folder,
    e.g. ("nccl", "b_a3mega_h100_2node.txt"), where each kind's README says where its files
    come from. A skip (a failure under CI) when it is not there."""
    return shared_path(*FIXTURES, *parts)


def shared_bytes(*parts: str) -> bytes:
    """A shared file's published bytes (a `.gz` copy is the gzip of them)."""
    path = shared_path(*parts)
    data = path.read_bytes()
    return gzip.decompress(data) if path.suffix == ".gz" else data
