"""The serving layout search: which layouts an option is searched over, which the
measurements cover, and which one it runs at."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from models.parallel_limits import serving_refusals
from models.serving.layout_array import Layouts
from models.serving.layouts import (
    SPAN_DOMAINS,
    Evaluated,
    best,
    candidates,
    coverage,
    instance_sizes,
    layout_label,
)
from models.serving.presets import PRESETS
from models.serving.spec import Deployment
from tests.conftest import examples

LLAMA, DEEPSEEK, GPT_OSS = (PRESETS[m] for m in ("llama-3.3-70b", "deepseek-r1",
                                                 "gpt-oss-120b"))


def test_a_layout_is_labelled_by_its_factors_above_one():
    assert layout_label(Deployment(tp=8)) == "TP8"
    assert layout_label(Deployment()) == "TP1"
    assert layout_label(Deployment(tp=1, dp=8, ep=8)) == "DP8 x EP8"
    assert layout_label(Deployment(tp=2, dp=4, pp=2, prefill_gpus=8)) == \
        "TP2 x DP4 x PP2 + 8 prefill GPUs"
    assert layout_label(Deployment(tp=1, prefill_gpus=1)) == "TP1 + 1 prefill GPU"


def test_the_instance_sizes_double_up_to_the_reach_and_keep_the_domain():
    assert instance_sizes(8) == [1, 2, 4, 8]
    assert instance_sizes(72) == [1, 2, 4, 8, 16, 32, 64, 72]
    assert instance_sizes(8, 16) == [1, 2, 4, 8, 16]
    assert instance_sizes(72, 144) == [1, 2, 4, 8, 16, 32, 64, 72, 128]


def rows(space: Layouts) -> set[tuple[int, int, int, int, int]]:
    return set(zip(*(c.tolist() for c in (space.tp, space.dp, space.ep, space.pp,
                                             space.prefill_gpus)), strict=True))


def test_a_dense_model_is_searched_without_expert_parallelism():
    space = candidates(LLAMA, 8)
    found = rows(space)
    assert (8, 1, 0, 1, 0) in found                 # TP8, the engines' default
    assert (1, 8, 0, 1, 0) in found                 # DP8: eight replicas of attention
    assert (2, 1, 0, 4, 0) in found                 # TP2 x PP4
    assert (4, 1, 0, 1, 8) in found                 # TP4 beside a prefill pool of 8 GPUs
    assert (16, 1, 0, 1, 0) in found                # two nodes over the NICs
    assert not space.ep.any() and len(found) == len(space)


def test_a_moe_is_searched_with_its_experts_split_and_spread():
    found = rows(candidates(DEEPSEEK, 8))
    assert {(1, 8, 8, 1, 0), (8, 1, 8, 1, 0), (8, 1, 0, 1, 0)} <= found
    assert (1, 16, 16, 1, 0) in found               # EP16 over two nodes
    assert (1, 1, 1, 1, 0) not in found             # one GPU has nothing to spread over


@given(st.sampled_from([LLAMA, DEEPSEEK, GPT_OSS]), st.sampled_from([1, 4, 8, 36, 72]))
@settings(max_examples=examples(30))
def test_every_candidate_fits_two_domains_and_is_one_an_engine_runs(llm, domain):
    space = candidates(llm, domain)
    assert (space.total_gpus <= SPAN_DOMAINS * domain).all()
    for i in range(len(space)):
        dep = space.deployment(i, Deployment())
        assert dep.ep is None or dep.ep == dep.tp * dep.dp
        assert not serving_refusals(dep.tp, dep.ep or 1, llm.heads, llm.kv_heads,
                                    llm.latent_kv, llm.experts, pp=dep.pp, layers=llm.layers)


def test_the_array_coverage_is_the_deployments_one():
    measured = coverage([Deployment(tp=8), Deployment(tp=1, dp=4, ep=4), Deployment(tp=2)])
    space = candidates(DEEPSEEK, 8)
    deps = [space.deployment(i, Deployment()) for i in range(len(space))]
    assert list(measured.covers_rows(space)) == [measured.covers(d) for d in deps]
    assert 0 < measured.covers_rows(space).sum() < len(space)


def test_coverage_is_the_largest_measured_instance_of_each_scheme():
    measured = coverage([Deployment(tp=8), Deployment(tp=1, dp=4, ep=4), Deployment(tp=2)])
    assert measured.covers(Deployment(tp=4))
    assert not measured.covers(Deployment(tp=16))
    assert measured.covers(Deployment(tp=1, dp=2, ep=2))
    assert not measured.covers(Deployment(tp=1, dp=8, ep=8))
    assert not measured.covers(Deployment(tp=8, ep=8))        # no TP x EP was measured
    assert not measured.covers(Deployment(tp=4, pp=2))         # nor any pipeline stages
    assert "wider than any measured one of its scheme (4 GPUs)" in \
        measured.describe(Deployment(tp=1, dp=8, ep=8))
    assert "pipeline stages" in measured.describe(Deployment(tp=4, pp=2))


def test_the_best_layout_is_the_most_throughput_at_the_low_end_of_its_band():
    sure = Evaluated(Deployment(tp=8), 1000.0, (1.0, 1.0))          # measured
    unsure = Evaluated(Deployment(tp=1, dp=8, ep=8), 3000.0, (0.2, 16.0))
    better = Evaluated(Deployment(tp=4), 6000.0, (0.2, 16.0))
    assert best([sure, unsure]) == sure          # 3,000 at 0.2 assures 600 < 1,000
    assert best([sure, unsure, better]) == better


def test_ties_go_to_the_estimate_then_to_the_fewest_gpus():
    small, large = Deployment(tp=2), Deployment(tp=8)
    assert best([Evaluated(large, 100.0, (1.0, 1.0)),
                 Evaluated(small, 100.0, (1.0, 1.0))]).deployment == small
    assert best([Evaluated(small, 50.0, (1.0, 1.0)),
                 Evaluated(large, 100.0, (0.5, 1.0))]).deployment == large


def test_no_layout_reaching_the_target_is_no_choice():
    assert best([Evaluated(Deployment(), None, (1.0, 1.0))]) is None
    assert best([]) is None


@given(st.lists(st.tuples(st.integers(0, 5), st.floats(1, 1e4), st.floats(0.1, 1.0)),
                min_size=1, max_size=8))
@settings(max_examples=examples(30))
def test_no_layout_left_out_assures_more_than_the_one_chosen(rows):
    layouts = [Evaluated(dataclasses.replace(Deployment(), tp=2 ** n), tok, (low, 1.0))
               for n, tok, low in rows]
    chosen = best(layouts)
    assert chosen is not None
    assert all(e.assured <= chosen.assured for e in layouts)
