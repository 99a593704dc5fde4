"""Briefing contexts built from the dataclasses directly, for the report tests and the bench.

FIXTURE VALUES. The figures, source keys and dates follow the reference packs
(data/sources/*.yaml, models/c2c/validation.py); the C2C, TCO,
flag and change figures are made up in the shape models/ gives them. The lead's pipeline
test renders the real ledger; these only exercise the layout.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, date, datetime

import numpy as np

from models.tco.decision import Swing
from models.trends.types import (
    BandwidthRatio,
    Changes,
    Crossing,
    DensityTrend,
    Flag,
    InterconnectTrend,
    LogLinearFit,
    ObservationChange,
    Series,
    Threshold,
    TrendPoint,
    years_since_2000,
)
from reports.context import (
    BriefingContext,
    Cited,
    ComparisonRow,
    DecisionLine,
    Headline,
    MarketLine,
    MarketSeries,
    OptionLine,
    PriceTierLine,
    ResultMove,
    ScenarioLine,
    ServingLine,
    ServingOptionLine,
    SourceLine,
    SpecLine,
    TcoLine,
    ValidationLine,
)
from tests.support.fixture_sources import SOURCES, D

AS_OF = date(2026, 11, 22)



def point(item: str, label: str, metric: str, value: float, unit: str, as_of: str,
          source: str, status: str = "C", group: str = "", low: float | None = None,
          high: float | None = None, obs: int = 0) -> TrendPoint:
    """`as_of` as the source gives it: "2016" (year), "2021-11" (month) or a full date."""
    precision = {1: "year", 2: "month"}.get(len(as_of.split("-")), "day")
    day = D((as_of + "-01-01")[:10]) if precision != "day" else D(as_of)
    return TrendPoint(item=item, label=label, metric=metric, value=value,
                      low=value if low is None else low, high=value if high is None else high,
                      unit=unit, as_of=day, source=source, status=status,
                      observation_ids=(obs,), group=group, as_of_precision=precision)


def fit_of(points: tuple[TrendPoint, ...]) -> LogLinearFit | None:
    """Least squares of log2(value) on years since 2000, as models/trends defines the fit."""
    if len({p.as_of for p in points}) < 2:
        return None
    x = np.array([years_since_2000(p.as_of) for p in points])
    y = np.log2([p.value for p in points])
    slope, intercept = np.polyfit(x, y, 1)
    r2 = 1 - np.sum((y - (intercept + slope * x)) ** 2) / np.sum((y - y.mean()) ** 2)
    return LogLinearFit(n=len(points), first=min(p.as_of for p in points),
                        last=max(p.as_of for p in points), slope_log2_per_year=float(slope),
                        intercept_log2=float(intercept), r2=float(r2))


def series(key: str, title: str, unit: str, points: tuple[TrendPoint, ...],
           formula: str = "") -> Series:
    return Series(key=key, title=title, unit=unit, points=points, fit=fit_of(points),
                  formula=formula)


def density_trend(label: str = "GB200 NVL72") -> DensityTrend:
    """`label` names the GB200 NVL72 point and the air-cooling band (hostile-text tests)."""
    air = "Air cooling (containment)" if label == "GB200 NVL72" else label
    systems = (
        point("dgx-1-p100", "DGX-1", "system_power", 3.2, "kW", "2016",
              "nvidia-dgx1-datasheet", "S", "system", obs=101),
        point("dgx-a100", "DGX A100", "system_power", 6.5, "kW", "2020-05-14",
              "nvidia-dgx-a100-datasheet", "U", "system", obs=102),
        point("dgx-h100", "DGX H100", "system_power", 10.2, "kW", "2022",
              "nvidia-dgx-h100-datasheet", "C", "system", obs=103),
        point("dgx-b200", "DGX B200", "system_power", 14.3, "kW", "2024",
              "nvidia-dgx-b200-datasheet", "U", "system", obs=104))
    racks = (
        point("gb200-nvl72", label, "rack_it_power", 120, "kW", "2024-03-18",
              "introl-nvl72-power", "S", "rack", obs=105),
        point("gb300-nvl72", "GB300 NVL72", "rack_it_power", 131, "kW", "2025-03-18",
              "introl-nvl72-power", "S", "rack", low=120, high=142, obs=106),
        point("vera-rubin-nvl72", "Vera Rubin NVL72 (announced)", "rack_it_power", 210, "kW",
              "2026", "regantih-vera-rubin-notes", "U", "rack", low=190, high=230,
              obs=107))
    thresholds = (
        Threshold("air-cooling", air, 20, 40, "kW", "coolnet-ai-dc-cooling-guide",
                  D("2025-01-01"), (201,), as_of_precision="year"),
        Threshold("rear-door-heat-exchanger", "Rear-door heat exchanger", 40, 60, "kW",
                  "dcxps-cooling-threshold", D("2025-01-01"), (202,), as_of_precision="year"))
    crossings = tuple(Crossing(p, t.key, "above") for p in racks for t in thresholds)
    return DensityTrend(
        series=(series("rack_it_power", "Rack IT power", "kW", racks),
                series("system_power", "8-GPU system power", "kW", systems)),
        thresholds=thresholds, crossings=crossings, fit=fit_of(systems + racks))


_UP = "per-GPU bidirectional GB/s ÷ 2 × 8 (one direction, Gb/s)"
_OUT = "NIC port rate × NICs per GPU (1), one direction"


def interconnect_trend() -> InterconnectTrend:
    up = tuple(point(f"nvlink-{n}", f"NVLink {n}", "scaleup_bw_per_gpu", v, "Gb/s", day, src,
                     st, obs=300 + n)
               for n, v, day, src, st in (
                   (1, 640, "2016-04-05", "microway-p100-nvlink", "C"),
                   (2, 1200, "2017-05-10", "nvidia-dgx1-v100-whitepaper", "C"),
                   (3, 2400, "2020-05-14", "nvidia-nvlink-page-de", "C"),
                   (4, 3600, "2022-03-22", "mlperf-training-v4-0", "C"),
                   (5, 7200, "2024-03-18", "nvidia-nvlink-page", "C"),
                   (6, 14400, "2026-01-05", "nvidia-ces-2026-keynote", "S")))
    out = (point("infiniband-edr", "EDR", "scaleout_bw_per_gpu", 100, "Gb/s", "2014",
                 "mellanox-switch-ib", "U", "InfiniBand", obs=311),
           point("infiniband-hdr", "HDR", "scaleout_bw_per_gpu", 200, "Gb/s", "2016-11-10",
                 "top500-mellanox-hdr", "C", "InfiniBand", obs=312),
           point("infiniband-ndr", "NDR", "scaleout_bw_per_gpu", 400, "Gb/s", "2021-11",
                 "computerbase-quantum-2", "C", "InfiniBand", obs=313),
           point("infiniband-xdr", "XDR", "scaleout_bw_per_gpu", 800, "Gb/s", "2024-03-18",
                 "nvidia-quantum-x800-page", "S", "InfiniBand", obs=314))
    ratios = tuple(BandwidthRatio(u, o, u.value / o.value,
                                  f"{u.label} {u.value:g} Gb/s ÷ {o.label} {o.value:g} Gb/s")
                   for u, o in ((up[2], out[1]), (up[3], out[2]), (up[4], out[3])))
    return InterconnectTrend(
        scale_up=series("scaleup", "Scale-up per GPU (NVLink)", "Gb/s", up, _UP),
        scale_out=series("scaleout", "Scale-out per GPU (InfiniBand NIC)", "Gb/s", out, _OUT),
        ratios=ratios, switch_capacity=_switches(),
        latency=(point("nvidia-qm9700", "QM9700 port-to-port", "switch_latency", 330, "ns",
                       "2022", "yobitel-qm9700", "U", obs=320),))


def _switches() -> tuple[Series, ...]:
    ib = (point("mellanox-switch-ib", "Switch-IB", "switch_capacity", 7.2, "Tb/s",
                "2014", "mellanox-switch-ib", "U", obs=331),
          point("mellanox-quantum", "Quantum", "switch_capacity", 16, "Tb/s", "2016-11-10",
                "top500-mellanox-hdr", "S", obs=332),
          point("nvidia-quantum-2", "Quantum-2", "switch_capacity", 51.2, "Tb/s", "2021-11",
                "computerbase-quantum-2", "C", obs=333),
          point("nvidia-quantum-x800", "Quantum-X800", "switch_capacity", 115.2, "Tb/s",
                "2024-03-18", "nvidia-quantum-x800-page", "S", obs=334))
    eth = (point("broadcom-tomahawk-5", "Tomahawk 5", "switch_capacity", 51.2, "Tb/s",
                 "2022-08-16", "broadcom-tomahawk-5-press", "C", obs=341),
           point("broadcom-tomahawk-6", "Tomahawk 6", "switch_capacity", 102.4, "Tb/s",
                 "2025-06-03", "broadcom-tomahawk-6-press", "C", obs=342))
    return (series("ib", "InfiniBand switches", "Tb/s", ib),
            series("eth", "Ethernet switch silicon", "Tb/s", eth))


def comparison() -> tuple[tuple[str, ...], list[ComparisonRow]]:
    options = ("NVLink 5 in GB200 NVL72", "InfiniBand NDR (Quantum-2)", "800GbE (Tomahawk 5)")
    rows = [
        ComparisonRow("Bandwidth per GPU / port", (
            Cited(1.8, 1.8, "TB/s", "nvidia-nvlink-page", D("2024-03-18"),
                  text=None, label="per GPU, bidirectional"),
            Cited(400, 400, "Gb/s", "computerbase-quantum-2", D("2021-11-01")),
            Cited(800, 800, "Gb/s", "ieee-b400g-msg01072", D("2024-02-16")))),
        ComparisonRow("Switch capacity", (
            Cited(14.4, 14.4, "TB/s", "nvidia-nvlink-page", D("2024-03-18")),
            Cited(51.2, 51.2, "Tb/s", formula="400 Gb/s × 64 ports × 2"),
            Cited(51.2, 51.2, "Tb/s", "broadcom-tomahawk-5-press", D("2022-08-16")))),
        ComparisonRow("Port-to-port latency", (
            None, Cited(330, 330, "ns", "yobitel-qm9700", D("2022-01-01")), None)),
        ComparisonRow("Switch power", (None, None, None)),
        ComparisonRow("Lossless mechanism", (
            Cited(0, 0, "", "nvidia-nvlink-page", D("2024-03-18"),
                  text="link-level credit flow control"),
            Cited(0, 0, "", "computerbase-quantum-2", D("2021-11-01"),
                  text="credit-based flow control"),
            Cited(0, 0, "", "ieee-b400g-msg01072", D("2024-02-16"),
                  text="PFC + ECN (RoCE v2)"))),
    ]
    return options, rows


_NVL5 = Cited(1.8, 1.8, "TB/s", "nvidia-nvlink-page", D("2024-03-18"),
              label="NVLink 5 per-GPU bandwidth (bidirectional)")
_NDR = Cited(400, 400, "Gb/s", "computerbase-quantum-2", D("2021-11-01"),
             label="NDR port rate")
_ETH = Cited(800, 800, "Gb/s", "ieee-b400g-msg01072", D("2024-02-16"), label="800GbE port rate")
_DOMAIN = Cited(72, 72, "GPUs", "nvidia-nvlink-page", D("2024-03-18"),
                label="NVLink domain size")


def scenarios() -> list[ScenarioLine]:
    rows = (  # name, workload, cluster, gpus, up, out, class, fabric, mfu, days, inputs
        ("gpt3-175b-tp8-nvl72", "GPT-3 175B, TP8 × PP8", "GB200 NVL72", 1152, 0.14, 0.03,
         "compute-bound", "scale-out Ethernet (RoCE)", 0.47, 11.2, (_NVL5, _DOMAIN)),
        ("gpt3-175b-tp8-hgx-ndr", "GPT-3 175B, TP8 × PP8", "HGX B200 + NDR", 1152, 0.14, 0.17,
         "performance-sensitive", "scale-out InfiniBand", 0.43, 12.1, (_NDR,)),
        ("gpt3-175b-tp8-hgx-800gbe", "GPT-3 175B, TP8 × PP8", "HGX B200 + 800GbE", 1152, 0.14,
         0.12, "performance-sensitive", "scale-out InfiniBand", 0.44, 11.9, (_ETH,)),
        ("1t-dense-nvl72", "1T dense, TP8 × PP16", "GB200 NVL72", 4608, 0.31, 0.11,
         "performance-sensitive", "scale-up (NVL72-class)", 0.39, 61.0, (_NVL5, _DOMAIN)),
        ("1t-dense-hgx-ndr", "1T dense, TP8 × PP16", "HGX B200 + NDR", 4608, 0.31, 0.52,
         "communication-bound", "scale-up (NVL72-class)", 0.31, 77.5, (_NDR,)),
        ("moe-8x22b-ep8-hgx-800gbe", "MoE 8×22B, EP8", "HGX B200 + 800GbE", 512, 0.05, 1.4,
         "communication-bound", "scale-up (NVL72-class)", 0.21, None, (_ETH,)),
        ("13b-dp-only-hgx-800gbe", "13B, DP only", "HGX B200 + 800GbE", 256, 0.0, 0.06,
         "compute-bound", "scale-out Ethernet (RoCE)", 0.52, 2.4, (_ETH,)),
    )
    return [ScenarioLine(name=n, workload=w, cluster=c, gpus=g, c2c=u + o, c2c_scale_up=u,
                         c2c_scale_out=o, c2c_class=k, recommended_fabric=f, mfu=m,
                         time_to_train_days=d, inputs=i)
            for n, w, c, g, u, o, k, f, m, d, i in rows]


_TCO_INPUT = Cited(3.2, 4.1, "M USD", "semianalysis-2025-08-20", D("2025-08-20"),
                   label="GB200 NVL72 rack price")


def tco_lines() -> list[TcoLine]:
    return [
        TcoLine("tco-1t-dense-nvl72-vs-hgx-ndr", "GB200 NVL72", "HGX B200 + NDR", 1.18, 1.08,
                1.31, 1.27, "GB200 NVL72", (("GB200 NVL72", 3.42), ("HGX B200 + NDR", 2.9)),
                (_TCO_INPUT, _NDR)),
        TcoLine("tco-1t-dense-nvl72-vs-hgx-800gbe", "GB200 NVL72", "HGX B200 + 800GbE", 1.24,
                1.12, 1.38, 1.19, "HGX B200 + 800GbE",
                (("GB200 NVL72", 3.42), ("HGX B200 + 800GbE", 2.76)), (_TCO_INPUT, _ETH)),
        TcoLine("tco-worked-illustration", "scale-up pod", "scale-out pod", 1.1, None, None,
                None, None),
    ]


def decisions() -> list[DecisionLine]:
    """Two comparisons of one workload (NVL72 in both: one column) and an illustration."""
    nvl72 = OptionLine("nvl72", 3072, "gb200", 10.1, 1_906_307.0, 2.557)
    ndr = OptionLine("hgx-ndr", 3072, "b200", 11.07, 1_948_242.0, 2.387,
                     market_usd_per_gpu_hour=6.25, market_job_cost_usd=5_100_000.0,
                     market_priced_from=date(2026, 8, 19),
                     market_priced_to=date(2026, 11, 9))
    eth = OptionLine("hgx-800gbe", 3072, "b200", 10.87, 1_849_218.0, 2.307)
    workload = "128 layers x 25600 hidden, 3,072 GPUs"
    swing = Swing("options.hgx-800gbe.capex.fabric.cost", 2.46e6, 7.68e6, 0.042, -0.011)
    return [
        DecisionLine("tco-1t-dense-nvl72-vs-hgx-ndr", workload, "nvl72", "hgx-ndr",
                     (nvl72, ndr), "nvl72", "hgx-ndr", 0.0215, -0.126, 0.150, True,
                     "a measured nccl-tests all-reduce on the scale-out fabric", 1.071, 1.095,
                     0.954, 1.258, ("hgx-ndr job time (days) at the low end of its range (9.38)",)),
        DecisionLine("tco-1t-dense-nvl72-vs-hgx-800gbe", workload, "nvl72", "hgx-800gbe",
                     (nvl72, eth), "hgx-800gbe", "nvl72", 0.0299, 0.012, 0.164, False, None,
                     1.109, 1.076, 0.936, 1.234, (), (swing,)),
        DecisionLine("tco-worked-illustration", "tco-worked-illustration", "scale-up pod",
                     "scale-out pod", (), "scale-up pod", illustrative=True),
    ]


def serving() -> list[ServingLine]:
    curve = ((1.0, 20.0, 160.0), (64.0, 900.0, 90.0), (1024.0, 6000.0, 30.0))
    slow = ((1.0, 9.0, 140.0), (64.0, 250.0, 60.0), (512.0, 800.0, 20.0))
    basis = "no measured serving point of this architecture: the priors, not a fit"
    return [ServingLine(
        "serving-deepseek-r1-fp8", "deepseek-r1", "fp8", 1024, 1024, 35.0,
        (ServingOptionLine("gb200-nvl72-ep72", "model", 2.56, "TCO: tco-1t, option nvl72",
                           curve, 4800.0, 0.148, basis),
         ServingOptionLine("b200-ep16-ndr", "measured", 2.39, "TCO: tco-1t, option hgx-ndr",
                           slow, 600.0, 1.11, basis, tiers=(
                               PriceTierLine("owned", 2.39, "TCO: tco-1t, option hgx-ndr",
                                             0.222, 0.887, 1.11),
                               PriceTierLine("neocloud", 3.49, "market: b200 on-demand, "
                                             "neocloud median over 2 providers (lambda, "
                                             "runpod), priced 2026-10-01 to 2026-11-01",
                                             0.324, 1.29, 1.62)),
                           prefill_share=0.2)),
        "gb200-nvl72-ep72", "b200-ep16-ndr", 0.867, 0.52, 0.92)]


def market() -> list[MarketLine]:
    return [MarketLine("h100-sxm5", 10.0, 3, 3, -0.125, 3.29, "lambda", "on_demand",
                       "epoch-training-cost-trends", AS_OF),
            MarketLine("a100-sxm4-40gb", None, 0, 0, None, 1.45, "aws", "reserved_3y",
                       "epoch-training-cost-trends", AS_OF)]


def market_history() -> list[MarketSeries]:
    return [MarketSeries("h100-sxm5", "on_demand", ((date(2026, 11, 15), 11.43), (AS_OF, 10.0)),
                         offers=9, providers=7, priced_from=date(2026, 8, 26),
                         priced_to=date(2026, 11, 9), change_7d=-0.05,
                         composition_90d="gcp added 11 offers"),
            MarketSeries("a100-sxm4-40gb", "reserved_3y", ((AS_OF, 1.45),))]


def headlines() -> list[Headline]:
    return [Headline("result", "1t-dense-hgx-ndr", "c2c class performance-sensitive → "
                     "communication-bound"),
            Headline("price", "h100-sxm5", "on-demand index -12.5% to $10/GPU-hour")]


def validation_lines() -> list[ValidationLine]:
    points = (("22B full recompute", 1.42, 1.40), ("22B SP + selective", 1.10, 1.14),
              ("175B full recompute", 18.13, 18.03), ("175B SP + selective", 13.75, 13.64),
              ("530B full recompute", 49.05, 49.89), ("530B SP + selective", 37.83, 34.47),
              ("1T full recompute", 94.42, 90.08), ("1T SP + selective", 71.49, 66.04))
    return [ValidationLine("Korthikanti et al. 2022, Table 5", name, "iteration time (s)",
                           measured, predicted, 100 * (predicted / measured - 1), "%",
                           "korthikanti-2022", D("2022-05-10"))
            for name, measured, predicted in points]


def flags() -> list[Flag]:
    return [
        Flag("density_threshold", "critical", "gb200-nvl72 / rack_it_power",
             "GB200 NVL72 draws 120 kW per rack (introl-nvl72-power, 2024-03-18), above the "
             "20–40 kW air-cooling band (coolnet-ai-dc-cooling-guide, 2025).", (105, 201),
             item="gb200-nvl72", metric="rack_it_power"),
        Flag("density_growth", "warning", "rack/system power",
             "Rack and system power grew 41 % a year over 7 points (2016–2026), log-linear "
             "fit.", (101, 102, 103, 104, 105, 106, 107)),
        Flag("bandwidth_ratio", "info", "NVLink 5 / XDR",
             "NVLink 5 gives 9 × the per-GPU bandwidth of one XDR NIC (7,200 vs 800 Gb/s, "
             "nvidia-nvlink-page 2024-03-18; nvidia-quantum-x800-page 2024-03-18).",
             (305, 314)),
        Flag("unconfirmed", "warning", "vera-rubin-nvl72 / rack_it_power",
             "Vera Rubin NVL72 rack power 190–230 kW rests on one unconfirmed source "
             "(regantih-vera-rubin-notes, 2026).", (107,)),
        *[Flag("single_source", "info", f"item-{n} / metric",
               f"Fixture flag {n}: a value resting on one source.", (400 + n,))
          for n in range(12)],
        Flag("stale", "info", "infiniband-edr / scaleout_bw_per_gpu",
             "EDR port rate has no observation newer than 5 years (mellanox-switch-ib, 2014).",
             (311,)),
    ]


def changes() -> Changes:
    return Changes(observations=(
        ObservationChange("added", "nvlink-6", "scaleup_bw_per_gpu_bidir",
                          "nvidia-ces-2026-keynote", "TB/s", None, 3.6, D("2026-01-05"), (306,)),
        ObservationChange("changed", "gb300-nvl72", "rack_it_power", "introl-nvl72-power", "kW",
                          120, 131, D("2025-03-18"), (106,)),
        ObservationChange("superseded", "dgx-b200", "system_power", "nvidia-dgx-b200-datasheet",
                          "kW", 14.0, None, D("2024-01-01"), (104,)),
    ))


def moves() -> list[ResultMove]:
    return [ResultMove("1t-dense-hgx-ndr", "c2c_class", "performance-sensitive",
                       "communication-bound"),
            ResultMove("tco-1t-dense-nvl72-vs-hgx-ndr", "break_even_speedup", "1.21", "1.18")]


def specs() -> list[SpecLine]:
    rows = (("Scale-up fabric", "NVLink 5.0", "scaleup_bw_per_gpu_bidir", 1800, 1800, "GB/s",
             "2024-03-18", "day", "C", "nvidia-nvlink-page", 1),
            ("Scale-out fabric", "NVIDIA Quantum-2 (NDR)", "switch_capacity_bidir", 51.2, 51.2,
             "Tb/s", "2021-11-01", "month", "C", "computerbase-quantum-2", 0),
            ("Systems, racks and power density", "GB200 NVL72", "rack_it_power", 120, 132, "kW",
             "2024-03-18", "day", "S", "introl-nvl72-power", 2),
            ("Systems, racks and power density", "DGX H100", "system_power", 10.2, 10.2, "kW",
             "2022-01-01", "year", "C", "nvidia-dgx-h100-datasheet", 0))
    return [SpecLine(section, item, metric, metric.replace("_", " "), low, high, unit, D(as_of),
                     precision, status, source, SOURCES[source].title,
                     SOURCES[source].published_on, alternatives=alt)
            for section, item, metric, low, high, unit, as_of, precision, status, source, alt
            in rows]


PARAMETERS = {"stale after": "5 years", "conflict tolerance": "10 %",
              "source kind rank": "standard_body < vendor_datasheet < measurement < dataset < "
                                  "vendor_press < analyst < secondary_press < derived",
              "TCO Monte Carlo samples": "2,000 (P10/P50/P90)"}


def full_context() -> BriefingContext:
    """Every section filled."""
    options, rows = comparison()
    return BriefingContext(
        as_of=AS_OF, dataset_version=7, dataset_hash="3f9c" * 16,
        cutoff_at=datetime(2026, 11, 22, 6, 0, tzinfo=UTC), code_version="0.1.0+g6c85c23",
        specs=specs(), sources=sorted(SOURCES.values(), key=lambda s: s.key), rejected_rows=3,
        conflicts=2, previous_version=6,
        previous_cutoff_at=datetime(2026, 11, 15, 6, 0, tzinfo=UTC), flags=flags(),
        density=density_trend(), interconnect=interconnect_trend(), comparison_options=options,
        comparison=rows, scenarios=scenarios(), tco=tco_lines(), changes=changes(),
        moves=moves(), validation=validation_lines(), parameters=PARAMETERS,
        decisions=decisions(), market=market(), market_history=market_history(),
        headlines=headlines(), serving=serving())


def empty_context() -> BriefingContext:
    """The first briefing of an empty ledger: no previous version, no flags, no results."""
    return BriefingContext(as_of=AS_OF, dataset_version=1, dataset_hash="0" * 64,
                           cutoff_at=datetime(2026, 11, 22, 6, 0, tzinfo=UTC),
                           code_version="0.1.0")


def hostile_context(text: str) -> BriefingContext:
    """The full context with `text` as a spec, item, source, threshold and scenario name."""
    full = full_context()
    spec = dataclasses.replace(full.specs[0], item=text, metric=text, source_title=text)
    source = dataclasses.replace(full.sources[0], title=text, publisher=text)
    scenario = dataclasses.replace(full.scenarios[0], name=text)
    return dataclasses.replace(full, specs=[spec, *full.specs[1:]],
                               sources=[source, *full.sources[1:]],
                               scenarios=[scenario, *full.scenarios[1:]],
                               density=density_trend(label=text))


def full_size_context(specs_count: int = 230, flags_count: int = 400,
                      scenario_copies: int = 2, tco_inputs: int = 30) -> BriefingContext:
    """The full context grown to the real ledger's size: about 230 values, 100 sources,
    400 flags, a dozen scenarios and a few TCO comparisons reading ~30 inputs each."""
    full = full_context()
    base = full.specs
    many = [dataclasses.replace(base[n % len(base)], item=f"{base[n % len(base)].item} #{n}")
            for n in range(specs_count)]
    extra_sources = [SourceLine(f"fixture-source-{n:03d}", f"Fixture source {n}", "fixture",
                                "secondary_press", date(2020 + n % 6, 1 + n % 12, 1), None)
                     for n in range(100 - len(full.sources))]
    extra_flags = [Flag("single_source", "info", f"fixture-{n} / metric",
                        f"Fixture flag {n}: a value of {n} kW resting on one source "
                        f"(fixture-source-{n % 80:03d}, 2024).", (900 + n,))
                   for n in range(flags_count - len(full.flags))]
    scenarios_ = [dataclasses.replace(s, name=f"{s.name}-{k}") for k in range(scenario_copies)
                  for s in full.scenarios]
    tco = [dataclasses.replace(t, inputs=tuple(
        Cited(n, n, "USD", formula=f"scenario: {n}", label=f"options.{t.name}.input_{n}")
        for n in range(tco_inputs))) for t in full.tco]
    return dataclasses.replace(full, specs=many, sources=[*full.sources, *extra_sources],
                               flags=[*full.flags, *extra_flags], scenarios=scenarios_, tco=tco)
