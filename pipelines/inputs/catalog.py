"""The metric catalogue (data/catalog.yaml): what every metric means and how it is bounded."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from models.observations import MetricDef
from pipelines.inputs.yaml_lines import load_yaml, read_bounded_text


def load_metrics(path: Path) -> dict[str, MetricDef]:
    """Read metric definitions; a broken catalogue is a programming error, so fail loudly."""
    document = load_yaml(read_bounded_text(path))
    metrics: dict[str, MetricDef] = {}
    for entry in document["metrics"]:
        low, high = entry.get("bounds", [None, None])
        metric = MetricDef(key=entry["key"], unit=entry["unit"], scope=entry["scope"],
                           direction=entry["direction"], description=entry["description"],
                           counts=entry.get("counts"), min_value=low, max_value=high)
        if metric.key in metrics:
            raise ValueError(f"{path}: metric {metric.key!r} is defined twice")
        metrics[metric.key] = metric
    return metrics


def metric_rows(metrics: dict[str, MetricDef]) -> list[dict[str, Any]]:
    """Metric definitions as rows of the `metric` table."""
    return [asdict(metric) for metric in metrics.values()]
