"""Per-GPU scale-up and scale-out bandwidth by generation, their ratio like for like, switch
capacity by family, and switch latency where sourced."""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import replace
from datetime import date, datetime

import pandas as pd

from models.trends import text
from models.trends.fit import log_linear_fit
from models.trends.live import normalise, resolved_frame, resolved_points, to_points
from models.trends.types import BandwidthRatio, InterconnectTrend, Series, TrendPoint

SCALE_UP_METRIC = "scaleup_bw_per_gpu_bidir"      # GB/s, both directions
PORT_RATE_METRIC = "port_rate"                    # Gb/s, one direction
SCALE_OUT_METRIC = "scaleout_bw_per_gpu"          # Gb/s, one direction
SWITCH_KINDS = ("scaleout_switch", "switch_silicon")
# Every metric interconnect_trend reads: a caller may hand it only these observations.
INTERCONNECT_METRICS = (SCALE_UP_METRIC, PORT_RATE_METRIC, SCALE_OUT_METRIC, "switch_capacity",
                        "switch_capacity_unidir", "switch_capacity_bidir_bytes", "switch_latency")
SCALE_UP_SWITCH_KIND = "scaleup_switch"
BITS_PER_BYTE = 8

# Which scale-out family a switch belongs to, by its family, name or key (lower case).
_FAMILY_WORDS: dict[str, tuple[str, ...]] = {
    "InfiniBand": ("infiniband", "quantum", "switch-ib", "qm87", "qm97", "q3400"),
    "Ethernet": ("ethernet", "spectrum", "tomahawk", "jericho", "trident", "silicon one",
                 "sn4", "sn5", "sn6", "gbe"),
}


def interconnect_trend(obs: pd.DataFrame, *, on: date, cutoff: datetime,
                       nics_per_gpu: float = 1.0) -> InterconnectTrend:
    """Every interconnect series valid on `on` as known at `cutoff`. Scale-up and scale-out
    per GPU share one unit (Gb/s, one direction) so they compare like for like; the ratios
    keep the sourced scale-up figure and show the conversion in their formula."""
    obs = normalise(obs)
    sourced = resolved_points(obs, SCALE_UP_METRIC, on=on, cutoff=cutoff,
                              kinds={"scaleup_fabric"})
    up = [one_direction_bits(p) for p in sourced]
    out = scale_out_points(obs, on=on, cutoff=cutoff, nics_per_gpu=nics_per_gpu)
    scale_up = Series("scale_up", "Scale-up bandwidth per GPU (one direction)", "Gb/s",
                      tuple(up), log_linear_fit(up),
                      formula=f"{SCALE_UP_METRIC} (GB/s, both directions) / 2 x {BITS_PER_BYTE}")
    scale_out = Series("scale_out", "Scale-out bandwidth per GPU (one direction)", "Gb/s",
                       tuple(out), log_linear_fit(out),
                       formula=f"port_rate x {text.number(nics_per_gpu)} NIC(s) per GPU, or "
                               "scaleout_bw_per_gpu where the ledger has it")
    latency = tuple(resolved_points(obs, "switch_latency", on=on, cutoff=cutoff))
    return InterconnectTrend(scale_up=scale_up, scale_out=scale_out,
                             ratios=tuple(bandwidth_ratios(sourced, out)),
                             switch_capacity=switch_capacity_series(obs, on=on, cutoff=cutoff),
                             latency=latency)


def one_direction_bits(point: TrendPoint) -> TrendPoint:
    """A bidirectional GB/s figure as Gb/s in one direction: / 2 x 8."""
    scale = BITS_PER_BYTE / 2
    return replace(point, value=point.value * scale, low=point.low * scale,
                   high=point.high * scale, unit="Gb/s", group="scale-up")


def scale_out_points(obs: pd.DataFrame, *, on: date, cutoff: datetime,
                     nics_per_gpu: float) -> list[TrendPoint]:
    """Per-GPU scale-out bandwidth of each scale-out fabric: its sourced per-GPU figure, else
    its port rate x NICs per GPU."""
    kinds = {"scaleout_fabric"}
    per_gpu = {p.item: p for p in resolved_points(obs, SCALE_OUT_METRIC, on=on, cutoff=cutoff,
                                                  kinds=kinds)}
    ports = resolved_points(obs, PORT_RATE_METRIC, on=on, cutoff=cutoff, kinds=kinds)
    scaled = {p.item: replace(p, value=p.value * nics_per_gpu, low=p.low * nics_per_gpu,
                              high=p.high * nics_per_gpu) for p in ports}
    points = [replace(p, group="scale-out") for p in {**scaled, **per_gpu}.values()]
    return sorted(points, key=lambda p: (p.as_of, p.item))


def bandwidth_ratios(up: list[TrendPoint], out: list[TrendPoint]) -> list[BandwidthRatio]:
    """Each scale-up point against the newest scale-out point dated on or before it, both in
    Gb/s per GPU in one direction."""
    ordered = sorted(out, key=lambda p: (p.as_of, p.value, p.item))
    dates = [p.as_of for p in ordered]
    ratios = []
    for point in sorted(up, key=lambda p: (p.as_of, p.item)):
        newest = bisect_right(dates, point.as_of)   # scale-out points dated on or before
        if newest:
            ratios.append(bandwidth_ratio(point, ordered[newest - 1]))
    return ratios


def bandwidth_ratio(up: TrendPoint, out: TrendPoint) -> BandwidthRatio:
    """Like for like: GB/s both directions / 2 x 8 = Gb/s one direction, over scale-out Gb/s."""
    one_way = up.value / 2 * BITS_PER_BYTE
    ratio = one_way / out.value
    formula = (f"{up.label} {text.number(up.value)} {up.unit} both directions / 2 x "
               f"{BITS_PER_BYTE} = {text.number(one_way)} Gb/s per direction vs {out.label} "
               f"{text.number(out.value)} {out.unit} per GPU: {text.number(one_way)} / "
               f"{text.number(out.value)} = {ratio:.1f}x")
    return BandwidthRatio(scale_up=up, scale_out=out, ratio=ratio, formula=formula)


def switch_family(item: str, name: str, family: str | None) -> str:
    """InfiniBand or Ethernet from the item's family, name or key; else its own family."""
    words = " ".join(w for w in (family, name, item) if isinstance(w, str)).lower()
    for fabric, markers in _FAMILY_WORDS.items():
        if any(marker in words for marker in markers):
            return fabric
    return family if isinstance(family, str) and family else "Other"


def switch_capacity_series(obs: pd.DataFrame, *, on: date,
                           cutoff: datetime) -> tuple[Series, ...]:
    """Scale-out switch capacity in one direction, one series per family (InfiniBand,
    Ethernet, ...), and scale-up switch capacity as sourced (both directions, bytes)."""
    unidir = resolved_frame(obs, "switch_capacity_unidir", on=on, cutoff=cutoff,
                            kinds=SWITCH_KINDS)
    bidir = resolved_frame(obs, "switch_capacity", on=on, cutoff=cutoff, kinds=SWITCH_KINDS)
    # An item quoted both ways keeps its one-direction figure; the other is halved.
    halved = bidir[~bidir["item"].isin(unidir["item"])]
    halved = halved.assign(value=halved["value"] / 2, low=halved["low"] / 2,
                           high=halved["high"] / 2)
    frame = pd.concat([unidir, halved]) if len(halved) else unidir
    families = [switch_family(i, n, f) for i, n, f in
                zip(frame["item"], frame["item_name"], frame["item_family"], strict=True)]
    points = to_points(frame, families)
    formula = ("switch_capacity_unidir as sourced; switch_capacity (quoted as ports x rate x 2, "
               "both directions) / 2")
    series = [Series(f"switch_capacity_{family.lower()}",
                     f"{family} switch capacity (one direction)", members[0].unit, tuple(members),
                     log_linear_fit(members), formula)
              for family in sorted(set(families))
              for members in [[p for p in points if p.group == family]]]
    scale_up = [replace(p, group="scale-up") for p in resolved_points(
        obs, "switch_capacity_bidir_bytes", on=on, cutoff=cutoff, kinds={SCALE_UP_SWITCH_KIND})]
    if scale_up:
        series.append(Series("switch_capacity_scale_up",
                             "Scale-up switch capacity (both directions)", scale_up[0].unit,
                             tuple(scale_up), log_linear_fit(scale_up),
                             "switch_capacity_bidir_bytes as sourced"))
    return tuple(series)
