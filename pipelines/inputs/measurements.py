"""The reference measurement tables (data/measurements/): the published training runs the C2C
model is calibrated and validated on, and the InferenceX serving points the serving model is.

Read like every other input: within the bounds of limits.py (yaml_lines.py for the YAML), each
row checked field by field, and a bad one refused as a MeasurementError naming the file, the
line and the field. The rows come out as the plain types of models/c2c/measured_runs.py and
models/serving/measured_points.py, which the models' validation takes as arguments.
`shipped_training_runs` and `shipped_serving_points` read the tables the project ships, once a
process: the models' fidelity depends on them and the code alone.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass
from datetime import date
from functools import cache
from pathlib import Path
from typing import Any, Final

from models.c2c.measured_runs import (
    Architecture,
    MeasuredRun,
    RecipeSettings,
    Source,
    TrainingRuns,
)
from models.c2c.spec import Precision
from models.serving import measured_points as serving
from models.serving import phases
from models.serving.presets import PRESETS
from models.serving.spec import WeightFormat
from pipelines.inputs.errors import InputError
from pipelines.inputs.limits import DEFAULT_LIMITS, InputLimits
from pipelines.inputs.yaml_lines import YamlError, YamlList, YamlMap, load_yaml, read_bounded_text

MEASUREMENTS_DIR: Final = Path(__file__).resolve().parents[2] / "data" / "measurements"
TRAINING_RUNS_PATH: Final = MEASUREMENTS_DIR / "training_runs.yaml"
SERVING_POINTS_PATH: Final = MEASUREMENTS_DIR / "serving_points.yaml"
SERVING_PHASES_PATH: Final = MEASUREMENTS_DIR / "serving_phases.yaml"


class MeasurementError(InputError):
    """A measurement table cannot be used: `path:line field: reason`."""


# --- one field ---------------------------------------------------------------------------------

def _text(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"expected text, not {value!r}")
    return value


def _count(minimum: int) -> Callable[[Any], int]:
    def check(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"expected a whole number, not {value!r}")
        if value < minimum:
            raise ValueError(f"must be at least {minimum}, not {value}")
        return value
    return check


def _positive(value: Any) -> float:
    """A measured figure, kept as written (an int stays an int, so every value is the file's)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"expected a number, not {value!r}")
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"must be a finite number above 0, not {value!r}")
    return value


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"expected true or false, not {value!r}")
    return value


def _day(value: Any) -> date:
    try:
        return date.fromisoformat(_text(value))
    except ValueError:
        raise ValueError(f"expected a date YYYY-MM-DD, not {value!r}") from None


def _texts(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise ValueError(f"expected a list of texts, not {value!r}")
    return tuple(_text(item) for item in value)


def _optional(check: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda value: None if value is None else check(value)


def _choice(*allowed: str) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if value not in allowed:
            raise ValueError(f"expected one of {', '.join(allowed)}, not {value!r}")
        return str(value)
    return check


def _precision(value: Any) -> str:
    Precision.parse(_text(value))  # its ValueError says which precisions there are
    return value


def _weights(value: Any) -> str:
    WeightFormat(_text(value))
    return value


Fields = Mapping[str, Callable[[Any], Any]]
_GE0, _GE1 = _count(0), _count(1)

SOURCE_FIELDS: Final[Fields] = {"key": _text, "title": _text, "url": _text,
                                "published_on": _day}
ARCHITECTURE_FIELDS: Final[Fields] = {
    "name": _text, "layers": _GE1, "hidden": _GE1, "heads": _GE1, "kv_heads": _GE1,
    "head_dim": _GE1, "ffn": _GE1, "swiglu": _flag, "vocab": _GE1, "tied_embeddings": _flag,
    "source": _text}
ARCHITECTURE_OPTIONAL: Final[Fields] = {
    "experts": _GE1, "top_k": _GE1, "moe_ffn": _optional(_GE1), "first_dense_layers": _GE0,
    "shared_experts": _GE0, "shared_ffn": _optional(_GE1)}
_LAYOUT: Final = ("tp", "pp", "cp", "vp", "ep", "micro_batch", "fsdp")
RECIPE_FIELDS: Final[Fields] = {
    "system": _text, "model": _text, "precision": _precision, "recipe": _text,
    **dict.fromkeys(_LAYOUT[:-1], _GE1), "fsdp": _flag}
RECIPE_OPTIONAL: Final[Fields] = {"offload_layers": _GE0, "ep_overlap": _flag}
RUN_FIELDS: Final[Fields] = {
    "source": _text, "system": _text, "model": _text, "gpus": _GE1, "precision": _precision,
    "global_batch": _GE1, "micro_batch": _GE1, "seq_len": _GE1, "fsdp": _flag, "tp": _GE1,
    "pp": _GE1, "cp": _GE1, "vp": _GE1, "ep": _GE1, "tokens_per_s_per_gpu": _positive,
    "model_tflops_per_gpu": _optional(_positive)}
RUN_OPTIONAL: Final[Fields] = {"framework": _choice("megatron", "pytorch"),
                               "recompute": _choice("none", "selective", "full"),
                               "grad_reduce_in_fp32": _flag}
POINT_FIELDS: Final[Fields] = {
    "source": _text, "hardware": _text, "model": _text, "precision": _weights, "engine": _text,
    "tp": _GE1, "ep": _GE1, "dp_attention": _flag, "input_tokens": _GE1,
    "output_tokens": _GE1, "tok_s_per_gpu": _positive, "measured_on": _day, "run": _text}
POINT_OPTIONAL: Final[Fields] = {
    "scenario": _choice(*serving.SCENARIOS), "concurrency": _GE1,
    "tok_s_per_user": _positive, "ttft_s": _positive, "tpot_p99_limit_s": _positive,
    "ttft_p99_limit_s": _positive}
# What each scenario measures: the fields it must have, and those it cannot have (an Offline
# run has no per-user rate; only a fixed concurrency has a concurrency).
SCENARIO_FIELDS: Final = {
    "concurrency": (("concurrency", "tok_s_per_user"),
                    ("tpot_p99_limit_s", "ttft_p99_limit_s")),
    "offline": ((), ("concurrency", "tok_s_per_user", "ttft_s", "tpot_p99_limit_s",
                     "ttft_p99_limit_s")),
    "server": (("tok_s_per_user", "tpot_p99_limit_s"), ("concurrency",)),
}
LEFT_OUT_FIELDS: Final[Fields] = {"why": _text, "rows": _GE1, "what": _texts}
PHASE_FIELDS: Final[Fields] = {
    "source": _text, "hardware": _text, "model": _text, "precision": _weights, "engine": _text,
    "phase": _choice(*phases.PHASES), "gpus": _GE1, "tp": _GE1, "ep": _GE1,
    "dp_attention": _flag, "input_tokens": _GE1, "output_tokens": _GE1,
    "tok_s_per_gpu": _positive, "measured_on": _day, "what": _text}
PHASE_OPTIONAL: Final[Fields] = {"batch": _GE1}


# --- one file ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Table:
    """A table file's sections, with what the errors need to say where."""

    path: str
    document: YamlMap

    def rows(self, section: str, required: Fields, optional: Fields | None = None
             ) -> list[tuple[int, dict[str, Any]]]:
        """Each row of `section` as (line, checked values)."""
        entries = self.document.get(section)
        if not isinstance(entries, YamlList):
            raise MeasurementError(self.path, self.document.key_line(section), section,
                                   "expected a list of rows")
        return [(line, self._row(f"{section}[{number}]", line, entry, required, optional or {}))
                for number, (line, entry) in enumerate(zip(entries.item_lines, entries,
                                                           strict=True), start=1)]

    def _row(self, where: str, line: int, entry: Any, required: Fields, optional: Fields
             ) -> dict[str, Any]:
        if not isinstance(entry, YamlMap):
            raise MeasurementError(self.path, line, where, "expected a mapping of fields")
        for key, key_line in entry.duplicates:
            raise MeasurementError(self.path, key_line, f"{where}.{key}", "written twice")
        for key in entry:
            if key not in required and key not in optional:
                raise MeasurementError(self.path, entry.key_line(str(key)), f"{where}.{key}",
                                       f"unknown field (expected {', '.join(required)})")
        values = {}
        for key, check in (*required.items(), *optional.items()):
            if key not in entry:
                if key in required:
                    raise MeasurementError(self.path, entry.line, f"{where}.{key}", "missing")
                continue
            try:
                values[key] = check(entry[key])
            except ValueError as exc:
                raise MeasurementError(self.path, entry.key_line(key), f"{where}.{key}",
                                       str(exc)) from None
        return values

    def fail(self, line: int, field: str, reason: str) -> MeasurementError:
        return MeasurementError(self.path, line, field, reason)


def _open(path: Path, sections: tuple[str, ...], limits: InputLimits) -> _Table:
    """The file's mapping of `sections`, within the limits (rows counted over all sections)."""
    shown = str(path)
    try:
        document = load_yaml(read_bounded_text(path, limits), limits)
    except YamlError as exc:
        raise MeasurementError(shown, exc.line, "(file)", exc.reason) from exc
    except (OSError, ValueError) as exc:  # missing, unreadable, not UTF-8
        raise MeasurementError(shown, None, "(file)", str(exc)) from exc
    if not isinstance(document, YamlMap):
        raise MeasurementError(shown, None, "(file)",
                               f"expected a mapping with {', '.join(sections)}")
    for key in document:
        if key not in sections:
            raise MeasurementError(shown, document.key_line(str(key)), str(key),
                                   f"unknown section (expected {', '.join(sections)})")
    rows = sum(len(v) for v in document.values() if isinstance(v, list))
    if rows > limits.max_rows_per_file:
        raise MeasurementError(shown, None, "(file)", f"{rows:,} rows, more than "
                               f"SPECLEDGER_MAX_ROWS_PER_FILE ({limits.max_rows_per_file:,})")
    return _Table(shown, document)


def _unique(table: _Table, section: str, rows: list[tuple[int, Any]],
            key: Callable[[Any], object], field: str) -> None:
    seen: set[object] = set()
    for number, (line, row) in enumerate(rows, start=1):
        if key(row) in seen:
            raise table.fail(line, f"{section}[{number}].{field}",
                             f"{key(row)!r} is listed twice")
        seen.add(key(row))


def _refers(table: _Table, field: str, line: int, value: str, known: Container[str],
            what: str) -> None:
    if value not in known:
        raise table.fail(line, field, f"{value!r} is not {what}")


# --- the training runs -------------------------------------------------------------------------

def load_training_runs(path: Path = TRAINING_RUNS_PATH,
                       limits: InputLimits = DEFAULT_LIMITS) -> TrainingRuns:
    """The published training runs of a file like data/measurements/training_runs.yaml."""
    table = _open(path, ("sources", "architectures", "recipes", "runs"), limits)
    sources = [(line, Source(**v)) for line, v in table.rows("sources", SOURCE_FIELDS)]
    _unique(table, "sources", sources, lambda s: s.key, "key")
    architectures = [(line, Architecture(**v)) for line, v in
                     table.rows("architectures", ARCHITECTURE_FIELDS, ARCHITECTURE_OPTIONAL)]
    _unique(table, "architectures", architectures, lambda a: a.name, "name")
    recipes = [(line, _recipe(v)) for line, v in
               table.rows("recipes", RECIPE_FIELDS, RECIPE_OPTIONAL)]
    _unique(table, "recipes", recipes, lambda r: (r.system, r.model, r.precision), "system")
    runs = [(line, MeasuredRun(**v)) for line, v in
            table.rows("runs", RUN_FIELDS, RUN_OPTIONAL)]
    source_keys = {s.key for _, s in sources}
    names = {a.name for _, a in architectures}
    for number, (line, run) in enumerate(runs, start=1):
        _refers(table, f"runs[{number}].source", line, run.source, source_keys,
                "a key of `sources`")
        _refers(table, f"runs[{number}].model", line, run.model, names,
                "a name of `architectures`")
    return TrainingRuns(tuple(s for _, s in sources), tuple(a for _, a in architectures),
                        tuple(r for _, r in recipes), tuple(r for _, r in runs))


def _recipe(values: dict[str, Any]) -> RecipeSettings:
    """The layout's seven fields, written out in the file, become the recipe's one tuple."""
    layout = tuple(values.pop(key) for key in _LAYOUT)
    return RecipeSettings(layout=layout, **values)  # type: ignore[arg-type]  # seven fields


# --- the serving points ------------------------------------------------------------------------

def load_serving_points(path: Path = SERVING_POINTS_PATH,
                        limits: InputLimits = DEFAULT_LIMITS) -> serving.ServingPoints:
    """The published serving points of a file like data/measurements/serving_points.yaml; each
    point gets its hardware's architecture and its source's URL."""
    table, sources = _serving_table(path, limits)
    by_key = {s.key: s for s in sources}
    points = []
    for number, (line, v) in enumerate(table.rows("points", POINT_FIELDS, POINT_OPTIONAL),
                                       start=1):
        where = f"points[{number}]"
        _scenario_fields(table, where, line, v)
        _refers_serving(table, where, line, v, by_key)
        points.append(serving.MeasuredPoint(
            **v, arch=serving.ARCH_OF_ITEM[v["hardware"]], url=by_key[v["source"]].url))
    return serving.ServingPoints(sources, tuple(points), _left_out(table))


def _serving_table(path: Path, limits: InputLimits
                   ) -> tuple[_Table, tuple[serving.Source, ...]]:
    """A serving measurements file (sources, points, left_out) and its sources, each once."""
    table = _open(path, ("sources", "points", "left_out"), limits)
    sources = [(line, serving.Source(**v)) for line, v in table.rows("sources", SOURCE_FIELDS)]
    _unique(table, "sources", sources, lambda s: s.key, "key")
    return table, tuple(s for _, s in sources)


def _refers_serving(table: _Table, where: str, line: int, v: dict[str, Any],
                    sources: Mapping[str, serving.Source]) -> None:
    """A serving point names a listed source, a GPU the serving model knows and a preset."""
    _refers(table, f"{where}.source", line, v["source"], sources, "a key of `sources`")
    _refers(table, f"{where}.hardware", line, v["hardware"], serving.ARCH_OF_ITEM,
            "a GPU item the serving model knows (models/serving/measured_points.py)")
    _refers(table, f"{where}.model", line, v["model"], PRESETS,
            "a serving preset (models/serving/presets.py)")


def _left_out(table: _Table) -> tuple[serving.LeftOut, ...]:
    """The file's `left_out` rows (none when it has no such section)."""
    if "left_out" not in table.document:
        return ()
    return tuple(serving.LeftOut(v["why"], v["rows"], v["what"])
                 for _, v in table.rows("left_out", LEFT_OUT_FIELDS))


def load_serving_phases(path: Path = SERVING_PHASES_PATH,
                        limits: InputLimits = DEFAULT_LIMITS) -> phases.PhasePoints:
    """The phase-isolated serving throughputs of a file like
    data/measurements/serving_phases.yaml (models/serving/phases.py checks the model on
    them); a prefill point has no batch."""
    table, sources = _serving_table(path, limits)
    by_key = {s.key: s for s in sources}
    points = []
    for number, (line, v) in enumerate(table.rows("points", PHASE_FIELDS, PHASE_OPTIONAL),
                                       start=1):
        where = f"points[{number}]"
        _refers_serving(table, where, line, v, by_key)
        if v["phase"] == "prefill" and "batch" in v:
            raise table.fail(line, f"{where}.batch", "a prefill point has no decode batch")
        if v["dp_attention"] and v["tp"] != 1:
            raise table.fail(line, f"{where}.tp", "with DP attention each GPU is its own "
                                                  "attention replica: tp is 1")
        if v["gpus"] % v["tp"]:
            raise table.fail(line, f"{where}.gpus", f"{v['gpus']} GPUs are not whole "
                                                    f"replicas of tp {v['tp']}")
        points.append(phases.PhasePoint(
            **{"batch": None, **v}, arch=serving.ARCH_OF_ITEM[v["hardware"]],
            url=by_key[v["source"]].url))
    return phases.PhasePoints(sources, tuple(points), _left_out(table))


def _scenario_fields(table: _Table, where: str, line: int, v: dict[str, Any]) -> None:
    """A point has what its scenario measures and nothing it cannot (SCENARIO_FIELDS)."""
    scenario = v.setdefault("scenario", "concurrency")
    needed, excluded = SCENARIO_FIELDS[scenario]
    for name in needed:
        if v.get(name) is None:
            raise MeasurementError(table.path, line, f"{where}.{name}",
                                   f"missing: a point of scenario {scenario} has one")
    for name in excluded:
        if v.get(name) is not None:
            raise MeasurementError(table.path, line, f"{where}.{name}",
                                   f"a point of scenario {scenario} has none")
    for name in ("concurrency", "tok_s_per_user", "ttft_s"):
        v.setdefault(name, None)


# --- the shipped tables ------------------------------------------------------------------------

@cache
def shipped_training_runs() -> TrainingRuns:
    """data/measurements/training_runs.yaml, read once a process."""
    return load_training_runs()


@cache
def shipped_serving_points() -> serving.ServingPoints:
    """data/measurements/serving_points.yaml, read once a process."""
    return load_serving_points()


@cache
def shipped_serving_phases() -> phases.PhasePoints:
    """data/measurements/serving_phases.yaml, read once a process."""
    return load_serving_phases()
