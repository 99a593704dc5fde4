"""The recommended fabric as the briefing prints it: on a scale-up cluster a scale-out fabric
links its NVLink domains; it never reads as if the scenario should leave the NVL72."""

from __future__ import annotations

from dataclasses import replace

from reports.context import ScenarioLine

NVL72 = ScenarioLine(name="gpt3-175b-tp8-nvl72", workload="GPT-3 175B", cluster="GB200 NVL72",
                     gpus=1024, c2c=0.069, c2c_scale_up=0.04, c2c_scale_out=0.029,
                     c2c_class="compute-bound", recommended_fabric="scale-out Ethernet (RoCE)",
                     mfu=0.5, time_to_train_days=10.0, domain_gpus=72)


def test_on_an_nvl72_a_scale_out_fabric_links_its_domains():
    assert NVL72.fabric_reading == "72-GPU domains linked by Ethernet (RoCE)"


def test_on_8_gpu_nodes_and_for_scale_up_the_fabric_reads_as_recommended():
    hgx = replace(NVL72, domain_gpus=8)
    assert hgx.fabric_reading == "scale-out Ethernet (RoCE)"
    moe = replace(NVL72, recommended_fabric="scale-up (NVL72-class)")
    assert moe.fabric_reading == "scale-up (NVL72-class)"
    assert replace(NVL72, domain_gpus=None).fabric_reading == "scale-out Ethernet (RoCE)"
