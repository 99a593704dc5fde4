"""The one view the templates read: built once in Python, no function handed to Jinja, and
the same page-1 pieces the e-mail digest prints."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import jinja2.meta
import pytest
from jinja2 import nodes

from reports.briefing import TEMPLATES, environment
from reports.context import ChangeCount, StaleSource
from reports.decisions import digest
from reports.view_model import BriefingView, build_view
from tests.support.contexts import empty_context, full_context, full_size_context

FOLDER = TEMPLATES / "briefing"


@pytest.mark.parametrize("path", sorted(FOLDER.glob("*.j2")), ids=lambda p: p.name)
def test_a_template_reads_only_the_view(path):
    source = path.read_text(encoding="utf-8")
    names = jinja2.meta.find_undeclared_variables(environment().parse(source))
    assert names <= {"view"}


@pytest.mark.parametrize("path", sorted(FOLDER.glob("*.j2")), ids=lambda p: p.name)
def test_a_template_calls_only_macros(path):
    """No Python function or method: figures go through filters, the rest is in the view."""
    tree = environment().parse(path.read_text(encoding="utf-8"))
    macros = {macro.name for macro in tree.find_all(nodes.Macro)}
    for call in tree.find_all(nodes.Call):
        target = call.node
        assert (isinstance(target, nodes.Name) and target.name in macros) or (
            isinstance(target, nodes.Getattr) and isinstance(target.node, nodes.Name)
            and target.node.name == "m"), call


def _values(value: object) -> Iterator[object]:
    """Every value reachable from the view's own dataclasses (the context's are plain data)."""
    yield value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            if f.name != "ctx":
                yield from _values(getattr(value, f.name))
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _values(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _values(item)


@pytest.mark.parametrize("make", [full_context, empty_context])
def test_the_view_holds_values_not_functions(make):
    view = build_view(make(), document="appendix")   # the appendix draws one chart: fast
    assert isinstance(view, BriefingView)
    assert not [v for v in _values(view) if callable(v)]


def test_page_one_and_the_digest_read_the_same_verdicts():
    context = full_context()
    view = build_view(context, document="appendix")
    text = digest(context)
    sentences = [d.verdict for w in view.workloads for d in w.decisions]
    sentences += [d.flip for w in view.workloads for d in w.decisions if d.flip]
    sentences += [s.headline for s in view.serving]
    assert sentences and all(sentence in text for sentence in sentences)


def test_the_view_counts_what_the_lists_leave_out():
    full = full_size_context()
    stale = StaleSource("remote", "https://example.test", full.cutoff_at, "HTTP 502", None)
    context = dataclasses.replace(
        full, flag_counts={"single_source": 5_000, "added": 12},
        change_counts={"added": ChangeCount(90, 9, 3)}, source_count=321,
        section_counts={s.section: 1_000 for s in full.specs},
        stale_sources=(stale,), stale_source_count=4)
    view = build_view(context, document="appendix")
    [single] = [k for k in view.flags.kinds if k.kind == "single_source"]
    assert single.compact and single.total == 5_000
    assert single.more == 5_000 - len(single.flags) and "kind = 'single_source'" in single.query
    assert sum(g.count for g in single.subjects) == len(single.flags)
    assert (view.changes.counts.added, view.changes.counts.changed) == (90, 0)
    assert view.changes.more_flags == 12 - len(context.changes.flags)
    assert (view.stale.total, view.stale.more, view.source_total) == (4, 3, 321)
    assert all(s.total == 1_000 and s.more == 1_000 - len(s.lines)
               for s in view.values.sections)
    assert view.values.left_out == view.values.total - len(context.specs)


def test_the_main_market_is_of_the_gpus_the_options_run_on_and_the_rest_goes_to_the_appendix():
    """A market of many GPUs stays one table: the GPUs the comparisons and serving answers run
    on (here b200 and gb200, which the ledger prices) in the briefing, the others apart."""
    context = full_context()
    b200 = dataclasses.replace(context.market_history[0], gpu="b200")
    line = dataclasses.replace(context.market[0], gpu="b200")
    context = dataclasses.replace(context, market_history=[b200, *context.market_history],
                                  market=[line, *context.market])
    view = build_view(context)
    assert [row.series.gpu for row in view.market] == ["b200"]
    assert [row.series.gpu for row in view.market_rest] == ["h100-sxm5", "a100-sxm4-40gb"]
    assert [line.gpu for line in view.market_lines] == ["b200"]
    assert view.market_lines_rest == ("h100-sxm5", "a100-sxm4-40gb")
    # Priced for none of the options' GPUs, the market is shown whole rather than empty.
    whole = build_view(full_context())
    assert len(whole.market) == 2 and whole.market_rest == () and whole.market_lines_rest == ()


def test_rows_point_at_numbered_inputs_and_the_market_rows_carry_their_change():
    context = full_context()
    view = build_view(context, document="appendix")
    assert [r.name for r in view.scenario_inputs.rows] == [s.name for s in context.scenarios]
    assert all(max(r.numbers, default=0) <= len(view.scenario_inputs.figures)
               for r in view.scenario_inputs.rows)
    assert [(r.name, r.option.name) for r in view.serving_inputs.rows if r.option] == [
        (s.name, o.name) for s in context.serving for o in s.options]
    h100, a100 = view.market
    assert (h100.last_usd, h100.versions, a100.versions) == (10.0, 2, 1)
    # The change is the index's over matched offers, never two medians' ratio.
    assert (h100.series.change_7d, h100.series.change_90d) == (-0.05, None)
    assert view.market_compositions == ("h100-sxm5 on demand, 90 days: gcp added 11 offers",)
    shares = [r.share for r in view.scenarios]
    assert all(share is None or 0 <= share <= 1 for share in shares)
