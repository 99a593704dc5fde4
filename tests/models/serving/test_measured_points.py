"""The shipped serving points (data/measurements/serving_points.yaml) are what the model may be
calibrated on: real rows of the shipped presets on GPUs the ledger describes, each dated and
sourced, plausible as serving measurements of their scenario, and the published rows they leave
out listed with why."""

from __future__ import annotations

import re
from collections import defaultdict

import pytest

from models.c2c.calibration import ARCH_OF_FAMILY
from models.serving.measured_points import ARCH_OF_ITEM, SCENARIOS, MeasuredPoint
from models.serving.presets import PRESETS
from models.serving.spec import WeightFormat
from pipelines.inputs.measurements import shipped_serving_points

# Commit-pinned: the InferenceX-app fixtures, InferenceMAX's run artifacts as a public
# repository committed them unchanged, AMD's README at a revision, an MLPerf results tree.
PINNED = re.compile(r"^https://github\.com/((SemiAnalysisAI/InferenceX-app|gminneci/mantile)/blob/"
                    r"[0-9a-f]{40}/|ROCm/vllm/blob/[0-9a-f]{7,40}/|"
                    r"(mlcommons|ntuhpc|gbeezybez)/(mlperf_)?inference_results_v\d\.\d/tree/"
                    r"[0-9a-f]{7,40}$)")
TABLE = shipped_serving_points()
POINTS, SOURCES = TABLE.points, {s.key: s for s in TABLE.sources}
RUN = re.compile(r"^https://github\.com/(SemiAnalysisAI/InferenceX/actions/runs/\d+/attempts/\d+|"
                 r"InferenceMAX/InferenceMAX/actions/runs/\d+|"
                 r"ROCm/vllm/blob/[0-9a-f]{7,40}/docs/dev-docker/README\.md|"
                 r"(mlcommons|ntuhpc|gbeezybez)/(mlperf_)?inference_results_v\d\.\d/blob/"
                 r"[0-9a-f]{7,40}/closed/[^/]+/results/[^/]+/(llama2-70b-99(\.9)?|gpt-oss-120b)/"
                 r"(Offline|Server|Interactive|offline|server)/performance/run_1/"
                 r"mlperf_log_summary\.txt)$")  # Nebius's nebius_b300_n1 tree: lower case
AT_A_CONCURRENCY = [p for p in POINTS if p.scenario == "concurrency"]


def config(p: MeasuredPoint) -> tuple[object, ...]:
    return (p.hardware, p.model, p.precision, p.engine, p.input_tokens, p.output_tokens, p.tp,
            p.ep, p.dp_attention)


def test_enough_points_of_the_shipped_presets_on_each_fitted_family():
    per_family = defaultdict(set)
    for p in POINTS:
        per_family[p.arch].add((p.model, p.hardware))
    assert set(per_family) == {"hopper", "blackwell", "blackwell_ultra", "cdna3", "cdna4"}
    assert {p.model for p in POINTS} == {"deepseek-r1", "gpt-oss-120b", "llama-2-70b",
                                         "llama-3.1-70b"} <= set(PRESETS)
    assert {p.hardware for p in POINTS} == {"h100-sxm5", "h200-sxm", "b200", "gb200", "b300",
                                            "gb300", "amd-mi300x", "amd-mi325x", "amd-mi355x"}
    for family in ("hopper", "blackwell", "cdna4"):   # two models, a hundred points or more
        assert sum(p.arch == family for p in POINTS) >= 100
        assert {"deepseek-r1", "gpt-oss-120b"} <= {m for m, _ in per_family[family]}
    # A dense model measured on every family but CDNA 4 (MLPerf's Llama-2-70B; AMD's Llama 3.1
    # 70B on MI300X), a MoE one on every family.
    for family in ("hopper", "blackwell", "cdna3"):
        assert "llama-2-70b" in {m for m, _ in per_family[family]}
    assert {m for m, _ in per_family["cdna3"]} == {"deepseek-r1", "llama-2-70b", "llama-3.1-70b"}
    assert {p.scenario for p in POINTS} == set(SCENARIOS)


@pytest.mark.parametrize("point", POINTS, ids=lambda p: f"{p.hardware}-{p.engine}-"
                         f"{p.precision}-{p.input_tokens}-{p.output_tokens}-tp{p.tp}-ep{p.ep}-"
                         f"{'dpa' if p.dp_attention else 'tpa'}-{p.scenario}-c{p.concurrency}-"
                         f"{p.tok_s_per_gpu}")
def test_each_point_is_a_plausible_sourced_serving_measurement(point):
    p = point
    assert p.tok_s_per_gpu > 0 and p.tp in (1, 2, 4, 8) and 1 <= p.ep <= p.tp
    assert not p.dp_attention or p.ep in (1, p.tp)   # experts by TP, or over every GPU
    if p.scenario == "concurrency":
        assert p.concurrency >= 1 and p.tok_s_per_user > 0
        # Output tokens/s per GPU cannot beat every user at their own rate; it falls short of
        # it by the share of time spent waiting for prefills (medians, hence a little slack).
        ceiling = p.concurrency * p.tok_s_per_user / p.gpus
        assert 0.5 * ceiling <= p.tok_s_per_gpu <= 1.05 * ceiling
    if p.scenario == "server":   # a median within its p99 limits
        assert p.concurrency is None and 1 / p.tok_s_per_user <= p.tpot_p99_limit_s
        assert p.ttft_s is None or p.ttft_s <= p.ttft_p99_limit_s
    if p.scenario == "offline":  # throughput alone
        assert (p.concurrency, p.tok_s_per_user, p.ttft_s) == (None, None, None)
    if p.ttft_s is not None and p.tok_s_per_user is not None:
        assert p.ttft_s < p.output_tokens / p.tok_s_per_user    # first token before the rest
    assert WeightFormat(p.precision) in (WeightFormat.FP8, WeightFormat.FP4)
    assert p.engine in {"sglang", "trt", "vllm", "atom"}
    assert ARCH_OF_ITEM[p.hardware] == p.arch
    assert p.arch in ARCH_OF_FAMILY.values() or p.hardware.startswith("amd-")
    source = SOURCES[p.source]
    assert p.url == source.url and PINNED.match(p.url)
    assert p.measured_on <= source.published_on
    assert RUN.match(p.run)


def test_one_point_per_configuration_and_concurrency_and_curves_that_trade_off():
    seen = set()
    curves = defaultdict(list)
    for p in AT_A_CONCURRENCY:
        key = (*config(p), p.concurrency)
        assert key not in seen, key
        seen.add(key)
        curves[config(p)].append(p)
    for key, members in curves.items():
        members.sort(key=lambda p: p.concurrency)
        for low, high in zip(members, members[1:], strict=False):
            assert high.tok_s_per_gpu > low.tok_s_per_gpu, key
            # Medians of one run: at a light load two concurrencies can swap by a little
            # (ATOM's gpt-oss-120b on MI355X at TP8, 1k/8k: 286.2 then 290.7 tokens/s per user).
            assert high.tok_s_per_user < 1.02 * low.tok_s_per_user, key
    assert sum(len(m) >= 3 for m in curves.values()) >= 10    # several concurrencies a curve


def test_an_mlperf_systems_server_run_is_no_faster_than_its_offline_run():
    """Poisson arrivals under latency limits cost throughput: a system's Server run gives
    about what its Offline run does at most (the same GPUs, engine and requests)."""
    runs = defaultdict(dict)
    for p in POINTS:
        if p.source.startswith("mlperf-"):
            runs[re.sub(r"/(Offline|Server|offline|server)/", "/", p.run)][p.scenario] = (
                p.tok_s_per_gpu)
    pairs = [r for r in runs.values() if len(r) == 2]
    assert len(pairs) >= 25
    # Two runs of one system differ by a little: NVIDIA's GB200 NVL72 gpt-oss-120b Server run
    # gives 12,489 output tokens/s per GPU against its Offline run's 12,216 (2.2 % more),
    # CoreWeave's 64 GB300 14,946 against 14,226 (5.1 % more).
    assert all(r["server"] <= 1.06 * r["offline"] for r in pairs)
    assert min(r["server"] / r["offline"] for r in pairs) > 0.75


def test_the_rows_left_out_are_counted_and_named():
    left_out = {entry.why: entry for entry in TABLE.left_out}
    assert sum(entry.rows for entry in TABLE.left_out) >= 200
    for entry in TABLE.left_out:
        assert entry.rows >= len(entry.what) >= 1 and entry.why.strip()
    assert any(why.startswith("gh200:") for why in left_out)     # a GPU without figures
    assert any("tensor parallelism not stated" in why for why in left_out)
