"""The analysts' marts (db/sql/marts/): one SQL file per mart, built in DuckDB from the loaded
tables after resolved_span, each with its descriptions in the file and its checks here, beside
it (dbt's model + schema.yml, in the warehouse_checks vocabulary)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from db.warehouse_checks import TableChecks

MARTS_DIR = Path(__file__).resolve().parent / "sql" / "marts"
# A copy of models.observations.OFFER_TERMS (db/ may not import models/; a test keeps them
# equal): every term ingest accepts is one the warehouse publishes.
PRICE_TERMS = ("on_demand", "spot", "reserved_1y", "reserved_3y", "capacity_block", "contract",
               "quote")


@dataclass(frozen=True)
class Mart:
    name: str
    checks: TableChecks = field(default_factory=dict)

    @property
    def sql(self) -> Path:
        return MARTS_DIR / f"{self.name}.sql"


# In build order.
MARTS: tuple[Mart, ...] = (
    Mart("gpu_spec_wide", {
        "unique": [("gpu",)], "not_null": ["name"],
        "relationships": [("gpu", "item", "key"), ("peak_bf16_source", "source", "key"),
                          ("price_source", "source", "key")],
        "expression_is_true": ["peak_bf16 is null or peak_bf16 > 0",
                               "(peak_bf16 is null) = (peak_bf16_source is null)"]}),
    Mart("interconnect_generation", {
        "not_null": ["family", "generation"],
        "relationships": [("generation", "item", "key"), ("bandwidth_source", "source", "key")],
        "expression_is_true": ["bandwidth is null or bandwidth > 0"]}),
    Mart("gpu_hour_price", {
        "unique": [("observation_id",)],
        "not_null": ["provider", "term", "usd_per_gpu_hour", "as_of", "known_at", "source"],
        "accepted_values": {"term": PRICE_TERMS},
        "relationships": [("observation_id", "observation", "observation_id"),
                          ("offer", "item", "key")],
        "expression_is_true": ["usd_per_gpu_hour > 0",
                               "superseded = (superseded_at is not null)",
                               "not (live and superseded)",
                               "valid_to is null or valid_to > as_of"]}),
    Mart("market_offer", {
        "unique": [("offer",)],
        "not_null": ["provider", "term", "gpu", "usd_per_gpu_hour", "price_date", "age_days",
                     "stale", "false_spot", "outlier", "source", "market_date", "flags",
                     "gpu_known"],
        "accepted_values": {"term": PRICE_TERMS},
        # An offer's GPU need not be an item (gpu_known says, the flags too): a check on it
        # failed every publish after an ingest that accepted such an offer.
        "relationships": [("observation_id", "gpu_hour_price", "observation_id"),
                          ("offer", "item", "key")],
        "expression_is_true": ["usd_per_gpu_hour > 0", "age_days >= 0",
                               "price_date <= market_date",
                               "not (outlier and (stale or false_spot))",
                               "usd_per_instance_hour is null or gpus is not null",
                               "stale = (age_days > (select market_max_age_days from meta))",
                               "gpu_known or flags like '%unknown gpu%'"]}),
)
# The price index comes from Python (models/market), its table in warehouse.sql.
PRICE_INDEX_CHECKS: TableChecks = {
    "unique": [("dataset_version", "gpu", "term")],
    "accepted_values": {"term": PRICE_TERMS},
    "relationships": [("dataset_version", "dataset_version", "id")],
    "expression_is_true": ["min_usd <= p25_usd", "p25_usd <= median_usd",
                           "median_usd <= p75_usd", "cheapest_usd = min_usd"]}


def mart_checks() -> dict[str, TableChecks]:
    return {mart.name: mart.checks for mart in MARTS} | {"price_index": PRICE_INDEX_CHECKS}
