"""Small observation frames in the columns of db.queries.observations_frame."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

import pandas as pd

COLUMNS = [
    "observation_id", "item", "item_name", "item_kind", "item_family", "metric", "unit",
    "value", "low", "high", "value_written", "unit_written", "value_kind", "status", "quote",
    "as_of", "as_of_precision", "valid_to", "recorded_at", "superseded_at", "source",
    "source_title", "source_kind", "source_url", "source_published_on", "source_publisher",
    "offer_provider", "offer_region", "offer_term", "offer_gpu", "offer_units",
    "offer_instance", "offer_currency", "offer_valid_until",
]

RECORDED = datetime(2026, 1, 1, tzinfo=UTC)
ON = date(2026, 6, 1)
CUTOFF = datetime(2026, 6, 1, tzinfo=UTC)

_DEFAULTS: dict[str, Any] = {
    "observation_id": None, "item": "nvlink-5", "item_name": "NVLink 5.0",
    "item_kind": "scaleup_fabric", "item_family": "NVLink",
    "metric": "scaleup_bw_per_gpu_bidir", "unit": "GB/s", "value": 1800.0, "low": None,
    "high": None, "value_written": "1800", "unit_written": "GB/s", "value_kind": "reported",
    "status": "C", "quote": None, "as_of": date(2024, 3, 18), "as_of_precision": "day",
    "valid_to": None, "recorded_at": RECORDED, "superseded_at": None,
    "source": "nvidia-nvlink-page", "source_title": "NVIDIA NVLink",
    "source_kind": "vendor_datasheet", "source_url": None, "source_published_on": None,
    "source_publisher": None, "offer_provider": None, "offer_region": None, "offer_term": None,
    "offer_gpu": None, "offer_units": None, "offer_instance": None, "offer_currency": None,
    "offer_valid_until": None,
}


def obs_row(**overrides: Any) -> dict[str, Any]:
    """One observation; low and high default to the value (a point)."""
    row = {**_DEFAULTS, **overrides}
    if row["low"] is None:
        row["low"] = row["value"]
    if row["high"] is None:
        row["high"] = row["value"]
    return row


def frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """A frame of rows; ids are 1, 2, ... in row order unless a row names its own."""
    filled = [{**row, "observation_id": row["observation_id"] or n}
              for n, row in enumerate(rows, start=1)]
    return pd.DataFrame(filled, columns=COLUMNS)


def rack(item: str, value: float, as_of: date, **overrides: Any) -> dict[str, Any]:
    return obs_row(item=item, item_name=item.upper(), item_kind="rack", item_family="Rack",
                   metric="rack_it_power", unit="kW", value=value, as_of=as_of,
                   source=f"{item}-sheet", **overrides)


def threshold(item: str, low: float, high: float, source: str, **overrides: Any) -> dict[str, Any]:
    return obs_row(item=item, item_name=item.replace("-", " ").capitalize(),
                   item_kind="facility", item_family="Cooling", metric="cooling_limit_per_rack",
                   unit="kW", value=(low + high) / 2, low=low, high=high,
                   as_of=date(2025, 1, 1), as_of_precision="year", source=source,
                   source_kind="secondary_press", status="U", **overrides)
