"""Scenarios and the C2C model's results: append-only, one result per scenario and dataset version.

A scenario row is one definition of a named scenario; a changed definition is a new row. A
result whose inputs had not changed since an earlier one copies that result's figures and names
the original computation in `reused_from_id`.
"""

from __future__ import annotations

import json
import math
from datetime import datetime
from typing import Any

import pandas as pd
from sqlalchemy import select
from sqlalchemy.orm import Session

from db.schema import C2CResult, Scenario

# Estimate key -> c2c_result column, with the type each figure is stored as.
_FIGURES: dict[str, tuple[str, type]] = {
    "gpus": ("gpus", int),
    "t_iter_s": ("t_iter_s", float),
    "t_compute_s": ("t_compute_s", float),
    "t_bubble_s": ("t_bubble_s", float),
    "c2c": ("c2c", float),
    "c2c_scale_up": ("c2c_scale_up", float),
    "c2c_scale_out": ("c2c_scale_out", float),
    "class": ("c2c_class", str),
    "recommended_fabric": ("recommended_fabric", str),
    "mfu": ("mfu", float),
    "hw_tflops_per_gpu": ("hw_tflops_per_gpu", float),
    "model_tflops_per_gpu": ("model_tflops_per_gpu", float),
    "memory_gib_per_gpu": ("memory_gib_per_gpu", float),
    "fits": ("fits", bool),
}
_COPIED = [column for column, _ in _FIGURES.values()] + ["time_to_train_days", "result_json"]
_FRAME_COLUMNS = (
    C2CResult.id.label("result_id"), Scenario.name.label("scenario"), C2CResult.scenario_id,
    Scenario.content_sha256.label("scenario_sha256"), C2CResult.dataset_version_id,
    C2CResult.code_version, C2CResult.inputs_sha256, C2CResult.computed_at,
    C2CResult.reused_from_id, *(getattr(C2CResult, c) for c in _COPIED),
)


def record_scenario(session: Session, *, name: str, kind: str, definition: str,
                    content_sha256: str, path: str | None, recorded_at: datetime) -> Scenario:
    """Return the row for (name, content_sha256), adding it if the ledger has not seen it."""
    existing = session.scalar(select(Scenario).where(Scenario.name == name,
                                                     Scenario.content_sha256 == content_sha256))
    if existing is not None:
        return existing
    scenario = Scenario(name=name, kind=kind, definition=definition,
                        content_sha256=content_sha256, path=path, recorded_at=recorded_at)
    session.add(scenario)
    session.flush()
    return scenario


def result_for(session: Session, scenario_id: int,
               dataset_version_id: int | None) -> C2CResult | None:
    """The scenario's result on a dataset version (None: its latest ad-hoc result)."""
    version = (C2CResult.dataset_version_id.is_(None) if dataset_version_id is None
               else C2CResult.dataset_version_id == dataset_version_id)
    return session.scalar(select(C2CResult).where(C2CResult.scenario_id == scenario_id, version)
                          .order_by(C2CResult.id.desc()).limit(1))


def latest_result_with_inputs(session: Session, scenario_name: str,
                              inputs_sha256: str) -> C2CResult | None:
    """The newest result of any definition of `scenario_name` computed from these inputs."""
    return session.scalar(select(C2CResult).join(Scenario, C2CResult.scenario_id == Scenario.id)
                          .where(Scenario.name == scenario_name,
                                 C2CResult.inputs_sha256 == inputs_sha256)
                          .order_by(C2CResult.id.desc()).limit(1))


def add_c2c_result(session: Session, *, scenario: Scenario, dataset_version_id: int | None,
                   estimate: dict[str, Any], inputs_sha256: str, code_version: str,
                   computed_at: datetime, reused_from: C2CResult | None = None) -> C2CResult:
    """Append a result for (scenario, dataset version).

    Args:
        estimate: the model's JSON-able estimate; its figures fill the typed columns and the
            whole object (keys sorted) is kept in result_json. Ignored when `reused_from` is
            given: the figures and result_json are copied from that result.
        reused_from: an earlier result with the same inputs; the new row names the original
            computation (never a copy of a copy).

    Raises:
        ValueError: a figure is missing or not finite, or `reused_from` has other inputs.
    """
    if reused_from is not None:
        if reused_from.inputs_sha256 != inputs_sha256:
            raise ValueError(f"result {reused_from.id} was computed from other inputs; "
                             f"it cannot be reused for {inputs_sha256}")
        figures = {column: getattr(reused_from, column) for column in _COPIED}
        figures["reused_from_id"] = reused_from.reused_from_id or reused_from.id
    else:
        figures = _figures(estimate)
    result = C2CResult(scenario_id=scenario.id, dataset_version_id=dataset_version_id,
                       code_version=code_version, inputs_sha256=inputs_sha256,
                       computed_at=computed_at, **figures)
    session.add(result)
    session.flush()
    return result


def _figures(estimate: dict[str, Any]) -> dict[str, Any]:
    """The typed columns and result_json of a fresh estimate; rejects NaN and infinities."""
    missing = sorted(set(_FIGURES) - set(estimate))
    if missing:
        raise ValueError(f"the estimate lacks {', '.join(missing)}")
    figures = {column: kind(estimate[key]) for key, (column, kind) in _FIGURES.items()}
    days = estimate.get("time_to_train_days")
    figures["time_to_train_days"] = None if days is None else float(days)
    bad = [k for k, v in figures.items() if isinstance(v, float) and not math.isfinite(v)]
    if bad:
        raise ValueError(f"the estimate has non-finite {', '.join(sorted(bad))}")
    # allow_nan=False: result_json stays strict JSON that DuckDB and other readers can parse.
    figures["result_json"] = json.dumps(estimate, sort_keys=True, allow_nan=False)
    return figures


def c2c_results_frame(session: Session, dataset_version_id: int | None = None) -> pd.DataFrame:
    """Results with their scenario's name, ordered by scenario name (None: every result)."""
    query = select(*_FRAME_COLUMNS).join(Scenario, C2CResult.scenario_id == Scenario.id)
    if dataset_version_id is not None:
        query = query.where(C2CResult.dataset_version_id == dataset_version_id)
    query = query.order_by(Scenario.name, C2CResult.dataset_version_id, C2CResult.id)
    rows = [dict(row._mapping) for row in session.execute(query)]
    return pd.DataFrame(rows, columns=[c.key for c in _FRAME_COLUMNS])
