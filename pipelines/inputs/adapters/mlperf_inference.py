"""MLPerf Inference results: MLCommons' `summary_results.json` of a round (the table behind its
results pages, at the root of `mlcommons/inference_results_v<round>`), one row per system,
benchmark and scenario.

A row gives `Submitter`, `System`, `Platform` (the name of its `systems/<Platform>.json`),
`Model` (llama2-70b-99, llama3.1-405b, deepseek-r1, ...), `Scenario` (Offline, Server,
Interactive, ...), `Accelerator` and `a#` (accelerators per node), `Nodes`, `Software`,
`weight_data_types`, `version` (v5.1) and `Performance_Result` in `Performance_Units`.

Rows in Tokens/s are the LLM serving points: output tokens/s of the whole system, divided by
its Nodes x a# accelerators. Rows in other units (Samples/s, Queries/s, Latency (ms)) measure
other things and are skipped and counted. The point's `system` is the item the systems JSON of
the same submission gives (mlperf.py reads those: `mlperf-<submitter>-<system>` or an alias),
so its counts, memory and NVLink sit beside its results. The accelerator maps to the ledger's
GPU items (NVIDIA B200-SXM-180GB -> b200, AMD Instinct MI300X 192GB HBM3 -> amd-mi300x;
`data/item_aliases.yaml` overrides); a row naming several accelerators (a heterogeneous
cluster) or none (a CPU-only system) is rejected. The file carries no date: give the round's
publication date with `--as-of`. MLPerf reports no TTFT, TPOT or concurrency in this table
(the scenario's latency bounds are the round's rules), and its sequence lengths are the
dataset's, so those columns stay empty.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from pipelines.inputs.adapters import inference_rows as shared
from pipelines.inputs.adapters.base import AdapterOptions, InferencePoint, Parsed, slug
from pipelines.inputs.adapters.guards import INT32_MAX
from pipelines.inputs.adapters.mlperf import system_item_key
from pipelines.inputs.packs import SourceDecl

FORMAT = "mlperf-inference"
TOKENS = "tokens/s"
_NO_AS_OF = ("MLPerf's summary_results.json carries no date; ingest it with --as-of <the "
             "round's publication date, e.g. 2025-09-09 for Inference v5.1>")
_ROUND = re.compile(r"v?\d{1,2}\.\d{1,2}")
# Accelerator names -> the ledger's GPU items, matched in the upper-cased name.
_GPUS = ((r"GB300", "gb300"), (r"GB200", "gb200"), (r"(?<![A-Z])B300", "b300"),
         (r"(?<![A-Z])B200", "b200"), (r"H200[- ]?SXM", "h200-sxm"),
         (r"H100[- ]?SXM", "h100-sxm5"), (r"H100[- ]?PCIE", "h100-pcie"),
         (r"MI300X", "amd-mi300x"), (r"MI325X", "amd-mi325x"), (r"MI350X", "amd-mi350x"),
         (r"MI355X", "amd-mi355x"))
_FRAMEWORKS = {"tensorrt-llm": "trt-llm", "trt-llm": "trt-llm"}
# The first component of `Software`: a name, then perhaps a version ("vLLM 0.9.0", "SGLang
# v0.4.9", "TensorRT 10.11").
_SOFTWARE = re.compile(
    r"\s*([A-Za-z][\w.+-]*(?: (?!v?\d)[A-Za-z][\w.+-]*)*)\s*:?\s*(?:v?(\d[\w.+~-]*))?")
_DETECT = (re.compile(r'"Performance_Result"\s*:'), re.compile(r'"Performance_Units"\s*:'),
           re.compile(r'"Scenario"\s*:'))


def detect(name: str, data: bytes) -> str | None:
    """"mlperf-inference" for a summary_results.json, by content."""
    return FORMAT if shared.looks_like(data, _DETECT) else None


def parse(name: str, data: bytes, options: AdapterOptions) -> Parsed:
    return shared.read_points(data, options, FORMAT, "the MLPerf Inference summary",
                              lambda _rows: "summary_results.json", _read_row)


def _read_row(row: shared.Row, options: AdapterOptions) -> shared.Reading:
    """A Tokens/s row's point; rows in other units measure other things and are skipped."""
    units = shared.label(row.value, "Performance_Units", what="the unit of the result")
    if units.lower() != TOKENS:
        return f"results in {shared.shown(units)} (not token throughput)"
    point, known = _point(row, options)
    return point, source(point.benchmark, point.as_of), known


def gpu_key(written: str) -> str | None:
    """The ledger's GPU item an accelerator name names; BadValue when it names several."""
    text = written.upper()
    found = {key for pattern, key in _GPUS if re.search(pattern, text)}
    if len(found) > 1:
        raise shared.BadValue("Accelerator",
                              f"Accelerator {shared.shown(written)} names several GPUs "
                              f"({', '.join(sorted(found))}): a point is one GPU type")
    return next(iter(found), None)


def _point(row: shared.Row, options: AdapterOptions) -> tuple[InferencePoint, bool]:
    values = row.value
    model_written = shared.label(values, "Model", what="the benchmark's model")
    model = shared.canonical_model(model_written, options.aliases)
    if model is None:
        raise shared.BadValue("Model", f"unknown model {shared.shown(model_written)}: add it "
                                       "to data/item_aliases.yaml")
    scenario = shared.label(values, "Scenario", what="Offline, Server or Interactive")
    accelerator = shared.label(values, "Accelerator",
                               what="a system without accelerators (CPUs only) is not a GPU point")
    hardware, known = shared.known_hardware(accelerator, options.aliases, gpu_key)
    gpus = shared.count(values, "Nodes") * shared.count(values, "a#", what="accelerators per node")
    if gpus > INT32_MAX:
        raise shared.BadValue("a#", f"Nodes x a# = {gpus} accelerators is not a plausible system")
    result = shared.number(values, "Performance_Result", required=True, what="the throughput")
    benchmark = _benchmark(values)
    as_of = shared.as_of_of(None, "as_of", options, _NO_AS_OF)
    framework, version = software(values.get("Software"))
    precision = shared.label(values, "weight_data_types", required=False)
    system = shared.label(values, "System", required=False)
    submitter = shared.label(values, "Submitter", required=False) or "unknown"
    return InferencePoint(
        line=row.line, source_key=benchmark, as_of=as_of, hardware=hardware,
        hardware_written=accelerator,
        system=system_item_key(system, submitter, options) if system else None,
        gpus=gpus, model=model, model_written=model_written,
        precision=None if precision is None or precision.lower() == "unset"
        else precision.lower(),
        framework=framework, framework_version=version, spec_decoding=None, tp=None, ep=None,
        dp=None, disaggregated=False, prefill_gpus=None, decode_gpus=None, input_tokens=None,
        output_tokens=None, concurrency=None, tok_s_per_gpu=result / gpus,
        total_tok_s_per_gpu=None, tok_s_per_user=None, ttft_s=None, tpot_s=None,
        scenario=scenario, benchmark=benchmark), known


def _benchmark(values: dict[str, Any]) -> str:
    """mlperf-inference-<round> ("v5.1"), or mlperf-inference when the row names none."""
    written = shared.label(values, "version", required=False)
    if written is None:
        return "mlperf-inference"
    if _ROUND.fullmatch(written) is None:
        raise shared.BadValue("version",
                              f"version {shared.shown(written)} is not an MLPerf round (v5.1)")
    return f"mlperf-inference-v{written.removeprefix('v')}"


def source(benchmark: str, as_of: date, what: str = "summary_results.json") -> SourceDecl:
    round_ = benchmark.removeprefix("mlperf-inference").lstrip("-")
    url = (f"https://github.com/mlcommons/inference_results_{round_}" if round_
           else "https://mlcommons.org/benchmarks/inference-datacenter/")
    title = " ".join(filter(None, ("MLPerf Inference", round_, f"results ({what})")))
    return SourceDecl(key=benchmark, title=title, kind="measurement", publisher="MLCommons",
                      url=url, published_on=as_of)


def software(written: Any) -> tuple[str | None, str | None]:
    """(framework, version) from the first component of `Software`."""
    if not isinstance(written, str) or not written.strip():
        return None, None
    match = _SOFTWARE.match(written.split(",", 1)[0])
    if match is None:
        return None, None
    key = slug(match.group(1))[:shared.KEY_MAX].rstrip("-")
    return _FRAMEWORKS.get(key, key) or None, match.group(2)
