"""The briefing's serving lines: each serving scenario's stored answer for the version."""

from __future__ import annotations

import json
from typing import Any

from db.schema import Scenario, ServingResult
from pipelines.briefing.results import cited
from reports.context import ServingLine, ServingOptionLine


def serving_line(result: ServingResult, scenario: Scenario) -> ServingLine:
    figures = json.loads(result.result_json)
    band = figures.get("band") or {}
    return ServingLine(
        name=scenario.name, model=figures["model"], precision=figures["precision"],
        input_tokens=figures["request"]["input_tokens"],
        output_tokens=figures["request"]["output_tokens"],
        target_tok_s_per_user=figures["target_tok_s_per_user"],
        options=tuple(_option(o) for o in figures["options"]),
        cheaper=figures.get("cheaper_option"), dearer=figures.get("dearer_option"),
        saving=figures.get("margin"), saving_p10=band.get("p10"), saving_p90=band.get("p90"),
        too_close=figures.get("call") == "too close to call")


def _option(option: dict[str, Any]) -> ServingOptionLine:
    at = option.get("at_target") or {}
    return ServingOptionLine(
        name=option["name"], source=option["source"],
        usd_per_gpu_hour=option["usd_per_gpu_hour"], price_source=option["price_source"],
        curve=tuple((p["concurrency"], p["tok_s_per_gpu"], p["tok_s_per_user"])
                    for p in option["curve"]),
        tok_s_per_gpu=at.get("tok_s_per_gpu"), usd_per_mtok=at.get("usd_per_mtok_out"),
        band_basis=option["band"]["basis"],
        # Named by figure and item ("hbm_bw (b200)"): options on one GPU share the entries.
        inputs=tuple(cited(f) for f in option.get("hardware", [])))
