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
        deployment: {tp: 8}           # tp, dp (attention replicas), ep (MoE)
        price: {market: {gpu: h100-sxm5, term: on_demand}}
      - name: b200-tp8
        ...
        price: {usd_per_gpu_hour: 3.2}       # or {tco: <tco scenario>, option: <its option>}
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from models.c2c.spec import Precision
from models.serving.presets import PRESETS
from models.serving.spec import Deployment, RequestShape, ServingLLM, WeightFormat
from pipelines.inputs.limits import DEFAULT_LIMITS, InputLimits
from pipelines.inputs.scenarios import (
    LINES,
    ClusterRequest,
    DocumentReader,
    FieldReader,
    ScenarioError,
    read_document,
    strip_lines,
)

MAX_OPTIONS = 12
KV_BYTES = {"bf16": 2.0, "fp8": 1.0}
# The GEMM peak a weight format runs at.
PEAK_OF = {WeightFormat.BF16: Precision.BF16, WeightFormat.FP8: Precision.FP8,
           WeightFormat.FP4: Precision.FP4}
_MODEL_INTS = {"layers", "hidden", "heads", "kv_heads", "head_dim", "experts", "top_k",
               "moe_layers", "kv_elements"}
_MODEL_FLOATS = {"total_params", "active_params"}


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
    deployment: Deployment
    price: Price


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
    shown, document = read_document(path, "name, kind: serving, model, options ...")
    return _ServingReader(shown, document).scenario()


class _ServingReader(DocumentReader):
    def __init__(self, path: str, document: dict[str, Any]) -> None:
        super().__init__(path, document)
        self.numbers = FieldReader(path, document)   # number() and count() as the C2C reader has

    def scenario(self) -> ServingScenario:
        self.unknown_keys(self.doc, {"name", "kind", "description", "model", "precision",
                                     "kv_cache", "request", "target_tok_s_per_user",
                                     "options"}, "")
        name = self.doc.get("name")
        if not isinstance(name, str) or not name.strip():
            self.fail(None, "name", "name", "missing: every scenario needs a name")
        if self.doc.get("kind") != "serving":
            self.fail(None, "kind", "kind", f"expected serving, got {self.doc.get('kind')!r}")
        weights = self.choice("precision", {w.value: w for w in WeightFormat})
        kv = self.choice("kv_cache", KV_BYTES, default="fp8")
        model, key = self.model()
        request = self.request()
        if "target_tok_s_per_user" not in self.doc:
            self.fail(None, "target_tok_s_per_user", "target_tok_s_per_user", "missing")
        target = self.numbers.number(self.doc, "target_tok_s_per_user",
                                     "target_tok_s_per_user", float)
        if target <= 0:
            self.fail(None, "target_tok_s_per_user", "target_tok_s_per_user",
                      "must be positive")
        options = self.options(weights, kv)
        return ServingScenario(name=str(name), path=self.path, model=model, model_key=key,
                               weights=weights, request=request,
                               target_tok_s_per_user=target, options=options,
                               definition=strip_lines(self.doc))

    def choice(self, key: str, allowed: dict[str, Any], default: str | None = None) -> Any:
        value = self.doc.get(key, default)
        if value is None:
            self.fail(None, key, key, f"missing; one of {', '.join(allowed)}")
        if str(value).lower() not in allowed:
            self.fail(None, key, key, f"expected one of {', '.join(allowed)}, got {value!r}")
        return allowed[str(value).lower()]

    def model(self) -> tuple[ServingLLM, str]:
        raw = self.doc.get("model")
        if isinstance(raw, str):
            if raw not in PRESETS:
                self.fail(None, "model", "model", f"unknown model {raw!r}; a preset "
                          f"({', '.join(sorted(PRESETS))}) or a mapping of its shape")
            return PRESETS[raw], raw
        if not isinstance(raw, dict):
            self.fail(None, "model", "model", "missing: a preset name or a mapping")
        allowed = _MODEL_INTS | _MODEL_FLOATS | {"name", "latent_kv", "source"}
        self.unknown_keys(raw, allowed, "model")
        values: dict[str, Any] = {
            k: self.numbers.count(raw, k, f"model.{k}", smallest=0 if k in (
                "experts", "top_k", "moe_layers") else 1) for k in _MODEL_INTS if k in raw}
        values.update({k: self.numbers.number(raw, k, f"model.{k}", float)
                       for k in _MODEL_FLOATS if k in raw})
        for key in ("layers", "hidden", "heads", "total_params"):
            if key not in values:
                self.fail(raw, "", f"model.{key}", "missing")
        values.setdefault("kv_heads", values["heads"])
        values.setdefault("head_dim", values["hidden"] // values["heads"])
        values.setdefault("active_params", values["total_params"])
        name = str(raw.get("name") or self.doc.get("name"))
        try:
            model = ServingLLM(name=name, latent_kv=bool(raw.get("latent_kv", False)),
                               source=str(raw.get("source", "scenario")), **values)
        except ValueError as exc:
            self.fail(raw, "", "model", str(exc))
            raise
        return model, name

    def request(self) -> RequestShape:
        raw = self.doc.get("request")
        if not isinstance(raw, dict):
            self.fail(None, "request", "request", "missing: input_tokens and output_tokens")
        self.unknown_keys(raw, {"input_tokens", "output_tokens"}, "request")
        for key in ("input_tokens", "output_tokens"):
            if key not in raw:
                self.fail(raw, "", f"request.{key}", "missing")
        return RequestShape(self.numbers.count(raw, "input_tokens", "request.input_tokens"),
                            self.numbers.count(raw, "output_tokens", "request.output_tokens"))

    def options(self, weights: WeightFormat, kv: float) -> tuple[ServingOption, ...]:
        raw = self.doc.get("options")
        if not isinstance(raw, list) or not raw:
            self.fail(None, "options", "options", "missing: a list of options to compare")
        if len(raw) > MAX_OPTIONS:
            self.fail(None, "options", "options", f"{len(raw)} options; at most {MAX_OPTIONS}")
        options, names = [], set()
        for n, option in enumerate(raw):
            where = f"options[{n}]"
            if not isinstance(option, dict):
                self.fail(None, "options", where, "expected a mapping")
            self.unknown_keys(option, {"name", "cluster", "deployment", "price"}, where)
            name = option.get("name")
            if not isinstance(name, str) or not name.strip():
                self.fail(option, "name", f"{where}.name", "missing")
            if name in names:
                self.fail(option, "name", f"{where}.name", f"{name!r} is named twice")
            names.add(name)
            try:   # the C2C reader's cluster block, read from this option
                cluster = FieldReader(self.path, option).cluster()
            except ScenarioError as exc:
                raise ScenarioError(self.path, exc.line, f"{where}.{exc.field}",
                                    exc.reason) from exc
            options.append(ServingOption(
                str(name), _with_precision(cluster, weights),
                self.deployment(option, where, weights, kv), self.price(option, where)))
        return tuple(options)

    def deployment(self, option: dict[str, Any], where: str, weights: WeightFormat,
                   kv: float) -> Deployment:
        raw = option.get("deployment") or {LINES: {}}
        if not isinstance(raw, dict):
            self.fail(option, "deployment", f"{where}.deployment", "expected a mapping")
        self.unknown_keys(raw, {"tp", "dp", "ep"}, f"{where}.deployment")
        sizes = {k: self.numbers.count(raw, k, f"{where}.deployment.{k}")
                 for k in ("tp", "dp", "ep") if k in raw}
        try:
            return Deployment(weights=weights, kv_bytes=kv, **sizes)
        except ValueError as exc:
            self.fail(raw, "", f"{where}.deployment", str(exc))
            raise

    def price(self, option: dict[str, Any], where: str) -> Price:
        raw = option.get("price")
        name = f"{where}.price"
        if not isinstance(raw, dict):
            self.fail(option, "price", name, "missing: usd_per_gpu_hour, market or tco")
        self.unknown_keys(raw, {"usd_per_gpu_hour", "market", "tco", "option"}, name)
        given = [k for k in ("usd_per_gpu_hour", "market", "tco") if k in raw]
        if len(given) != 1:
            self.fail(raw, "", name, "give exactly one of usd_per_gpu_hour, market, tco")
        if "usd_per_gpu_hour" in raw:
            value = self.numbers.number(raw, "usd_per_gpu_hour", f"{name}.usd_per_gpu_hour",
                                        float)
            if value <= 0:
                self.fail(raw, "usd_per_gpu_hour", f"{name}.usd_per_gpu_hour",
                          "must be positive")
            return Price(usd_per_gpu_hour=value)
        if "market" in raw:
            market = raw["market"]
            if not isinstance(market, dict) or "gpu" not in market:
                self.fail(raw, "market", f"{name}.market", "expected {gpu: <item>, term: ...}")
            self.unknown_keys(market, {"gpu", "term"}, f"{name}.market")
            return Price(market_gpu=self.numbers.item(market, "gpu", f"{name}.market.gpu"),
                         market_term=str(market.get("term", "on_demand")))
        if "option" not in raw:
            self.fail(raw, "tco", f"{name}.option", "missing: which option of the TCO scenario")
        return Price(tco_scenario=self.numbers.item(raw, "tco", f"{name}.tco"),
                     tco_option=self.numbers.item(raw, "option", f"{name}.option"))


def _with_precision(cluster: ClusterRequest, weights: WeightFormat) -> ClusterRequest:
    """The cluster asks for the peak of the weights' precision (FP8 GEMMs on FP8 weights)."""
    return replace(cluster, precision=PEAK_OF[weights])
