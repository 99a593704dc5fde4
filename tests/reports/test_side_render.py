"""The appendix laid out in a forked child gives the bytes an in-process render gives, and a
child that fails leaves the render to the calling process."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reports import side_render
from reports.briefing import render
from tests.support.contexts import empty_context, full_context


def test_the_forked_appendix_is_the_in_process_one_byte_for_byte(full_appendix: Path):
    collect = side_render.appendix_beside(full_context())
    assert collect() == full_appendix.read_bytes()


def test_a_child_that_fails_leaves_the_render_to_the_caller(monkeypatch: pytest.MonkeyPatch):
    context = empty_context()
    expected = render(context, document="appendix").pdf
    parent = os.getpid()

    def failing_in_the_child(ctx, document="briefing", html=None):
        if os.getpid() != parent:
            raise OSError(28, "No space left on device")
        return render(ctx, document=document, html=html)

    monkeypatch.setattr(side_render, "render", failing_in_the_child)
    assert side_render.appendix_beside(context)() == expected
