"""The serving layout search: which layouts an option is searched over, which the
measurements cover, and which one it runs at."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from models.parallel_limits import serving_refusals
from models.serving.layouts import (
    Evaluated,
    best,
    candidates,
    coverage,
    instance_sizes,
    layout_label,
    scheme,
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


def test_the_instance_sizes_double_inside_the_domain_and_end_at_it():
    assert instance_sizes(8) == [1, 2, 4, 8]
    assert instance_sizes(72) == [1, 2, 4, 8, 16, 32, 64, 72]


def test_a_dense_model_is_searched_over_tensor_and_attention_parallelism_only():
    found = candidates(LLAMA, Deployment(tp=8, engine="vllm", max_batch=256), 8)
    assert {scheme(d) for d in found} == {"tp", "dp"}
    assert all(d.ep is None and d.pp == 1 and not d.disaggregated for d in found)
    # The file's engine and batch limit are kept; only the layout moves.
    assert {(d.engine, d.max_batch) for d in found} == {("vllm", 256)}
    assert Deployment(tp=8, engine="vllm", max_batch=256) in found


def test_a_moe_is_searched_with_its_experts_split_and_spread():
    found = candidates(DEEPSEEK, Deployment(), 8)
    assert {scheme(d) for d in found} == {"tp", "tp-ep", "dp", "dp-ep"}
    assert Deployment(tp=1, dp=8, ep=8) in found and Deployment(tp=8, ep=8) in found
    assert len(found) == len(set(found))


@given(st.sampled_from([LLAMA, DEEPSEEK, GPT_OSS]), st.sampled_from([1, 4, 8, 36, 72]))
@settings(max_examples=examples(30))
def test_every_candidate_fits_the_domain_and_is_one_an_engine_runs(llm, domain):
    for dep in candidates(llm, Deployment(), domain):
        assert dep.gpus <= domain
        assert not serving_refusals(dep.tp, dep.ep or 1, llm.heads, llm.kv_heads,
                                    llm.latent_kv, llm.experts)


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
