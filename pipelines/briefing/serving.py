"""The briefing's serving lines: each serving scenario's stored answer for the version."""

from __future__ import annotations

from models.dates import date_span
from models.records import ServingOption, ServingRecord
from models.serving.calibration import ENGINE_NAMES
from models.tco.decision import TOO_CLOSE
from pipelines.briefing.results import cited
from reports.context import PriceTierLine, ServingLine, ServingOptionLine


def serving_line(record: ServingRecord) -> ServingLine:
    return ServingLine(
        name=record.scenario, model=record.model, precision=record.precision,
        input_tokens=record.input_tokens, output_tokens=record.output_tokens,
        target_tok_s_per_user=record.target_tok_s_per_user,
        options=tuple(_option(o) for o in record.options),
        cheaper=record.cheaper_option, dearer=record.dearer_option, saving=record.margin,
        saving_p10=record.margin_p10, saving_p90=record.margin_p90,
        too_close=record.call == TOO_CLOSE, price_basis=record.price_basis,
        not_compared=record.not_compared, saving_basis=record.margin_basis,
        saving_note=record.margin_note, model_measured=record.model_measured,
        short_of_targets=record.short_of_targets)


def _option(option: ServingOption) -> ServingOptionLine:
    at = option.at_target
    rent = option.rent_beside or {}
    oldest, newest, undated = date_span([*option.hardware, *option.price_inputs])
    return ServingOptionLine(
        name=option.name, source=option.source, usd_per_gpu_hour=option.usd_per_gpu_hour,
        price_source=option.price_source, gpu=option.gpu,
        curve=tuple((p.concurrency, p.tok_s_per_gpu, p.tok_s_per_user) for p in option.curve),
        tok_s_per_gpu=at.tok_s_per_gpu if at else None,
        tok_s_per_user=at.tok_s_per_user if at else None,
        usd_per_mtok=at.usd_per_mtok_out if at else None,
        band_basis=option.band_basis,
        # Named by figure and item ("hbm_bw (b200)"): options on one GPU share the entries.
        inputs=tuple(cited(dict(f)) for f in option.hardware),
        rent_usd_per_gpu_hour=rent.get("usd_per_gpu_hour"),
        rent_usd_per_mtok=rent.get("usd_per_mtok_out"), rent_source=rent.get("source"),
        tiers=tuple(PriceTierLine(
            tier=t["tier"], usd_per_gpu_hour=t["usd_per_gpu_hour"], source=t["source"],
            usd_per_mtok_in=t.get("usd_per_mtok_in"), usd_per_mtok_out=t.get("usd_per_mtok_out"),
            usd_per_mtok_all_out=t.get("usd_per_mtok_all_out")) for t in option.price_tiers),
        prefill_share=option.prefill_share, layout=option.layout,
        layout_note=option.layout_note, inputs_oldest=oldest, inputs_newest=newest,
        engine=ENGINE_NAMES.get(option.engine, option.engine) if option.engine else "",
        inputs_undated=undated)
