"""Which reader a file needs, by its content: a source pack, or one of the adapters.

A file's name only breaks ties (a `.yaml` file is a pack); the content decides, so an Epoch
export saved as `hardware-2025-12.csv` or an nccl-tests log saved as `run.out` is recognised.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import PurePath
from typing import Any

from pipelines.inputs.adapters import (
    aws_offer,
    aws_price_series,
    azure_prices,
    azure_pricing_radar,
    epoch,
    gcp_pricing_yaml,
    gpuhunt_catalog,
    inferencex,
    mlperf,
    mlperf_inference,
    mlperf_loadgen,
    nccl_tests,
    neocloud_cheapest,
    quote_sheet,
    skypilot_catalog,
)
from pipelines.inputs.adapters.base import AdapterError, AdapterOptions, Parsed
from pipelines.inputs.adapters.guards import storable
from pipelines.inputs.packs import guard_items, parse_pack
from pipelines.inputs.yaml_lines import YamlError, load_yaml

PACK_SUFFIXES = (".yaml", ".yml", ".csv")
# Suffixes a folder is searched for (a named file is always read, whatever its suffix).
FOLDER_SUFFIXES = (*PACK_SUFFIXES, ".json", ".jsonl", ".txt", ".log", ".out", ".zip", ".gz")
SOURCE_PACK = "source-pack"

# Most specific first: a CSV is Epoch's only when its header says so, else it is a pack. The
# price lists and the inference results come before MLPerf, whose detector parses a whole JSON
# object (an AWS offer file is hundreds of megabytes); theirs read only the first 64 KiB.
_DETECTORS: tuple[Callable[[str, bytes], str | None], ...] = (
    aws_offer.detect, azure_prices.detect, azure_pricing_radar.detect, gpuhunt_catalog.detect,
    skypilot_catalog.detect, aws_price_series.detect, neocloud_cheapest.detect,
    quote_sheet.detect,
    inferencex.detect, mlperf_inference.detect, mlperf_loadgen.detect, mlperf.detect,
    nccl_tests.detect, epoch.detect)
# A `.yaml` file is a source pack unless it is one of these.
_YAML_DETECTORS: tuple[Callable[[str, bytes], str | None], ...] = (
    quote_sheet.detect, gcp_pricing_yaml.detect)
_PARSERS: dict[str, Callable[[str, bytes, AdapterOptions], Parsed]] = {
    "epoch-ml-hardware": epoch.parse,
    "nccl-tests": nccl_tests.parse,
    "mlperf-system": mlperf.parse,
    "mlperf-result": mlperf.parse,
    aws_offer.FORMAT: aws_offer.parse,
    azure_prices.FORMAT: azure_prices.parse,
    skypilot_catalog.FORMAT: skypilot_catalog.parse,
    gpuhunt_catalog.FORMAT: gpuhunt_catalog.parse,
    azure_pricing_radar.FORMAT: azure_pricing_radar.parse,
    gcp_pricing_yaml.FORMAT: gcp_pricing_yaml.parse,
    aws_price_series.FORMAT: aws_price_series.parse,
    neocloud_cheapest.FORMAT: neocloud_cheapest.parse,
    quote_sheet.FORMAT: quote_sheet.parse,
    inferencex.FORMAT: inferencex.parse,
    mlperf_inference.FORMAT: mlperf_inference.parse,
    mlperf_loadgen.FORMAT: mlperf_loadgen.parse,
}


def detect_format(name: str, data: bytes) -> str:
    """The format of a file, by its content; raise AdapterError when nothing reads it."""
    if PurePath(name).suffix.lower() in (".yaml", ".yml"):
        found = next((f for detect in _YAML_DETECTORS if (f := detect(name, data))), None)
        return found or SOURCE_PACK
    for detect in _DETECTORS:
        found = detect(name, data)
        if found is not None:
            return found
    if PurePath(name).suffix.lower() in PACK_SUFFIXES:
        return SOURCE_PACK
    raise AdapterError(None, "unrecognised file: not a source pack (YAML, or CSV with source, "
                             "item, metric, unit, as_of), an Epoch AI ml_hardware.csv, "
                             "nccl-tests output (text or -J JSON), an MLPerf systems/*.json, "
                             "result_*.txt log, Inference summary_results.json or loadgen "
                             "mlperf_log_summary.txt / mlperf_log_detail.txt, InferenceX "
                             "results (agg_*.json or the dashboard's rows), an AWS Price List "
                             "EC2 offer file, an Azure Retail Prices API response or a tracker's "
                             "per-region file of it, GCP's pricing.yml, a SkyPilot catalog "
                             "vms.csv, a gpuhunt catalog, a daily price series CSV, a "
                             "neocloud price feed (JSON lines) or a quote sheet (CSV with "
                             "vendor, unit_price, quoted_on, valid_until; or YAML with `quotes:`)")


# Files whose name says nothing of what they hold: the folder they sit in does (a SkyPilot
# catalog's `<cloud>/vms.csv`), so their readers see "<folder>/<name>".
NAMED_BY_FOLDER = ("vms.csv",)


def reader_name(path: PurePath) -> str:
    """The name a reader is given for a file: its own name, with its folder for a file
    named only by where it sits (NAMED_BY_FOLDER), with the folders of its submission for an
    MLPerf loadgen log (whose system, benchmark and scenario are its folders)."""
    if path.name.lower() in NAMED_BY_FOLDER and path.parent.name:
        return f"{path.parent.name}/{path.name}"
    if path.name in mlperf_loadgen.LOG_NAMES:
        return "/".join(path.parts[-mlperf_loadgen.PLACE_PARTS:])
    return path.name


def read_file(name: str, data: bytes, options: AdapterOptions) -> Parsed:
    """Parse a file with the reader its content needs (PackError/AdapterError if it cannot)."""
    file_format = detect_format(name, data)
    if file_format == SOURCE_PACK:
        return Parsed(SOURCE_PACK, parse_pack(name, data, options.limits))
    parsed = storable(_PARSERS[file_format](name, data, options), data)
    guard_items(parsed.pack)  # item keys NFC, hidden characters refused (packs.guard_items)
    return parsed


def load_aliases(text: str) -> dict[str, str]:
    """Every section of data/item_aliases.yaml (epoch:, mlperf:, ...) merged: name -> item."""
    try:
        document: Any = load_yaml(text) or {}
    except YamlError as exc:
        raise ValueError(f"item aliases: malformed YAML: {exc}") from exc
    if not isinstance(document, dict):
        raise ValueError("item aliases: expected a mapping of sections (epoch:, mlperf:)")
    merged: dict[str, str] = {}
    for section, names in document.items():
        if not isinstance(names or {}, dict):
            raise ValueError(f"item aliases: `{section}` must map names to item keys")
        for name, key in (names or {}).items():
            if not str(key or "").strip():
                raise ValueError(f"item aliases: {section} name {name!r} has no item key")
            merged[str(name).strip()] = str(key).strip()
    return merged
