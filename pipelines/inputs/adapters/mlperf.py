"""MLPerf adapter: system descriptions (`systems/*.json`, Training and Inference) and Training
result logs (`results/<system>/<benchmark>/result_N.txt`, the MLLOG stream).

A systems JSON is the submitter's own description of its system, published by MLCommons: its
counts, HBM capacity, NVLink bandwidth and NICs become status-S observations of one system item.
The file carries no date, so the round's publication date must come from `--as-of`.

A result log is one training run: `:::MLLOG {json}` events, with the time to train between
`run_start` and `run_stop`. It becomes a MeasurementRun; a `:::SYSJSON {json}` line in it (Training
v4.0 onward) is the systems JSON again and gives the same observations, dated by the run.

Numbers are kept as written: "81559 MiB" stays MiB and "80 GB" stays GB (pint converts later);
a rate's unit is never guessed, so "Gb/s" (bits) and "GB/s" (bytes) stay what the file says.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from pipelines.inputs.adapters.base import (
    AdapterError,
    AdapterOptions,
    MeasurementRun,
    Parsed,
    Rejected,
    decode,
    slug,
)
from pipelines.inputs.adapters.guards import INT32_MAX, json_depth_problem, load_json, whole
from pipelines.inputs.limits import DEFAULT_LIMITS, InputLimits
from pipelines.inputs.packs import ItemDecl, Pack, PackRow, SourceDecl

FORMAT_SYSTEM = "mlperf-system"
FORMAT_RESULT = "mlperf-result"

_SNIFF_BYTES = 64 * 1024
_KEY_MAX = 150
_MLLOG = ":::MLLOG"
_SYSJSON = ":::SYSJSON"
_SUBMISSION_KEYS = ("submission_benchmark", "submission_division", "submission_org",
                    "submission_platform", "submission_status")
# What MLPerf files write for "not given": no observation, and no complaint either.
_NOT_GIVEN = {"", "n/a", "na", "none", "-", "unknown", "tbd"}
_NO_AS_OF = ("an MLPerf systems JSON carries no date; ingest it with --as-of <round publication "
             "date, e.g. 2024-06-12 for Training v4.0>")
_NVLINK_BIDIR = "NVIDIA quotes NVLink bandwidth per GPU as the total of both directions"

_COUNT = re.compile(r"\s*(\d+)\s*")
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(TiB|GiB|MiB|TB|GB|MB)(?![A-Za-z])")
# A data rate with its unit as written; the unit's b/B decides bits or bytes, never a guess.
_RATE = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?)\s*"
    r"(?P<unit>[KMGT](?:b|B)/s(?:ec)?|[KMGT](?:bps|Bps)|[KMGT]bit/s|[KMGT]b[Ee](?![A-Za-z]))")
_NIC_COUNT = re.compile(r"(?<![\w.])(\d+)\s*[xX×](?=\s|\d)")
_NIC_GROUPS = re.compile(r"[,;+]")
# time_ms beyond this is past year 9999 (or before year 1): not a time datetime can hold.
_MAX_TIME_MS = 253_402_300_799_000 - 24 * 3600 * 1000
_MIN_TIME_MS = -62_135_596_800_000 + 24 * 3600 * 1000


# ---------------------------------------------------------------- sniffing and dispatch


def detect(name: str, data: bytes) -> str | None:
    """"mlperf-system" for a systems JSON, "mlperf-result" for an MLLOG stream, else None."""
    head = data[:_SNIFF_BYTES].decode("utf-8-sig", errors="replace")
    if head.lstrip().startswith("{"):
        return FORMAT_SYSTEM if _looks_like_system(data, head) else None
    return FORMAT_RESULT if _MLLOG in head else None


def _looks_like_system(data: bytes, head: str, limits: InputLimits = DEFAULT_LIMITS) -> bool:
    """A top-level `system_name` and a node or accelerator count (a regex when JSON is broken
    or nested too deep to parse, so that such a systems JSON still reaches parse() and is
    reported with its line)."""
    try:
        document = load_json(data.decode("utf-8-sig"), limits.json_max_depth, "")
    except (UnicodeDecodeError, AdapterError):
        return bool(re.search(r'"system_name"\s*:', head)
                    and re.search(r'"(accelerators_per_node|number_of_nodes)"\s*:', head))
    return (isinstance(document, dict) and "system_name" in document
            and ("accelerators_per_node" in document or "number_of_nodes" in document))


def parse(name: str, data: bytes, options: AdapterOptions) -> Parsed:
    """Read a systems JSON or a result log (the kind detect() names)."""
    kind = detect(name, data)
    if kind is None and _MLLOG.encode() in data:  # MLLOG events only after a long preamble
        kind = FORMAT_RESULT
    if kind == FORMAT_SYSTEM:
        return _parse_system_file(data, options)
    if kind == FORMAT_RESULT:
        return _parse_result_log(name, data, options)
    raise AdapterError(None, "not an MLPerf file: expected a systems JSON (an object with "
                             "system_name and accelerators_per_node or number_of_nodes) or a "
                             "result log (:::MLLOG lines)")


# ---------------------------------------------------------------- keys and declarations


def _key(text: str) -> str:
    return ("mlperf-" + slug(text))[:_KEY_MAX].rstrip("-")


def system_item_key(system_name: str, submitter: str, options: AdapterOptions) -> str:
    """The ledger item of an MLPerf system: its alias, else mlperf-<submitter>-<system>."""
    return options.aliases.get(system_name) or _key(f"{submitter} {system_name}")


@dataclass(frozen=True)
class _System:
    """Who describes which system, and the ledger keys its facts go to."""

    name: str
    submitter: str
    division: str
    item_key: str
    source_key: str

    @property
    def label(self) -> str:
        return f"MLPerf system {json.dumps(self.name, ensure_ascii=False)}, {self.submitter}"


def _system(document: dict[str, Any], options: AdapterOptions, fallback: dict[str, str]) -> _System:
    """The system a description names; `fallback` fills in what the result log says instead."""
    name = _text(document.get("system_name")) or fallback.get("platform", "")
    submitter = _text(document.get("submitter")) or fallback.get("org", "") or "unknown"
    division = _text(document.get("division")) or fallback.get("division", "") or "unknown"
    return _System(name=name, submitter=submitter, division=division,
                   item_key=system_item_key(name, submitter, options),
                   source_key=_key(f"{division} {submitter} {name}"))


def _declarations(system: _System) -> tuple[SourceDecl, ItemDecl]:
    source = SourceDecl(
        key=system.source_key, kind="vendor_press",
        title=f"MLPerf system description: {system.name} ({system.submitter}, {system.division})",
        publisher=f"MLCommons (submitter: {system.submitter})")
    item = ItemDecl(key=system.item_key, name=system.name, kind="system", vendor=system.submitter)
    return source, item


def _text(value: Any) -> str:
    return "" if value is None else str(value).strip()


# ---------------------------------------------------------------- system facts


@dataclass(frozen=True)
class _Fact:
    """One observation read from a system description, before it is placed and dated."""

    metric: str
    value: Any
    unit: str
    column: str
    quote: str
    value_kind: str = "reported"


@dataclass
class _Reading:
    facts: list[_Fact] = field(default_factory=list)
    bad: list[tuple[str, str]] = field(default_factory=list)  # (json key, reason)
    notes: list[str] = field(default_factory=list)


def _quote(key: str, raw: Any, system: _System, extra: str = "") -> str:
    written = json.dumps(raw, ensure_ascii=False)
    return f'"{key}": {written} ({system.label}){"; " + extra if extra else ""}'


def _given(raw: Any) -> bool:
    return raw is not None and not isinstance(raw, dict | list) and \
        _text(raw).lower() not in _NOT_GIVEN


def _read_system(document: dict[str, Any], system: _System) -> _Reading:
    """Every fact the description states; numeric fields that are not numbers go to `bad`."""
    reading = _Reading()
    nodes = _read_count(document, "number_of_nodes", "nodes_per_system", system, reading)
    gpus = _read_count(document, "accelerators_per_node", "gpus_per_node", system, reading)
    if nodes is not None and gpus is not None:
        reading.facts.append(_gpus_per_system(document, nodes, gpus, system))
    _read_memory(document, system, reading)
    _read_nvlink(document, system, reading)
    _read_nics(document, system, reading)
    return reading


def _read_count(document: dict[str, Any], key: str, metric: str, system: _System,
                reading: _Reading) -> int | None:
    raw = document.get(key)
    if not _given(raw):
        return None
    match = None if isinstance(raw, bool | float) else _COUNT.fullmatch(str(raw))
    if match is None or not match.group(1).isascii():
        reading.bad.append((key, f"{key} {raw!r} is not a whole number (expected e.g. \"8\")"))
        return None
    count = whole(match.group(1), INT32_MAX)
    if count is None:
        reading.bad.append((key, f"{key} {match.group(1)} is not a plausible count (at most "
                                 f"{INT32_MAX})"))
        return None
    reading.facts.append(_Fact(metric, match.group(1), "count", key, _quote(key, raw, system)))
    return count


def _gpus_per_system(document: dict[str, Any], nodes: int, gpus: int, system: _System) -> _Fact:
    arithmetic = (f"number_of_nodes {json.dumps(document['number_of_nodes'])} x "
                  f"accelerators_per_node {json.dumps(document['accelerators_per_node'])} "
                  f"= {nodes * gpus} GPUs")
    return _Fact("gpus_per_system", nodes * gpus, "count", "accelerators_per_node",
                 f"{arithmetic} ({system.label})", value_kind="derived")


def _read_memory(document: dict[str, Any], system: _System, reading: _Reading) -> None:
    key = "accelerator_memory_capacity"
    raw = document.get(key)
    if not _given(raw):
        return
    match = _SIZE.match(str(raw))
    if match is None:
        reading.bad.append((key, f"{key} {raw!r} is not a size in bytes "
                                 "(expected e.g. \"80 GB\" or \"81559 MiB\")"))
        return
    reading.facts.append(_Fact("hbm_capacity", match.group(1), match.group(2), key,
                               _quote(key, raw, system)))


def _read_nvlink(document: dict[str, Any], system: _System, reading: _Reading) -> None:
    """NVLink's per-GPU bandwidth, only when the text names NVLink (other fabrics do not say
    which direction their figure counts)."""
    key = "accelerator_interconnect"
    raw = document.get(key)
    rate = _rate(_text(raw)) if _given(raw) else None
    if rate is None:
        return
    if "nvlink" not in _text(raw).lower():
        reading.notes.append(f"{key} {raw!r} states a rate but not NVLink: not read, since "
                             "its direction (one way or both) is not known")
        return
    value, unit = rate
    extra = f"{_NVLINK_BIDIR} ({float(value) / 2:g} {unit} each way)"
    reading.facts.append(_Fact("scaleup_bw_per_gpu_bidir", value, unit, key,
                               _quote(key, raw, system, extra)))


def _rate(text: str) -> tuple[str, str] | None:
    """The first data rate in `text` as (number, unit), the unit spelt as pint reads it."""
    match = _RATE.search(text)
    if match is None:
        return None
    unit = match.group("unit")
    scale, rest = unit[0].replace("K", "k"), unit[1:]  # pint spells kilo "k"
    bits = rest in ("bps", "bit/s", "bE", "be") or rest.startswith("b/s")
    return match.group(1), scale + ("b/s" if bits else "B/s")


def _read_nics(document: dict[str, Any], system: _System, reading: _Reading) -> None:
    """NICs per node and their port rate, from the NIC count field or the networking text."""
    for key in ("host_network_card_count", "host_networking"):
        raw = document.get(key)
        if not _given(raw):
            continue
        group = _nic_group(_text(raw), key, reading)
        if group is None and key == "host_network_card_count" and _COUNT.fullmatch(_text(raw)):
            group = (_text(raw), None, _text(raw))  # a bare count: "2"
        if group is None:
            continue
        count, rate, text = group
        extra = "" if text == _text(raw) else f"read from {json.dumps(text.strip())}"
        reading.facts.append(_Fact("nics_per_node", count, "count", key,
                                   _quote(key, raw, system, extra)))
        if rate is not None:
            reading.facts.append(_Fact("port_rate", rate[0], rate[1], key,
                                       _quote(key, raw, system, extra)))
        return


_NicGroup = tuple[str, tuple[str, str] | None, str]  # (count, (rate, unit) or None, its text)


def _nic_group(text: str, key: str, reading: _Reading) -> _NicGroup | None:
    """The NIC group to read: the one labelled "Compute", else the only group with a count
    ("4x ConnectX-7 IB NDR 400 Gb/s"); several unlabelled groups are not guessed between."""
    groups: list[_NicGroup] = []
    for part in _NIC_GROUPS.split(text):
        count = _NIC_COUNT.search(part)
        if count is not None:
            groups.append((count.group(1), _rate(part[count.end():]), part))
    compute = [g for g in groups if "compute" in g[2].split(":")[0].lower()]
    if len(compute) == 1:
        return compute[0]
    if len(groups) == 1:
        return groups[0]
    if len(groups) > 1:
        reading.notes.append(f"{key} {text!r} lists {len(groups)} NIC groups and none is "
                             "labelled Compute: nics_per_node and port_rate not read")
    return None


# ---------------------------------------------------------------- facts into rows


@dataclass(frozen=True)
class _Where:
    line: int | None
    raw_text: str


def _place(reading: _Reading, system: _System, as_of: date | None, where: Callable[[str], _Where],
           parsed: Parsed, no_date: str) -> None:
    """Append the reading's rows (or, undated, its rejections) and declarations to `parsed`."""
    for key, reason in reading.bad:
        spot = where(key)
        parsed.rejected.append(Rejected(spot.line, key, reason, spot.raw_text))
    parsed.notes.extend(reading.notes)
    for fact in reading.facts:
        spot = where(fact.column)
        if as_of is None:
            parsed.rejected.append(Rejected(spot.line, "as_of", no_date, spot.raw_text))
            continue
        parsed.pack.rows.append(PackRow(spot.line, _fields(fact, system, as_of), spot.raw_text,
                                        column=fact.column))
    if any(row.fields["source"] == system.source_key for row in parsed.pack.rows):
        source, item = _declarations(system)
        parsed.pack.sources.append(source)
        _declare_item(parsed.pack, item)


def _fields(fact: _Fact, system: _System, as_of: date) -> dict[str, Any]:
    return {"source": system.source_key, "item": system.item_key, "metric": fact.metric,
            "value": fact.value, "unit": fact.unit, "as_of": as_of.isoformat(),
            "status": "S", "value_kind": fact.value_kind, "quote": fact.quote}


def _declare_item(pack: Pack, item: ItemDecl) -> None:
    if all(known.key != item.key for known in pack.items):
        pack.items.append(item)


# ---------------------------------------------------------------- systems JSON


def _parse_system_file(data: bytes, options: AdapterOptions) -> Parsed:
    text = decode(data)
    document = _load_object(text, options.limits)
    where = _key_locator(text)
    name = _text(document.get("system_name"))
    if not name:
        raise AdapterError(where("system_name").line, "system_name is empty: the systems JSON "
                                                      "must name the system it describes")
    system = _system(document, options, {})
    parsed = Parsed(format=FORMAT_SYSTEM, pack=Pack())
    _place(_read_system(document, system), system, options.as_of, where, parsed, _NO_AS_OF)
    return parsed


def _load_object(text: str, limits: InputLimits) -> dict[str, Any]:
    document = load_json(text, limits.json_max_depth, "the systems JSON")
    if not isinstance(document, dict):
        raise AdapterError(1, "expected a JSON object describing one system")
    return document


def _key_locator(text: str) -> Callable[[str], _Where]:
    """Where a top-level key sits in the file: its line number and that line's text."""
    lines = text.splitlines()

    def where(key: str) -> _Where:
        match = re.search(r'"' + re.escape(key) + r'"\s*:', text)
        if match is None:
            return _Where(None, "")
        number = text.count("\n", 0, match.start()) + 1
        return _Where(number, lines[number - 1].strip())
    return where


# ---------------------------------------------------------------- result logs


@dataclass
class _Event:
    line: int
    raw_text: str
    body: dict[str, Any]

    @property
    def metadata(self) -> dict[str, Any]:
        metadata = self.body.get("metadata")
        return metadata if isinstance(metadata, dict) else {}

    @property
    def time_ms(self) -> float | None:
        """Milliseconds since 1970, when a number within datetime's years (NaN, inf or 1e300
        is no time)."""
        value = self.body.get("time_ms")
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return float(value) if ok and _MIN_TIME_MS <= value <= _MAX_TIME_MS else None


@dataclass
class _Log:
    """What a result log says, line by line."""

    events: list[_Event] = field(default_factory=list)
    submission: dict[str, str] = field(default_factory=dict)
    run_start: _Event | None = None
    run_stop: _Event | None = None
    sysjson: _Event | None = None
    last_line: int = 0
    last_text: str = ""


def _parse_result_log(name: str, data: bytes, options: AdapterOptions) -> Parsed:
    parsed = Parsed(format=FORMAT_RESULT, pack=Pack())
    log = _read_log(data.decode("utf-8-sig", errors="replace"), parsed, options.limits)
    if log.events:
        parsed.runs.append(_run(name, log, options, parsed))
    elif not parsed.rejected:
        raise AdapterError(None, "no :::MLLOG lines: not an MLPerf result log")
    else:  # every event was unreadable: its lines are the rejections, there is no run
        parsed.notes.append("no readable :::MLLOG event: no run recorded")
    return parsed


def _read_log(text: str, parsed: Parsed, limits: InputLimits) -> _Log:
    log = _Log()
    lines = text.split("\n")  # not splitlines(): \x1c or U+2028 would shift the line numbers
    if lines[-1] == "":
        lines.pop()
    for number, line in enumerate((line.removesuffix("\r") for line in lines), start=1):
        log.last_line, log.last_text = number, line
        if _MLLOG in line:
            _read_event(number, line, log, parsed, limits)
        elif _SYSJSON in line:
            _read_sysjson(number, line, log, parsed, limits)
        elif line.strip():
            parsed.skipped_lines += 1  # shell echo, framework output: not results
    return log


class _TooDeep(ValueError):
    """JSON nested deeper than the limit: refused before parsing."""


def _json_after(marker: str, line: str, limits: InputLimits) -> Any:
    """The JSON after the marker; a prefix before it (rank tag, timestamp) is allowed.
    ValueError when it is not JSON or a number in it is too long; _TooDeep when it nests
    deeper than the limit."""
    text = line[line.index(marker) + len(marker):].strip()
    problem = json_depth_problem(text, limits.json_max_depth)
    if problem is not None:
        raise _TooDeep(problem[1])
    try:
        return json.loads(text)
    except RecursionError as exc:  # only when the depth limit is set beyond Python's own
        raise _TooDeep("JSON nested too deep for Python to read") from exc


# marker -> (rejection field, what the JSON is, the hint when it does not parse, its shape)
_MARKED = {_MLLOG: ("row", "the :::MLLOG event", "; expected :::MLLOG {...}",
                    'an object with a "key"'),
           _SYSJSON: ("SYSJSON", "the :::SYSJSON system description", "", "a JSON object")}


def _json_object(number: int, line: str, marker: str, parsed: Parsed,
                 limits: InputLimits) -> dict[str, Any] | None:
    """The JSON object after `marker`, or None with the line rejected saying why."""
    field, what, hint, shape = _MARKED[marker]
    try:
        body = _json_after(marker, line, limits)
    except _TooDeep as exc:
        parsed.rejected.append(Rejected(number, field, f"{what}: {exc}", line))
        return None
    except ValueError as exc:
        parsed.rejected.append(Rejected(number, field, f"{what} is not valid JSON ({exc}){hint}",
                                        line))
        return None
    if not isinstance(body, dict):
        parsed.rejected.append(Rejected(number, field, f"{what} is not {shape}", line))
        return None
    return body


def _read_event(number: int, line: str, log: _Log, parsed: Parsed, limits: InputLimits) -> None:
    body = _json_object(number, line, _MLLOG, parsed, limits)
    if body is None:
        return
    if not isinstance(body.get("key"), str):
        parsed.rejected.append(Rejected(number, "row", "the :::MLLOG event is not an object "
                                                       "with a \"key\"", line))
        return
    event = _Event(number, line, body)
    log.events.append(event)
    key = body["key"]
    if key in _SUBMISSION_KEYS and key not in log.submission:  # every rank logs them: keep 1st
        log.submission[key] = _text(body.get("value"))
    elif key in ("run_start", "run_stop"):
        _read_run_mark(key, event, log, parsed)


def _read_run_mark(key: str, event: _Event, log: _Log, parsed: Parsed) -> None:
    """The first run_start, and the first run_stop after it (later ranks repeat them)."""
    if event.time_ms is None:
        parsed.rejected.append(Rejected(event.line, key, f"{key} has no time_ms that is a time "
                                        "(milliseconds since 1970), so the run cannot be timed",
                                        event.raw_text))
    elif key == "run_start" and log.run_start is None:
        log.run_start = event
    elif key == "run_stop" and log.run_stop is None:
        log.run_stop = event


def _read_sysjson(number: int, line: str, log: _Log, parsed: Parsed,
                  limits: InputLimits) -> None:
    body = _json_object(number, line, _SYSJSON, parsed, limits)
    if body is None:
        return
    if log.sysjson is None:
        log.sysjson = _Event(number, line, body)
    else:  # logs repeat it (once per launcher); the first is the one read
        parsed.skipped_lines += 1
        same = body == log.sysjson.body
        parsed.notes.append(f":::SYSJSON at line {number} "
                            f"{'repeats' if same else 'differs from'} the one at line "
                            f"{log.sysjson.line}: {'skipped' if same else 'ignored'}")


def _run(name: str, log: _Log, options: AdapterOptions, parsed: Parsed) -> MeasurementRun:
    submission = {k.removeprefix("submission_"): v for k, v in log.submission.items()}
    system = _run_system(log, options, submission)
    status = _outcome(log, parsed)
    start, stop = log.run_start, log.run_stop
    duration = None
    if start is not None and stop is not None:
        duration = (stop.time_ms - start.time_ms) / 1000
    hardware = _run_hardware(log.sysjson.body) if log.sysjson is not None else {}
    if system is not None:
        if log.sysjson is not None:
            _sysjson_observations(log, system, options, parsed)
        _declare_item(parsed.pack, _declarations(system)[1])
    return MeasurementRun(
        kind="mlperf-result",
        item=system.item_key if system is not None else options.item,
        started_at=_utc(start), finished_at=_utc(stop), duration_s=duration,
        benchmark=submission.get("benchmark") or None,
        metadata=_run_metadata(name, log, submission, status, system),
        **hardware,
    )


def _run_system(log: _Log, options: AdapterOptions, submission: dict[str, str]) -> _System | None:
    """The system run on: SYSJSON's system_name, else submission_platform; None if neither."""
    document = log.sysjson.body if log.sysjson is not None else {}
    if not _text(document.get("system_name")) and not submission.get("platform"):
        return None
    return _system(document, options, submission)


def _outcome(log: _Log, parsed: Parsed) -> str:
    """success | aborted | incomplete, rejecting what makes the log unusable as a result."""
    if log.run_start is None:
        parsed.rejected.append(Rejected(log.last_line, "run_start", "no run_start: the log "
                                        "never started the timed run", log.last_text))
        return "incomplete"
    if log.run_stop is None:
        parsed.rejected.append(Rejected(log.last_line, "run_stop", "no run_stop: the log is "
                                        "truncated, so it has no time to train", log.last_text))
        return "incomplete"
    written = _text(log.run_stop.metadata.get("status"))
    if written == "success":
        return "success"
    parsed.notes.append(f"run_stop at line {log.run_stop.line} has status {written or 'none'!r}:"
                        " the run did not reach its quality target, so its duration is not a "
                        "valid time to train")
    return "aborted"


def _utc(event: _Event | None) -> datetime | None:
    if event is None or event.time_ms is None:
        return None
    return datetime.fromtimestamp(event.time_ms / 1000, tz=UTC)


def _run_hardware(document: dict[str, Any]) -> dict[str, Any]:
    """MeasurementRun fields the SYSJSON fills: nodes, GPUs per node, device, NCCL version."""
    def count(key: str) -> int | None:
        raw = document.get(key)
        match = None if isinstance(raw, bool | float) or raw is None else \
            _COUNT.fullmatch(str(raw))
        return whole(match.group(1), INT32_MAX) if match else None  # an Integer column
    stack = document.get("other_software_stack")
    nccl = stack.get("nccl_version") if isinstance(stack, dict) else None
    return {"nodes": count("number_of_nodes"), "gpus_per_node": count("accelerators_per_node"),
            "device": _text(document.get("accelerator_model_name")) or None,
            "nccl_version": _text(nccl) or None}


def _run_metadata(name: str, log: _Log, submission: dict[str, str], status: str,
                  system: _System | None) -> dict[str, Any]:
    stop_status = log.run_stop.metadata.get("status") if log.run_stop else None
    metadata: dict[str, Any] = {
        "division": submission.get("division"), "org": submission.get("org"),
        "platform": submission.get("platform"), "submission_status": submission.get("status"),
        "status": status, "run_stop_status": stop_status, "result_file": name,
        "first_line": log.events[0].line if log.events else None,
        "last_line": log.events[-1].line if log.events else None,
        "mllog_events": len(log.events),
        "run_start_line": log.run_start.line if log.run_start else None,
        "run_stop_line": log.run_stop.line if log.run_stop else None,
    }
    if log.sysjson is not None and system is not None:
        metadata["system_name"] = system.name
        metadata["sysjson_line"] = log.sysjson.line
    return metadata


def _sysjson_observations(log: _Log, system: _System, options: AdapterOptions,
                          parsed: Parsed) -> None:
    """The SYSJSON's facts, dated by the run (run_start, UTC), else by --as-of."""
    started = _utc(log.run_start)
    as_of = started.date() if started is not None else options.as_of
    event = log.sysjson
    spot = _Where(event.line, event.raw_text)
    no_date = ("the log has no run_start to date its :::SYSJSON; ingest it with --as-of "
               "<run date>")
    _place(_read_system(event.body, system), system, as_of, lambda _key: spot, parsed, no_date)
