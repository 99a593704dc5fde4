"""The summary observation of an nccl-tests run: its fabric item (--item, else the NVLink generation
of a single-node run's GPUs) and one candidate `busbw_measured` row, the peak bus bandwidth among
the large messages with its source, title and quote; or a Rejected saying why the run gives none
(no item, no date, or stopped before its large messages)."""

from __future__ import annotations

import re
from dataclasses import replace

from pipelines.inputs.adapters.base import (
    AdapterOptions,
    MeasurementRun,
    NcclPoint,
    Parsed,
    Rejected,
)
from pipelines.inputs.adapters.nccl_tests.common import SIDES, Run
from pipelines.inputs.packs import PackRow, SourceDecl

METRIC = "busbw_measured"
UNIT = "GB/s"  # nccl-tests' GB/s is 1e9 bytes per second
LARGE_MESSAGE_FRACTION = 16  # "large messages": sizes >= the run's largest / 16

# The NVLink generation of a GPU model's SXM/superchip parts (item keys in the ledger).
_NVLINK_ITEM = {"V100": "nvlink-2", "A100": "nvlink-3", "H100": "nvlink-4", "H200": "nvlink-4",
                "H800": "nvlink-4", "H20": "nvlink-4", "B100": "nvlink-5", "B200": "nvlink-5",
                "GB200": "nvlink-5", "B300": "nvlink-5", "GB300": "nvlink-5"}
_GPU_MODEL = re.compile(r"\b(GB300|GB200|B300|B200|B100|H200|H100|H800|H20|A100|V100)\b")
_PCIE_CARD = re.compile(r"PCI[Ee]|\bNVL\b")


def summarise(found: Run, source_key: str, options: AdapterOptions, parsed: Parsed
              ) -> MeasurementRun:
    """The run with its item, and its busbw_measured row (or the reason it is rejected)."""
    run = found.run
    item, item_problem = _item(run, options)
    run = replace(run, item=item)
    peak, side, busbw = _peak(run.points)
    line, raw_text = peak.line, found.raw[id(peak)]
    run_date = run.started_at.date() if run.started_at else None
    as_of = run_date or options.as_of
    problems = [] if found.complete else [("busbw", found.stopped_reason)]
    if item_problem:
        problems.append(("item", item_problem))
    if as_of is None:
        problems.append(("as_of", "the file gives no date for this run; ingest it with "
                                  "--as-of YYYY-MM-DD"))
    if problems:
        reason = "; ".join(p[1] for p in problems)
        parsed.rejected.append(Rejected(line, problems[0][0], reason, raw_text))
        return run
    parsed.pack.sources.append(SourceDecl(
        key=source_key, title=_title(run, found.label), kind="measurement",
        published_on=run_date))
    parsed.pack.rows.append(PackRow(line, {
        "source": source_key, "item": item, "metric": METRIC, "value": busbw, "unit": UNIT,
        "as_of": as_of, "status": "C", "value_kind": "measured",
        "quote": _quote(run, found.label, peak, side, busbw)}, raw_text, found.column))
    return run


def _peak(points: list[NcclPoint]) -> tuple[NcclPoint, str, float]:
    """The largest busbw (either side) among the large messages; the first one on a tie."""
    threshold = max(p.size_bytes for p in points) / LARGE_MESSAGE_FRACTION
    best: tuple[NcclPoint, str, float] | None = None
    for point in points:
        if point.size_bytes < threshold:
            continue
        for side, value in zip(SIDES, (point.oop_busbw, point.ip_busbw), strict=True):
            if value is not None and (best is None or value > best[2]):
                best = (point, side, value)
    assert best is not None  # the largest point is always above its own threshold
    return best


def _item(run: MeasurementRun, options: AdapterOptions) -> tuple[str | None, str | None]:
    """The fabric item: --item, else a single-node run's NVLink generation; else why not."""
    if options.item:
        return options.item, None
    hint = "ingest it with --item <ledger item>"
    if run.nodes is None:
        return None, ("the file lists no devices, so the fabric measured (NVLink within one node, "
                      f"or a scale-out network) is unknown; {hint}, e.g. --item nvlink-4")
    model = _GPU_MODEL.search(run.device or "")
    if run.nodes > 1:
        nvl72 = (" (on a GB200/GB300 NVL72 rack the nodes share one NVLink domain: "
                 "--item nvlink-5)" if model and model.group(1) in ("GB200", "GB300") else "")
        return None, (f"a {run.nodes}-node run measures the scale-out fabric, which the file does "
                      f"not name; {hint}, e.g. --item ib-ndr{nvl72}")
    if run.device is None:
        return None, f"the file names no GPU model, so the NVLink generation is unknown; {hint}"
    if _PCIE_CARD.search(run.device):
        return None, (f"{run.device} is a PCIe card: a single-node run measures PCIe or bridge "
                      f"links, not an NVLink generation; {hint}")
    if model is None:
        return None, f"device {run.device!r} maps to no NVLink generation the ledger has; {hint}"
    return _NVLINK_ITEM[model.group(1)], None


def _title(run: MeasurementRun, label: str) -> str:
    title = f"nccl-tests {label} run"
    if run.nodes and run.gpus_per_node and run.device:
        return f"{title}, {run.nodes} x {run.gpus_per_node} {run.device}"
    return f"{title}, {run.ranks} ranks" if run.ranks else title


def _quote(run: MeasurementRun, label: str, peak: NcclPoint, side: str, busbw: float) -> str:
    who = [f"nccl-tests {label}"]
    if run.nodes and run.gpus_per_node:
        nodes = f"{run.nodes} node{'s' if run.nodes > 1 else ''}"
        gpus = f"{nodes} x {run.gpus_per_node} GPU{'s' if run.gpus_per_node > 1 else ''}"
        who.append(f"{gpus} ({run.device})" if run.device else gpus)
    elif run.ranks:
        who.append(f"{run.ranks} ranks")
    if run.nccl_version:
        who.append(f"NCCL {run.nccl_version}")
    text = (f"{', '.join(who)}: peak busbw {busbw:g} GB/s at {peak.size_bytes} B ({side})")
    average = run.metadata.get("avg_bus_bandwidth")
    if isinstance(average, int | float):
        text += f"; avg bus bandwidth {average:g} GB/s"
    return text
