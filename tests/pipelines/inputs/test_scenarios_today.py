"""Scenario keys for the layouts and formats people train with today: precision, head_dim,
context parallelism, expert TP/DP, shared experts, first-k dense layers and uneven stages.
A layout the framework would refuse is an error naming the key; one it runs is accepted."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from db.engine import Session
from models.c2c.spec import Precision
from pipelines.inputs.scenarios import ScenarioError, load_scenario
from pipelines.jobs.c2c import check_layout, estimate
from pipelines.ledger.cluster_specs import MissingSpec, resolve_cluster
from pipelines.settings import PROJECT_ROOT

ON = date(2026, 11, 22)
KNOWN = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)

# Qwen3-235B-A22B-like on 256 Blackwell GPUs in 72-GPU domains, MXFP8 GEMMs.
MOE_TODAY = """\
name: qwen3-235b-mxfp8
precision: mxfp8
model: {layers: 94, hidden: 4096, heads: 64, kv_heads: 4, head_dim: 128, ffn: 12288,
        swiglu: true, experts: 128, top_k: 8, moe_ffn: 1536, seq_len: 4096, vocab: 151936,
        tied_embeddings: false}
parallel: {tp: 2, pp: 4, cp: 1, dp: 32, ep: 32, etp: 1, micro_batch: 1, global_batch: 1024,
           interleave: 12, sequence_parallel: true, zero: 1}
cluster:
  gpu_specs: {peak: "2500 TFLOP/s", peak_fp8: "5000 TFLOP/s", hbm: "186 GB",
              hbm_bw: "8000 GB/s", arch: blackwell}
  scale_up: {domain_gpus: 72, bw_per_gpu_bidir: "1800 GB/s"}
  scale_out: {nic_rate: "400 Gb/s", nics_per_gpu: 1}
  gpus: 256
"""


def loaded(write_scenario, text: str = MOE_TODAY):
    return load_scenario(write_scenario(text))


def test_a_moe_scenario_of_today_loads_every_new_key(write_scenario):
    scenario = loaded(write_scenario)
    assert scenario.framework.precision == Precision.MXFP8
    assert scenario.model.attention_width == 8192
    lay = scenario.layout
    assert (lay.cp, lay.etp, lay.expert_tp, lay.expert_dp) == (1, 1, 1, 2)
    check_layout(scenario)  # 94 layers on PP4 x VP12: (94 + 2) / 48, as Megatron runs it


def test_its_estimate_uses_the_fp8_peak_and_says_which_efficiencies(write_scenario):
    scenario = loaded(write_scenario)
    specs = resolve_cluster(scenario.cluster, None, on=ON, known=KNOWN)
    hw, used = specs
    assert hw.gemm_peak == 5000e12 and hw.peak_flops == 2500e12 and hw.arch == "blackwell"
    assert {s.name for s in used} >= {"peak_flops", "gemm_peak_flops"}
    result = estimate(scenario, specs, None)
    assert result["compute"]["precision"] == "mxfp8"
    assert result["compute"]["gemm_peak_tflops"] == 5000
    assert result["parallel"]["edp"] == 2 and result["parallel"]["etp"] == 1
    assert set(result["t_comm_link_s"]) == {"tp", "cp", "pp", "dp", "ep"}


def test_fp8_without_an_fp8_peak_names_the_key_to_give(write_scenario):
    scenario = loaded(write_scenario, MOE_TODAY.replace('peak_fp8: "5000 TFLOP/s", ', ""))
    with pytest.raises(MissingSpec, match="cluster.gpu_specs.peak_fp8"):
        resolve_cluster(scenario.cluster, None, on=ON, known=KNOWN)


def test_an_unknown_precision_is_an_error_naming_it(write_scenario):
    with pytest.raises(ScenarioError) as error:
        loaded(write_scenario, MOE_TODAY.replace("precision: mxfp8", "precision: fp6"))
    assert error.value.field == "precision"
    assert "must be bf16, fp8, mxfp8 or fp4" in str(error.value)


@pytest.mark.parametrize(("old", "new", "field", "reason"), [
    ("etp: 1,", "etp: 1, edp: 4,", "parallel.edp", "tp x cp x dp / (etp x ep) = 2"),
    ("etp: 1,", "etp: 5,", "parallel.ep", "etp x ep = 160 does not divide"),
    ("interleave: 12", "interleave: 5", "parallel.pp", "divides neither the 94 layers"),
    ("cp: 1, dp: 32", "cp: 3, dp: 32", "parallel.cp", "does not split into 2 x cp chunks"),
    ("interleave: 12,", "interleave: 1, first_stage_layers: 50, last_stage_layers: 50,",
     "parallel.first_stage_layers", "leave -6 of the 94 layers"),
])
def test_a_layout_megatron_refuses_names_its_key(write_scenario, old, new, field, reason):
    scenario = loaded(write_scenario, MOE_TODAY.replace(old, new, 1))
    with pytest.raises(ScenarioError) as error:
        check_layout(scenario)
    assert error.value.field == field and reason in str(error.value)


def test_uneven_stages_are_accepted_when_the_rest_splits(write_scenario):
    text = MOE_TODAY.replace("interleave: 12,", "interleave: 1, first_stage_layers: 22, "
                                                "last_stage_layers: 22,")
    scenario = loaded(write_scenario, text)
    check_layout(scenario)
    assert (scenario.layout.first_stage_layers, scenario.layout.last_stage_layers) == (22, 22)


LEDGER_FP8 = """\
name: llama-70b-fp8-on-gb200
precision: fp8
model: {layers: 80, hidden: 8192, heads: 64, kv_heads: 8, ffn: 28672, swiglu: true,
        seq_len: 8192, vocab: 128256, tied_embeddings: false}
parallel: {tp: 2, pp: 4, dp: 8, micro_batch: 1, global_batch: 128, sequence_parallel: true}
cluster:
  gpu: gb200
  scale_up: {domain_gpus: 72, bw_per_gpu_bidir: "1800 GB/s"}
  scale_out: {nic_rate: "400 Gb/s"}
"""


def test_the_ledger_gives_the_fp8_peak_and_the_family_gives_the_architecture(
        write_scenario, ledger, ingest):
    ingest(PROJECT_ROOT / "data" / "sources" / "gpu_compute.yaml")
    scenario = load_scenario(write_scenario(LEDGER_FP8))
    with Session(ledger) as session:
        hw, used = resolve_cluster(scenario.cluster, session, on=ON, known=datetime.now(UTC))
    assert hw.arch == "blackwell" and hw.gemm_peak == 5000e12 and hw.peak_flops == 2500e12
    (peak,) = [s for s in used if s.name == "gemm_peak_flops"]
    assert (peak.origin, peak.item, peak.metric) == ("ledger", "gb200", "peak_dense_fp8")
    assert peak.source == "nvidia-gb200-nvl72-page"


def test_every_estimate_carries_the_models_error_band(write_scenario):
    scenario = loaded(write_scenario)
    result = estimate(scenario, resolve_cluster(scenario.cluster, None, on=ON, known=KNOWN),
                      None)
    low, high = result["band"]["t_iter_s"]
    assert low < result["t_iter_s"] < high
    assert result["band"]["basis"].startswith("blackwell, MoE: 7 Megatron-Bridge")
    assert result["band"]["time_to_train_days"] is None  # the scenario sets no tokens


def test_offloading_block_recompute_and_ep_overlap_are_scenario_keys(write_scenario):
    text = (MOE_TODAY
            .replace("sequence_parallel: true, zero: 1}",
                     "sequence_parallel: true, zero: 1,\n           recompute: full, "
                     "recompute_layers: 2, offload_layers: 4}")
            .replace('hbm_bw: "8000 GB/s", arch: blackwell}',
                     'hbm_bw: "8000 GB/s", host_bw: "225 GB/s", arch: blackwell}')
            + "framework: {ep_overlap: true}\n")
    scenario = loaded(write_scenario, text)
    assert (scenario.layout.recompute_layers, scenario.layout.offload_layers) == (2, 4)
    assert scenario.framework.ep_overlap
    specs = resolve_cluster(scenario.cluster, None, on=ON, known=KNOWN)
    assert specs[0].host_bw == 225e9
    result = estimate(scenario, specs, None)
    assert result["parallel"]["offload_layers"] == 4
    assert result["parallel"]["recompute_layers"] == 2


def test_without_a_host_link_the_default_is_pcie_and_says_so_where_it_is_used(write_scenario):
    cluster = loaded(write_scenario).cluster
    hw, used = resolve_cluster(cluster, None, on=ON, known=KNOWN, offloads=True)
    host = next(u for u in used if u.name == "host_bw")
    assert hw.host_bw == 64e9 and host.origin == "default" and "PCIe" in host.note
    # A layout that offloads nothing does not list the host link among its figures.
    _, unused = resolve_cluster(cluster, None, on=ON, known=KNOWN)
    assert "host_bw" not in {u.name for u in unused}
