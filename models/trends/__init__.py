"""Trends and flags: pure functions over the ledger's observations (no I/O, no clock)."""

from models.trends.changes import observation_changes, result_changes, result_moves
from models.trends.density import DENSITY_METRICS, density_flags, density_trend
from models.trends.evidence import evidence_flags, undated_claims
from models.trends.fit import log_linear_fit
from models.trends.flags import TrendParams, all_flags, deduplicate
from models.trends.interconnect import INTERCONNECT_METRICS, interconnect_trend, switch_family
from models.trends.interconnect_flags import interconnect_flags
from models.trends.live import live, normalise, resolved_points, valid

# Every metric the density and interconnect trends read.
TREND_METRICS: tuple[str, ...] = (*DENSITY_METRICS, *INTERCONNECT_METRICS)

__all__ = [
    "DENSITY_METRICS",
    "INTERCONNECT_METRICS",
    "TREND_METRICS",
    "TrendParams",
    "all_flags",
    "deduplicate",
    "density_flags",
    "density_trend",
    "evidence_flags",
    "interconnect_flags",
    "interconnect_trend",
    "live",
    "log_linear_fit",
    "normalise",
    "observation_changes",
    "resolved_points",
    "result_changes",
    "result_moves",
    "switch_family",
    "undated_claims",
    "valid",
]
