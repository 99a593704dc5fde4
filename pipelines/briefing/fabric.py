"""A training option's scale-out fabric as page 1 names it: the line rate per GPU and the
fabric's kind ("400G RoCE", "400G IB"), and whether its efficiency is borrowed from a
measurement of another fabric (the model's default, measured on InfiniBand)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from db.schema import Item
from models.c2c import calibration as cal
from models.records import C2CRecord
from pipelines.ledger.resolved import ResolvedValue
from reports.context import ScenarioLine

# Item families whose switches and standards carry Ethernet: their GPUs talk RoCE.
ETHERNET_FAMILIES = frozenset({"Ethernet", "Spectrum", "Tomahawk", "Jericho"})
# How a column header names a fabric, where its full name would not fit.
SHORT_NAMES = {"InfiniBand": "IB"}


@dataclass(frozen=True)
class Fabric:
    label: str                 # "400G RoCE": the line rate per GPU and the fabric
    borrowed: str | None       # why its efficiency is not its own, None when it is


def fabric_kind(family: str | None) -> str | None:
    """"InfiniBand", "RoCE" (an Ethernet family), else the family as the ledger names it."""
    if family is None:
        return None
    return "RoCE" if family in ETHERNET_FAMILIES else family


def scale_out_fabric(record: C2CRecord, family: str | None,
                     port_rate_gbps: float | None) -> Fabric | None:
    """The fabric of the C2C result's scale-out tier. Its per-GPU line rate is the scenario's
    NIC rate (as the model read it) × NICs per GPU; where the model read a measured bus
    bandwidth instead, the scale-out item's port rate in the ledger (`port_rate_gbps`). None
    when the result names no scale-out item or no rate is known."""
    specs = {str(s.get("name")): s for s in record.specs}
    scale_out = record.cluster.get("scale_out") or {}
    bandwidth = specs.get("scaleout_bw_per_nic")
    kind = fabric_kind(family)
    if bandwidth is None or kind is None:
        return None
    measured = bandwidth.get("origin") == "measured"
    nic_gbps = port_rate_gbps if measured else float(bandwidth["value"]) * 8 / 1e9
    if nic_gbps is None:
        return None
    nics = float(scale_out.get("nics_per_gpu") or 1)   # the scenario reader checked it
    label = f"{nic_gbps * nics:g}G {SHORT_NAMES.get(kind, kind)}"
    efficiency = specs.get("scaleout_efficiency") or {}
    borrowed = None
    if (not measured and efficiency.get("origin") == "default"
            and kind != cal.SCALEOUT_EFFICIENCY_MEASURED_ON):
        borrowed = (f"scale-out efficiency ({float(efficiency['value']):g}) is measured on "
                    f"{cal.SCALEOUT_EFFICIENCY_MEASURED_ON} "
                    f"({efficiency.get('note', '').split(',')[0]}), not on {kind}")
    return Fabric(label, borrowed)


def scale_out_item(cluster: Mapping[str, Any]) -> str | None:
    """The scale-out item a C2C scenario's cluster names."""
    item = (cluster.get("scale_out") or {}).get("item")
    return str(item) if item else None


def with_fabric(line: ScenarioLine, record: C2CRecord, items: Mapping[str, Item],
                resolved: Mapping[tuple[str, str], ResolvedValue]) -> ScenarioLine:
    """The scenario's line with its scale-out fabric named from the ledger's items (family)
    and resolved values (the item's port rate)."""
    item = scale_out_item(record.cluster)
    if item is None:
        return line
    known = items.get(item)
    port = resolved.get((item, "port_rate"))
    fabric = scale_out_fabric(record, known.family if known is not None else None,
                              float(port.winner["value"]) if port is not None else None)
    if fabric is None:
        return line
    return replace(line, fabric=fabric.label, fabric_borrowed=fabric.borrowed)
