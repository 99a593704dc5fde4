"""The briefing's model sections: C2C and TCO results of a version, moves, validation."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from models.fidelity import validation_reports
from models.records import C2CRecord, TcoOption, TcoRecord
from models.trends import result_moves
from pipelines.inputs.measurements import (
    shipped_serving_phases,
    shipped_serving_points,
    shipped_training_runs,
)
from reports.context import (
    Cited,
    ResultMove,
    ScenarioLine,
    SourceLine,
    TcoLine,
    ValidationLine,
)
from reports.formatting import format_usd


def scenario_line(record: C2CRecord) -> ScenarioLine:
    layout = layout_text(record)
    domain = record.spec("domain_gpus")
    domain_gpus = domain.get("value") if domain else None
    return ScenarioLine(
        name=record.scenario, workload=_workload(record.model, record.parallel),
        cluster=_cluster(record.cluster), gpus=record.gpus, c2c=record.c2c,
        c2c_scale_up=record.c2c_scale_up, c2c_scale_out=record.c2c_scale_out,
        c2c_class=record.c2c_class, recommended_fabric=record.recommended_fabric,
        mfu=record.mfu, time_to_train_days=record.time_to_train_days,
        inputs=tuple(cited(dict(spec)) for spec in record.specs),
        domain_gpus=int(domain_gpus) if isinstance(domain_gpus, int | float) else None,
        title=job_title(record), layout=layout[0], layout_note=layout[1],
        layout_searched=record.layout is not None and record.layout.mode == "search",
        c2c_link=record.c2c_link)


def job_title(record: C2CRecord) -> str:
    """The job as a buyer names it: "GPT-3 175B (175B parameters), 300B tokens"; a model
    without a name is named by its shape."""
    name = record.model_name or _workload(record.model, {}).split(";")[0]
    size = f" ({_count(record.parameters)} parameters)" if record.parameters else ""
    tokens = f", {_count(record.tokens)} tokens" if record.tokens else ""
    return f"{name}{size}{tokens}"


def _count(value: float) -> str:
    """1.01e12 -> "1.01T", 4.5e11 -> "450B": three significant figures."""
    for scale, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M")):
        if value >= scale:
            return f"{value / scale:.3g}{suffix}"
    return f"{value:,.0f}"


def layout_text(record: C2CRecord) -> tuple[str, str]:
    """The layout a result is for ("TP8 x PP8 x DP48") and how it was chosen ("best of 222
    that fit", "pinned")."""
    p = record.parallel
    dims = " x ".join(f"{k.upper()}{p[k]}" for k in ("tp", "pp", "cp", "ep", "dp")
                      if p.get(k, 1) != 1 or k == "dp")
    zero = {3: ", ZeRO-3"}.get(int(p.get("zero") or 1), "")
    choice = record.layout
    if choice is None or choice.mode != "search":
        return f"{dims}{zero}", "pinned"
    outside = "" if choice.covered else ", outside the calibration"
    how = f"best of {choice.fit:,} that fit" if choice.fit else "searched"
    return f"{dims}{zero}", f"{how}{outside}"


def tco_line(record: TcoRecord) -> TcoLine:
    break_even = record.ranges.get("break_even_speedup") or {}
    speedup_band = record.ranges.get("speedup") or {}
    return TcoLine(
        name=record.scenario, scale_up_option=record.scale_up or "",
        scale_out_option=record.scale_out or "",
        break_even_speedup=record.break_even.value if record.break_even else math.nan,
        break_even_p10=break_even.get("p10"), break_even_p90=break_even.get("p90"),
        speedup=record.speedup.value if record.speedup else None,
        cheaper_option=record.cheaper_option,
        usd_per_gpu_hour=tuple((o.name, o.usd_per_gpu_hour) for o in record.options),
        inputs=tuple(cited(dict(i)) for i in record.inputs),
        speedup_p10=speedup_band.get("p10"), speedup_p90=speedup_band.get("p90"),
        call=record.verdict.call, settle_with=record.verdict.settle_with,
        capex_by_category=tuple((o.name, capex_text(o)) for o in record.options
                                if o.capex_items or o.capex_missing))


COLOCATION = "facility in colocation (its rent is opex)"


def capex_text(option: TcoOption) -> str:
    """An option's capex by category, as the TCO section prints it: each item with the
    categories it covers and its cost, the facility when it is rented, and the categories no
    item covers as "not in the ledger" (never as zero)."""
    parts = [f"{name} ({', '.join(categories) or 'no category'}) {format_usd(cost)}"
             for name, categories, cost in option.capex_items]
    if option.facility_in_colocation:
        parts.append(COLOCATION)
    if option.capex_missing:
        parts.append(f"not in the ledger: {', '.join(option.capex_missing)}")
    return "; ".join(parts)


def ledger_pairs(figures: Iterable[Mapping[str, Any]]) -> set[tuple[str, str]]:
    """The (item, metric) pairs of the ledger among the figures a result read (a C2C
    estimate's specs, a TCO result's inputs): the values its decision rests on."""
    return {(f["item"], f["metric"]) for f in figures
            if isinstance(f, Mapping) and f.get("item") and f.get("metric")}


def _workload(model: Mapping[str, Any], parallel: Mapping[str, Any]) -> str:
    shape = f"{model.get('layers')} layers x {model.get('hidden')} hidden"
    if model.get("experts"):
        shape += f", {model['experts']} experts (top-{model.get('top_k', 2)})"
    dims = " x ".join(f"{k.upper()}{parallel[k]}" for k in ("tp", "pp", "dp", "ep")
                      if parallel.get(k, 1) != 1) or "no parallelism"
    return f"{shape}; {dims}"


def _cluster(cluster: Mapping[str, Any]) -> str:
    up, out = cluster.get("scale_up", {}), cluster.get("scale_out", {})
    parts = [cluster.get("gpu", "inline GPU"),
             up.get("system") or up.get("item") or "inline scale-up",
             out.get("item") or "inline scale-out"]
    return " / ".join(str(p) for p in parts)


def cited(figure: dict[str, Any]) -> Cited:
    value = figure.get("value")
    low = figure.get("low") if figure.get("low") is not None else value
    high = figure.get("high") if figure.get("high") is not None else value
    as_of = figure.get("as_of")
    formula = None if figure.get("origin") == "ledger" else (figure.get("note") or
                                                             figure.get("origin"))
    unit = figure.get("unit") or ""
    return Cited(float(low if low is not None else math.nan),
                 float(high if high is not None else math.nan),
                 "" if unit == "1" else unit,  # a plain number: "0.8", not "0.8 1"
                 source=figure.get("source"),
                 as_of=pd.Timestamp(as_of).date() if as_of else None,
                 formula=formula, label=_label(figure))


def _label(figure: dict[str, Any]) -> str:
    """What the figure is: the model's input name and, for a ledger figure, its item."""
    name = figure.get("name") or ""
    return f"{name} ({figure['item']})" if figure.get("item") else name


def moves_of(previous: pd.DataFrame | None, current: pd.DataFrame,
             tolerance: float) -> list[ResultMove]:
    """Scenarios whose class, fabric or break-even speed-up moved between two versions."""
    if previous is None:
        return []
    return [ResultMove(row["scenario"], row["field"], _shown(row["before"]), _shown(row["after"]))
            for row in result_moves(previous, current, tolerance=tolerance).to_dict("records")]


def _shown(value: object) -> str:
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def validation_lines() -> tuple[list[ValidationLine], list[SourceLine]]:
    """The C2C and serving models against every published measurement they are calibrated
    on, and those publications as sources."""
    lines, sources = [], {}
    for report in validation_reports(shipped_training_runs(), shipped_serving_points(),
                                     shipped_serving_phases()):
        published = report.published
        sources[published.key] = SourceLine(key=published.key, title=published.title,
                                            publisher=None, kind="published measurement",
                                            published_on=published.published_on,
                                            url=published.url)
        lines.extend(ValidationLine(
            dataset=published.title, point=result.point, quantity=published.quantity,
            measured=result.measured, predicted=result.predicted, error=result.error,
            error_unit=published.error_unit, source=published.key,
            source_date=published.published_on) for result in report.results)
    return lines, list(sources.values())
