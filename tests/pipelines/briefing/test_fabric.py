"""A training option's scale-out fabric as page 1 names it, from what its C2C result read:
the per-GPU line rate and the fabric, and an efficiency borrowed from another fabric."""

from __future__ import annotations

from typing import Any

from models.records import C2CRecord
from pipelines.briefing.fabric import fabric_kind, scale_out_fabric
from reports.context import OptionLine
from reports.decisions import fabrics

DEFAULT_EFFICIENCY = {"name": "scaleout_efficiency", "value": 0.94, "origin": "default",
                      "note": "46-48 GB/s of 50 on NDR (nccl-tests #290), docs/c2c-method.md"}


def record(scale_out: dict[str, Any], *specs: dict[str, Any]) -> C2CRecord:
    result = {"scenario": "s", "gpus": 3072, "t_iter_s": 1.0, "c2c": 0.1, "c2c_scale_up": 0.05,
              "c2c_scale_out": 0.05, "class": "compute-bound", "recommended_fabric": "x",
              "mfu": 0.4, "specs": list(specs)}
    return C2CRecord.from_json(result, {"cluster": {"gpu": "b200", "scale_out": scale_out}})


def test_a_roce_nic_rate_at_the_default_efficiency_is_named_and_its_efficiency_borrowed():
    roce = record({"item": "nvidia-sn5600", "nic_rate": "400 Gb/s", "nics_per_gpu": 1},
                  {"name": "scaleout_bw_per_nic", "value": 50e9, "origin": "inline"},
                  DEFAULT_EFFICIENCY)
    found = scale_out_fabric(roce, "Spectrum", port_rate_gbps=800.0)
    assert found is not None and found.label == "400G RoCE"   # the NIC's, not the switch port's
    assert found.borrowed == ("scale-out efficiency (0.94) is measured on InfiniBand (46-48 GB/s "
                              "of 50 on NDR (nccl-tests #290)), not on RoCE")


def test_a_measured_bus_bandwidth_takes_the_items_port_rate_and_borrows_nothing():
    ndr = record({"item": "ib-ndr", "nics_per_gpu": 2},
                 {"name": "scaleout_bw_per_nic", "value": 47e9, "origin": "measured"},
                 {"name": "scaleout_efficiency", "value": 1.0, "origin": "default"})
    found = scale_out_fabric(ndr, "InfiniBand", port_rate_gbps=400.0)
    assert found is not None and found.label == "800G IB" and found.borrowed is None
    assert scale_out_fabric(ndr, "InfiniBand", port_rate_gbps=None) is None


def test_infiniband_at_the_default_efficiency_borrows_nothing_and_unknown_families_keep_names():
    line_rate = record({"item": "ib-xdr"},
                       {"name": "scaleout_bw_per_nic", "value": 100e9, "origin": "ledger"},
                       DEFAULT_EFFICIENCY)
    found = scale_out_fabric(line_rate, "InfiniBand", port_rate_gbps=800.0)
    assert found is not None and found.label == "800G IB" and found.borrowed is None
    assert fabric_kind("Tomahawk") == "RoCE" and fabric_kind("Slingshot") == "Slingshot"
    assert fabric_kind(None) is None and scale_out_fabric(line_rate, None, 800.0) is None


def option(name: str, fabric: str | None, borrowed: str | None = None) -> tuple[str, OptionLine]:
    return name, OptionLine(name=name, gpus=3072, gpu="b200", time_to_train_days=9.85,
                            job_cost_usd=1.7e6, usd_per_gpu_hour=2.3, fabric=fabric,
                            fabric_borrowed=borrowed)


def test_page_one_says_whether_the_fabrics_compare_at_one_rate_and_what_is_borrowed():
    same = fabrics([option("nvl72", "400G IB"), option("hgx-800gbe", "400G RoCE", "borrowed x")])
    assert same == ("The fabrics compare at one line rate (400G per GPU). hgx-800gbe's "
                    "borrowed x: the fabrics' difference is assumed. ")
    differ = fabrics([option("a", "400G IB"), option("b", "800G RoCE")])
    assert "line rates per GPU differ: they are not compared at one rate" in differ
    # One fabric: nothing to compare (each column's header names it).
    assert fabrics([option("a", "400G IB"), option("b", "400G IB")]) == ""
    assert fabrics([option("a", None)]) == ""
