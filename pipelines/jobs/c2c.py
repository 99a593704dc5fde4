"""C2C jobs: estimate or sweep one scenario, and recompute every scenario for a dataset
version (reusing a result when neither the scenario nor any figure it reads changed)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict
from datetime import date, datetime
from pathlib import Path
from typing import Any

import numpy as np

from db import results
from db.engine import Engine, Session
from db.schema import DatasetVersion
from models.c2c import calibration as cal
from models.c2c.estimate import DIMENSIONS, Estimates, evaluate, gemm_peak
from models.c2c.layout_rules import Violation, violations
from models.c2c.memory import total_parameters
from models.c2c.schemes import (
    ChoiceLimit,
    CoveredSpace,
    covered_choices,
    covered_space,
    scheme_of,
)
from models.c2c.spec import ClusterSpec, Layout, Layouts, Precision
from models.c2c.sweep import (
    NoValidLayout,
    SweepResult,
    TooManyLayouts,
    check_layout_count,
    layout_choices,
    merge_shares,
    sweep_share,
)
from pipelines.inputs.limits import DEFAULT_LIMITS, InputLimits
from pipelines.inputs.measurements import shipped_training_runs
from pipelines.inputs.scenarios import (
    Scenario,
    ScenarioError,
    canonical_json,
    load_scenario,
    scenario_paths,
)
from pipelines.jobs.recompute import Outcome, RecomputeReport, inputs_digest, recompute_each
from pipelines.ledger.cluster_specs import resolve_cluster
from pipelines.ledger.figures import FigureUsed

GIB = 2**30


def estimate_row(estimates: Estimates, i: int) -> dict[str, Any]:
    """One layout's results as the JSON object `specledger estimate --json` prints."""
    layout = estimates.layouts.layout(i)
    ttt = estimates.time_to_train_s
    return {
        "gpus": int(layout.gpus), "t_iter_s": float(estimates.t_iter[i]),
        "t_compute_s": float(estimates.t_compute[i]), "t_bubble_s": float(estimates.t_bubble[i]),
        "t_comm_link_s": {d: float(estimates.link[d].total[i]) for d in DIMENSIONS},
        "t_comm_exposed_s": {d: float(estimates.exposed[d].total[i]) for d in DIMENSIONS},
        "t_comm_exposed_by_tier_s": {
            tier: {d: float(getattr(estimates.exposed[d], tier)[i]) for d in DIMENSIONS}
            for tier in ("scale_up", "scale_out")},
        "c2c": float(estimates.c2c[i]), "c2c_link": float(estimates.c2c_link[i]),
        "c2c_scale_up": float(estimates.c2c_scale_up[i]),
        "c2c_scale_out": float(estimates.c2c_scale_out[i]),
        "class": str(estimates.c2c_class[i]),
        "recommended_fabric": str(estimates.recommended_fabric[i]),
        "model_tflops_per_gpu": float(estimates.model_flops_per_gpu[i]) / 1e12,
        "hw_tflops_per_gpu": float(estimates.hw_flops_per_gpu[i]) / 1e12,
        "mfu": float(estimates.mfu[i]),
        "memory_gib_per_gpu": float(estimates.memory_bytes[i]) / GIB,
        "fits": bool(estimates.fits[i]),
        "time_to_train_days": None if ttt is None else float(ttt[i]) / 86400,
        "parallel": {"tp": layout.tp, "pp": layout.pp, "dp": layout.dp, "ep": layout.ep,
                     "cp": layout.cp, "etp": layout.expert_tp, "edp": layout.expert_dp,
                     "micro_batch": layout.micro_batch, "global_batch": layout.global_batch,
                     "interleave": layout.interleave,
                     "first_stage_layers": layout.first_stage_layers or None,
                     "last_stage_layers": layout.last_stage_layers or None,
                     "sequence_parallel": layout.sequence_parallel,
                     "recompute": layout.recompute.name.lower(),
                     "recompute_layers": layout.recompute_layers or None,
                     "offload_layers": layout.offload_layers or None, "zero": layout.zero},
    }


def error_band(row: dict[str, Any], hw: ClusterSpec, moe: bool,
               pytorch: bool = False) -> dict[str, Any]:
    """The model's error around one result: the iteration time and time to train within
    which at least 80 % of each calibration set's runs of the GPU's architecture and the
    parallel scheme (dense or MoE; PyTorch's own stack apart) fell, with the set left out of
    the fit (calibration.BAND). A layout whose scheme the calibration does not cover
    (models/c2c/schemes.py) carries the widest band of any fitted scheme, and says why."""
    scheme = scheme_of(Layout(**_layout_fields(row)), hw, calibrated_space())
    low, high, basis = cal.band(hw.arch, moe, pytorch) if scheme.covered else cal.GENERIC_BAND
    if not scheme.covered:
        basis = f"outside the calibration ({'; '.join(scheme.uncovered)}): {basis}"
    days = row.get("time_to_train_days")
    return {"t_iter_s": [row["t_iter_s"] * low, row["t_iter_s"] * high],
            "time_to_train_days": None if days is None else [days * low, days * high],
            "p10_p90_of": "measured / predicted on the calibration runs",
            "basis": f"{hw.arch}, {'MoE' if moe else 'dense'}: {basis}",
            "scheme": scheme.name, "covered": scheme.covered}


def calibrated_space() -> CoveredSpace:
    """The layouts the shipped calibration runs cover."""
    return covered_space(shipped_training_runs().runs)


def _layout_fields(row: dict[str, Any]) -> dict[str, int]:
    """What a result row's `parallel` block says of its scheme, as Layout fields."""
    return {k: int(row["parallel"][k]) for k in ("tp", "pp", "dp", "ep", "cp", "zero")}


def compute_basis(hw: ClusterSpec, precision: Precision) -> dict[str, Any]:
    """Which fitted efficiencies the estimate used (models/c2c/calibration.py), so that its
    compute time traces to them."""
    return {"arch": hw.arch, "precision": precision.name.lower(),
            "gemm_efficiency": cal.gemm_efficiency(hw.arch, precision),
            "attention_efficiency": cal.attention_efficiency(hw.arch),
            "gemm_peak_tflops": gemm_peak(hw, precision) / 1e12}


def check_layout(scenario: Scenario) -> None:
    """The scenario's layout against Megatron-Core's rules (models/c2c/layout_rules.py, the
    same the sweep applies), and parallel.edp as written against the edp they imply; the
    first broken rule is the error, named by its key and line."""
    lay = scenario.layout
    broken = violations(scenario.model, scenario.framework, lay)
    if scenario.expert_dp is not None and scenario.expert_dp != lay.expert_dp:
        broken.append(Violation("parallel.edp", f"edp={scenario.expert_dp}, but tp x cp x dp / "
                                                f"(etp x ep) = {lay.expert_dp}"))
    if broken:
        first = broken[0]
        raise ScenarioError(scenario.path, scenario.lines.get(first.field), first.field,
                            first.reason)


def non_finite(value: Any, path: str = "") -> Iterator[str]:
    """Where a result holds a non-finite number ("best[0].t_iter_s"): dicts and lists walked."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from non_finite(inner, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list | tuple):
        for index, inner in enumerate(value):
            yield from non_finite(inner, f"{path}[{index}]")
    elif isinstance(value, float) and not math.isfinite(value):
        yield path


def check_finite(scenario: Scenario, row: dict[str, Any]) -> None:
    """A result must be finite numbers: figures that overflow the model (a huge token budget,
    a vanishing bandwidth) are the scenario's error, never "inf days" or Infinity in JSON."""
    bad = list(non_finite(row))
    if not bad:
        return
    name = "tokens" if bad == ["time_to_train_days"] else "(scenario)"
    raise ScenarioError(scenario.path, scenario.lines.get(name), name,
                        f"the model gives no finite {', '.join(bad[:3])}: a figure of the "
                        "scenario is too large or too small for it")


def estimate(scenario: Scenario, specs: tuple[Any, list[FigureUsed]],
             dataset_version: int | None) -> dict[str, Any]:
    """Evaluate the scenario's own layout; the JSON object with its specs' origins."""
    check_layout(scenario)
    hw, used = specs
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):  # check_finite says
        estimates = evaluate(scenario.model, hw, scenario.framework,
                             Layouts.of([scenario.layout]), scenario.tokens)
    row = estimate_row(estimates, 0)
    check_finite(scenario, row)
    return {"scenario": scenario.name, **row,
            "band": error_band(row, hw, scenario.model.is_moe,
                               scenario.framework.pytorch_native),
            "compute": compute_basis(hw, scenario.framework.precision),
            "workload": workload(scenario),
            "dataset_version": dataset_version, "specs": [s.to_json() for s in used]}


def workload(scenario: Scenario) -> dict[str, Any]:
    """What the job is, as a buyer names it: the model's name (when the file gives one), its
    parameter count, the tokens it trains on."""
    name = (scenario.definition.get("model") or {}).get("name")
    return {"model": name, "parameters": total_parameters(scenario.model),
            "tokens": scenario.tokens}


ShareMap = Callable[[Callable[[int], SweepResult], Sequence[int]], list[SweepResult]]


def in_this_process(share: Callable[[int], SweepResult], parts: Sequence[int]) -> list[SweepResult]:
    return [share(part) for part in parts]


def sweep_scenario(scenario: Scenario, specs: tuple[Any, list[FigureUsed]], top: int,
                   dataset_version: int | None, *, parts: int = 1,
                   map_shares: ShareMap = in_this_process,
                   max_layouts: int = DEFAULT_LIMITS.sweep_max_layouts,
                   fixed: dict[str, int | bool] | None = None,
                   limit: ChoiceLimit | None = None) -> dict[str, Any]:
    """Search every layout on cluster.gpus GPUs, keeping the scenario's fixed choices. The
    search is cut into `parts` shares that `map_shares` runs (one after the other here; as
    Prefect tasks in the c2c-sweep flow) and merged; the result does not depend on `parts`.
    A search of more than `max_layouts` candidate layouts is refused before it starts (each
    share enumerates them all: about ENUMERATION_BYTES_PER_LAYOUT bytes each)."""
    gpus = scenario.cluster.gpus
    if gpus is None:
        raise ScenarioError(scenario.path, scenario.lines.get("cluster.gpus"), "cluster.gpus",
                            "sweep needs the GPU count to search on")
    hw, used = specs
    chosen = scenario.fixed if fixed is None else fixed
    held = {k: v for k, v in chosen.items() if k != "global_batch"}
    global_batch = int(scenario.fixed["global_batch"])
    check_sweep_size(scenario, gpus, global_batch, held, max_layouts, limit)

    def share(part: int) -> SweepResult:
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):  # check_finite says
            return sweep_share(scenario.model, hw, scenario.framework, gpus, global_batch,
                               fixed=held, top=top, tokens=scenario.tokens, part=part,
                               parts=parts, max_layouts=max_layouts, limit=limit)
    started = time.perf_counter()
    try:
        found = merge_shares(map_shares(share, range(parts)), hw, top)
    except NoValidLayout as exc:
        raise ScenarioError(scenario.path, None, "parallel", str(exc)) from exc
    seconds = time.perf_counter() - started
    rows = [estimate_row(found.best, i) for i in range(len(found.best.t_iter))]
    for row in rows:
        check_finite(scenario, row)
    best = [{"scenario": scenario.name, **row,
             "band": error_band(row, hw, scenario.model.is_moe,
                               scenario.framework.pytorch_native),
             "dataset_version": dataset_version} for row in rows]
    return {"scenario": scenario.name, "evaluated": found.evaluated, "valid": found.valid,
            "seconds": seconds, "ranked_by": found.ranked_by, "best": best,
            "specs": [s.to_json() for s in used]}


def check_sweep_size(scenario: Scenario, gpus: int, global_batch: int,
                     fixed: dict[str, int | bool], max_layouts: int,
                     limit: ChoiceLimit | None = None) -> None:
    """Count the search's candidate layouts (no array yet) and refuse more than `max_layouts`,
    saying which parallel choices to fix to narrow it."""
    choices = layout_choices(scenario.model, scenario.framework, gpus, global_batch, fixed,
                             limit)
    try:
        check_layout_count(choices, max_layouts)
    except TooManyLayouts as exc:
        widest = sorted((n, name) for name, n in exc.choices.items() if n > 1)[::-1][:3]
        narrow = ", ".join(f"parallel.{name} ({n:,} values)" for n, name in widest)
        raise ScenarioError(scenario.path, scenario.lines.get("parallel"), "parallel",
                            f"{exc}; fix some of {narrow} in the scenario, or use fewer "
                            "cluster.gpus, to narrow it (or raise the limit: "
                            "SPECLEDGER_SWEEP_MAX_LAYOUTS)") from exc


def inputs_sha256(scenario: Scenario, used: list[FigureUsed], code_version: str) -> str:
    """What a result depends on: the scenario (with its layout mode, whether written or by
    default), every figure it read, the code."""
    return inputs_digest({**scenario.definition, "layout": scenario.layout_mode},
                         [(s.name, s.value, s.origin, s.observation_id) for s in used],
                         code_version)


def best_layout(scenario: Scenario, specs: tuple[Any, list[FigureUsed]],
                dataset_version: int | None) -> dict[str, Any]:
    """The scenario at its fastest layout that fits, searched in the space the calibration
    covers under the file's model, global batch and tokens: the JSON object `estimate` gives,
    plus `layout_choice` (how it was chosen, and the file's own layout for reference)."""
    hw = specs[0]
    space = calibrated_space()
    searched = calibrated_sweep(scenario, specs, 1, dataset_version)
    best = searched["best"][0]
    return {**best, "compute": compute_basis(hw, scenario.framework.precision),
            "workload": workload(scenario), "specs": searched["specs"],
            "layout_choice": {"mode": "search", "space": space.describe(),
                              "evaluated": searched["evaluated"], "fit": searched["valid"],
                              "written": _written_layout(scenario, specs)}}


def calibrated_sweep(scenario: Scenario, specs: tuple[Any, list[FigureUsed]], top: int,
                     dataset_version: int | None,
                     max_layouts: int = DEFAULT_LIMITS.sweep_max_layouts) -> dict[str, Any]:
    """The search the recompute graph runs for a `layout: search` scenario: every layout the
    calibration covers on cluster.gpus, under the file's model, global batch and tokens (its
    other parallel choices are not held); the `top` fastest that fit, the first of them the
    stored estimate's layout."""
    space = calibrated_space()
    return sweep_scenario(scenario, specs, top, dataset_version,
                          fixed={"global_batch": scenario.fixed["global_batch"]},
                          max_layouts=max_layouts,
                          limit=covered_choices(space, specs[0], scenario.cluster.gpus or 0))


def stored_estimate(scenario: Scenario, specs: tuple[Any, list[FigureUsed]],
                    dataset_version: int | None) -> dict[str, Any]:
    """The estimate the recompute graph stores for the scenario: at its best layout (the
    default, `layout: search`), or at the file's (`layout: pinned`). Whatever else prices the
    scenario (a TCO draft before `run`) asks this, so one question has one answer."""
    if scenario.layout_mode == "pinned":
        payload = estimate(scenario, specs, dataset_version)
        payload["layout_choice"] = {"mode": "pinned"}
        return payload
    return best_layout(scenario, specs, dataset_version)


def _written_layout(scenario: Scenario, specs: tuple[Any, list[FigureUsed]]) -> dict[str, Any]:
    """The file's own layout beside a searched one: its time and band, or why it has none."""
    try:
        row = estimate(scenario, specs, None)
    except ScenarioError as exc:
        return {"error": exc.reason}
    return {k: row[k] for k in ("t_iter_s", "time_to_train_days", "fits", "mfu", "parallel",
                                "band")}


def recompute(target: Engine | Session, scenarios_dir: Path, dataset_version: int, *, on: date,
              now: datetime, code_version: str, lock_timeout_seconds: float = 60.0,
              limits: InputLimits = DEFAULT_LIMITS) -> RecomputeReport:
    """Store a c2c_result for every C2C scenario in `scenarios_dir` for `dataset_version`
    (each file read within `limits`)."""
    def compute(session: Session, scenario: Scenario, version: DatasetVersion) -> Outcome:
        return _recompute_one(session, scenario, version.id, version.cutoff_at, on, now,
                              code_version)
    return recompute_each(target, scenario_paths(scenarios_dir), dataset_version,
                          load=lambda path: load_scenario(path, limits), compute=compute,
                          name_of=lambda s: s.name,
                          lock_timeout_seconds=lock_timeout_seconds)


def _recompute_one(session: Session, scenario: Scenario, version_id: int, known: datetime,
                   on: date, now: datetime, code_version: str) -> Outcome:
    row = results.record_scenario(session, name=scenario.name, kind="c2c",
                                  definition=canonical_json(scenario.definition),
                                  content_sha256=scenario.content_sha256, path=scenario.path,
                                  recorded_at=now)
    if results.result_for(session, row.id, version_id) is not None:
        return "unchanged"
    specs = resolve_cluster(scenario.cluster, session, on=on, known=known,
                            offloads=scenario.layout.offload_layers > 0)
    digest = inputs_sha256(scenario, specs[1], code_version)
    earlier = results.latest_result_with_inputs(session, scenario.name, digest)
    if earlier is not None:
        results.add_c2c_result(session, scenario=row, dataset_version_id=version_id,
                               estimate={}, inputs_sha256=digest, code_version=code_version,
                               computed_at=now, reused_from=earlier)
        return "reused"
    payload = stored_estimate(scenario, specs, version_id)
    if not np.isfinite(payload["t_iter_s"]):
        raise ValueError(f"{scenario.name}: the model produced no finite iteration time")
    results.add_c2c_result(session, scenario=row, dataset_version_id=version_id,
                           estimate=payload, inputs_sha256=digest, code_version=code_version,
                           computed_at=now)
    return "computed"


def fidelity_json() -> dict[str, Any]:
    """`specledger validate --json`: every calibration set, its points and error summary."""
    from models.fidelity import validation_reports
    from models.serving import calibration as serving_calibration
    from models.serving.validation import unexpressed
    from pipelines.inputs.measurements import (
        shipped_serving_phases,
        shipped_serving_points,
        shipped_training_runs,
    )

    reports = validation_reports(shipped_training_runs(), shipped_serving_points(),
                                 shipped_serving_phases())
    return {"sets": [{
        "title": report.published.title, "url": report.published.url,
        "published_on": report.published.published_on.isoformat(),
        "quantity": report.published.quantity, "error_unit": report.published.error_unit,
        "mean_abs_error": report.mean_abs_error, "max_abs_error": report.max_abs_error,
        "band_coverage": _band_coverage(report.published.key),
        "key": report.published.key, "checks": report.published.checks,
        "points": [{"point": r.point, "measured": r.measured, "predicted": r.predicted,
                    "error": r.error, **asdict(r.facets)} for r in report.results]}
        for report in reports], "serving_targets": serving_calibration.target_standing(),
        "serving_unexpressed": [{"why": u.why, "rows": u.rows, "what": list(u.what)}
                                for u in (*unexpressed(shipped_serving_points()),
                                          *shipped_serving_phases().left_out)]}


def _band_coverage(key: str) -> dict[str, Any] | None:
    """How many of a training set's points the C2C band holds, the band built with the set
    left out of the fit and of the band (calibration.LEAVE_OUT_COVERAGE); None for a set
    without one (the serving model's sets say theirs in their titles)."""
    found = cal.LEAVE_OUT_COVERAGE.get(key)
    if found is None:
        return None
    held, points, how = found
    return {"inside": held, "points": points, "share": held / points, "how": how}


def fidelity_rows() -> list[tuple[object, ...]]:
    """The same as warehouse rows (model_error's columns, in order): which model the set checks,
    the set's key, title, url, published_on, quantity, error unit, the point, its model, GPU,
    engine and layout, measured, predicted, error."""
    return [(s["checks"], s["key"], s["title"],
             s["url"], s["published_on"], s["quantity"], s["error_unit"], p["point"],
             p["model"], p["gpu"], p["engine"], p["layout"], p["measured"], p["predicted"],
             p["error"])
            for s in fidelity_json()["sets"] for p in s["points"]]
