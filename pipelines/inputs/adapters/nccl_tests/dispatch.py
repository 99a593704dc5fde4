"""Sniffing and dispatch for nccl-tests output: `detect` tells nccl-tests text or -J JSON by its
content; `parse` hands the file to the JSON or the text reader, and each run they find to the
summary, gathering runs, rows, rejects and notes in one Parsed."""

from __future__ import annotations

import hashlib
import re

from pipelines.inputs.adapters.base import AdapterError, AdapterOptions, Parsed
from pipelines.inputs.adapters.nccl_tests.common import FORMAT
from pipelines.inputs.adapters.nccl_tests.header import parse_header
from pipelines.inputs.adapters.nccl_tests.json_output import read_json
from pipelines.inputs.adapters.nccl_tests.summary import summarise
from pipelines.inputs.adapters.nccl_tests.text_reader import DEVICE, PARAMS, TESTS_VERSION, unlabel
from pipelines.inputs.adapters.nccl_tests.text_runs import read_text
from pipelines.inputs.packs import Pack

_SNIFF_BYTES = 64 * 1024


def detect(name: str, data: bytes) -> str | None:
    """'nccl-tests' for nccl-tests text output or -J JSON, by content; else None."""
    head = data[:_SNIFF_BYTES].decode("utf-8", "replace").lstrip("\ufeff \t\r\n")
    if head.startswith("{"):
        return FORMAT if _looks_like_json_run(head, data) else None
    for line in head.splitlines():
        text = unlabel(line)[0].strip()
        comment = text.lstrip("#").strip()
        if (PARAMS.match(comment) or DEVICE.match(comment) or TESTS_VERSION.match(comment)
                or parse_header(text, 0) is not None):
            return FORMAT
    return None


def _looks_like_json_run(head: str, data: bytes) -> bool:
    """A `results` list plus a key only nccl-tests writes (nccl_version, nthreads, device_info)."""
    return (re.search(rb'"results"\s*:\s*\[', data) is not None
            and re.search(r'"(?:nccl_version|nthreads|device_info)"\s*:', head) is not None)


def parse(name: str, data: bytes, options: AdapterOptions) -> Parsed:
    """Read one nccl-tests file: the JSON when it is JSON, else the text."""
    if not data.strip():
        raise AdapterError(None, "empty file")
    text = data.decode("utf-8", "replace").lstrip("\ufeff")
    parsed = Parsed(format=FORMAT, pack=Pack())
    if "\ufffd" in text:
        parsed.notes.append("bytes that are not UTF-8 were replaced by U+FFFD")
    if text.lstrip().startswith("{"):
        runs = read_json(text, parsed, options.limits)
    else:
        runs = read_text(name, text, parsed)
    source_key = f"nccl-tests-{hashlib.sha256(data).hexdigest()[:12]}"
    for index, run in enumerate(runs):
        key = source_key if index == 0 else f"{source_key}-{index + 1}"
        parsed.runs.append(summarise(run, key, options, parsed))
    return parsed
