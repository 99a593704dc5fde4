"""InferenceX (formerly InferenceMAX, SemiAnalysis) result files: serving points of a model on
a GPU at one parallelism, sequence length and concurrency.

Two layouts, told apart row by row, both JSON arrays of row objects (one row object alone too):

- the benchmark artifacts `utils/process_result.py` writes (`agg_<RESULT_FILENAME>.json`) and
  `utils/collect_results.py` gathers (`results_bmk/agg_bmk.json`): flat rows with `hw`, `model`,
  `infmax_model_prefix`, `framework`, `precision`, `spec_decoding`, `image`, `disagg`,
  `is_multinode`, `isl`, `osl`, `conc`, the topology (`tp`, `pp`, `pcp_size`, `ep`,
  `dp_attention`; multinode: `prefill_*`/`decode_*`, `num_prefill_gpu`, `num_decode_gpu`) and
  the metrics (`output_tput_per_gpu`, `tput_per_gpu`, `median_ttft`, `median_tpot`,
  `median_intvty`, ... in seconds and tokens/s). They carry no date: `--as-of` gives the run's,
  else the last YYYY-MM-DD in the file's name (`inferencemax_gpt-oss-120b_2026-01-02.json`),
  as for a dated price list, so a shipped run file is dated without an option.
- the published results the dashboard's API returns (`/api/v1/benchmarks`): `hardware`,
  `framework`, `model`, `precision`, `spec_method`, `disagg`, `is_multinode`, the
  `prefill_*`/`decode_*` topology, `isl`, `osl`, `conc`, `image`, `metrics: {...}`, `date` and
  `run_url`. Each row is dated by its `date`.

Names are read as the dashboard's own ingest reads them (InferenceX-app `normalizers.ts`):
runner suffixes are stripped from the hardware (`mi355x-amds_0` -> mi355x), which then maps to
the ledger's GPU items (h100 -> h100-sxm5, mi355x -> amd-mi355x; `data/item_aliases.yaml`
overrides); the model comes from `infmax_model_prefix`, else the model path. A point's
`tok_s_per_gpu` is output tokens/s over all its GPUs: for a disaggregated point InferenceX's
`output_tput_per_gpu` divides by the decode GPUs only, and is rescaled. Rows of agentic
traces (AgentX) are not fixed-sequence points: they are skipped and counted.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import date
from typing import Any

from pipelines.inputs.adapters.base import AdapterOptions, InferencePoint, Parsed, date_in_name
from pipelines.inputs.adapters.guards import INT32_MAX
from pipelines.inputs.adapters.inference_rows import (
    BadValue,
    Reading,
    Row,
    as_of_of,
    canonical_model,
    count,
    flag,
    known_hardware,
    label,
    looks_like,
    number,
    read_points,
    shown,
)
from pipelines.inputs.packs import SourceDecl

FORMAT = "inferencex"
BENCHMARK = "inferencex"
REPOSITORY = "https://github.com/SemiAnalysisAI/InferenceX"
_NO_AS_OF = ("an InferenceX benchmark artifact carries no date; ingest it with --as-of <the "
             "run's date>, or put the date in the file's name (..._YYYY-MM-DD.json)")

# InferenceX's GPU keys (InferenceX-app constants GPU_KEYS) -> the ledger's GPU items.
_GPUS = {"h100": "h100-sxm5", "h200": "h200-sxm", "b200": "b200", "b300": "b300",
         "gb200": "gb200", "gb300": "gb300", "mi300x": "amd-mi300x", "mi325x": "amd-mi325x",
         "mi355x": "amd-mi355x"}
# Runner suffixes, stripped in this order (InferenceX-app hwToGpuKey).
_RUNNER_SUFFIXES = ("-trt", "-multinode-slurm", "-multinode", "-nvs", "-disagg", "-amds", "-amd",
                    "-nvd", "-dgxc-slurm", "-dgxc", "-nb", "-nv")
# The rack a superchip's GPUs run in (InferenceX's GB200/GB300 runners are NVL72 racks).
_RACKS = {"gb200": "gb200-nvl72", "gb300": "gb300-nvl72"}
# Frameworks as the ledger names them; sglang-disagg is disaggregated MoRI SGLang
# (InferenceX-app FRAMEWORK_ALIASES).
_FRAMEWORKS = {"trt": ("trt-llm", False), "trtllm": ("trt-llm", False),
               "dynamo-trt": ("dynamo-trt-llm", False),
               "dynamo-trtllm": ("dynamo-trt-llm", False),
               "sglang-disagg": ("mori-sglang", True)}
_DETECT = (re.compile(r'"(?:hw|hardware)"\s*:'), re.compile(r'"conc"\s*:'),
           re.compile(r'"(?:output_tput_per_gpu|tput_per_gpu|infmax_model_prefix)"\s*:'))


def detect(name: str, data: bytes) -> str | None:
    """"inferencex" for an InferenceX result file (artifact or published rows), by content."""
    return FORMAT if looks_like(data, _DETECT) else None


def parse(name: str, data: bytes, options: AdapterOptions) -> Parsed:
    if options.as_of is None and (dated := date_in_name(name)) is not None:
        options = replace(options, as_of=dated)
    return read_points(data, options, FORMAT, "the InferenceX results", _layout, _read_row)


def _read_row(row: Row, options: AdapterOptions) -> Reading:
    kind = _not_fixed_sequence(row.value)
    if kind is not None:
        return kind
    point, known = _point(row, options)
    return point, _source(point.as_of), known


def _layout(rows: list[Row]) -> str:
    published = any(isinstance(r.value, dict) and "hw" not in r.value for r in rows)
    return "published results (api/v1/benchmarks)" if published else "benchmark artifacts"


def _not_fixed_sequence(row: dict[str, Any]) -> str | None:
    """What kind of result a row is when it is not a fixed-sequence serving point (AgentX
    agentic traces), else None."""
    kind = row.get("benchmark_type") or row.get("scenario_type")
    if kind in (None, "single_turn"):
        return None
    return f"benchmark type {shown(kind)} (not fixed-sequence serving points)"


def _source(as_of: date) -> SourceDecl:
    return SourceDecl(key=f"inferencex-{as_of.isoformat()}",
                      title=f"InferenceX benchmark results, {as_of.isoformat()}",
                      kind="measurement", publisher="SemiAnalysis", url=REPOSITORY,
                      published_on=as_of)


def gpu_key(written: str) -> str | None:
    """The ledger's GPU item for an InferenceX hardware name, runner suffixes stripped."""
    base = re.sub(r"_\d+$", "", written.strip().lower())
    for suffix in _RUNNER_SUFFIXES:
        base = base.removesuffix(suffix)
    return _GPUS.get(base)


def _point(row: Row, options: AdapterOptions) -> tuple[InferencePoint, bool]:
    """The row's serving point and whether its hardware is a known item; BadValue else."""
    values = row.value
    published = "hw" not in values
    metrics = values.get("metrics") if published else values
    if not isinstance(metrics, dict):
        raise BadValue("metrics", f"metrics {shown(metrics)} is not an object of figures")
    hardware_written = label(values, "hardware" if published else "hw",
                            what="the GPU the point ran on")
    hardware, known = known_hardware(hardware_written, options.aliases, gpu_key)
    model_written, model = _model(values, published, options)
    framework, disaggregated = _framework(values)
    topology = _topology(values, published)
    figures = _figures(metrics, topology, published)
    as_of = as_of_of(values.get("date") if published else None, "date", options, _NO_AS_OF)
    spec = label(values, "spec_method" if published else "spec_decoding", required=False)
    return InferencePoint(
        line=row.line, source_key=_source(as_of).key, as_of=as_of, hardware=hardware,
        hardware_written=hardware_written, system=_RACKS.get(hardware), model=model,
        model_written=model_written,
        precision=label(values, "precision", what="the weights' precision").lower(),
        framework=framework, framework_version=_image_tag(values.get("image"), published),
        spec_decoding=spec.lower() if spec else None,
        disaggregated=disaggregated, input_tokens=count(values, "isl"),
        output_tokens=count(values, "osl"), concurrency=count(values, "conc"),
        scenario=None, benchmark=BENCHMARK, **topology, **figures), known


def _model(values: dict[str, Any], published: bool,
           options: AdapterOptions) -> tuple[str, str]:
    """(the model as written, its canonical key): an alias of either name first, then the
    prefix, as the dashboard reads it, then the model path."""
    keys = ("model",) if published else ("infmax_model_prefix", "model")
    written = {key: label(values, key, required=False) for key in keys}
    names = [text for text in written.values() if text]
    aliased = [options.aliases[text] for text in names if text in options.aliases]
    found = aliased[0] if aliased else next(
        (key for text in names if (key := canonical_model(text, {}))), None)
    if found:
        return written.get("model") or names[0], found
    given = [f"{key} {shown(text)}" for key, text in written.items() if text]
    if not given:
        raise BadValue(keys[0], f"no {' or '.join(keys)}: the model served")
    raise BadValue(next(k for k in keys if written[k]),
                   f"unknown model ({', '.join(given)}): add it to data/item_aliases.yaml")


def _framework(values: dict[str, Any]) -> tuple[str, bool]:
    """(the framework, whether the point is disaggregated)."""
    written = label(values, "framework", what="the serving framework").lower()
    framework, disaggregated = _FRAMEWORKS.get(written, (written, False))
    return framework, disaggregated or bool(flag(values, "disagg"))


def _topology(values: dict[str, Any], published: bool) -> dict[str, Any]:
    """GPUs and parallelism: a multinode point's prefill and decode GPUs (tp/ep/dp of the
    decode workers, which make the output tokens); a single-node point's tp x pp x pcp GPUs.
    dp is tp with attention data parallelism (InferenceX runs --dp <tp>), else 1."""
    if flag(values, "is_multinode"):
        prefill = count(values, "num_prefill_gpu", what="a multinode point's prefill GPUs")
        decode = count(values, "num_decode_gpu", minimum=0,
                       what="a multinode point's decode GPUs")
        side = "decode" if decode else "prefill"
        tp = count(values, f"{side}_tp")
        return {"gpus": _gpus(prefill + decode), "tp": tp,
                "ep": count(values, f"{side}_ep", required=False),
                "dp": _dp(tp, flag(values, f"{side}_dp_attention")),
                "prefill_gpus": prefill, "decode_gpus": decode}
    if published:  # one node: the dashboard repeats tp and ep on both sides
        tp = count(values, "decode_tp")
        return {"gpus": tp, "tp": tp, "ep": count(values, "decode_ep", required=False),
                "dp": _dp(tp, flag(values, "decode_dp_attention")),
                "prefill_gpus": None, "decode_gpus": None}
    tp = count(values, "tp")
    pp = count(values, "pp", required=False) or 1
    pcp = count(values, "pcp_size", required=False) or 1
    return {"gpus": _gpus(tp * pp * pcp), "tp": tp, "ep": count(values, "ep", required=False),
            "dp": _dp(tp, flag(values, "dp_attention")), "prefill_gpus": None,
            "decode_gpus": None}


def _gpus(total: int) -> int:
    if total > INT32_MAX:
        raise BadValue("tp", f"{total} GPUs is not a plausible deployment")
    return total


def _dp(tp: int | None, attention: bool | None) -> int | None:
    return None if attention is None or tp is None else (tp if attention else 1)


def _figures(metrics: dict[str, Any], topology: dict[str, Any],
             published: bool) -> dict[str, float | None]:
    """Throughput and latencies (the medians); tok_s_per_gpu over all the point's GPUs."""
    def path(key: str) -> tuple[str, ...]:
        return ("metrics", key) if published else (key,)

    output = number(metrics, "output_tput_per_gpu", required=True,
                    path=path("output_tput_per_gpu"),
                    what="the output tokens/s per GPU (early artifacts give only the total "
                         "tput_per_gpu)")
    decode = topology["decode_gpus"]
    if decode:  # InferenceX divides a disaggregated point's output by its decode GPUs only
        output = output * decode / topology["gpus"]
    return {"tok_s_per_gpu": output,
            "total_tok_s_per_gpu": number(metrics, "tput_per_gpu", path=path("tput_per_gpu")),
            "tok_s_per_user": number(metrics, "median_intvty", path=path("median_intvty")),
            "ttft_s": number(metrics, "median_ttft", zero=True, path=path("median_ttft")),
            "tpot_s": number(metrics, "median_tpot", path=path("median_tpot"))}


def _image_tag(image: Any, published: bool) -> str | None:
    """The container image's tag ("vllm/vllm-openai-rocm:v0.21.0" -> "v0.21.0"): the version
    of the framework it ships. The published rows write '/' as '#'."""
    if not isinstance(image, str) or "@" in image:
        return None
    reference = image.replace("#", "/") if published else image
    repository, _, tag = reference.strip().rpartition(":")
    return tag if repository and tag and "/" not in tag else None
