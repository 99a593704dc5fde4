"""The sources the report fixtures cite: keys, titles and dates as in data/sources/*.yaml
(FIXTURE VALUES: a few publication dates of year- or month-precise sources are set to the
first of the period)."""

from __future__ import annotations

from datetime import date

from reports.context import SourceLine

D = date.fromisoformat

# key: (title, publisher, kind, published_on, url)
_SOURCES = {
    "nvidia-dgx1-datasheet": ("NVIDIA DGX-1 datasheet (P100)", "NVIDIA", "vendor_datasheet",
                              D("2016-01-01"), None),
    "nvidia-dgx-a100-datasheet": ("NVIDIA DGX A100 datasheet", "NVIDIA", "vendor_datasheet",
                                  D("2020-05-14"), None),
    "nvidia-dgx-h100-datasheet": ("NVIDIA DGX H100 datasheet", "NVIDIA", "vendor_datasheet",
                                  D("2022-01-01"), None),
    "nvidia-dgx-b200-datasheet": ("NVIDIA DGX B200 datasheet", "NVIDIA", "vendor_datasheet",
                                  D("2024-01-01"), None),
    "introl-nvl72-power": ("GB200 / GB300 NVL72 rack power and cooling guide", "introl.com",
                           "secondary_press", None, None),
    "regantih-vera-rubin-notes": ("Vera Rubin NVL72 notes", "regantih.github.io",
                                  "secondary_press", None, None),
    "coolnet-ai-dc-cooling-guide": (
        "Ultimate guide to AI data center cooling", "Coolnet", "secondary_press", None,
        "https://www.coolnetpower.com/blog/ultimate-guide-ai-data-center-cooling"),
    "dcxps-cooling-threshold": (
        "The cooling threshold your deal team is not checking",
        "AI off the Coast (dcxps.com newsletter)", "secondary_press", None,
        "https://aiofthecoast.dcxps.com/p/warning-the-cooling-threshold-your"),
    "microway-p100-nvlink": ("Tesla P100 NVLink GPUs up close", "Microway", "secondary_press",
                             None, "https://www.microway.com/hpc-tech-tips/"),
    "nvidia-dgx1-v100-whitepaper": ("NVIDIA DGX-1 With Tesla V100 System Architecture",
                                    "NVIDIA", "vendor_datasheet", D("2017-01-01"), None),
    "nvidia-nvlink-page-de": ("NVIDIA NVLink und NVSwitch (German product page)", "NVIDIA",
                              "vendor_datasheet", None,
                              "https://www.nvidia.com/de-de/data-center/nvlink/"),
    "mlperf-training-v4-0": ("MLPerf Training v4.0 results: NVIDIA system description JSON",
                             "MLCommons", "measurement", D("2024-06-12"),
                             "https://mlcommons.org/benchmarks/training/"),
    "nvidia-nvlink-page": ("NVIDIA NVLink and NVLink Switch", "NVIDIA", "vendor_datasheet",
                           D("2024-03-18"), "https://www.nvidia.com/en-us/data-center/nvlink/"),
    "nvidia-ces-2026-keynote": ("NVIDIA CES 2026 keynote and Vera Rubin press materials",
                                "NVIDIA", "vendor_press", D("2026-01-05"), None),
    "mellanox-switch-ib": ("Mellanox Switch-IB EDR 100Gb/s InfiniBand switch",
                           "Mellanox Technologies", "vendor_datasheet", D("2014-01-01"), None),
    "top500-mellanox-hdr": ("Mellanox Unveils HDR InfiniBand Lineup", "TOP500",
                            "secondary_press", D("2016-11-10"),
                            "https://www.top500.org/news/mellanox-unveils-hdr-infiniband-lineup/"),
    "computerbase-quantum-2": (
        "Nvidia Quantum-2: Ein 400-Gbit/s-Switch mit 57 Milliarden Transistoren", "ComputerBase",
        "secondary_press", D("2021-11-01"),
        "https://www.computerbase.de/2021-11/nvidia-quantum-2-ein-400-gbit-s-switch-mit-57-"
        "milliarden-transistoren/"),
    "nvidia-quantum-x800-page": ("NVIDIA Quantum-X800 InfiniBand platform (product page)",
                                 "NVIDIA", "vendor_datasheet", D("2024-03-18"), None),
    "yobitel-qm9700": ("NVIDIA QM9700 knowledge-base entry", "yobitel.com", "secondary_press",
                       None, None),
    "ieee-b400g-msg01072": ("IEEE 802.3 B400G reflector, message 01072 (IEEE 802.3df approval)",
                            "IEEE 802.3", "standard_body", D("2024-02-16"),
                            "https://www.ieee802.org/3/B400G/email/msg01072.html"),
    "broadcom-tomahawk-5-press": ("Broadcom Ships Tomahawk 5", "Broadcom", "vendor_press",
                                  D("2022-08-16"), None),
    "broadcom-tomahawk-6-press": ("Broadcom Ships Tomahawk 6: World's First 102.4 Tbps Switch",
                                  "Broadcom", "vendor_press", D("2025-06-03"), None),
    "semianalysis-2025-08-20": ("SemiAnalysis: GB200 NVL72 vs H100 total cost of ownership",
                                "SemiAnalysis", "analyst", D("2025-08-20"), None),
    "korthikanti-2022": ("Reducing Activation Recomputation in Large Transformer Models "
                         "(arXiv 2205.05198), Table 5", "Korthikanti et al.", "measurement",
                         D("2022-05-10"), "https://arxiv.org/abs/2205.05198"),
}
SOURCES = {key: SourceLine(key, title, publisher, kind, published, url)
           for key, (title, publisher, kind, published, url) in _SOURCES.items()}
