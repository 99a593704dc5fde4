"""What every adapter returns, and the options the user can give on the command line.

An adapter is a pure function `parse(name, data, options) -> Parsed`: bytes in, rows out, no
database and no clock. Accounting is by row: every candidate observation (a PackRow), every
measured point and every rejected line counts once in `read`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import PurePosixPath
from typing import Any

from pipelines.inputs.adapters.instances import InstanceTable
from pipelines.inputs.csv_records import CsvDamage, Record
from pipelines.inputs.limits import DEFAULT_LIMITS, InputLimits
from pipelines.inputs.packs import Pack, PackError, decode_text

_SLUG_GAP = re.compile(r"[^a-z0-9]+")
_NAME_DATE = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")


class AdapterError(PackError):
    """The whole file is unusable (wrong format, truncated before any result, bad JSON)."""


def decode(data: bytes) -> str:
    """The file's text, or AdapterError naming the line of the first byte that is not UTF-8."""
    return decode_text(data, AdapterError)


def slug(text: str) -> str:
    """A ledger key from a name: "NVIDIA L2 PCle" -> "nvidia-l2-pcle"."""
    return _SLUG_GAP.sub("-", text.casefold()).strip("-")


def date_in_name(name: str) -> date | None:
    """The last YYYY-MM-DD in a file's name (`aws_vms_2026-11-23.csv`: a dated snapshot);
    None when it has none or it is not a calendar date.

    A price list dated by its name holds from that date (its valid time), and the date is part
    of the file's identity: the same bytes under a later date are a later snapshot."""
    found = _NAME_DATE.findall(PurePosixPath(name.replace("\\", "/")).name)
    if not found:
        return None
    try:
        return date(*map(int, found[-1]))
    except ValueError:
        return None


@dataclass(frozen=True)
class Beside:
    """Files the ingest found beside a file that its reader needs: for an MLPerf loadgen log,
    its submission's systems JSON (name, bytes), whether its run folder also holds the
    run's summary (which is then the run's record), and its place in the tree (two runs can
    leave byte-identical logs: a submitter's llama2-70b-99 and -99.9 runs)."""

    system_json: tuple[str, bytes] | None = None
    summary: bool = False
    place: str = ""


@dataclass(frozen=True)
class AdapterOptions:
    """What the user said about the file (`specledger ingest --item ... --as-of ...`).

    Part of a file's identity for re-ingest: the same bytes with other options are read again.
    """

    item: str | None = None  # the ledger item a measurement is tied to, when the file cannot say
    as_of: date | None = None  # the date of the file's facts (a snapshot, a run, a round)
    aliases: dict[str, str] = field(default_factory=dict)  # name in the file -> ledger item key
    limits: InputLimits = DEFAULT_LIMITS  # bounds the reader checks (not part of the identity)
    # Instance type -> GPU item and count for the price lists (data/instances.yaml); None: the
    # packaged table. Like the aliases, not part of the identity.
    instances: InstanceTable | None = None
    # The day the file is read (the ingest's `today`): what a price list dated by its data
    # counts as in force. None: the reader's clock. Not part of the identity.
    today: date | None = None
    # Files beside this one that its reader needs (a loadgen log's systems JSON): found by the
    # ingest, part of the identity through their digest.
    beside: Beside = field(default_factory=Beside)


@dataclass(frozen=True)
class Rejected:
    """A line of the file that could not be read as a result, kept with its text for review."""

    line: int | None
    field: str
    reason: str
    raw_text: str


@dataclass(frozen=True)
class NcclPoint:
    """One measured size of an nccl-tests run (out-of-place and in-place sides).

    Times in microseconds; algbw/busbw in GB/s (1e9 bytes/s) as nccl-tests reports them;
    `*_wrong` is the #wrong count (None when not given: legacy `error` floats, `N/A`)."""

    line: int | None
    collective: str
    size_bytes: int
    count: int
    dtype: str
    redop: str | None
    root: int | None
    oop_time_us: float
    oop_algbw: float
    oop_busbw: float
    oop_wrong: int | None
    ip_time_us: float | None
    ip_algbw: float | None
    ip_busbw: float | None
    ip_wrong: int | None


@dataclass(frozen=True)
class InferencePoint:
    """One measured serving point of an inference benchmark (InferenceX, MLPerf Inference).

    `tok_s_per_gpu` is output tokens/s over all `gpus` (prefill and decode GPUs of a
    disaggregated point); `total_tok_s_per_gpu` counts input and output tokens; times in
    seconds. None where the file does not give a figure (MLPerf's summary_results.json gives
    no latencies; no MLPerf file gives a concurrency or fixed sequence lengths)."""

    line: int | None
    source_key: str  # the source declared for it (inferencex-<date>, mlperf-inference-v5.1)
    as_of: date  # the run's or the round's date
    hardware: str  # the ledger's GPU item key (after aliases), else a slug of the name
    hardware_written: str
    system: str | None  # the system or rack item it ran in, when known
    gpus: int  # GPUs the per-GPU figures divide by
    model: str  # canonical model key: deepseek-r1, llama-3.3-70b, gpt-oss-120b ...
    model_written: str
    precision: str | None
    framework: str | None
    framework_version: str | None
    spec_decoding: str | None  # InferenceX: mtp | none; None when not said
    tp: int | None
    ep: int | None
    dp: int | None
    disaggregated: bool
    prefill_gpus: int | None
    decode_gpus: int | None
    input_tokens: int | None
    output_tokens: int | None
    concurrency: int | None
    tok_s_per_gpu: float
    total_tok_s_per_gpu: float | None
    tok_s_per_user: float | None
    ttft_s: float | None
    tpot_s: float | None
    scenario: str | None  # MLPerf: Offline | Server | Interactive
    benchmark: str  # inferencex | mlperf-inference-v5.1 ...
    # What an MLPerf loadgen log adds: the run's request rate (completed samples/s), the
    # Poisson arrival rate it was offered (Server, Interactive: target_qps), its p99 times
    # and the p99 limits it was held to (its scenario's; None for Offline).
    samples_per_s: float | None = None
    target_qps: float | None = None
    ttft_p99_s: float | None = None
    tpot_p99_s: float | None = None
    ttft_limit_s: float | None = None
    tpot_limit_s: float | None = None


@dataclass(frozen=True)
class MeasurementRun:
    """A measurement run described by one file: an nccl-tests run, an MLPerf result, or the
    serving points of an inference benchmark file.

    `metadata` holds what the file says about the run (command line, nThread/nGpus/..., the
    rank -> host -> device map, NCCL version, MLPerf benchmark and system) as JSON-able data.
    """

    kind: str  # "nccl-tests" | "mlperf-result" | "inference"
    item: str | None  # the ledger item measured, when known
    started_at: datetime | None
    finished_at: datetime | None
    ranks: int | None = None
    nodes: int | None = None
    gpus_per_node: int | None = None
    device: str | None = None
    nccl_version: str | None = None
    collective: str | None = None
    benchmark: str | None = None
    duration_s: float | None = None  # MLPerf time to train (run_stop - run_start)
    metadata: dict[str, Any] = field(default_factory=dict)
    # nccl-tests: its size points; inference: its serving points.
    points: list[NcclPoint] | list[InferencePoint] = field(default_factory=list)


@dataclass
class Parsed:
    """What an adapter read from one file."""

    format: str  # "epoch-ml-hardware" | "nccl-tests" | "mlperf-system" | "azure-retail-prices" ...
    pack: Pack  # sources, items and candidate observation rows (validated by the ingest)
    runs: list[MeasurementRun] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # e.g. "unknown column 'Foo' ignored"
    skipped_lines: int = 0  # lines that are not results (NCCL INFO, warnings): not rows

    @property
    def measured_rows(self) -> int:
        """Measured rows stored beside the observations: an nccl-tests run's size points, an
        inference run's serving points, or the run itself when it has none (an MLPerf
        result's time to train)."""
        return sum(len(r.points) or 1 for r in self.runs)

    @property
    def read(self) -> int:
        return len(self.pack.rows) + self.measured_rows + len(self.rejected)


def header_columns(records: Iterator[Record], empty: str = "empty file") -> list[str]:
    """A CSV's columns (stripped) from its first record, or AdapterError on line 1: `empty`
    when there is none, the damage when it is malformed. The records go on from line 2."""
    try:
        _, _, header = next(records)
    except StopIteration as exc:
        raise AdapterError(1, empty) from exc
    if isinstance(header, CsvDamage):
        raise AdapterError(1, f"malformed CSV header: {header.reason}")
    return [column.strip() for column in header]
