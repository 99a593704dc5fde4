"""One layout-validity rule for `estimate` and `sweep` (models/c2c/layout_rules.py): the masks
the search applies and the scalar check that names a broken rule are the same code."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from models.c2c.estimate import evaluate
from models.c2c.layout_rules import READS, RULES, Violation, valid, violations
from models.c2c.spec import (
    LAYOUT_FIELDS,
    ClusterSpec,
    Framework,
    Layout,
    Layouts,
    Recompute,
    TransformerSpec,
)
from models.c2c.stages import stage_layers
from models.c2c.sweep import enumerate_layouts, sweep
from tests.conftest import examples

# Qwen3-235B-A22B's shape: 94 layers, which no power-of-two pipeline divides; Megatron runs
# PP8 by counting the embedding and the loss as layers (96 = 8 x 12).
QWEN3_235B = TransformerSpec(layers=94, hidden=4096, heads=64, kv_heads=4, head_dim=128,
                             seq_len=4096, vocab=151936, ffn=12288, swiglu=True, experts=128,
                             top_k=8, moe_ffn=1536, tied_embeddings=False)
GB200 = ClusterSpec(peak_flops=2500e12, hbm_bytes=186e9, hbm_bw=8e12, domain_gpus=72,
                    scaleup_bw=900e9, scaleout_bw=50e9, scaleup_efficiency=0.82,
                    scaleout_efficiency=0.94, scaleup_latency=3.4e-6, scaleout_latency=14e-6,
                    arch="blackwell")
GPT3 = TransformerSpec(layers=96, hidden=12288, heads=96, seq_len=2048, vocab=51200)
SMALL_MOE = TransformerSpec(layers=10, hidden=1024, heads=8, kv_heads=4, seq_len=4096,
                            vocab=32000, experts=8, top_k=2, moe_ffn=768)


def test_the_sweep_searches_pp8_for_94_layers_as_megatron_splits_them():
    layouts = enumerate_layouts(QWEN3_235B, Framework(), 256, 512,
                                {"tp": 1, "cp": 1, "ep": 8, "etp": 1, "micro_batch": 1})
    pp8 = layouts.take(np.flatnonzero(layouts.pp == 8))
    assert len(pp8) > 0
    assert set(pp8.interleave.tolist()) == {1, 2, 3, 4, 6}  # 96 / 8 = 12 chunks a stage
    split = stage_layers(QWEN3_235B, pp8)
    assert split.embedded.all()
    assert (split.first.tolist()[0], split.middle.tolist()[0], split.last.tolist()[0]) \
        == (11, 12, 11)


def test_a_swept_pp8_layout_is_estimated_as_the_same_layout_given_alone():
    fw = Framework()
    found = sweep(QWEN3_235B, GB200, fw, 256, 512, top=3,
                  fixed={"pp": 8, "tp": 1, "cp": 1, "ep": 8, "etp": 1, "micro_batch": 1})
    best = found.best
    for i in range(len(best.t_iter)):
        layout = best.layouts.layout(i)
        assert layout.pp == 8 and violations(QWEN3_235B, fw, layout) == []
        alone = evaluate(QWEN3_235B, GB200, fw, Layouts.of([layout]))
        assert alone.t_iter[0] == best.t_iter[i]
        assert alone.memory_bytes[0] == best.memory_bytes[i]
        assert alone.t_bubble[0] == best.t_bubble[i]


def test_every_layout_the_sweep_enumerates_passes_the_scalar_check():
    fw = Framework()
    layouts = enumerate_layouts(SMALL_MOE, fw, 16, 32)
    assert len(layouts) > 0
    sample = np.linspace(0, len(layouts) - 1, 200).astype(int)
    for i in sample:
        assert violations(SMALL_MOE, fw, layouts.layout(int(i))) == []


def test_the_scalar_check_names_each_broken_rule_with_its_key():
    broken = violations(GPT3, Framework(flash_attention=False),
                        Layout(tp=7, pp=5, dp=3, cp=2, micro_batch=1, global_batch=64))
    assert [v.field for v in broken] == ["parallel.tp", "parallel.tp", "parallel.pp",
                                         "parallel.global_batch", "parallel.cp"]
    assert broken[0] == Violation("parallel.tp", "tp=7 does not divide the 96 attention heads")
    assert "pp x interleave = 5 divides neither the 96 layers" in broken[2].reason
    assert "fused attention" in broken[4].reason


def test_known_limits_the_check_to_the_rules_of_the_fields_given():
    layout = Layout(tp=7, micro_batch=3, dp=1, global_batch=64)
    assert [v.field for v in violations(GPT3, Framework(), layout, frozenset({"tp"}))] \
        == ["parallel.tp", "parallel.tp"]


def test_the_embedding_and_loss_split_is_accepted_and_other_splits_are_not():
    fw = Framework()
    ok = Layout(pp=8, interleave=4, dp=4, micro_batch=1, global_batch=32)  # 96 / 32 = 3
    assert violations(QWEN3_235B, fw, ok) == []
    odd = Layout(pp=8, interleave=5, dp=4, micro_batch=1, global_batch=32)  # 40 divides neither
    assert [v.field for v in violations(QWEN3_235B, fw, odd)] == ["parallel.pp"]


layouts_drawn = st.builds(
    Layout, tp=st.sampled_from([1, 2, 3, 4, 8]), pp=st.integers(1, 12),
    dp=st.integers(1, 8), ep=st.sampled_from([1, 2, 3, 4, 8]),
    micro_batch=st.integers(1, 4), global_batch=st.sampled_from([8, 24, 32, 96]),
    interleave=st.integers(1, 6), cp=st.sampled_from([1, 2, 3, 4]),
    etp=st.sampled_from([0, 1, 2, 3]), first_stage_layers=st.sampled_from([0, 0, 1, 4, 12]),
    last_stage_layers=st.sampled_from([0, 0, 2, 5]),
    sequence_parallel=st.booleans(), recompute=st.sampled_from(list(Recompute)))


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(layouts_drawn, min_size=1, max_size=20), st.booleans())
def test_the_masks_and_the_scalar_check_agree(items, flash):
    fw = Framework(flash_attention=flash)
    mask = valid(SMALL_MOE, fw, Layouts.of(items))
    assert mask.tolist() == [not violations(SMALL_MOE, fw, x) for x in items]


def test_each_rule_reads_only_the_fields_it_declares():
    """The sweep crosses valid shapes with the other fields after checking: no rule may
    depend on them."""
    base = Layout(tp=2, pp=4, dp=2, ep=2, micro_batch=1, global_batch=16, interleave=2, cp=2)
    changed = Layout(**{**{n: getattr(base, n) for n in LAYOUT_FIELDS},
                        "sequence_parallel": True, "recompute": Recompute.FULL, "zero": 3,
                        "recompute_layers": 2, "offload_layers": 1})
    assert not READS & {"sequence_parallel", "recompute", "zero", "recompute_layers",
                        "offload_layers"}
    for rule in RULES:
        assert bool(rule.holds(SMALL_MOE, Framework(), base)) \
            == bool(rule.holds(SMALL_MOE, Framework(), changed))
