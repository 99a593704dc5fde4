"""Scenario files: quantities with units become SI figures; every error names the file, the
line and the field."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from models.c2c.spec import Recompute
from pipelines.inputs.scenarios import ScenarioError, load_scenario, load_scenarios
from pipelines.jobs.c2c import check_layout
from pipelines.ledger.cluster_specs import MissingSpec, resolve_cluster
from tests.pipelines.conftest import GPT3_INLINE, SHIPPED_SCENARIOS, edited

ON = date(2026, 11, 22)
KNOWN = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def test_a_full_scenario_loads_model_layout_and_tokens(write_scenario):
    scenario = load_scenario(write_scenario())
    assert scenario.name == "gpt3-175b-tp8-pp8"
    assert (scenario.model.layers, scenario.model.hidden, scenario.model.heads,
            scenario.model.seq_len, scenario.model.vocab) == (96, 12288, 96, 2048, 51200)
    layout = scenario.layout
    assert (layout.tp, layout.pp, layout.dp, layout.ep, layout.micro_batch,
            layout.global_batch, layout.interleave, layout.zero) == (8, 8, 1, 1, 1, 64, 1, 1)
    assert layout.recompute == Recompute.FULL and layout.sequence_parallel is False
    assert scenario.cluster.gpus == 1024
    assert scenario.tokens == 300e9


def test_quantities_are_converted_to_si(write_scenario):
    inline = load_scenario(write_scenario()).cluster.inline
    assert inline["gpu_specs.peak"].value == 312e12
    assert inline["gpu_specs.hbm"].value == 80 * 2**30 == 85899345920
    assert inline["gpu_specs.hbm_bw"].value == 2039e9
    assert inline["scale_up.bw_per_gpu_bidir"].value == 600e9
    assert inline["scale_out.nic_rate"].value == 25e9  # 200 Gb/s is bits: 25 GB/s
    assert inline["gpu_specs.hbm"].written == "80 GiB"


def test_resolving_an_inline_cluster_needs_no_ledger(write_scenario):
    hw, used = resolve_cluster(load_scenario(write_scenario()).cluster, None, on=ON,
                               known=KNOWN)
    assert (hw.peak_flops, hw.hbm_bytes, hw.hbm_bw) == (312e12, 85899345920, 2039e9)
    assert hw.scaleup_bw == 300e9  # 600 GB/s both directions: 300 GB/s each way
    assert hw.scaleout_bw == 25e9 and hw.domain_gpus == 8
    origins = {s.name: s.origin for s in used}
    assert origins["peak_flops"] == origins["scaleup_bw"] == "inline"
    assert origins["scaleout_efficiency"] == "default"


@pytest.mark.parametrize(("old", "new", "field", "reason", "line"), [
    ('hbm: "80 GiB"', "hbm: 80", "cluster.gpu_specs.hbm", "expected a quantity with a unit", 6),
    ('hbm: "80 GiB"', 'hbm: "80"', "cluster.gpu_specs.hbm", "expected a quantity with a unit",
     6),
    ('"600 GB/s"', '"600 Gb/s"', "cluster.scale_up.bw_per_gpu_bidir", "counts bits", 7),
    ('"200 Gb/s"', '"25 GB/s"', "cluster.scale_out.nic_rate", "counts bytes", 8),
    ('"312 TFLOP/s"', '"312 zorks"', "cluster.gpu_specs.peak", "unknown unit 'zorks'", 6),
    ('"312 TFLOP/s"', '"312 GB/s"', "cluster.gpu_specs.peak", "is a data unit", 6),
    ("vocab: 51200}", "vocab: 51200, depth: 4}", "model.depth", "unknown key", 2),
    ("layers: 96, ", "", "model.layers", "missing", 2),
    ("hidden: 12288", "hidden: 12280", "model", "must be divisible by model.heads", 2),
    ("global_batch: 64, ", "", "parallel.global_batch", "missing", 3),
    ("recompute: full", "recompute: partial", "parallel.recompute", "not 'partial'", 4),
    ("zero: 1", "zero: 5", "parallel.zero", "must be 0, 1, 2 or 3", 4),
    ("tp: 8,", "tp: eight,", "parallel.tp", "expected a number, got 'eight'", 3),
    ("tp: 8,", "tp: 8.5,", "parallel.tp", "expected a whole number", 3),
    ("tp: 8,", "tp: -8,", "parallel.tp", "non-negative", 3),
    ("sequence_parallel: false", "sequence_parallel: 1", "parallel.sequence_parallel",
     "expected true or false", 4),
    ("  gpus: 1024", "  nodes: 128", "cluster.nodes", "unknown key", 9),
    ("tokens: 300e9", "tokens: lots", "tokens", "expected a number", 10),
    ("  gpus: 1024", "  gpus: 1024: 2", "(file)", "not valid YAML", 9),
])
def test_a_bad_field_is_an_error_naming_file_line_and_field(write_scenario, old, new, field,
                                                            reason, line):
    path = write_scenario(edited(GPT3_INLINE, old, new))
    with pytest.raises(ScenarioError) as raised:
        load_scenario(path)
    error = raised.value
    assert (error.path, error.field, error.line) == (str(path), field, line)
    assert reason in error.reason
    assert str(error).startswith(f"{path}:{line} {field}: ")


def test_a_file_that_is_not_a_mapping_is_an_error(write_scenario):
    path = write_scenario("- just\n- a list\n")
    with pytest.raises(ScenarioError, match="expected a mapping") as raised:
        load_scenario(path)
    assert raised.value.field == "(file)" and str(raised.value).startswith(str(path))


def test_the_content_hash_ignores_layout_and_comments_but_not_values(write_scenario):
    original = load_scenario(write_scenario()).content_sha256
    reformatted = write_scenario("# the same scenario, block style\n" + GPT3_INLINE.replace(
        "  gpus: 1024\n", "\n  gpus:    1024   # GPUs in the cluster\n"), name="again.yaml")
    changed = write_scenario(edited(GPT3_INLINE, "gpus: 1024", "gpus: 2048"), name="new.yaml")
    assert load_scenario(reformatted).content_sha256 == original
    assert load_scenario(changed).content_sha256 != original
    assert len(original) == 64


def test_load_scenarios_reads_a_folder_by_file_name_and_skips_other_kinds(write_scenario):
    write_scenario(edited(GPT3_INLINE, "name: gpt3-175b-tp8-pp8", "name: b"), name="b.yaml")
    write_scenario(edited(GPT3_INLINE, "name: gpt3-175b-tp8-pp8", "name: a"), name="a.yml")
    folder = write_scenario("kind: tco\nname: not-c2c\n", name="c.yaml").parent
    assert [s.name for s in load_scenarios(folder)] == ["a", "b"]


def test_every_shipped_scenario_loads_and_meets_its_layout_constraints():
    scenarios = load_scenarios(SHIPPED_SCENARIOS)
    assert len(scenarios) >= 12
    for scenario in scenarios:
        check_layout(scenario)


@pytest.mark.parametrize(("old", "new", "field", "words"), [
    ("tp: 8,", "tp: 7,", "parallel.tp", ["tp=7", "96 attention heads"]),
    ("pp: 8,", "pp: 5,", "parallel.pp", ["96 layers"]),
    ("dp: 1,", "dp: 3,", "parallel.global_batch", ["global_batch 64", "micro_batch x dp = 3"]),
    ("global_batch: 64, interleave: 1", "global_batch: 60, interleave: 3", "parallel.interleave",
     ["divisible by pp"]),
])
def test_check_layout_names_the_constraint_a_layout_breaks(write_scenario, old, new, field,
                                                           words):
    path = write_scenario(edited(GPT3_INLINE, old, new))
    with pytest.raises(ScenarioError) as raised:
        check_layout(load_scenario(path))
    assert raised.value.field == field
    assert str(raised.value).startswith(str(path))
    for word in words:
        assert word in raised.value.reason


@pytest.mark.parametrize(("key", "value"), [
    ("tp", 8), ("pp", 8), ("dp", 1), ("ep", 1), ("micro_batch", 1), ("interleave", 1),
    ("global_batch", 64),
])
def test_a_zero_parallel_degree_is_an_error_naming_it(write_scenario, key, value):
    path = write_scenario(edited(GPT3_INLINE, f"{key}: {value}", f"{key}: 0"))
    with pytest.raises(ScenarioError) as raised:  # from load_scenario or check_layout
        check_layout(load_scenario(path))
    assert raised.value.field == f"parallel.{key}"


def test_a_figure_neither_inline_nor_in_a_ledger_is_a_missing_spec(write_scenario):
    path = write_scenario(edited(GPT3_INLINE, 'peak: "312 TFLOP/s", ', ""))
    with pytest.raises(MissingSpec, match=r"^cluster\.gpu_specs\.peak: no ledger item"):
        resolve_cluster(load_scenario(path).cluster, None, on=ON, known=KNOWN)


def test_a_ledger_item_without_a_ledger_is_a_missing_spec(write_scenario):
    path = write_scenario(edited(GPT3_INLINE, "cluster:\n", "cluster:\n  gpu: b200\n")
                          .replace('peak: "312 TFLOP/s", ', ""))
    with pytest.raises(MissingSpec, match="cluster.gpu_specs.peak"):
        resolve_cluster(load_scenario(path).cluster, None, on=ON, known=KNOWN)


@pytest.mark.parametrize(("old", "new", "field", "reason", "line"), [
    ("  gpus: 1024", "  gpus: .inf", "cluster.gpus", "expected a finite", 9),
    ("  gpus: 1024", "  gpus: .nan", "cluster.gpus", "expected a finite", 9),
    ("  gpus: 1024", "  gpus: inf", "cluster.gpus", "expected a finite", 9),
    ("  gpus: 1024", "  gpus: 1e12", "cluster.gpus", "must be at most 1,000,000,000", 9),
    ("  gpus: 1024", "  gpus: 1" + "0" * 400, "cluster.gpus", "expected a finite", 9),
    ("  gpus: 1024", "  gpus: [1024]", "cluster.gpus", "expected a number, got a list", 9),
    ("tokens: 300e9", "tokens: inf", "tokens", "expected a finite", 10),
    ("tokens: 300e9", "tokens: 1e400", "tokens", "expected a finite", 10),
    ('hbm: "80 GiB"', 'hbm: "1e400 GiB"', "cluster.gpu_specs.hbm", "positive, finite", 6),
    ('hbm: "80 GiB"', 'hbm: "-80 GiB"', "cluster.gpu_specs.hbm", "positive, finite", 6),
    ('"312 TFLOP/s"', '"1e300 PFLOP/s"', "cluster.gpu_specs.peak", "positive, finite", 6),
    ('hbm: "80 GiB"', "hbm: {size: 80, unit: GiB}", "cluster.gpu_specs.hbm",
     'expected a quantity with a unit, e.g. "1 GB", got a mapping', 6),
    ('hbm: "80 GiB"', 'hbm: ["80 GiB"]', "cluster.gpu_specs.hbm", "got a list of 1", 6),
    ("  gpus: 1024", "  gpus: 1024\n  gpu: [a, b]", "cluster.gpu",
     "expected the key of a ledger item, got a list of 2", 10),
    ("nic_rate: ", "item: {key: x}, nic_rate: ", "cluster.scale_out.item",
     "got a mapping", 8),
    ("layers: 96", "layers: [96]", "model.layers", "got a list", 2),
    ("heads: 96", "heads: .nan", "model.heads", "expected a finite", 2),
    ("vocab: 51200}", "vocab: 51200, kv_heads: 0}", "model.kv_heads", "at least 1", 2),
    ("domain_gpus: 8", "domain_gpus: 8.5", "cluster.scale_up.domain_gpus", "whole number", 7),
    ("nics_per_gpu: 1", "nics_per_gpu: 1, efficiency: 1.5", "cluster.scale_out.efficiency",
     "at most 1", 8),
    ("global_batch: 64", "global_batch: .inf", "parallel.global_batch", "expected a finite", 3),
])
def test_a_non_finite_huge_or_non_scalar_value_names_file_line_and_field(
        write_scenario, old, new, field, reason, line):
    path = write_scenario(edited(GPT3_INLINE, old, new))
    with pytest.raises(ScenarioError) as raised:
        load_scenario(path)
    error = raised.value
    assert (error.path, error.field, error.line) == (str(path), field, line)
    assert reason in error.reason


@pytest.mark.parametrize(("old", "new", "line", "field", "first"), [
    ("tokens: 300e9\n", "tokens: 300e9\ntokens: 1e12\n", 11, "tokens", 10),
    ("  gpus: 1024\n", "  gpus: 1024\n  gpus: 2048\n", 10, "cluster.gpus", 9),
    ("hidden: 12288,", "hidden: 12288, layers: 48,", 2, "model.layers", 2),
    # The first writing on the mapping's own line (the file's first key).
    ("tokens: 300e9\n", "tokens: 300e9\nname: gpt3\n", 11, "name", 1),
])
def test_a_key_written_twice_names_the_key_and_both_lines(write_scenario, old, new, line,
                                                           field, first):
    """The YAML reader keeps the first value: which one was meant cannot be told."""
    path = write_scenario(edited(GPT3_INLINE, old, new))
    with pytest.raises(ScenarioError) as raised:
        load_scenario(path)
    error = raised.value
    assert (error.path, error.line, error.field) == (str(path), line, field)
    assert error.reason == f"written twice (first on line {first}); give it once"
