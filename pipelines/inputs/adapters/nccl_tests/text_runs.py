"""The runs of nccl-tests text output: each results table the reader found becomes a Run, with its
collective (from the preamble, the command, the file name, or a legacy header's shape), its
topology (ranks, nodes, GPUs per node), its metadata, and notes on what the file leaves out."""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import replace
from pathlib import PurePath
from typing import Any

from pipelines.inputs.adapters.base import AdapterError, MeasurementRun, Parsed
from pipelines.inputs.adapters.guards import INT32_MAX, INT64_MAX
from pipelines.inputs.adapters.nccl_tests.common import (
    BINARY,
    FORMAT,
    Run,
    gpus_per_node,
    most_common,
    one_or_list,
    version_from_code,
)
from pipelines.inputs.adapters.nccl_tests.text_reader import Context, Table, TextReader

_SIZE_ARG = re.compile(r"^(\d+(?:\.\d+)?)([KMG]?)$", re.IGNORECASE)
_LAUNCHERS = ("mpirun", "mpiexec", "srun", "orterun", "jsrun", "aprun")
_WORD_SIZE = {"int8": 1, "uint8": 1, "char": 1, "f8e4m3": 1, "f8e5m2": 1, "half": 2,
              "float16": 2, "bfloat16": 2, "int32": 4, "uint32": 4, "int": 4, "float": 4,
              "float32": 4, "int64": 8, "uint64": 8, "double": 8, "float64": 8}


def read_text(name: str, text: str, parsed: Parsed) -> list[Run]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    reader = TextReader()
    for number, line in enumerate(lines, 1):
        reader.feed(number, line.rstrip("\r"))
    parsed.skipped_lines = reader.skipped
    parsed.notes += reader.notes
    if not reader.tables:
        raise AdapterError(None, "no nccl-tests results table (a header line naming size, time, "
                                 "algbw and busbw) in the file")
    if reader.relabelled:
        parsed.notes.append(f"Intel MPI rank labels removed from inside {reader.relabelled} "
                            "lines")
    if not reader.pending.empty:
        parsed.notes.append(f"the run starting at line {reader.pending.first_line} has no "
                            "results table")
    runs = []
    for table in reader.tables:
        parsed.rejected += table.rejected
        if not table.points:
            what = "no readable rows" if table.rejected else "no rows"
            parsed.notes.append(f"the results table at line {table.header.line} has {what}")
            continue
        runs.append(_text_run(name, table, parsed))
    if not runs and not parsed.rejected:
        raise AdapterError(reader.tables[0].header.line,
                           "the results table has no rows (the run stopped before its first size)")
    return runs


def _text_run(name: str, table: Table, parsed: Parsed) -> Run:
    context, header = table.context, table.header
    collective = _text_collective(name, table, parsed)
    points = [replace(p, collective=collective) for p in table.points]
    raw = {id(new): table.raw[id(old)] for old, new in zip(table.points, points, strict=True)}
    facts = _command_facts(context.command)
    ranks, nodes, per_node = _text_topology(context, facts, parsed, header.line)
    run = MeasurementRun(
        kind=FORMAT, item=None,
        started_at=table.timestamps[0] if table.timestamps else None,
        finished_at=table.timestamps[-1] if table.timestamps else None,
        ranks=ranks, nodes=nodes, gpus_per_node=per_node,
        device=most_common([d["name"] for d in context.devices]),
        nccl_version=context.nccl_version or version_from_code(context.library_code),
        collective=collective, metadata=_text_metadata(table, facts), points=points)
    result = Run(run, raw, header.names[header.sides[0].busbw],
                 context.program or (f"{collective}_perf" if collective != "unknown" else "run"))
    _check_complete(result, table, facts)
    if table.elided:
        parsed.notes.append(f"rows were elided ('...') at line(s) "
                            f"{', '.join(map(str, table.elided))}: the peak covers the rows shown")
    if not table.closed:
        parsed.notes.append(f"the results table at line {header.line} has no footer: the run "
                            "may have stopped early")
    if context.json_output:
        parsed.notes.append(f"the run also wrote {context.json_output} (-J): that JSON carries "
                            "the same results with the run's date")
    return result


def _text_collective(name: str, table: Table, parsed: Parsed) -> str:
    """The test's collective: the preamble, the command, the file name, else the header."""
    context = table.context
    for text in (context.program, context.command):
        if text and (match := BINARY.search(f" {text}")):
            return match.group("name")
    if match := BINARY.search(" " + PurePath(name).name.replace(".", " ")):
        parsed.notes.append(f"collective {match.group('name')} taken from the file name")
        return match.group("name")
    if table.header.legacy:
        return _collective_from_shape(table, parsed)
    parsed.notes.append(f"the run at line {table.header.line} does not name its collective "
                        "(no command line or preamble): collective 'unknown'")
    return "unknown"


def _collective_from_shape(table: Table, parsed: Parsed) -> str:
    """Legacy headers differ by collective: redop and root -> reduce; root -> broadcast;
    redop -> all_reduce or reduce_scatter (count = size / word, or size / (word x ranks))."""
    prefix, line = table.header.prefix, table.header.line
    if "root" in prefix:
        found = "reduce" if "redop" in prefix else "broadcast"
        parsed.notes.append(f"collective {found} inferred from the legacy header at line {line}")
        return found
    point = table.points[0]
    word = _WORD_SIZE.get(point.dtype)
    ratio = point.size_bytes / (point.count * word) if word and point.count else None
    if "redop" in prefix and ratio in (1, 1.0):
        parsed.notes.append(f"collective all_reduce inferred from the legacy header at line "
                            f"{line} (redop, no root) and count = size / {word} ({point.dtype})")
        return "all_reduce"
    shape = "redop, no root" if "redop" in prefix else "neither redop nor root"
    parsed.notes.append(f"the legacy header at line {line} ({shape}) fits several collectives "
                        "(all_gather, alltoall, reduce_scatter, sendrecv) and the file names none: "
                        "collective 'unknown'")
    return "unknown"


def _command_facts(command: str | None) -> dict[str, Any]:
    """What a command line says: launcher, processes, -g/-t, -e and NCCL_ALGO."""
    if not command:
        return {}
    tokens = command.split()
    binary = next((i for i, t in enumerate(tokens) if BINARY.search(f" {t}")), len(tokens))
    launcher = any(PurePath(t).name.startswith(_LAUNCHERS) for t in tokens[:binary])
    facts: dict[str, Any] = {"launcher": launcher}
    options = {"-np": "processes", "-n": "processes", "--np": "processes",
               "--ntasks": "processes"}
    facts |= _flag_values(tokens[:binary], options) if launcher else {"processes": 1}
    facts |= _flag_values(tokens[binary + 1:], {"-g": "nGpus", "--ngpus": "nGpus",
                                                  "-t": "nThread", "--nthreads": "nThread",
                                                  "-e": "maxBytes", "--maxbytes": "maxBytes"})
    if algo := re.search(r"NCCL_ALGO=(\S+)", command):
        facts["algorithm"] = algo.group(1)
    return facts


def _flag_values(tokens: list[str], flags: dict[str, str]) -> dict[str, int]:
    values = {}
    for flag, value in zip(tokens, tokens[1:], strict=False):
        if flag in flags and (number := _size_arg(value)) is not None:
            values[flags[flag]] = number
    return values


def _size_arg(text: str) -> int | None:
    """nccl-tests' size syntax: 8, 1250M, 8G (K/M/G are powers of 1024)."""
    match = _SIZE_ARG.match(text)
    if match is None:
        return None
    scale = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}[match.group(2).upper()]
    size = float(match.group(1)) * scale
    return int(size) if size <= INT64_MAX else None  # 1e400 is inf: no size at all


def _text_topology(context: Context, facts: dict[str, Any], parsed: Parsed, line: int
                   ) -> tuple[int | None, int | None, int | None]:
    """(ranks, nodes, GPUs per node): the device lines, else the parameters and command."""
    if context.devices:
        per_host = Counter(d["host"] for d in context.devices)
        return len(context.devices), len(per_host), gpus_per_node(per_host, parsed, line)
    params = {**{k: facts[k] for k in ("nThread", "nGpus") if k in facts}, **context.params}
    processes = facts.get("processes")
    if processes is None:
        return None, None, None
    factors = [params.get("nThread", 1), params.get("nGpus", 1)]
    ranks = processes * math.prod(f if isinstance(f, int) else 1 for f in factors)
    if not 0 < ranks <= INT32_MAX:
        parsed.notes.append(f"the run at line {line} gives {ranks} ranks (processes x nThread x "
                            "nGpus), not a plausible count: its topology is not recorded")
        return None, None, None
    if facts.get("launcher"):
        return ranks, None, None
    return ranks, 1, ranks  # one process without a launcher runs on one host


def _check_complete(result: Run, table: Table, facts: dict[str, Any]) -> None:
    """A run without footer that stopped at half its maxBytes or less: no large messages."""
    max_bytes = table.context.params.get("maxBytes", facts.get("maxBytes"))
    largest = max(p.size_bytes for p in table.points)
    if not table.closed and isinstance(max_bytes, int) and largest * 2 <= max_bytes:
        result.complete = False
        result.stopped_reason = (f"the run stopped at {largest} B (no footer), before its maxBytes "
                                 f"{max_bytes}: its peak busbw does not describe large messages")


def _text_metadata(table: Table, facts: dict[str, Any]) -> dict[str, Any]:
    context, header = table.context, table.header
    algorithms = [*context.algorithms]
    if facts.get("algorithm") and facts["algorithm"] not in algorithms:
        algorithms.insert(0, facts["algorithm"])
    metadata: dict[str, Any] = {
        "layout": "legacy" if header.legacy else "current",
        "header_line": header.line,
        "command": context.command,
        "parameters": context.params or None,
        "devices": context.devices or None,
        "nccl_tests_version": context.tests_version,
        "nccl_build": context.nccl_build,
        "algorithm": one_or_list(algorithms),
        "time_column": "cputime" if "cputime" in header.names else None,
        "ignored_columns": sorted(set(header.ignored)) or None,
        "legacy_error_max": max(table.errors) if table.errors else None,
        "json_output": context.json_output,
        "footer": table.closed,
        **table.footer,
    }
    return {key: value for key, value in metadata.items() if value is not None}
