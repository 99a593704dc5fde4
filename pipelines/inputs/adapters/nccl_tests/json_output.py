"""nccl-tests' -J JSON: the document's `results` read into one Run (each element found again in the
text for its line and quote), with the topology, times and metadata its `config`, `devices` and
`env` give; an element that is not a measurement is a Rejected."""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import replace
from datetime import datetime
from typing import Any

from pipelines.inputs.adapters.base import AdapterError, MeasurementRun, NcclPoint, Parsed, Rejected
from pipelines.inputs.adapters.guards import INT32_MAX, INT64_MAX, load_json
from pipelines.inputs.adapters.nccl_tests.common import (
    BINARY,
    FORMAT,
    TIME_FORMAT,
    BadCell,
    Run,
    gpus_per_node,
    most_common,
    one_or_list,
    root_rank,
    version_from_code,
    zoned,
)
from pipelines.inputs.limits import InputLimits


def read_json(text: str, parsed: Parsed, limits: InputLimits) -> list[Run]:
    document = load_json(text, limits.json_max_depth, "the nccl-tests -J JSON",
                         " (a run that stopped early leaves its -J file unclosed)")
    if not isinstance(document, dict) or not isinstance(document.get("results"), list):
        raise AdapterError(1, "no `results` list: not nccl-tests -J output")
    config = document.get("config") if isinstance(document.get("config"), dict) else {}
    listed = config.get("devices") or document.get("devices")
    devices = [d for d in listed if isinstance(d, dict)] if isinstance(listed, list) else []
    collective = _json_collective(document.get("args"), parsed)
    places = _element_places(text, document["results"])
    points, raw = [], {}
    for result, (line, raw_text) in zip(document["results"], places, strict=True):
        try:
            point = replace(_json_point(result, line), collective=collective)
        except BadCell as bad:
            parsed.rejected.append(Rejected(line, bad.column, bad.reason, raw_text))
            continue
        points.append(point)
        raw[id(point)] = raw_text
    if not points:
        if parsed.rejected:
            return []
        raise AdapterError(1, "the `results` list is empty (the run stopped before its first size)")
    return [_json_run(document, config, devices, collective, points, raw, parsed)]


def _element_places(text: str, results: list[Any]) -> list[tuple[int | None, str]]:
    """(line, text) of each `results` element, found by decoding the list again in place."""
    fallback = [(None, json.dumps(r)) for r in results]
    match = re.search(r'"results"\s*:\s*\[', text)
    if match is None:
        return fallback
    decoder, position, places = json.JSONDecoder(), match.end(), []
    for expected in results:
        while position < len(text) and text[position] in " \t\r\n,":
            position += 1
        try:
            value, end = decoder.raw_decode(text, position)
        except json.JSONDecodeError:
            return fallback
        if value != expected:  # `"results":[` seen inside a string: keep the safe answer
            return fallback
        places.append((text.count("\n", 0, position) + 1, text[position:end]))
        position = end
    return places


def _json_collective(args: Any, parsed: Parsed) -> str:
    if isinstance(args, list) and args and (match := BINARY.search(f" {args[0]}")):
        return match.group("name")
    parsed.notes.append("the JSON's args do not name a *_perf binary: collective 'unknown'")
    return "unknown"


def _json_point(result: Any, line: int | None) -> NcclPoint:
    if not isinstance(result, dict):
        raise BadCell("results", f"a results element is {type(result).__name__}, not an object")
    oop = result.get("out_of_place")
    if not isinstance(oop, dict):
        raise BadCell("out_of_place", "no out-of-place measurement (null: a trace replay "
                                      "writes the in-place side only)")
    ip = result.get("in_place")
    measured = [_json_side(oop, "out_of_place")]
    measured.append(_json_side(ip, "in_place") if isinstance(ip, dict) else (None,) * 4)
    redop = result.get("redop")
    return NcclPoint(
        line=line, collective="", size_bytes=_json_whole(result, "size"),
        count=_json_whole(result, "count"), dtype=str(result.get("type") or ""),
        redop=None if redop in (None, "none") else str(redop),
        root=root_rank(str(result.get("root", "-1")).strip(), "root"),
        oop_time_us=measured[0][0], oop_algbw=measured[0][1], oop_busbw=measured[0][2],
        oop_wrong=measured[0][3], ip_time_us=measured[1][0], ip_algbw=measured[1][1],
        ip_busbw=measured[1][2], ip_wrong=measured[1][3])


def _json_side(side: dict[str, Any], key: str) -> tuple[float, float, float, int | None]:
    time_key = "cpu_time" if "cpu_time" in side else "time"
    values = [_json_number(side.get(k), f"{key}.{k}") for k in (time_key, "alg_bw", "bus_bw")]
    wrong = side.get("nwrong")
    if wrong is not None:
        number = _json_number(wrong, f"{key}.nwrong")
        if number != int(number):
            raise BadCell(f"{key}.nwrong", f"{key}.nwrong {wrong!r} is not a whole count")
        if number > INT64_MAX:
            raise BadCell(f"{key}.nwrong", f"{key}.nwrong {wrong!r} is beyond a 64-bit integer")
        wrong = int(number)
    return values[0], values[1], values[2], wrong


def _json_number(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise BadCell(name, f"{name} {value!r} is not a finite number")
    if value < 0:
        raise BadCell(name, f"{name} {value!r} is negative")
    return float(value)


def _json_whole(result: dict[str, Any], key: str) -> int:
    value = result.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise BadCell(key, f"{key} {value!r} is not a whole number")
    if value > INT64_MAX:
        raise BadCell(key, f"{key} {value} is beyond a 64-bit integer (at most {INT64_MAX})")
    return value


def _json_run(document: dict[str, Any], config: dict[str, Any], devices: list[dict[str, Any]],
              collective: str, points: list[NcclPoint], raw: dict[int, str],
              parsed: Parsed) -> Run:
    # One device entry per process (util.cu parses the first line of each process's block).
    per_process = _positive(config.get("nthreads")) * _positive(config.get("ngpus"))
    per_host = Counter(str(d.get("hostname")) for d in devices)
    ranks = per_process * len(devices) if devices else None
    nodes = len(per_host) or None
    per_node = per_process * gpus_per_node(per_host, parsed, 1) if devices else None
    if (ranks or 0) > INT32_MAX or (per_node or 0) > INT32_MAX:
        parsed.notes.append(f"config nthreads x ngpus ({per_process}) is not a plausible rank "
                            "count: ranks and GPUs per node not recorded")
        ranks = per_node = None
    run = MeasurementRun(
        kind=FORMAT, item=None,
        started_at=_json_time(document.get("start_time"), "start_time", parsed),
        finished_at=_json_time(document.get("end_time"), "end_time", parsed),
        ranks=ranks, nodes=nodes, gpus_per_node=per_node,
        device=most_common([str(d.get("device_info")) for d in devices if d.get("device_info")]),
        nccl_version=version_from_code(document.get("nccl_version")), collective=collective,
        metadata=_json_metadata(document, config, devices), points=points)
    label = f"{collective}_perf" if collective != "unknown" else "run"
    return Run(run, raw, "bus_bw", label)


def _positive(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 1


def _json_time(value: Any, key: str, parsed: Parsed) -> datetime | None:
    if value is None:
        return None
    try:
        return zoned(datetime.strptime(str(value), TIME_FORMAT))
    except ValueError:
        parsed.notes.append(f"{key} {value!r} is not a time (YYYY-MM-DD HH:MM:SS): ignored")
        return None


def _json_metadata(document: dict[str, Any], config: dict[str, Any],
                   devices: list[dict[str, Any]]) -> dict[str, Any]:
    args = document.get("args")
    # Only NCCL's settings: the environment can hold anything, secrets included.
    listed = document.get("env")
    env = [e for e in listed if isinstance(e, str) and e.startswith("NCCL_")] \
        if isinstance(listed, list) else []
    algorithms = [e.split("=", 1)[1] for e in env if e.startswith("NCCL_ALGO=")]
    for result in document["results"]:
        tuning = result.get("tuning") if isinstance(result, dict) else None
        algo = tuning.get("algo") if isinstance(tuning, dict) else None
        if algo and algo not in algorithms:
            algorithms.append(str(algo))
    metadata: dict[str, Any] = {
        "layout": "json",
        "json_version": document.get("version"),
        "command": " ".join(map(str, args)) if isinstance(args, list) else None,
        "parameters": {k: v for k, v in config.items() if k != "devices"} or None,
        "devices": [{"rank": d.get("rank"), "group": d.get("group"), "pid": d.get("pid"),
                     "host": d.get("hostname"), "device": d.get("device"),
                     "bus_id": d.get("device_hex"), "name": d.get("device_info")}
                    for d in devices] or None,
        "nccl_env": env or None,
        "algorithm": one_or_list(algorithms),
        "errors": document.get("errors") or None,
    }
    bounds, average = document.get("out_of_bounds"), document.get("average_bus_bandwidth")
    if isinstance(bounds, dict):
        metadata["out_of_bounds_values"] = bounds.get("count")
        metadata["out_of_bounds_ok"] = str(bounds.get("okay")).lower() == "true"
    if isinstance(average, dict):
        metadata["avg_bus_bandwidth"] = average.get("bandwidth")
        metadata["avg_bus_bandwidth_check"] = average.get("okay")
    metadata["footer"] = isinstance(bounds, dict)
    return {key: value for key, value in metadata.items() if value is not None}
