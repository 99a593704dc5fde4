"""`kind: serving` scenario files: a model, its precision, a request shape, a target
interactivity, and the options to serve it on, each with its cluster, its deployment and
where its price per GPU-hour comes from. Every failure names the file, the line and the field.

    name: serving-llama-3.3-70b-fp8
    kind: serving
    model: llama-3.3-70b              # a preset (models.serving.presets), or a mapping
    precision: fp8                    # the weights: bf16, fp8 or fp4
    kv_cache: fp8                     # bf16 or fp8 (default fp8)
    request: {input_tokens: 1024, output_tokens: 1024}
    target_tok_s_per_user: 50
    options:
      - name: h100-tp8
        cluster: {gpu: h100-sxm5, scale_up: {item: nvlink-4, system: dgx-h100},
                  scale_out: {item: ib-ndr}}
        deployment: {tp: 8}           # tp, dp (attention replicas), ep (MoE), engine
        layout: search                # the default: the best layout; `pinned`: this one
        price: {market: {gpu: h100-sxm5, term: on_demand}}
      - name: b200-tp8
        ...
        price: {usd_per_gpu_hour: 3.2}       # or {tco: <tco scenario>, option: <its option>}

`layout` (per option, or for every option at the top): `search` (the default) answers at the
option's best layout of the space the measurements cover (models/serving/layouts.py), with
the file's `deployment` kept beside it for reference and its engine, formats and batch limit
kept; `pinned` answers at the file's deployment.

Each section is a pydantic model (pipelines/inputs/scenario_models.py maps its errors back to
file, line and field).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any, ClassVar, TypeVar

from pydantic import (
    BeforeValidator,
    Discriminator,
    Field,
    Tag,
    ValidationInfo,
    field_validator,
    model_validator,
)

from models.c2c.spec import Precision
from models.parallel_limits import serving_refusals
from models.serving.presets import PRESETS
from models.serving.spec import (
    DEFAULT_ENGINE,
    DEFAULT_MAX_BATCH,
    Deployment,
    RequestShape,
    ServingLLM,
    WeightFormat,
)
from pipelines.inputs.limits import DEFAULT_LIMITS, InputLimits
from pipelines.inputs.scenario_models import (
    ERROR_TYPE,
    TAG,
    Section,
    cluster,
    count,
    fail,
    item,
    number,
    positive,
    read_scenario,
    validate,
)
from pipelines.inputs.scenarios import (
    LAYOUT_MODES,
    LINES,
    MAX_NAME_LENGTH,
    ClusterRequest,
    shown,
    strip_lines,
)

MAX_OPTIONS = 12
KV_BYTES = {"bf16": 2.0, "fp8": 1.0}
# The GEMM peak a weight format runs at.
PEAK_OF = {WeightFormat.BF16: Precision.BF16, WeightFormat.FP8: Precision.FP8,
           WeightFormat.FP4: Precision.FP4}
T = TypeVar("T")


@dataclass(frozen=True)
class Price:
    """Where an option's USD per GPU-hour comes from: one of the three."""

    usd_per_gpu_hour: float | None = None
    market_gpu: str | None = None
    market_term: str = "on_demand"
    tco_scenario: str | None = None
    tco_option: str | None = None


@dataclass(frozen=True)
class ServingOption:
    name: str
    cluster: ClusterRequest
    deployment: Deployment      # the file's
    price: Price
    layout: str = "search"      # LAYOUT_MODES: search the covered space, or pin `deployment`


@dataclass(frozen=True)
class ServingScenario:
    name: str
    path: str
    model: ServingLLM
    model_key: str            # the preset's key, or the mapping's name
    weights: WeightFormat
    request: RequestShape
    target_tok_s_per_user: float
    options: tuple[ServingOption, ...]
    definition: dict[str, Any]


def load_serving_scenario(path: Path,
                          limits: InputLimits = DEFAULT_LIMITS) -> ServingScenario:
    """Read and validate one `kind: serving` scenario file."""
    where, document = read_scenario(path, "name, kind: serving, model, options ...", limits)
    read: _ServingFile = validate(_ServingFile, where, document,
                                  context={"name": document.get("name")})
    return read.scenario(where, strip_lines(document))


# -- field types --------------------------------------------------------------------------------

Count = Annotated[int, BeforeValidator(count)]
CountFromZero = Annotated[int, BeforeValidator(lambda value: count(value, 0))]
Number = Annotated[float, BeforeValidator(number)]
Item = Annotated[str, BeforeValidator(item)]


def _text(value: Any) -> str:
    """A word as written (a number too); a list or mapping is no word."""
    if isinstance(value, dict | list):
        raise fail(f"expected text, got {shown(value)}")
    return str(value)


Text = Annotated[str, BeforeValidator(_text)]
ShortText = Annotated[str, BeforeValidator(lambda value: _short(_text(value)))]


def _choice(allowed: dict[str, T]) -> Callable[[Any], T]:
    """A value of `allowed` by its key, written in any case."""
    def check(value: Any) -> T:
        if value is None:
            raise fail(f"missing; one of {', '.join(allowed)}")
        if str(value).lower() not in allowed:
            raise fail(f"expected one of {', '.join(allowed)}, got {shown(value)}")
        return allowed[str(value).lower()]
    return check


def _name(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise fail("missing")
    return _short(value)


def _short(value: str) -> str:
    """A name a page-1 line can print: at most MAX_NAME_LENGTH characters."""
    if len(value) > MAX_NAME_LENGTH:
        raise fail(f"{len(value)} characters; a name is at most {MAX_NAME_LENGTH}")
    return value


# -- sections -----------------------------------------------------------------------------------

class _ModelShape(Section):
    """A model given by its shape rather than a preset's name."""

    name: ShortText | None = Field(None, validate_default=False)
    layers: Count
    hidden: Count
    heads: Count
    kv_heads: Count | None = Field(None, validate_default=False)
    head_dim: Count | None = Field(None, validate_default=False)
    total_params: Number
    active_params: Number | None = Field(None, validate_default=False)
    experts: CountFromZero = 0
    top_k: CountFromZero = 0
    moe_layers: CountFromZero = 0
    kv_elements: Count | None = Field(None, validate_default=False)
    latent_kv: Annotated[bool, BeforeValidator(bool)] = False
    sliding_window: CountFromZero = 0
    sliding_layers: CountFromZero = 0
    source: Text = "scenario"

    def spec(self, scenario_name: Any) -> ServingLLM:
        """The model, named by the mapping or else by the scenario; ValueError if contradictory."""
        return ServingLLM(
            name=str(self.name or scenario_name), layers=self.layers, hidden=self.hidden,
            heads=self.heads, kv_heads=self.kv_heads or self.heads,
            head_dim=self.head_dim or self.hidden // self.heads,
            total_params=self.total_params, active_params=self.active_params
            if self.active_params is not None else self.total_params,
            experts=self.experts, top_k=self.top_k, moe_layers=self.moe_layers,
            kv_elements=self.kv_elements, latent_kv=self.latent_kv,
            sliding_window=self.sliding_window, sliding_layers=self.sliding_layers,
            source=self.source)

    @model_validator(mode="after")
    def _consistent(self, info: ValidationInfo) -> _ModelShape:
        try:
            self.spec((info.context or {}).get("name"))
        except ValueError as exc:
            raise fail(str(exc), whole=True) from None
        if self.moe_layers > self.layers:
            raise fail(f"{self.moe_layers} MoE layers is more than the model's {self.layers} "
                       "layers", "moe_layers")
        if self.experts and self.top_k == self.experts:
            # The experts' weights are (total - active) / (1 - top_k / experts): with every
            # expert picked, total = active and nothing tells how much of it is experts.
            raise fail(f"top_k equal to experts ({self.experts}): every token reads every "
                       "expert, so total_params and active_params cannot tell the experts' "
                       "weights; give top_k below experts, or experts: 0 for a dense model",
                       "top_k")
        return self


def _model_kind(value: Any) -> str | None:
    if isinstance(value, str):
        return f"{TAG}preset"
    return f"{TAG}shape" if isinstance(value, dict) else None


def _preset(value: str) -> str:
    if value not in PRESETS:
        raise fail(f"unknown model {value!r}; a preset ({', '.join(sorted(PRESETS))}) or a "
                   "mapping of its shape")
    return value


ModelField = Annotated[
    Annotated[str, BeforeValidator(_preset), Tag(f"{TAG}preset")]
    | Annotated[_ModelShape, Tag(f"{TAG}shape")],
    Discriminator(_model_kind, custom_error_type=ERROR_TYPE, custom_error_message="{reason}",
                  custom_error_context={"reason": "missing: a preset name or a mapping"})]


class _Request(Section):
    expected: ClassVar[str] = "missing: input_tokens and output_tokens"
    input_tokens: Count
    output_tokens: Count

    def shape(self) -> RequestShape:
        return RequestShape(self.input_tokens, self.output_tokens)


class _Deployment(Section):
    """tp per attention replica, dp replicas, pp stages (each 1 when left out); ep GPUs for
    whole experts (left out: the experts split across the GPUs by TP, the engines' default);
    max_batch, the engine's limit on running sequences per replica; prefill_gpus, GPUs of a
    disaggregated prefill pool (0: aggregated); engine, the serving engine whose terms the
    model adds (sglang, trt, vllm or atom; left out: sglang, the reference engine)."""

    tp: Count = 1
    dp: Count = 1
    ep: Count | None = Field(None, validate_default=False)
    pp: Count = 1
    max_batch: Count = DEFAULT_MAX_BATCH
    prefill_gpus: CountFromZero = 0
    engine: str = DEFAULT_ENGINE

    def spec(self, weights: WeightFormat = WeightFormat.FP8, kv: float = 1.0) -> Deployment:
        return Deployment(tp=self.tp, dp=self.dp, ep=self.ep, pp=self.pp, weights=weights,
                          kv_bytes=kv, max_batch=self.max_batch,
                          prefill_gpus=self.prefill_gpus, engine=self.engine)

    @model_validator(mode="after")
    def _fits(self) -> _Deployment:
        try:
            self.spec()
        except ValueError as exc:
            raise fail(str(exc), whole=True) from None
        return self


class _Market(Section):
    expected: ClassVar[str] = "expected {gpu: <item>, term: ...}"
    gpu: Item
    term: Text = "on_demand"

    @classmethod
    def precheck(cls, data: dict[str, Any]) -> dict[str, Any]:
        if "gpu" not in data:
            raise fail(cls.expected)
        return data


class _Price(Section):
    expected: ClassVar[str] = "missing: usd_per_gpu_hour, market or tco"
    usd_per_gpu_hour: Annotated[float, BeforeValidator(positive)] | None = Field(
        None, validate_default=False)
    market: _Market | None = Field(None, validate_default=False)
    tco: Item | None = Field(None, validate_default=False)
    option: Item | None = Field(None, validate_default=False)

    @classmethod
    def precheck(cls, data: dict[str, Any]) -> dict[str, Any]:
        if sum(k in data for k in ("usd_per_gpu_hour", "market", "tco")) != 1:
            raise fail("give exactly one of usd_per_gpu_hour, market, tco", whole=True)
        if "tco" in data and "option" not in data:
            raise fail("missing: which option of the TCO scenario", "option", line_at="tco")
        return data

    def price(self) -> Price:
        if self.usd_per_gpu_hour is not None:
            return Price(usd_per_gpu_hour=self.usd_per_gpu_hour)
        if self.market is not None:
            return Price(market_gpu=self.market.gpu, market_term=self.market.term)
        return Price(tco_scenario=self.tco, tco_option=self.option)


Layout = Annotated[str, BeforeValidator(_choice({m: m for m in LAYOUT_MODES}))]


class _Option(Section):
    name: Annotated[str, BeforeValidator(_name)] = None  # type: ignore[assignment]
    cluster: ClusterRequest = None  # type: ignore[assignment]
    deployment: _Deployment = Field(default_factory=dict)  # type: ignore[arg-type]
    # Left out: the scenario's `layout` (search unless it says pinned).
    layout: Layout | None = Field(None, validate_default=False)
    # The option's KV-cache format; left out, the scenario's.
    kv_cache: Annotated[float, BeforeValidator(_choice(KV_BYTES))] | None = Field(
        None, validate_default=False)
    price: _Price = None  # type: ignore[assignment]

    @field_validator("cluster", mode="before")
    @classmethod
    def _cluster(cls, value: Any, info: ValidationInfo) -> ClusterRequest:
        """The C2C scenarios' cluster block, read by their reader with its messages."""
        return cluster({"cluster": value, LINES: info.data.get("lines", {})})

    @field_validator("deployment", mode="before")
    @classmethod
    def _default_deployment(cls, value: Any) -> Any:
        return value or {}  # an empty or null deployment: one GPU per role

    def option(self, weights: WeightFormat, kv: float, layout: str) -> ServingOption:
        # The cluster asks for the peak of the weights' precision (FP8 GEMMs on FP8 weights).
        kv = self.kv_cache if self.kv_cache is not None else kv
        return ServingOption(self.name, replace(self.cluster, precision=PEAK_OF[weights]),
                             self.deployment.spec(weights, kv), self.price.price(),
                             self.layout or layout)


def _options(value: Any) -> Any:
    if not isinstance(value, list) or not value:
        raise fail("missing: a list of options to compare")
    if len(value) > MAX_OPTIONS:
        raise fail(f"{len(value)} options; at most {MAX_OPTIONS}")
    return value


def _kind(value: Any) -> str:
    if value != "serving":
        raise fail(f"expected serving, got {shown(value)}")
    return value


def _scenario_name(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise fail("missing: every scenario needs a name")
    return _short(value)


def _target(value: Any) -> float:
    if value is None:
        raise fail("missing")
    return positive(value)


class _ServingFile(Section):
    """The whole file; fields in the order they are checked (the first error is reported)."""

    name: Annotated[str, BeforeValidator(_scenario_name)] = None  # type: ignore[assignment]
    kind: Annotated[str, BeforeValidator(_kind)] = None  # type: ignore[assignment]
    description: Any = None
    precision: Annotated[WeightFormat, BeforeValidator(_choice(
        {w.value: w for w in WeightFormat}))] = None  # type: ignore[assignment]
    kv_cache: Annotated[float, BeforeValidator(_choice(KV_BYTES))] = "fp8"  # type: ignore[assignment]
    model: ModelField = None  # type: ignore[assignment]
    request: _Request = None  # type: ignore[assignment]
    target_tok_s_per_user: Annotated[float, BeforeValidator(_target)] = None  # type: ignore[assignment]
    layout: Layout = "search"
    options: Annotated[list[_Option], BeforeValidator(_options)] = None  # type: ignore[assignment]

    @model_validator(mode="after")
    def _distinct_names(self) -> _ServingFile:
        names: set[str] = set()
        for n, option in enumerate(self.options):
            if option.name in names:
                raise fail(f"{option.name!r} is named twice", "options", n, "name")
            names.add(option.name)
        return self

    @model_validator(mode="after")
    def _engines_run_it(self) -> _ServingFile:
        """A deployment no engine can run with this model (TP 3 on 64 heads, EP 256 on 128
        experts): models/parallel_limits.py, named by the option's key."""
        model = PRESETS[self.model] if isinstance(self.model, str) else self.model.spec(self.name)
        for n, option in enumerate(self.options):
            dep = option.deployment
            for refusal in serving_refusals(dep.tp, dep.ep or 1, model.heads, model.kv_heads,
                                            model.latent_kv, model.experts, pp=dep.pp,
                                            layers=model.layers):
                raise fail(refusal.reason, "options", n, "deployment", refusal.key)
        return self

    def scenario(self, path: str, definition: dict[str, Any]) -> ServingScenario:
        if isinstance(self.model, str):
            model, key = PRESETS[self.model], self.model
        else:
            model = self.model.spec(self.name)
            key = model.name
        return ServingScenario(
            name=self.name, path=path, model=model, model_key=key, weights=self.precision,
            request=self.request.shape(), target_tok_s_per_user=self.target_tok_s_per_user,
            options=tuple(o.option(self.precision, self.kv_cache, self.layout)
                          for o in self.options),
            definition=definition)
