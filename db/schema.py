"""The ledger schema: a bitemporal, append-only record of dated, source-tagged facts.

Two clocks on every observation (see docs/clocks.md):
valid time (`as_of`, `valid_to`) says when a figure holds in the world; knowledge time
(`recorded_at`, `superseded_at`) says when the ledger learned it and when a later
observation from the same source replaced it. Values are never updated in place.

Text that files and users write (titles, names, keys, units, paths, URLs) is Text, unbounded, so
PostgreSQL takes whatever SQLite takes; String(n) holds only what the code makes: hashes, code
versions and the vocabularies the check constraints name.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Date,
    DateTime,
    Dialect,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, declared_attr, mapped_column

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

SOURCE_KINDS = (
    "standard_body",
    "vendor_datasheet",
    "measurement",
    "dataset",
    "vendor_press",
    "analyst",
    "secondary_press",
    "personal_notes",
    "derived",
)
VALUE_KINDS = ("reported", "estimate", "derived", "measured")
STATUSES = ("C", "S", "U")
SCENARIO_KINDS = ("c2c", "tco", "serving")
TCO_MODES = ("comparison", "training-run")
# What read a file: a source pack, or an adapter for a file users already have.
FILE_FORMATS = ("source-pack", "epoch-ml-hardware", "nccl-tests", "mlperf-system",
                "mlperf-result", "unknown",
                # price lists and quotes (market signals)
                "azure-retail-prices", "aws-price-list", "skypilot-catalog", "quote-sheet",
                "gpuhunt-catalog", "azure-pricing-radar", "gcp-pricing-yaml",
                "aws-price-series", "neocloud-cheapest",
                # inference serving benchmarks
                "inferencex", "mlperf-inference", "mlperf-loadgen")
MEASUREMENT_KINDS = ("nccl-tests", "mlperf-result", "inference")
# Copies of models.trends.types' vocabularies (db/ may not import models/).
FLAG_SEVERITIES = ("critical", "warning", "info")
FLAG_KINDS = ("density_threshold", "density_growth", "interconnect_trend", "bandwidth_ratio",
              "switch_capacity", "single_source", "unconfirmed", "stale", "conflicting",
              "claim_without_measurement", "undated", "added", "changed", "superseded",
              "result_moved",
              # market prices and quotes (models/market)
              "price_move", "new_cheapest", "quote_expiring", "lead_time_grew")


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC timestamp on every dialect (SQLite stores it naive)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("timestamps must be timezone-aware")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _in(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map: dict[Any, Any] = {datetime: UTCDateTime(), date: Date()}


class IngestRun(Base):
    """One ingest: its files, its counts and whether it finished."""

    __tablename__ = "ingest_run"
    __table_args__ = (CheckConstraint("rows_read = rows_accepted + rows_unchanged + rows_rejected",
                                      name="rows_add_up"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    started_at: Mapped[datetime]
    finished_at: Mapped[datetime | None]
    rows_read: Mapped[int] = mapped_column(default=0)
    rows_accepted: Mapped[int] = mapped_column(default=0)
    rows_unchanged: Mapped[int] = mapped_column(default=0)
    rows_rejected: Mapped[int] = mapped_column(default=0)
    code_version: Mapped[str] = mapped_column(String(40))


class RawFile(Base):
    """Every ingested file, content-addressed by sha256 and kept byte for byte."""

    __tablename__ = "raw_file"

    id: Mapped[int] = mapped_column(primary_key=True)
    sha256: Mapped[str] = mapped_column(String(64), unique=True)
    file_name: Mapped[str] = mapped_column(Text)
    size_bytes: Mapped[int]
    content: Mapped[bytes] = mapped_column(LargeBinary)
    recorded_at: Mapped[datetime]


class IngestFile(Base):
    """One file inside one ingest run, with its row counts."""

    __tablename__ = "ingest_file"
    __table_args__ = (CheckConstraint("rows_read = rows_accepted + rows_unchanged + rows_rejected",
                                      name="rows_add_up"),
                      CheckConstraint(_in("format", FILE_FORMATS), name="format"))

    id: Mapped[int] = mapped_column(primary_key=True)
    ingest_run_id: Mapped[int] = mapped_column(ForeignKey("ingest_run.id"), index=True)
    raw_file_id: Mapped[int] = mapped_column(ForeignKey("raw_file.id"), index=True)
    path: Mapped[str] = mapped_column(Text)
    outcome: Mapped[str] = mapped_column(String(20))  # ingested | unchanged_file | rejected_file
    # The reader and what the user said about the file (--item, --as-of) as canonical JSON:
    # the same bytes read with other options are a different ingest, not an unchanged file.
    format: Mapped[str] = mapped_column(String(30), server_default="source-pack")
    options: Mapped[str] = mapped_column(Text, server_default="{}")
    rows_read: Mapped[int]
    rows_accepted: Mapped[int]
    rows_unchanged: Mapped[int]
    rows_rejected: Mapped[int]


class RejectedRow(Base):
    """A row (or a whole file) that failed validation, kept for review."""

    __tablename__ = "rejected_row"

    id: Mapped[int] = mapped_column(primary_key=True)
    ingest_run_id: Mapped[int] = mapped_column(ForeignKey("ingest_run.id"), index=True)
    ingest_file_id: Mapped[int] = mapped_column(ForeignKey("ingest_file.id"), index=True)
    raw_file_id: Mapped[int] = mapped_column(ForeignKey("raw_file.id"), index=True)
    line: Mapped[int | None]
    field: Mapped[str] = mapped_column(Text)
    reason: Mapped[str] = mapped_column(Text)
    raw_text: Mapped[str | None] = mapped_column(Text)


class Source(Base):
    """Where facts come from: a datasheet, a press release, a dataset, a survey."""

    __tablename__ = "source"
    __table_args__ = (CheckConstraint(_in("kind", SOURCE_KINDS), name="kind"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    key: Mapped[str] = mapped_column(Text, unique=True)
    title: Mapped[str] = mapped_column(Text)
    publisher: Mapped[str | None] = mapped_column(Text)
    url: Mapped[str | None] = mapped_column(Text)
    kind: Mapped[str] = mapped_column(String(30))
    published_on: Mapped[date | None]
    retrieved_on: Mapped[date | None]
    recorded_at: Mapped[datetime]


class Item(Base):
    """What a fact is about: a GPU, an NVLink generation, a switch, a rack, a price series."""

    __tablename__ = "item"

    id: Mapped[int] = mapped_column(primary_key=True)
    key: Mapped[str] = mapped_column(Text, unique=True)
    name: Mapped[str] = mapped_column(Text)
    kind: Mapped[str] = mapped_column(Text)
    vendor: Mapped[str | None] = mapped_column(Text)
    family: Mapped[str | None] = mapped_column(Text)
    # Three different dates, never merged: announcement, release/availability, and (on each
    # observation) when the ledger recorded it. Epoch's `Release date` is released_on.
    announced_on: Mapped[date | None]
    released_on: Mapped[date | None]


class Metric(Base):
    """A metric and its definition: canonical unit, scope and direction travel with the number."""

    __tablename__ = "metric"

    id: Mapped[int] = mapped_column(primary_key=True)
    key: Mapped[str] = mapped_column(Text, unique=True)
    unit: Mapped[str] = mapped_column(Text)
    counts: Mapped[str | None] = mapped_column(String(10))  # bits | bytes | NULL
    scope: Mapped[str] = mapped_column(String(30))
    direction: Mapped[str] = mapped_column(String(20))
    min_value: Mapped[float | None] = mapped_column(Float)
    max_value: Mapped[float | None] = mapped_column(Float)
    description: Mapped[str] = mapped_column(Text)


class Observation(Base):
    """One figure from one source, with both clocks. Never updated except to close it."""

    __tablename__ = "observation"
    __table_args__ = (
        CheckConstraint(_in("value_kind", VALUE_KINDS), name="value_kind"),
        CheckConstraint(_in("status", STATUSES), name="status"),
        CheckConstraint("low <= high", name="low_le_high"),
        # The two clocks: "valid at D as known at T" reads (item, metric) then both ranges.
        Index("ix_observation_item_metric_clocks", "item_id", "metric_id", "recorded_at", "as_of"),
        Index("ix_observation_source_live", "source_id", "superseded_at"),
        # An ingest's "what does this source say of these items now": without it the lookup
        # scans every live row of the source, and the time per file grows with the ledger.
        Index("ix_observation_source_item_live", "source_id", "item_id", "superseded_at"),
        # The price index reads every live offer of one GPU and term.
        Index("ix_observation_offer", "offer_gpu", "offer_term", "superseded_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    item_id: Mapped[int] = mapped_column(ForeignKey("item.id"))
    metric_id: Mapped[int] = mapped_column(ForeignKey("metric.id"))
    source_id: Mapped[int] = mapped_column(ForeignKey("source.id"))
    value: Mapped[float] = mapped_column(Float)  # point value, or the midpoint of a range
    low: Mapped[float] = mapped_column(Float)
    high: Mapped[float] = mapped_column(Float)
    value_written: Mapped[str] = mapped_column(Text)
    unit_written: Mapped[str] = mapped_column(Text)
    value_kind: Mapped[str] = mapped_column(String(20))
    status: Mapped[str] = mapped_column(String(1))
    quote: Mapped[str | None] = mapped_column(Text)
    as_of: Mapped[date]
    as_of_precision: Mapped[str] = mapped_column(String(5))  # day | month | year
    valid_to: Mapped[date | None]
    recorded_at: Mapped[datetime]
    superseded_at: Mapped[datetime | None]
    ingest_run_id: Mapped[int] = mapped_column(ForeignKey("ingest_run.id"), index=True)
    raw_file_id: Mapped[int] = mapped_column(ForeignKey("raw_file.id"), index=True)
    line: Mapped[int | None] = mapped_column(Integer)
    # sha256 of (item, metric, source, as_of, content): summed into dataset_version digests.
    content_sha256: Mapped[str] = mapped_column(String(64))
    # A market price's terms (price lists, quotes), NULL for every other figure: who offers it,
    # where, on what term, for which GPU item and how many GPUs a unit holds (an instance's
    # GPUs, a quote's quantity), the instance type, the currency written, and until when a
    # quote holds.
    offer_provider: Mapped[str | None] = mapped_column(Text)
    offer_region: Mapped[str | None] = mapped_column(Text)
    offer_term: Mapped[str | None] = mapped_column(String(20))
    offer_gpu: Mapped[str | None] = mapped_column(Text)
    offer_units: Mapped[int | None] = mapped_column(Integer)
    offer_instance: Mapped[str | None] = mapped_column(Text)
    offer_currency: Mapped[str | None] = mapped_column(String(10))
    offer_valid_until: Mapped[date | None]


class MeasurementRun(Base):
    """A measurement one file describes (an nccl-tests run, an MLPerf training run, a file of
    inference serving results), with its metadata; an nccl-tests run's size points are in
    nccl_point, an inference run's serving points in inference_point. Its summary figure, when it
    has one, is an observation from the same raw file."""

    __tablename__ = "measurement_run"
    __table_args__ = (CheckConstraint(_in("kind", MEASUREMENT_KINDS), name="kind"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(20))
    ingest_run_id: Mapped[int] = mapped_column(ForeignKey("ingest_run.id"), index=True)
    ingest_file_id: Mapped[int] = mapped_column(ForeignKey("ingest_file.id"), index=True)
    raw_file_id: Mapped[int] = mapped_column(ForeignKey("raw_file.id"), index=True)
    item_key: Mapped[str | None] = mapped_column(Text)  # the item measured, if known
    started_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]
    ranks: Mapped[int | None]
    nodes: Mapped[int | None]
    gpus_per_node: Mapped[int | None]
    device: Mapped[str | None] = mapped_column(Text)
    nccl_version: Mapped[str | None] = mapped_column(Text)
    collective: Mapped[str | None] = mapped_column(Text)
    benchmark: Mapped[str | None] = mapped_column(Text)
    duration_s: Mapped[float | None] = mapped_column(Float)  # MLPerf: run_stop - run_start
    metadata_json: Mapped[str] = mapped_column(Text)  # command line, parameters, rank map...


class NcclPoint(Base):
    """One measured message size of an nccl-tests run: out-of-place and in-place sides.
    Times in microseconds, algbw/busbw in GB/s (1e9 bytes/s) as nccl-tests prints them."""

    __tablename__ = "nccl_point"

    id: Mapped[int] = mapped_column(primary_key=True)
    measurement_run_id: Mapped[int] = mapped_column(ForeignKey("measurement_run.id"),
                                                    index=True)
    line: Mapped[int | None]
    collective: Mapped[str] = mapped_column(Text)
    size_bytes: Mapped[int] = mapped_column(BigInteger)
    count: Mapped[int] = mapped_column(BigInteger)
    dtype: Mapped[str] = mapped_column(Text)
    redop: Mapped[str | None] = mapped_column(Text)
    root: Mapped[int | None]
    oop_time_us: Mapped[float] = mapped_column(Float)
    oop_algbw: Mapped[float] = mapped_column(Float)
    oop_busbw: Mapped[float] = mapped_column(Float)
    oop_wrong: Mapped[int | None] = mapped_column(BigInteger)
    ip_time_us: Mapped[float | None] = mapped_column(Float)
    ip_algbw: Mapped[float | None] = mapped_column(Float)
    ip_busbw: Mapped[float | None] = mapped_column(Float)
    ip_wrong: Mapped[int | None] = mapped_column(BigInteger)


class InferencePoint(Base):
    """One measured serving point of an inference benchmark (InferenceX, MLPerf Inference): a
    model served on a hardware at one configuration and load, and what it delivered.

    `tok_s_per_gpu` is output tokens/s over all the point's GPUs (prefill and decode for a
    disaggregated point); `total_tok_s_per_gpu` counts input and output tokens. Dated by
    `as_of` (the run's or the round's date) and sourced by `source_key` like every measurement.
    """

    __tablename__ = "inference_point"

    id: Mapped[int] = mapped_column(primary_key=True)
    measurement_run_id: Mapped[int] = mapped_column(ForeignKey("measurement_run.id"),
                                                    index=True)
    line: Mapped[int | None]
    source_key: Mapped[str] = mapped_column(Text)
    as_of: Mapped[date]
    hardware: Mapped[str] = mapped_column(Text)  # the ledger's GPU item key (after aliases)
    hardware_written: Mapped[str] = mapped_column(Text)
    system: Mapped[str | None] = mapped_column(Text)
    gpus: Mapped[int] = mapped_column(Integer)
    model: Mapped[str] = mapped_column(Text)
    model_written: Mapped[str] = mapped_column(Text)
    precision: Mapped[str | None] = mapped_column(Text)
    framework: Mapped[str | None] = mapped_column(Text)
    framework_version: Mapped[str | None] = mapped_column(Text)
    spec_decoding: Mapped[str | None] = mapped_column(Text)
    tp: Mapped[int | None] = mapped_column(Integer)
    ep: Mapped[int | None] = mapped_column(Integer)
    dp: Mapped[int | None] = mapped_column(Integer)
    disaggregated: Mapped[bool] = mapped_column(Boolean)
    prefill_gpus: Mapped[int | None] = mapped_column(Integer)
    decode_gpus: Mapped[int | None] = mapped_column(Integer)
    input_tokens: Mapped[int | None] = mapped_column(Integer)
    output_tokens: Mapped[int | None] = mapped_column(Integer)
    concurrency: Mapped[int | None] = mapped_column(Integer)
    tok_s_per_gpu: Mapped[float] = mapped_column(Float)
    total_tok_s_per_gpu: Mapped[float | None] = mapped_column(Float)
    tok_s_per_user: Mapped[float | None] = mapped_column(Float)
    ttft_s: Mapped[float | None] = mapped_column(Float)
    tpot_s: Mapped[float | None] = mapped_column(Float)
    scenario: Mapped[str | None] = mapped_column(Text)
    benchmark: Mapped[str] = mapped_column(Text)
    samples_per_s: Mapped[float | None] = mapped_column(Float)
    target_qps: Mapped[float | None] = mapped_column(Float)
    ttft_p99_s: Mapped[float | None] = mapped_column(Float)
    tpot_p99_s: Mapped[float | None] = mapped_column(Float)
    ttft_limit_s: Mapped[float | None] = mapped_column(Float)
    tpot_limit_s: Mapped[float | None] = mapped_column(Float)


class DatasetVersion(Base):
    """A knowledge-time cut-off and the content hash of the observations live at it."""

    __tablename__ = "dataset_version"

    id: Mapped[int] = mapped_column(primary_key=True)
    cutoff_at: Mapped[datetime]
    content_hash: Mapped[str] = mapped_column(String(64), index=True)
    observation_count: Mapped[int]
    ingest_run_id: Mapped[int | None] = mapped_column(ForeignKey("ingest_run.id"))
    created_at: Mapped[datetime]


class Scenario(Base):
    """A named scenario as defined at one time. A changed definition is a new row, never an
    update, so every result points at the exact definition it was computed from."""

    __tablename__ = "scenario"
    __table_args__ = (CheckConstraint(_in("kind", SCENARIO_KINDS), name="kind"),
                      UniqueConstraint("name", "content_sha256"))

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(Text)
    kind: Mapped[str] = mapped_column(String(20))
    content_sha256: Mapped[str] = mapped_column(String(64))  # of the canonical definition
    definition: Mapped[str] = mapped_column(Text)  # the scenario as JSON text
    path: Mapped[str | None] = mapped_column(Text)
    recorded_at: Mapped[datetime]


class ModelResult:
    """The columns every model's result shares (append-only, one per scenario and version).

    `reused_from_id` names the original computation when the inputs had not changed and the
    figures were copied from it instead of recomputed.
    """

    __tablename__: str

    # sort_order: these columns come first in each table, as the migrations create them.
    id: Mapped[int] = mapped_column(primary_key=True, sort_order=-1)
    scenario_id: Mapped[int] = mapped_column(ForeignKey("scenario.id"), sort_order=-1)
    # NULL: an ad-hoc result made without a ledger.
    dataset_version_id: Mapped[int | None] = mapped_column(ForeignKey("dataset_version.id"),
                                                           sort_order=-1)
    code_version: Mapped[str] = mapped_column(String(40), sort_order=-1)
    # sha256 of the scenario definition, the spec values read and the code version.
    inputs_sha256: Mapped[str] = mapped_column(String(64), index=True, sort_order=-1)
    computed_at: Mapped[datetime] = mapped_column(sort_order=-1)

    @declared_attr
    def reused_from_id(cls) -> Mapped[int | None]:
        return mapped_column(ForeignKey(f"{cls.__tablename__}.id"), sort_order=-1)


class C2CResult(ModelResult, Base):
    """The C2C model's estimate for one scenario on one dataset version."""

    __tablename__ = "c2c_result"
    __table_args__ = (UniqueConstraint("scenario_id", "dataset_version_id"),)

    gpus: Mapped[int] = mapped_column(Integer)
    t_iter_s: Mapped[float] = mapped_column(Float)
    t_compute_s: Mapped[float] = mapped_column(Float)
    t_bubble_s: Mapped[float] = mapped_column(Float)
    c2c: Mapped[float] = mapped_column(Float)
    c2c_scale_up: Mapped[float] = mapped_column(Float)
    c2c_scale_out: Mapped[float] = mapped_column(Float)
    c2c_class: Mapped[str] = mapped_column(String(40))
    recommended_fabric: Mapped[str] = mapped_column(String(40))
    mfu: Mapped[float] = mapped_column(Float)
    hw_tflops_per_gpu: Mapped[float] = mapped_column(Float)
    model_tflops_per_gpu: Mapped[float] = mapped_column(Float)
    memory_gib_per_gpu: Mapped[float] = mapped_column(Float)
    fits: Mapped[bool] = mapped_column(Boolean)
    time_to_train_days: Mapped[float | None] = mapped_column(Float)
    result_json: Mapped[str] = mapped_column(Text)  # the full estimate, keys sorted


class TcoResult(ModelResult, Base):
    """The TCO model's result for one scenario on one dataset version.

    A comparison fills the scale-up/scale-out columns (a range's p10/p50/p90 when an input was
    a range); a training run fills total_cost_usd. The other mode's columns stay NULL.
    """

    __tablename__ = "tco_result"
    __table_args__ = (CheckConstraint(_in("mode", TCO_MODES), name="mode"),
                      UniqueConstraint("scenario_id", "dataset_version_id"))

    mode: Mapped[str] = mapped_column(String(20))
    scale_up_option: Mapped[str | None] = mapped_column(Text)
    scale_out_option: Mapped[str | None] = mapped_column(Text)
    break_even_speedup: Mapped[float | None] = mapped_column(Float)
    break_even_p10: Mapped[float | None] = mapped_column(Float)
    break_even_p50: Mapped[float | None] = mapped_column(Float)
    break_even_p90: Mapped[float | None] = mapped_column(Float)
    speedup: Mapped[float | None] = mapped_column(Float)
    cheaper_option: Mapped[str | None] = mapped_column(Text)
    total_cost_usd: Mapped[float | None] = mapped_column(Float)  # training-run mode, USD
    result_json: Mapped[str] = mapped_column(Text)  # the full result, keys sorted


class ServingResult(ModelResult, Base):
    """A serving scenario's answer on one dataset version: each option's curve and cost per
    million output tokens (result_json), and at the target interactivity the cheaper option
    with its margin and the P10-P90 band."""

    __tablename__ = "serving_result"
    __table_args__ = (UniqueConstraint("scenario_id", "dataset_version_id"),)

    target_tok_s_per_user: Mapped[float] = mapped_column(Float)
    cheaper_option: Mapped[str | None] = mapped_column(Text)
    margin: Mapped[float | None] = mapped_column(Float)
    margin_p10: Mapped[float | None] = mapped_column(Float)
    margin_p90: Mapped[float | None] = mapped_column(Float)
    result_json: Mapped[str] = mapped_column(Text)  # the full answer, keys sorted


# The recompute graph's stages that keep a record of their own per dataset version (the
# model results are per scenario: c2c_result, tco_result, serving_result).
GRAPH_STAGES = ("price_index",)


class StageRun(Base):
    """One stage of the recompute graph done for a dataset version: the digest of what it
    read, when, and how many rows it stored. A stage with a record is never run again for
    that version; its readers read what it stored."""

    __tablename__ = "stage_run"
    __table_args__ = (CheckConstraint(_in("stage", GRAPH_STAGES), name="stage"),
                      UniqueConstraint("dataset_version_id", "stage"))

    id: Mapped[int] = mapped_column(primary_key=True)
    dataset_version_id: Mapped[int] = mapped_column(ForeignKey("dataset_version.id"))
    stage: Mapped[str] = mapped_column(String(20))
    inputs_sha256: Mapped[str] = mapped_column(String(64))
    code_version: Mapped[str] = mapped_column(String(40))
    computed_at: Mapped[datetime]
    rows: Mapped[int] = mapped_column(Integer)
    # The setting the stage ran with, where one is among its inputs: the price index's age
    # limit in days (NULL: none, or recorded before revision 0016).
    max_age_days: Mapped[int | None] = mapped_column(Integer, nullable=True)


class PriceIndexEntry(Base):
    """The GPU-hour price index of one dataset version, GPU and term (USD per GPU-hour): the
    spread of the offers the version knew, valid on its date, the cheapest of them, and the
    change week over week and over 90 days over the offers priced on both dates (NULL: none
    was), the offers added or dropped apart (models/market/valid_time.py)."""

    __tablename__ = "price_index"
    __table_args__ = (UniqueConstraint("dataset_version_id", "gpu", "term"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    dataset_version_id: Mapped[int] = mapped_column(ForeignKey("dataset_version.id"))
    version_date: Mapped[date]
    gpu: Mapped[str] = mapped_column(Text)
    term: Mapped[str] = mapped_column(String(20))
    median: Mapped[float] = mapped_column(Float)
    min_price: Mapped[float] = mapped_column("min", Float)
    p25: Mapped[float] = mapped_column(Float)
    p75: Mapped[float] = mapped_column(Float)
    n_offers: Mapped[int] = mapped_column(Integer)
    n_providers: Mapped[int] = mapped_column(Integer)
    cheapest_provider: Mapped[str] = mapped_column(Text)
    cheapest_region: Mapped[str | None] = mapped_column(Text)
    cheapest_price: Mapped[float] = mapped_column(Float)
    cheapest_source: Mapped[str] = mapped_column(Text)
    cheapest_as_of: Mapped[date]
    cheapest_observation_id: Mapped[int] = mapped_column(ForeignKey("observation.id"))
    cheapest_gpus_per_instance: Mapped[int | None] = mapped_column(Integer)
    wow_change: Mapped[float | None] = mapped_column(Float)
    d90_change: Mapped[float | None] = mapped_column(Float)
    # The oldest and newest price date (as_of) of the offers in the row: its valid time.
    price_from: Mapped[date | None]
    price_to: Mapped[date | None]
    # Offers added or dropped against 7 and 90 days before, in words ("gcp added 11 offers").
    wow_composition: Mapped[str | None] = mapped_column(Text)
    d90_composition: Mapped[str | None] = mapped_column(Text)


class Flag(Base):
    """A trend or evidence finding computed for one dataset version (append-only).

    `observation_ids` is a JSON list of the observations the flag rests on.
    """

    __tablename__ = "flag"
    __table_args__ = (CheckConstraint(_in("kind", FLAG_KINDS), name="kind"),
                      CheckConstraint(_in("severity", FLAG_SEVERITIES), name="severity"),
                      UniqueConstraint("dataset_version_id", "kind", "subject"))

    id: Mapped[int] = mapped_column(primary_key=True)
    dataset_version_id: Mapped[int] = mapped_column(ForeignKey("dataset_version.id"), index=True)
    kind: Mapped[str] = mapped_column(String(40))
    severity: Mapped[str] = mapped_column(String(10))
    subject: Mapped[str] = mapped_column(Text)
    item_key: Mapped[str | None] = mapped_column(Text)
    metric_key: Mapped[str | None] = mapped_column(Text)
    scenario_name: Mapped[str | None] = mapped_column(Text)
    message: Mapped[str] = mapped_column(Text)
    observation_ids: Mapped[str] = mapped_column(Text)  # JSON list of observation ids
    code_version: Mapped[str] = mapped_column(String(40))
    computed_at: Mapped[datetime]


class Briefing(Base):
    """Each rendered briefing PDF: which version and date it reports on, and its bytes' sha256.

    Re-rendering a past briefing from the ledger must give the same sha256.
    """

    __tablename__ = "briefing"

    id: Mapped[int] = mapped_column(primary_key=True)
    dataset_version_id: Mapped[int] = mapped_column(ForeignKey("dataset_version.id"), index=True)
    as_of: Mapped[date]
    path: Mapped[str] = mapped_column(Text)
    sha256: Mapped[str] = mapped_column(String(64))
    size_bytes: Mapped[int] = mapped_column(BigInteger)
    pages: Mapped[int | None] = mapped_column(Integer)
    code_version: Mapped[str] = mapped_column(String(40))
    rendered_at: Mapped[datetime]


# How a briefing reaches its readers (pipelines/delivery/deliver.py), and how that went.
DELIVERY_CHANNELS = ("email", "folder")
DELIVERY_STATUSES = ("delivered", "failed")


class BriefingDelivery(Base):
    """One delivery of a briefing on one channel, all its attempts included (append-only).

    `target` is the e-mail's recipients (comma-joined) or the folder a copy was written to;
    `message_id` the e-mail's Message-ID header; `error` the last attempt's, when it failed
    (never a password); `delivered_at` the time of the last attempt.
    """

    __tablename__ = "briefing_delivery"
    __table_args__ = (CheckConstraint(_in("channel", DELIVERY_CHANNELS), name="channel"),
                      CheckConstraint(_in("status", DELIVERY_STATUSES), name="status"))

    id: Mapped[int] = mapped_column(primary_key=True)
    briefing_id: Mapped[int] = mapped_column(ForeignKey("briefing.id"), index=True)
    channel: Mapped[str] = mapped_column(String(10))
    target: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(10))
    attempts: Mapped[int] = mapped_column(Integer)
    message_id: Mapped[str | None] = mapped_column(Text)
    error: Mapped[str | None] = mapped_column(Text)
    delivered_at: Mapped[datetime]


# What a remote source's fetch came to (pipelines/fetch/remote.py): new bytes, the same bytes again,
# the server's 304, or no usable copy this time.
FETCH_OUTCOMES = ("fetched", "unchanged", "not_modified", "failed")


class RemoteFetch(Base):
    """One fetch of a remote source, all its attempts included (append-only log).

    A good fetch (any outcome but failed) names the cached bytes by sha256 and keeps the
    ETag / Last-Modified the next run sends back; the URL is stored without credentials.
    """

    __tablename__ = "remote_fetch"
    __table_args__ = (CheckConstraint(_in("outcome", FETCH_OUTCOMES), name="outcome"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    source_name: Mapped[str] = mapped_column(Text, index=True)
    url: Mapped[str] = mapped_column(Text)
    attempted_at: Mapped[datetime]
    outcome: Mapped[str] = mapped_column(String(20))
    http_status: Mapped[int | None] = mapped_column(Integer)
    sha256: Mapped[str | None] = mapped_column(String(64))
    size_bytes: Mapped[int | None] = mapped_column(BigInteger)
    etag: Mapped[str | None] = mapped_column(Text)
    last_modified: Mapped[str | None] = mapped_column(Text)
    attempts: Mapped[int] = mapped_column(Integer)
    error: Mapped[str | None] = mapped_column(Text)
