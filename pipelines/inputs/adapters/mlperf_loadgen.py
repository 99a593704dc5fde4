"""MLPerf Inference loadgen logs: one run's `mlperf_log_summary.txt` or `mlperf_log_detail.txt`,
as a submission keeps them under
`<division>/<submitter>/results/<system>/<benchmark>/<Scenario>/performance/run_N/`.

A log is one serving point: the run's output tokens/s (Offline "Tokens per second"; Server
"Completed tokens per second"), its completed samples/s, and for Server and Interactive runs
the Poisson arrival rate it was offered (`target_qps`), its median and p99 time to first token
and per output token, and the p99 limits it was held to (`ttft_latency`, `tpot_latency`).
MLPerf Server and Interactive runs have no fixed concurrency: the point keeps the arrival rate
and the limits, and its concurrency stays empty (models/serving/arrivals.py reads a curve at
such limits). Interactive is the Server scenario run with the tighter limits of an
`*-interactive-*` benchmark (v5.0 on), and is named so.

What the log does not say, its place does: the system and the benchmark are the folders above
the scenario's, and the GPUs are the submission's `systems/<system>.json` (accelerator model,
accelerators per node x nodes), which the ingest reads beside the tree and passes in
(`AdapterOptions.beside`). A log without its systems JSON is refused as a whole, since its
throughput cannot be put per GPU.

A summary carries no date: give the round's publication date with `--as-of`. A detail log is
dated by its `test_datetime` (the run), unless `--as-of` says otherwise. When a run folder holds
both files, the summary is the run's record and the detail log is skipped (one run, one point).
A run in AccuracyOnly mode measures no throughput and is skipped, and so is a compliance test's
run (a TEST07 folder below the scenario's: an audit of the result, not a result); an INVALID
run (its constraints not met) is rejected, with the reason loadgen gives.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import PurePosixPath
from typing import Any

from pipelines.inputs.adapters import inference_rows as shared
from pipelines.inputs.adapters.base import (
    AdapterError,
    AdapterOptions,
    InferencePoint,
    Parsed,
    Rejected,
    decode,
)
from pipelines.inputs.adapters.guards import INT32_MAX, load_json
from pipelines.inputs.adapters.mlperf import system_item_key
from pipelines.inputs.adapters.mlperf_inference import gpu_key, software, source
from pipelines.inputs.packs import Pack

FORMAT = "mlperf-loadgen"
SUMMARY = "mlperf_log_summary.txt"
DETAIL = "mlperf_log_detail.txt"
LOG_NAMES = (SUMMARY, DETAIL)
# Folders of a log's place a reader is told: <repository>/<division>/<submitter>/results/
# <system>/<benchmark>/<Scenario>/performance/run_N/<log>.
PLACE_PARTS = 10
_SNIFF = 4096
_MLLOG = ":::MLLOG"
_NS = 1e-9
_ROUND_IN_PATH = re.compile(r"inference_results_v(\d{1,2}\.\d{1,2})", re.IGNORECASE)
_LOADGEN_ROUND = re.compile(r"\s*(\d{1,2}\.\d{1,2})\b")
_KEY = re.compile(r'\s*\{\s*"key"\s*:\s*"([^"\\]{1,100})"')
_SCENARIOS = ("Offline", "Server")
_AUDIT = re.compile(r"TEST\d{2}")  # the compliance tests' folders (TEST01, TEST06, TEST07 ...)
_NO_SYSTEM = ("no systems JSON for its system: ingest the log inside its submission tree "
              "(<submitter>/results/<system>/<benchmark>/<Scenario>/...), with "
              "<submitter>/systems/<system>.json beside results/, so its GPUs are known")
_NO_AS_OF = ("an MLPerf loadgen summary carries no date; ingest it with --as-of <the round's "
             "publication date, e.g. 2024-08-28 for Inference v4.1>")


@dataclass(frozen=True)
class Place:
    """Where a log sits in its submission: what its folders say about its run."""

    submitter: str | None
    system: str
    benchmark: str
    scenario: str
    round: str | None  # "4.1", from an inference_results_v4.1 folder
    audit: str | None = None  # a compliance test's folder below the scenario's (TEST07)


def place_of(name: str) -> Place | None:
    """The run a log's path names (`.../results/<system>/<benchmark>/<Scenario>/...`), or
    None when the path does not reach that far."""
    parts = PurePosixPath(name.replace("\\", "/")).parts
    if "results" not in parts:
        return None
    at = len(parts) - 1 - parts[::-1].index("results")
    if len(parts) < at + 5:
        return None
    found = next((m for part in parts[:at] if (m := _ROUND_IN_PATH.search(part))), None)
    audit = next((part for part in parts[at + 4:-1] if _AUDIT.fullmatch(part)), None)
    return Place(submitter=parts[at - 1] if at > 0 else None, system=parts[at + 1],
                 benchmark=parts[at + 2], scenario=parts[at + 3],
                 round=found.group(1) if found else None, audit=audit)


def detect(name: str, data: bytes) -> str | None:
    """"mlperf-loadgen" for a loadgen summary or detail log, by content."""
    head = data[:_SNIFF].decode("utf-8", "replace").lstrip("\ufeff \t\r\n")
    if "MLPerf Results Summary" in head and re.search(r"^SUT name\s*:", head, re.MULTILINE):
        return FORMAT
    first = head.split("\n", 1)[0]
    if first.startswith(_MLLOG) and '"loadgen_version"' in first:
        return FORMAT
    # An accuracy run's summary can hold nothing but loadgen's closing lines.
    if PurePosixPath(name).name in LOG_NAMES and "encountered during test." in head:
        return FORMAT
    return None


# ---------------------------------------------------------------- the log's figures


@dataclass
class _Figures:
    """What a log says, each figure with the line it is on and its own name (for the errors):
    the first line of each figure counts ("Completed tokens per second" is written twice)."""

    kind: str  # "summary" | "detail"
    values: dict[str, Any] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)
    text: dict[str, str] = field(default_factory=dict)
    written: dict[str, str] = field(default_factory=dict)  # "tpot_latency (ns)"

    def line(self, key: str) -> int | None:
        return self.lines.get(key)

    def add(self, name: str, value: Any, number: int, line: str, written: str) -> None:
        if name not in self.values:
            self.values[name], self.lines[name], self.text[name] = value, number, line
            self.written[name] = written


# Summary lines -> the reader's names for them; the first line of each name counts ("Completed
# tokens per second" is written twice).
_SUMMARY_KEYS = {
    "Scenario": "scenario", "Mode": "mode", "Result is": "validity",
    "Samples per second": "samples", "Completed samples per second": "samples",
    "Tokens per second": "tokens", "Completed tokens per second": "tokens",
    "50.00 percentile first token latency (ns)": "ttft_p50",
    "99.00 percentile first token latency (ns)": "ttft_p99",
    "50.00 percentile time to output token (ns)": "tpot_p50",
    "99.00 percentile time to output token (ns)": "tpot_p99",
    "target_qps": "target_qps", "ttft_latency (ns)": "ttft_limit",
    "tpot_latency (ns)": "tpot_limit"}
_DETAIL_KEYS = {
    "effective_scenario": "scenario", "effective_test_mode": "mode",
    "result_validity": "validity", "result_invalid_reason": "invalid_reason",
    "test_datetime": "datetime", "loadgen_version": "loadgen",
    "result_samples_per_second": "samples", "result_completed_samples_per_sec": "samples",
    "result_tokens_per_second": "tokens", "result_completed_tokens_per_second": "tokens",
    "result_first_token_50.00_percentile_latency_ns": "ttft_p50",
    "result_first_token_99.00_percentile_latency_ns": "ttft_p99",
    "result_time_per_output_token_50.00_percentile_ns": "tpot_p50",
    "result_time_per_output_token_99.00_percentile_ns": "tpot_p99",
    "effective_target_qps": "target_qps", "requested_server_ttft_latency": "ttft_limit",
    "requested_server_tpot_latency": "tpot_limit"}


def _summary(text: str) -> _Figures:
    figures = _Figures("summary")
    for number, line in enumerate(text.splitlines(), start=1):
        written, colon, value = line.partition(":")
        name = _SUMMARY_KEYS.get(written.strip()) if colon else None
        if name is not None:
            figures.add(name, value.strip(), number, line, written.strip())
    return figures


def _detail(text: str, options: AdapterOptions) -> _Figures:
    """The events the point needs; the rest (sample lists of 100 kB a line) are not parsed."""
    figures = _Figures("detail")
    for number, line in enumerate(text.splitlines(), start=1):
        found = _KEY.match(line, len(_MLLOG)) if line.startswith(_MLLOG) else None
        name = _DETAIL_KEYS.get(found.group(1)) if found else None
        if name is None or name in figures.values:
            continue
        try:
            event = load_json(line[len(_MLLOG):], options.limits.json_max_depth,
                              f"line {number}")
        except AdapterError as exc:
            raise AdapterError(number, f"{found.group(1)}: {exc.reason}") from None
        if isinstance(event, dict) and "value" in event:
            figures.add(name, event["value"], number, line, found.group(1))
    return figures


# ---------------------------------------------------------------- the point


class _Bad(ValueError):
    """A figure the log gives that cannot be read: the log is rejected under `field`."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(reason)
        self.field, self.reason = name, reason


def parse(name: str, data: bytes, options: AdapterOptions) -> Parsed:
    """The log's point (or why it is skipped or rejected)."""
    text = decode(data)
    if len(text.splitlines()) > options.limits.max_rows_per_file:
        raise AdapterError(None, f"more than {options.limits.max_rows_per_file:,} lines "
                                 "(SPECLEDGER_MAX_ROWS_PER_FILE): not a loadgen log")
    detail = PurePosixPath(name).name == DETAIL or text.lstrip().startswith(_MLLOG)
    if detail and options.beside.summary:
        parsed = Parsed(format=FORMAT, pack=Pack())
        parsed.notes.append(f"its run is read from the {SUMMARY} beside it (one run, one "
                            "point)")
        return parsed
    figures = _detail(text, options) if detail else _summary(text)
    collector = shared.Collector.start(FORMAT, figures.kind)
    place = place_of(name)
    try:
        reading = _reading(figures, place, options)
    except _Bad as bad:
        # The figure's line, else (the log's system or date) the line of its throughput.
        at = bad.field if bad.field in figures.lines else "tokens"
        named = figures.written.get(bad.field, bad.field)
        collector.parsed.rejected.append(Rejected(
            figures.line(at), named, f"{figures.kind} log, {named}: {bad.reason}",
            figures.text.get(at, "")[:2000]))
        return collector.finish(1)
    if isinstance(reading, str):
        collector.skip(reading)
        return collector.finish(0)
    collector.keep(*reading)
    return collector.finish(1)


def _reading(figures: _Figures, place: Place | None, options: AdapterOptions
             ) -> shared.Reading:
    values = figures.values
    if not values.keys() & {"mode", "scenario", "tokens", "validity"}:
        return "loadgen logs with no results (an accuracy run's)"
    if place is not None and place.audit is not None:
        return "compliance test runs (TEST01, TEST07, ...: audits of the result beside them)"
    mode = str(values.get("mode", "")).strip()
    if mode and mode != "PerformanceOnly":
        return f"{mode} runs (no throughput measured)"
    scenario = _scenario(values, place)
    validity = str(values.get("validity", "")).strip()
    if validity != "VALID":
        why = values.get("invalid_reason") or "its constraints were not met"
        raise _Bad("validity", f"{validity or 'no result'} ({shared.shown(why)}): a run "
                               "that failed its constraints is not a point at its limits")
    if place is None:
        raise _Bad("system", "the log's path does not say its system and benchmark "
                             "(.../results/<system>/<benchmark>/<Scenario>/...)")
    system = _system(options)
    model = shared.canonical_model(place.benchmark, options.aliases)
    if model is None:
        raise _Bad("benchmark", f"unknown benchmark model {shared.shown(place.benchmark)}: "
                                "add it to data/item_aliases.yaml")
    hardware, known = shared.known_hardware(system.accelerator, options.aliases, gpu_key)
    tokens = _positive(values, "tokens", 1.0)
    # Latencies, arrival rate and limits are a Server run's; an Offline log's are settings.
    served = {field: _positive(values, field, scale, required=False)
              if scenario != "Offline" else None
              for field, scale in (("tpot_p50", _NS), ("ttft_p50", _NS), ("tpot_p99", _NS),
                                   ("ttft_p99", _NS), ("target_qps", 1.0), ("tpot_limit", _NS),
                                   ("ttft_limit", _NS))}
    tpot_p50 = served["tpot_p50"]
    benchmark = _benchmark(place, values)
    as_of = _as_of(figures, options)
    framework, version = software(system.framework)
    point = InferencePoint(
        line=figures.line("tokens"), source_key=benchmark, as_of=as_of, hardware=hardware,
        hardware_written=system.accelerator,
        system=system_item_key(system.name or place.system,
                               system.submitter or place.submitter or "unknown", options),
        gpus=system.gpus, model=model, model_written=place.benchmark, precision=None,
        framework=framework, framework_version=version, spec_decoding=None, tp=None, ep=None,
        dp=None, disaggregated=False, prefill_gpus=None, decode_gpus=None, input_tokens=None,
        output_tokens=None, concurrency=None, tok_s_per_gpu=tokens / system.gpus,
        total_tok_s_per_gpu=None, tok_s_per_user=1 / tpot_p50 if tpot_p50 else None,
        ttft_s=served["ttft_p50"], tpot_s=tpot_p50, scenario=scenario, benchmark=benchmark,
        samples_per_s=_positive(values, "samples", 1.0, required=False),
        target_qps=served["target_qps"], ttft_p99_s=served["ttft_p99"],
        tpot_p99_s=served["tpot_p99"], ttft_limit_s=served["ttft_limit"],
        tpot_limit_s=served["tpot_limit"])
    what = SUMMARY if figures.kind == "summary" else DETAIL
    return point, source(benchmark, as_of, what), known


def _scenario(values: dict[str, Any], place: Place | None) -> str:
    """Offline, Server or Interactive (a Server run of an interactive benchmark)."""
    written = str(values.get("scenario", "")).strip()
    if written not in _SCENARIOS:
        raise _Bad("scenario", f"scenario {shared.shown(written or None)} is not a serving "
                               "throughput run (Offline or Server)")
    interactive = place is not None and ("interactive" in place.benchmark.lower()
                                         or place.scenario == "Interactive")
    return "Interactive" if written == "Server" and interactive else written


def _positive(values: dict[str, Any], field: str, scale: float, required: bool = True
              ) -> float | None:
    """A positive finite figure (text in a summary, a number in a detail log), scaled."""
    value = values.get(field)
    if value is None:
        if required:
            raise _Bad(field, "not given")
        return None
    try:
        figure = shared.number({field: value}, field, required=True)
    except shared.BadValue as bad:
        raise _Bad(field, bad.reason) from None
    return figure * scale


def _benchmark(place: Place, values: dict[str, Any]) -> str:
    """mlperf-inference-v<round>: the round of the results folder, else of loadgen's version
    (a detail log's "4.1 @ c83565d85d"), else mlperf-inference."""
    found = place.round
    if found is None and isinstance(values.get("loadgen"), str):
        match = _LOADGEN_ROUND.match(values["loadgen"])
        found = match.group(1) if match else None
    return f"mlperf-inference-v{found}" if found else "mlperf-inference"


def _as_of(figures: _Figures, options: AdapterOptions) -> date:
    if options.as_of is not None or figures.kind == "summary":
        try:
            return shared.as_of_of(None, "as_of", options, _NO_AS_OF)
        except shared.BadValue as bad:
            raise _Bad("as_of", bad.reason) from None
    try:
        return shared.as_of_of(figures.values.get("datetime"), "test_datetime", options,
                               "the detail log has no test_datetime; give --as-of")
    except shared.BadValue as bad:
        raise _Bad("datetime", bad.reason) from None


# ---------------------------------------------------------------- the system it ran on


@dataclass(frozen=True)
class _System:
    name: str | None
    submitter: str | None
    accelerator: str
    gpus: int
    framework: str | None


def _system(options: AdapterOptions) -> _System:
    """The accelerators of the systems JSON the ingest found beside the tree."""
    found = options.beside.system_json
    if found is None:
        raise _Bad("system", _NO_SYSTEM)
    name, data = found
    try:
        document = load_json(decode(data), options.limits.json_max_depth, name)
    except AdapterError as exc:
        raise _Bad("system", f"{name}: {exc.reason}") from None
    if not isinstance(document, dict):
        raise _Bad("system", f"{name} is not a systems JSON object")
    read: Callable[..., Any] = _described(name, document)
    accelerator = read(shared.label, "accelerator_model_name", what="the GPU it ran on")
    gpus = (read(shared.count, "accelerators_per_node")
            * (read(shared.count, "number_of_nodes", required=False) or 1))
    if gpus > INT32_MAX:
        raise _Bad("system", f"{name}: {gpus} accelerators is not a plausible system")
    return _System(name=read(shared.label, "system_name", required=False),
                   submitter=read(shared.label, "submitter", required=False),
                   accelerator=accelerator, gpus=gpus,
                   framework=read(shared.label, "framework", required=False))


def _described(name: str, document: dict[str, Any]) -> Callable[..., Any]:
    """A reader of the systems JSON's fields whose errors name the file."""
    def read(check: Callable[..., Any], key: str, **kwargs: Any) -> Any:
        try:
            return check(document, key, **kwargs)
        except shared.BadValue as bad:
            raise _Bad("system", f"{name}: {bad.reason}") from None
    return read
