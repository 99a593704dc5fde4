"""Rendered briefings shared by the report tests (a full render takes seconds)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from reports.briefing import RenderedPdf, render
from tests.support.contexts import empty_context, full_context


def pdftotext(path: Path, layout: bool = True) -> str:
    args = ["pdftotext", *(["-layout"] if layout else []), str(path), "-"]
    return subprocess.run(args, capture_output=True, text=True, check=True).stdout


def pdfinfo(path: Path) -> str:
    return subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True,
                          check=True).stdout


def _rendered(factory: pytest.TempPathFactory, name: str, context, document: str) -> Path:
    path = factory.mktemp("briefing") / name
    path.write_bytes(render(context, document=document).pdf)
    return path


@pytest.fixture(scope="session")
def full_rendered() -> RenderedPdf:
    """The main briefing of the full context as `render` returns it (bytes, page count)."""
    return render(full_context(), document="briefing")


@pytest.fixture(scope="session")
def full_pdf(tmp_path_factory: pytest.TempPathFactory, full_rendered: RenderedPdf) -> Path:
    """The main briefing of the full context: page 1 and the evidence."""
    path = tmp_path_factory.mktemp("briefing") / "full.pdf"
    path.write_bytes(full_rendered.pdf)
    return path


@pytest.fixture(scope="session")
def full_appendix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Its companion appendix: every value, input, flag and source."""
    return _rendered(tmp_path_factory, "full-appendix.pdf", full_context(), "appendix")


@pytest.fixture(scope="session")
def empty_pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _rendered(tmp_path_factory, "empty.pdf", empty_context(), "briefing")


@pytest.fixture(scope="session")
def empty_appendix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _rendered(tmp_path_factory, "empty-appendix.pdf", empty_context(), "appendix")
