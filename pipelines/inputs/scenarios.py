"""C2C scenario files: a model, a parallel layout, a cluster (data/scenarios/*.yaml).

Quantities are strings with units ("600 GB/s", "200 Gb/s", "312 TFLOP/s", "80 GiB")
parsed with pint; a bare number where a quantity is expected is an error naming the field.
Every error names the file, the line and the field.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from models.c2c.spec import (
    MAX_COUNT,
    Framework,
    Layout,
    Precision,
    Recompute,
    TransformerSpec,
)
from models.parallel_limits import training_refusals
from models.units import UnitError, conversion_factor, si_factor
from pipelines.inputs.errors import InputError
from pipelines.inputs.limits import DEFAULT_LIMITS, MAX_KEY_LENGTH, InputLimits
from pipelines.inputs.yaml_lines import (
    LINES,
    YamlError,
    YamlList,
    YamlMap,
    load_yaml,
    read_bounded_text,
    with_line_maps,
)

NON_FINITE = "finite (not inf, nan or beyond 1.8e308) "  # what a number must be, in errors


# `layout:` of a scenario: search the covered space for the fastest layout, or pin the file's.
LAYOUT_MODES = ("search", "pinned")
# A model's display name (model.name), e.g. "GPT-3 175B": one line of a page-1 heading.
MAX_NAME_LENGTH = 80


class ScenarioError(InputError):
    """A scenario that cannot be read; says where and what (`path:line field: reason`)."""


@dataclass(frozen=True)
class Quantity:
    """A value converted to an SI unit, with what the file wrote."""

    value: float
    written: str


@dataclass(frozen=True)
class ClusterRequest:
    """What a scenario asks of the cluster: ledger items and/or inline figures (SI)."""

    gpu: str | None = None
    scale_up_item: str | None = None
    scale_up_system: str | None = None
    scale_out_item: str | None = None
    inline: dict[str, Quantity] = field(default_factory=dict)
    gpus: int | None = None
    arch: str | None = None  # gpu_specs.arch; else the ledger item's family
    precision: Precision = Precision.BF16  # the scenario's: which peak the GEMMs use


@dataclass(frozen=True)
class Scenario:
    name: str
    path: str
    model: TransformerSpec
    layout: Layout
    fixed: dict[str, int | bool]  # for sweep: the parallel choices the file gives
    framework: Framework
    cluster: ClusterRequest
    tokens: float | None
    definition: dict[str, Any]  # the file's content (lines dropped), for hashing/storage
    # The line of each field a later check may name ("parallel", "parallel.tp", "cluster.gpus").
    lines: dict[str, int] = field(default_factory=dict, compare=False)
    expert_dp: int | None = None  # parallel.edp as written (it follows from the others)
    # What the recompute graph stores: "search" (default): the fastest layout of the space the
    # calibration covers, under the file's model, global batch and tokens; "pinned": `layout`.
    layout_mode: str = "search"

    @property
    def content_sha256(self) -> str:
        return hashlib.sha256(canonical_json(self.definition).encode()).hexdigest()


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


# (section, key) -> (the unit it is written in, what it counts, the SI unit the model uses);
# pint gives the factor (a NIC rate is written in bits and used in bytes).
QUANTITIES: dict[tuple[str, str], tuple[str, str | None, str]] = {
    ("gpu_specs", "peak"): ("TFLOP/s", None, "FLOP/s"),
    ("gpu_specs", "peak_fp8"): ("TFLOP/s", None, "FLOP/s"),
    ("gpu_specs", "peak_fp4"): ("TFLOP/s", None, "FLOP/s"),
    ("gpu_specs", "hbm"): ("GB", "bytes", "B"),
    ("gpu_specs", "hbm_bw"): ("GB/s", "bytes", "B/s"),
    ("gpu_specs", "host_bw"): ("GB/s", "bytes", "B/s"),
    ("scale_up", "bw_per_gpu_bidir"): ("GB/s", "bytes", "B/s"),
    ("scale_up", "latency"): ("us", None, "s"),
    ("scale_out", "nic_rate"): ("Gb/s", "bits", "B/s"),
    ("scale_out", "busbw_per_nic"): ("GB/s", "bytes", "B/s"),
    ("scale_out", "latency"): ("us", None, "s"),
}
_NUMBERS = {("scale_up", "domain_gpus"), ("scale_up", "efficiency"),
            ("scale_out", "nics_per_gpu"), ("scale_out", "efficiency")}
_ITEMS = {("scale_up", "item"), ("scale_up", "system"), ("scale_out", "item")}
# Text of the cluster: the GPU's architecture, which picks the compute efficiencies.
_WORDS = {("gpu_specs", "arch")}
QUANTITY_TEXT = re.compile(
    r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([^\d\s.+-].*)$")


def read_lined_file(path: Path, error: type[InputError]) -> Any:
    """A YAML file's document with per-key line maps (None when empty), or `error` naming the
    file and the line where it cannot be read."""
    return with_line_maps(_read_yaml(path, error))


def _read_yaml(path: Path, error: type[InputError]) -> Any:
    try:
        return load_yaml(read_bounded_text(path))
    except YamlError as exc:
        raise error(str(path), exc.line, "(file)", exc.reason.replace(
            "malformed YAML", "not valid YAML", 1)) from exc
    except (OSError, ValueError) as exc:  # UnicodeDecodeError
        raise error(str(path), None, "(file)", str(exc)) from exc


def read_document(path: Path, expected: str) -> tuple[str, dict[str, Any]]:
    """A scenario file's mapping, with the line of every key (LINES); `expected` names what
    the mapping should hold, for the error when it is not one."""
    shown = str(path)
    document = _read_yaml(path, ScenarioError)
    refuse_repeated_keys(shown, document)
    if not isinstance(document, dict):
        raise ScenarioError(shown, None, "(file)", f"expected a mapping with {expected}")
    return shown, with_line_maps(document)


def refuse_repeated_keys(path: str, value: Any, name: str = "") -> None:
    """A key written twice in one mapping is an error naming it and the line of its second
    writing: which value was meant cannot be told (the YAML reader keeps the first)."""
    if isinstance(value, YamlMap):
        for key, line in value.duplicates:
            field = f"{name}.{key}" if name else key
            raise ScenarioError(path, line, field, f"written twice (first on line "
                                                   f"{value.key_line(key)}); give it once")
        for key, item in value.items():
            refuse_repeated_keys(path, item, f"{name}.{key}" if name else str(key))
    elif isinstance(value, YamlList):
        for index, item in enumerate(value):
            refuse_repeated_keys(path, item, f"{name}[{index}]")


def load_scenario(path: Path, limits: InputLimits = DEFAULT_LIMITS) -> Scenario:
    """Read and validate one scenario file (`limits`: the bounds on reading one input)."""
    return _Reader(*read_document(path, "name, model, ...")).scenario()


def scenario_paths(folder: Path, kind: str = "c2c") -> list[Path]:
    """The scenario files of one kind in a folder, by name (a file that cannot be read is
    kept, so that loading it reports why)."""
    found = []
    for path in sorted(p for p in folder.glob("*.y*ml") if p.suffix in (".yaml", ".yml")):
        try:
            head = load_yaml(read_bounded_text(path)) or {}
        except (YamlError, OSError, UnicodeDecodeError):
            head = {}
        if not isinstance(head, dict) or head.get("kind", "c2c") == kind:
            found.append(path)
    return found


def load_scenarios(folder: Path, kind: str = "c2c",
                   limits: InputLimits = DEFAULT_LIMITS) -> list[Scenario]:
    """Every scenario of one kind in a folder; raises on the first broken file."""
    return [load_scenario(path, limits) for path in scenario_paths(folder, kind)]


def finite_number(value: Any) -> float | None:
    """`value` as a finite float; None for inf, nan, an int too large for a float, text that
    is not a number, or anything else."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        number = float(value)
    except (OverflowError, ValueError):
        return None
    return number if math.isfinite(number) else None


def is_numeric(value: Any) -> bool:
    """Whether `value` is written as a number, finite or not ("1e400", .inf, .nan)."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return False
    try:
        float(value)
    except OverflowError:
        return True
    except ValueError:
        return False
    return True


def shown(value: Any) -> str:
    """A value as an error message quotes it: a list or mapping by its kind (a mapping holds
    the line table), a long text cut short."""
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if isinstance(value, dict):
        return "a mapping"
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


def strip_lines(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: strip_lines(v) for k, v in value.items() if k != LINES}
    if isinstance(value, list):
        return [strip_lines(v) for v in value]
    return value


class DocumentReader:
    """Walks one document; every failure names the file, the line and the field."""

    def __init__(self, path: str, document: dict[str, Any]) -> None:
        self.path, self.doc = path, document

    def line_of(self, section: dict[str, Any] | None, key: str) -> int | None:
        """The line of section[key], else of the section itself."""
        lines = (section or self.doc).get(LINES, {})
        return lines.get(key) or lines.get("")

    def fail(self, section: dict[str, Any] | None, key: str, name: str, reason: str) -> None:
        raise ScenarioError(self.path, self.line_of(section, key), name, reason)

    def unknown_keys(self, section: dict[str, Any], allowed: set[str], prefix: str) -> None:
        for key in section:
            if key != LINES and key not in allowed:
                self.fail(section, key, f"{prefix}.{key}" if prefix else key,
                          f"unknown key; expected one of {', '.join(sorted(allowed))}")


class _Reader(DocumentReader):
    """Turns each field of a C2C scenario into its type or a ScenarioError."""

    def section(self, key: str, required: bool = True) -> dict[str, Any]:
        value = self.doc.get(key)
        if value is None and not required:
            return {LINES: {}}
        if not isinstance(value, dict):
            self.fail(None, key, key, "missing" if value is None else "expected a mapping")
        return value  # type: ignore[return-value]

    def scenario(self) -> Scenario:
        name = self.doc.get("name")
        if not isinstance(name, str) or not name.strip():
            self.fail(None, "name", "name", "missing: every scenario needs a name")
        if len(name) > MAX_KEY_LENGTH:
            self.fail(None, "name", "name", f"{len(name):,} characters; a name has at most "
                                            f"{MAX_KEY_LENGTH}")
        parallel = self.section("parallel")
        layout, fixed, expert_dp = self.layout(parallel)
        tokens = self.doc.get("tokens")
        if tokens is not None:
            tokens = self.number(self.doc, "tokens", "tokens", float)
        model, framework, cluster = self.model(), self.framework(), self.cluster()
        self.engine_limits(parallel, fixed, model)
        if "precision" in self.doc:
            try:
                framework = replace(framework, precision=Precision.parse(
                    str(self.doc["precision"])))
            except ValueError as exc:
                self.fail(None, "precision", "precision", str(exc))
            cluster = replace(cluster, precision=framework.precision)
        lines = {f"parallel.{k}": line for k, line in parallel.get(LINES, {}).items() if k}
        lines["parallel"] = parallel.get(LINES, {}).get("") or self.line_of(None, "parallel")
        lines["cluster.gpus"] = self.line_of(self.doc["cluster"], "gpus")
        lines["tokens"] = self.line_of(None, "tokens")
        lines["layout"] = self.line_of(None, "layout")
        mode = self.doc.get("layout", "search")
        if mode not in LAYOUT_MODES:
            self.fail(None, "layout", "layout", f"{shown(mode)}: expected one of "
                                                f"{', '.join(LAYOUT_MODES)}")
        return Scenario(name=str(name), path=self.path, model=model, layout=layout,
                        fixed=fixed, framework=framework, cluster=cluster, tokens=tokens,
                        definition=strip_lines(self.doc),
                        lines={k: v for k, v in lines.items() if v}, expert_dp=expert_dp,
                        layout_mode=str(mode))

    def engine_limits(self, parallel: dict[str, Any], fixed: dict[str, int | bool],
                      model: TransformerSpec) -> None:
        """A TP or EP given that Megatron cannot run with this model (TP 3 on 64 heads, EP
        256 on 128 experts) is the file's error, named by its key, whatever else is swept."""
        tp, ep = fixed.get("tp"), fixed.get("ep")
        for refusal in training_refusals(None if tp is None else int(tp),
                                         None if ep is None else int(ep),
                                         model.heads, model.groups, model.experts):
            self.fail(parallel, refusal.key, f"parallel.{refusal.key}", refusal.reason)

    def number(self, section: dict[str, Any], key: str, name: str, kind: type) -> Any:
        """A finite, non-negative number (a whole one when `kind` is int); YAML reads 300e9
        as text, so a number written as text is read too."""
        value = section[key]
        number = finite_number(value)
        if number is None:
            self.fail(section, key, name, f"expected a {NON_FINITE if is_numeric(value) else ''}"
                                          f"number, got {shown(value)}")
        assert number is not None
        if number < 0:
            self.fail(section, key, name, f"expected a non-negative number, got {shown(value)}")
        if kind is int:
            if number != int(number):
                self.fail(section, key, name, f"expected a whole number, got {shown(value)}")
            return value if isinstance(value, int) else int(number)
        return kind(number)

    def count(self, section: dict[str, Any], key: str, name: str, smallest: int = 1) -> int:
        """A whole number from `smallest` to MAX_COUNT: a count of layers, GPUs, sequences."""
        value: int = self.number(section, key, name, int)
        if value < smallest:
            self.fail(section, key, name, f"must be at least {smallest}, got {value}")
        if value > MAX_COUNT:
            self.fail(section, key, name, f"must be at most {MAX_COUNT:,}, got {value:,}")
        return value

    def item(self, section: dict[str, Any], key: str, name: str) -> str:
        """A ledger item's key: one name, not a list or a mapping."""
        value = section[key]
        if isinstance(value, bool) or not isinstance(value, str | int) or not str(value).strip():
            self.fail(section, key, name, f"expected the key of a ledger item, got {shown(value)}")
        return str(value)

    def flag(self, section: dict[str, Any], key: str, name: str) -> bool:
        value = section[key]
        if not isinstance(value, bool):
            self.fail(section, key, name, f"expected true or false, got {value!r}")
        return bool(value)

    def model(self) -> TransformerSpec:
        raw = self.section("model")
        ints = {"layers", "hidden", "heads", "seq_len", "vocab", "ffn", "kv_heads", "experts",
                "top_k", "moe_ffn", "moe_every", "head_dim", "shared_ffn"}
        counts_from_zero = {"first_dense_layers", "shared_experts"}
        flags = {"swiglu", "tied_embeddings"}
        self.unknown_keys(raw, ints | counts_from_zero | flags | {"name"}, "model")
        if "name" in raw:  # what the briefing calls the workload; the shape is the model
            name = raw["name"]
            if (not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME_LENGTH
                    or not name.isprintable()):
                self.fail(raw, "name", "model.name", f"{shown(name)}: expected a printable "
                                                     f"name of at most {MAX_NAME_LENGTH} "
                                                     "characters")
        values: dict[str, Any] = {k: self.count(raw, k, f"model.{k}") for k in ints if k in raw}
        values.update({k: self.count(raw, k, f"model.{k}", smallest=0)
                       for k in counts_from_zero if k in raw})
        values.update({k: self.flag(raw, k, f"model.{k}") for k in flags if k in raw})
        for key in ("layers", "hidden", "heads", "seq_len", "vocab"):
            if key not in values:
                self.fail(raw, "", f"model.{key}", "missing")
        try:
            return TransformerSpec(**values)
        except ValueError as exc:
            self.fail(raw, "", "model", str(exc))
            raise  # unreachable: fail raises

    def layout(self, raw: dict[str, Any]) -> tuple[Layout, dict[str, int | bool], int | None]:
        """The layout, the choices the file fixes (for sweep), and parallel.edp as written."""
        ints = {"tp", "pp", "dp", "ep", "micro_batch", "global_batch", "interleave", "zero",
                "cp", "etp", "edp", "first_stage_layers", "last_stage_layers",
                "recompute_layers", "offload_layers"}
        from_zero = {"zero", "recompute_layers", "offload_layers"}
        self.unknown_keys(raw, ints | {"sequence_parallel", "recompute"}, "parallel")
        fixed: dict[str, int | bool] = {
            k: self.count(raw, k, f"parallel.{k}", smallest=0 if k in from_zero else 1)
            for k in ints if k in raw}
        # edp follows from the others (tp x cp x dp / (etp x ep)); given, it is checked.
        expert_dp = fixed.pop("edp", None)
        if "global_batch" not in fixed:
            self.fail(raw, "", "parallel.global_batch", "missing")
        if "sequence_parallel" in raw:
            fixed["sequence_parallel"] = self.flag(raw, "sequence_parallel",
                                                   "parallel.sequence_parallel")
        if "recompute" in raw:
            try:
                fixed["recompute"] = int(Recompute.parse(str(raw["recompute"])))
            except ValueError as exc:
                self.fail(raw, "recompute", "parallel.recompute", str(exc))
        if "zero" in fixed and fixed["zero"] not in (0, 1, 2, 3):
            self.fail(raw, "zero", "parallel.zero", "must be 0, 1, 2 or 3")
        values = {**fixed}
        values["recompute"] = Recompute(values.get("recompute", Recompute.NONE))
        return Layout(**values), fixed, expert_dp  # type: ignore[arg-type,return-value]

    def framework(self) -> Framework:
        raw = self.section("framework", required=False)
        allowed = {"flash_attention", "tp_overlap", "dp_overlap", "dropout",
                   "grad_reduce_in_fp32", "ep_overlap"}
        self.unknown_keys(raw, allowed, "framework")
        return Framework(**{k: self.flag(raw, k, f"framework.{k}") for k in allowed if k in raw})

    def cluster(self) -> ClusterRequest:
        raw = self.section("cluster")
        self.unknown_keys(raw, {"gpu", "gpu_specs", "scale_up", "scale_out", "gpus"}, "cluster")
        inline: dict[str, Quantity] = {}
        items: dict[str, str] = {}
        words: dict[str, str] = {}
        for part in ("gpu_specs", "scale_up", "scale_out"):
            section = raw.get(part) or {LINES: {}}
            if not isinstance(section, dict):
                self.fail(raw, part, f"cluster.{part}", "expected a mapping")
            allowed = {k for s, k in (*QUANTITIES, *_NUMBERS, *_ITEMS, *_WORDS) if s == part}
            self.unknown_keys(section, allowed, f"cluster.{part}")
            for key in section:
                if key == LINES:
                    continue
                name = f"cluster.{part}.{key}"
                if (part, key) in _ITEMS:
                    items[f"{part}.{key}"] = self.item(section, key, name)
                elif (part, key) in _WORDS:
                    words[f"{part}.{key}"] = self.item(section, key, name).strip().lower()
                elif (part, key) in _NUMBERS:
                    inline[f"{part}.{key}"] = Quantity(self.plain(section, key, name),
                                                       str(section[key]))
                else:
                    inline[f"{part}.{key}"] = self.quantity(section, key, name, part)
        gpus = self.count(raw, "gpus", "cluster.gpus") if "gpus" in raw else None
        gpu = self.item(raw, "gpu", "cluster.gpu") if raw.get("gpu") is not None else None
        return ClusterRequest(gpu=gpu, scale_up_item=items.get("scale_up.item"),
                              scale_up_system=items.get("scale_up.system"),
                              scale_out_item=items.get("scale_out.item"), inline=inline,
                              gpus=gpus, arch=words.get("gpu_specs.arch"))

    def quantity(self, section: dict[str, Any], key: str, name: str, part: str) -> Quantity:
        unit, counts, si_unit = QUANTITIES[(part, key)]
        si = si_factor(unit, si_unit)
        text = section[key]
        match = QUANTITY_TEXT.match(text) if isinstance(text, str) else None
        if match is None:
            self.fail(section, key, name, f"expected a quantity with a unit, e.g. \"1 {unit}\", "
                                          f"got {shown(text)}")
        assert match is not None
        try:
            factor = conversion_factor(match.group(2), unit, counts)  # type: ignore[arg-type]
        except UnitError as exc:
            self.fail(section, key, name, str(exc))
        value = float(match.group(1)) * factor * si  # "1e400 GB" is inf: refused here
        if not math.isfinite(value) or value <= 0:
            self.fail(section, key, name, f"expected a positive, finite quantity, got "
                                          f"{shown(text)}")
        return Quantity(value, str(text))

    def plain(self, section: dict[str, Any], key: str, name: str) -> float:
        """A plain number of the cluster: a count of GPUs, NICs per GPU, an efficiency."""
        if key == "domain_gpus":
            return float(self.count(section, key, name))
        value: float = self.number(section, key, name, float)
        highest = 1.0 if key == "efficiency" else math.inf  # a fraction of the line rate
        if not 0 < value <= highest:
            self.fail(section, key, name, f"must be above 0{' and at most 1' * (highest == 1)},"
                                          f" got {shown(section[key])}")
        return value


# The C2C reader's field checks (numbers, counts, item keys) and its cluster block, which the
# other scenario kinds (serving) read with the same rules and messages.
FieldReader = _Reader
