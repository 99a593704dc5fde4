"""Scenarios and the models' results: append-only, one result per scenario and dataset version.

A scenario row is one definition of a named scenario; a changed definition is a new row. A
result whose inputs had not changed since an earlier one copies that result's figures and names
the original computation in `reused_from_id`. C2C estimates go to c2c_result, TCO results to
tco_result; each model's `_Layout` says how its result object fills the typed columns.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar

import pandas as pd
from sqlalchemy import select
from sqlalchemy.orm import Session

from db.schema import C2CResult, ModelResult, Scenario, ServingResult, TcoResult

ResultT = TypeVar("ResultT", bound=ModelResult)


@dataclass(frozen=True)
class _Layout(Generic[ResultT]):
    """How one model's result object fills its table's typed columns."""

    table: type[ResultT]
    noun: str  # what the model calls its result, for error messages
    # Result key -> (column, type): the result must have it.
    required: dict[str, tuple[str, type]]
    # Dotted path into the result -> (column, type): NULL when absent or null.
    optional: dict[str, tuple[str, type]]

    @property
    def copied(self) -> list[str]:
        """The columns a reuse copies from the original: every figure and result_json."""
        figures = [*self.required.values(), *self.optional.values()]
        return [column for column, _ in figures] + ["result_json"]


_C2C = _Layout(C2CResult, "estimate", required={
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
}, optional={"time_to_train_days": ("time_to_train_days", float)})

# Comparison mode fills the options, break-even and speed-up; training-run mode the total.
_TCO = _Layout(TcoResult, "result", required={"mode": ("mode", str)}, optional={
    "scale_up": ("scale_up_option", str),
    "scale_out": ("scale_out_option", str),
    "break_even_speedup": ("break_even_speedup", float),
    "ranges.break_even_speedup.p10": ("break_even_p10", float),
    "ranges.break_even_speedup.p50": ("break_even_p50", float),
    "ranges.break_even_speedup.p90": ("break_even_p90", float),
    "speedup": ("speedup", float),
    "cheaper_option": ("cheaper_option", str),
    "total_usd": ("total_cost_usd", float),
})


# The serving answer at the target: the cheaper option, its margin and band.
_SERVING = _Layout(ServingResult, "answer",
                   required={"target_tok_s_per_user": ("target_tok_s_per_user", float)},
                   optional={"cheaper_option": ("cheaper_option", str),
                             "margin": ("margin", float), "band.p10": ("margin_p10", float),
                             "band.p90": ("margin_p90", float)})


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


def result_for(session: Session, scenario_id: int, dataset_version_id: int | None,
               result_class: type[ResultT] = C2CResult,  # type: ignore[assignment]
               ) -> ResultT | None:
    """The scenario's result on a dataset version (None: its latest ad-hoc result).

    Args:
        result_class: the model's result table, C2CResult or TcoResult.
    """
    version = (result_class.dataset_version_id.is_(None) if dataset_version_id is None
               else result_class.dataset_version_id == dataset_version_id)
    return session.scalar(select(result_class)
                          .where(result_class.scenario_id == scenario_id, version)
                          .order_by(result_class.id.desc()).limit(1))


def latest_result_with_inputs(session: Session, scenario_name: str, inputs_sha256: str,
                              result_class: type[ResultT] = C2CResult,  # type: ignore[assignment]
                              ) -> ResultT | None:
    """The newest result of any definition of `scenario_name` computed from these inputs.

    Args:
        result_class: the model's result table, C2CResult or TcoResult.
    """
    return session.scalar(select(result_class)
                          .join(Scenario, result_class.scenario_id == Scenario.id)
                          .where(Scenario.name == scenario_name,
                                 result_class.inputs_sha256 == inputs_sha256)
                          .order_by(result_class.id.desc()).limit(1))


def add_c2c_result(session: Session, *, scenario: Scenario, dataset_version_id: int | None,
                   estimate: dict[str, Any], inputs_sha256: str, code_version: str,
                   computed_at: datetime, reused_from: C2CResult | None = None) -> C2CResult:
    """Append a C2C result for (scenario, dataset version).

    Args:
        estimate: the model's JSON-able estimate; its figures fill the typed columns and the
            whole object (keys sorted) is kept in result_json. Ignored when `reused_from` is
            given: the figures and result_json are copied from that result.
        reused_from: an earlier result with the same inputs; the new row names the original
            computation (never a copy of a copy).

    Raises:
        ValueError: a figure is missing or not finite, or `reused_from` has other inputs.
    """
    return _append(session, _C2C, estimate, scenario, dataset_version_id, inputs_sha256,
                   code_version, computed_at, reused_from)


def add_tco_result(session: Session, *, scenario: Scenario, dataset_version_id: int | None,
                   result: dict[str, Any], inputs_sha256: str, code_version: str,
                   computed_at: datetime, reused_from: TcoResult | None = None) -> TcoResult:
    """Append a TCO result for (scenario, dataset version), as add_c2c_result does for C2C.

    Args:
        result: the TCO model's JSON-able result (what `--json` prints), in comparison or
            training-run mode; the other mode's columns stay NULL. Ignored when `reused_from`
            is given.
        reused_from: an earlier result with the same inputs (see add_c2c_result).

    Raises:
        ValueError: mode is missing, a figure is not finite, or `reused_from` has other inputs.
        sqlalchemy.exc.IntegrityError: mode is neither comparison nor training-run.
    """
    return _append(session, _TCO, result, scenario, dataset_version_id, inputs_sha256,
                   code_version, computed_at, reused_from)


def add_serving_result(session: Session, *, scenario: Scenario,
                       dataset_version_id: int | None, result: dict[str, Any],
                       inputs_sha256: str, code_version: str, computed_at: datetime,
                       reused_from: ServingResult | None = None) -> ServingResult:
    """Append a serving answer for (scenario, dataset version), as add_tco_result does."""
    return _append(session, _SERVING, result, scenario, dataset_version_id, inputs_sha256,
                   code_version, computed_at, reused_from)


def _append(session: Session, layout: _Layout[ResultT], result: dict[str, Any],
            scenario: Scenario, dataset_version_id: int | None, inputs_sha256: str,
            code_version: str, computed_at: datetime,
            reused_from: ModelResult | None) -> ResultT:
    """Add a row of `layout.table`: the result's figures, or a copy of `reused_from`'s."""
    if reused_from is not None:
        _check_reusable(layout, reused_from, inputs_sha256)
        figures = {column: getattr(reused_from, column) for column in layout.copied}
        figures["reused_from_id"] = reused_from.reused_from_id or reused_from.id
    else:
        figures = _figures(layout, result)
    row = layout.table(scenario_id=scenario.id, dataset_version_id=dataset_version_id,
                       code_version=code_version, inputs_sha256=inputs_sha256,
                       computed_at=computed_at, **figures)
    session.add(row)
    session.flush()
    return row


def _check_reusable(layout: _Layout[Any], original: ModelResult, inputs_sha256: str) -> None:
    if not isinstance(original, layout.table):
        raise ValueError(f"{original.__tablename__} {original.id} cannot be reused as a "
                         f"{layout.table.__tablename__}")
    if original.inputs_sha256 != inputs_sha256:
        raise ValueError(f"result {original.id} was computed from other inputs; "
                         f"it cannot be reused for {inputs_sha256}")


def _figures(layout: _Layout[Any], result: dict[str, Any]) -> dict[str, Any]:
    """The typed columns and result_json of a fresh result; rejects NaN and infinities."""
    missing = sorted(set(layout.required) - set(result))
    if missing:
        raise ValueError(f"the {layout.noun} lacks {', '.join(missing)}")
    figures = {column: kind(result[key]) for key, (column, kind) in layout.required.items()}
    for path, (column, kind) in layout.optional.items():
        value = _lookup(result, path)
        figures[column] = None if value is None else kind(value)
    bad = [k for k, v in figures.items() if isinstance(v, float) and not math.isfinite(v)]
    if bad:
        raise ValueError(f"the {layout.noun} has non-finite {', '.join(sorted(bad))}")
    # allow_nan=False: result_json stays strict JSON that DuckDB and other readers can parse.
    figures["result_json"] = json.dumps(result, sort_keys=True, allow_nan=False)
    return figures


def _lookup(result: dict[str, Any], path: str) -> Any:
    """The value at a dotted path ("ranges.break_even_speedup.p10"); None when absent."""
    value: Any = result
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return value


def c2c_results_frame(session: Session, dataset_version_id: int | None = None) -> pd.DataFrame:
    """C2C results with their scenario's name, ordered by scenario name (None: every result)."""
    return _results_frame(session, _C2C, dataset_version_id)


def tco_results_frame(session: Session, dataset_version_id: int | None = None) -> pd.DataFrame:
    """TCO results with their scenario's name, ordered by scenario name (None: every result)."""
    return _results_frame(session, _TCO, dataset_version_id)


def _results_frame(session: Session, layout: _Layout[Any],
                   dataset_version_id: int | None) -> pd.DataFrame:
    table = layout.table
    columns = (table.id.label("result_id"), Scenario.name.label("scenario"), table.scenario_id,
               Scenario.content_sha256.label("scenario_sha256"), table.dataset_version_id,
               table.code_version, table.inputs_sha256, table.computed_at, table.reused_from_id,
               *(getattr(table, c) for c in layout.copied))
    query = select(*columns).join(Scenario, table.scenario_id == Scenario.id)
    if dataset_version_id is not None:
        query = query.where(table.dataset_version_id == dataset_version_id)
    query = query.order_by(Scenario.name, table.dataset_version_id, table.id)
    rows = [dict(row._mapping) for row in session.execute(query)]
    return pd.DataFrame(rows, columns=[c.key for c in columns])


def results_frame(session: Session, dataset_version_id: int) -> pd.DataFrame:
    """One row per scenario with a result on a version: its C2C class and fabric, or its TCO
    break-even speed-up (NaN where the scenario has no such result)."""
    c2c = session.execute(
        select(Scenario.name, C2CResult.c2c_class, C2CResult.recommended_fabric)
        .join(Scenario, Scenario.id == C2CResult.scenario_id)
        .where(C2CResult.dataset_version_id == dataset_version_id)).all()
    tco = session.execute(
        select(Scenario.name, TcoResult.break_even_speedup)
        .join(Scenario, Scenario.id == TcoResult.scenario_id)
        .where(TcoResult.dataset_version_id == dataset_version_id)).all()
    left = pd.DataFrame(c2c, columns=["scenario", "c2c_class", "recommended_fabric"])
    right = pd.DataFrame(tco, columns=["scenario", "break_even_speedup"])
    frame = left.merge(right, on="scenario", how="outer").sort_values("scenario")
    frame["break_even_speedup"] = frame["break_even_speedup"].astype(float)
    return frame.reset_index(drop=True)


def results_of(session: Session, table: type[ResultT],
               dataset_version_id: int) -> list[tuple[ResultT, Scenario]]:
    """A version's results of one model (C2CResult or TcoResult) with the scenario definitions
    they were computed from, by scenario name."""
    rows = session.execute(select(table, Scenario)
                           .join(Scenario, Scenario.id == table.scenario_id)
                           .where(table.dataset_version_id == dataset_version_id)
                           .order_by(Scenario.name))
    return [(result, scenario) for result, scenario in rows]


@dataclass(frozen=True)
class StoredResult:
    """A stored result as every reader gets it: plain data, never an ORM row."""

    scenario: str
    content_sha256: str  # of the scenario definition it was computed from
    definition: dict[str, Any]
    result: dict[str, Any]


def stored_result(session: Session, table: type[ResultT], scenario_name: str,
                  dataset_version_id: int) -> StoredResult | None:
    """A version's stored result of the scenario named `scenario_name`, or None."""
    row = session.execute(select(table, Scenario)
                          .join(Scenario, Scenario.id == table.scenario_id)
                          .where(table.dataset_version_id == dataset_version_id,
                                 Scenario.name == scenario_name)
                          .order_by(table.id.desc()).limit(1)).first()
    return None if row is None else _stored(*row)


def _stored(result: ModelResult, scenario: Scenario) -> StoredResult:
    return StoredResult(scenario.name, scenario.content_sha256, json.loads(scenario.definition),
                        json.loads(result.result_json))  # type: ignore[attr-defined]


def stored_results(session: Session, table: type[ResultT],
                   dataset_version_id: int) -> dict[str, StoredResult]:
    """A version's stored results of one model (C2CResult, TcoResult or ServingResult) by
    scenario name."""
    return {scenario.name: _stored(result, scenario)
            for result, scenario in results_of(session, table, dataset_version_id)}
