"""Rendered briefings shared by the report tests (a full render takes seconds)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from reports.briefing import render_pdf
from tests.reports.contexts import empty_context, full_context


def pdftotext(path: Path, layout: bool = True) -> str:
    args = ["pdftotext", *(["-layout"] if layout else []), str(path), "-"]
    return subprocess.run(args, capture_output=True, text=True, check=True).stdout


def pdfinfo(path: Path) -> str:
    return subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True,
                          check=True).stdout


@pytest.fixture(scope="session")
def full_pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("briefing") / "full.pdf"
    path.write_bytes(render_pdf(full_context()))
    return path


@pytest.fixture(scope="session")
def empty_pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("briefing") / "empty.pdf"
    path.write_bytes(render_pdf(empty_context()))
    return path
