"""The recompute graph's stored results as typed records: what every reader (the briefing,
the CLI, the e-mail digest) gets from a stage, so that one question has one answer.

Each stage stores its result as JSON (the ledger keeps it byte for byte); `from_json` reads
it back once, here, instead of chains of `.get()` wherever a figure is printed. Pure: plain
data in, frozen dataclasses out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from models.dates import shown
from models.tco.decision import Band, Margin

ON_DEMAND = "on_demand"


@dataclass(frozen=True)
class LayoutChoice:
    """How a C2C result's layout was chosen: searched ("search": the fastest that fits in the
    space the calibration covers) or the file's own ("pinned"); its parallel scheme, whether
    the calibration covers it, and the band's basis."""

    mode: str
    scheme: str | None
    covered: bool
    band_days: tuple[float, float] | None
    band_basis: str | None
    searched: int | None = None            # layouts evaluated / that fit (search only)
    fit: int | None = None
    written_days: float | None = None      # the file's own layout, beside a searched one
    written_error: str | None = None

    @classmethod
    def from_json(cls, result: Mapping[str, Any],
                  definition: Mapping[str, Any]) -> LayoutChoice:
        choice = result.get("layout_choice") or {
            "mode": "pinned" if definition.get("layout") == "pinned" else "unknown"}
        band = result.get("band") or {}
        days = band.get("time_to_train_days")
        written = choice.get("written") or {}
        return cls(mode=str(choice["mode"]), scheme=band.get("scheme"),
                   covered=bool(band.get("covered", True)),
                   band_days=(float(days[0]), float(days[1])) if days else None,
                   band_basis=band.get("basis"), searched=choice.get("evaluated"),
                   fit=choice.get("fit"), written_days=written.get("time_to_train_days"),
                   written_error=written.get("error"))


@dataclass(frozen=True)
class C2CRecord:
    """A C2C scenario's stored estimate on a dataset version, with what its definition says
    of the workload and the cluster."""

    scenario: str
    gpus: int
    t_iter_s: float
    c2c: float
    c2c_scale_up: float
    c2c_scale_out: float
    c2c_class: str
    recommended_fabric: str
    mfu: float
    time_to_train_days: float | None
    specs: tuple[Mapping[str, Any], ...]   # every hardware figure with its origin and source
    model: Mapping[str, Any]               # the definition's model section
    parallel: Mapping[str, Any]            # the layout the result is for (searched or pinned)
    cluster: Mapping[str, Any]
    layout: LayoutChoice | None = None     # how that layout was chosen
    # What the job is: the model's name (None: the file gives none), its parameters, tokens.
    model_name: str | None = None
    parameters: float | None = None
    tokens: float | None = None
    # C2C were none of the communication hidden behind compute (None: an older result).
    c2c_link: float | None = None

    @classmethod
    def from_json(cls, result: Mapping[str, Any], definition: Mapping[str, Any]) -> C2CRecord:
        # A searched result's `parallel` is the layout found; the definition's is the file's.
        parallel = result.get("parallel") or definition.get("parallel") or {}
        return cls(
            scenario=str(result["scenario"]), gpus=int(result["gpus"]),
            t_iter_s=float(result["t_iter_s"]), c2c=float(result["c2c"]),
            c2c_scale_up=float(result["c2c_scale_up"]),
            c2c_scale_out=float(result["c2c_scale_out"]), c2c_class=str(result["class"]),
            recommended_fabric=str(result["recommended_fabric"]), mfu=float(result["mfu"]),
            time_to_train_days=result.get("time_to_train_days"),
            specs=tuple(s for s in result.get("specs") or () if isinstance(s, Mapping)),
            model=definition.get("model") or {}, parallel=parallel,
            cluster=definition.get("cluster") or {},
            layout=LayoutChoice.from_json(result, definition),
            model_name=(result.get("workload") or {}).get("model")
            or (definition.get("model") or {}).get("name"),
            parameters=(result.get("workload") or {}).get("parameters"),
            tokens=(result.get("workload") or {}).get("tokens") or definition.get("tokens"),
            c2c_link=(float(result["c2c_link"]) if result.get("c2c_link") is not None
                      else None))

    def spec(self, name: str) -> Mapping[str, Any] | None:
        """The hardware figure the estimate read under `name` ("domain_gpus", ...)."""
        return next((s for s in self.specs if s.get("name") == name), None)


@dataclass(frozen=True)
class Rent:
    """What the market charges to rent one GPU for an hour on one term: the version's stored
    price index (median and quartiles over the offers, the cheapest offer)."""

    term: str
    median: float
    p25: float
    p75: float
    offers: int
    cheapest: float
    cheapest_provider: str
    # Price dates (valid time): the newest and oldest of the offers counted (results stored
    # before the index kept them give the version's date as as_of, and no price_from).
    as_of: str | None = None
    price_from: str | None = None

    @classmethod
    def from_json(cls, term: str, data: Mapping[str, Any]) -> Rent:
        return cls(term, float(data["median"]), float(data["p25"]), float(data["p75"]),
                   int(data["offers"]), float(data["cheapest"]), str(data["cheapest_provider"]),
                   data.get("as_of"), data.get("price_from"))

    @property
    def price_dates(self) -> str | None:
        """"2025-03-01", or "2025-03-01 to 2025-03-08" when the offers' dates differ."""
        if self.as_of is None:
            return None
        if self.price_from is None or self.price_from == self.as_of:
            return self.as_of
        return f"{self.price_from} to {self.as_of}"


@dataclass(frozen=True)
class TcoOption:
    """One option of a TCO comparison: what owning it costs, and renting its GPU beside."""

    name: str
    gpus: int | None
    gpu: str | None                      # the GPU item of its linked C2C scenario
    jct_days: float | None
    usd_per_gpu_hour: float | None
    job_cost_usd: float | None
    rents: Mapping[str, Rent]            # term -> the market's price for the same GPU
    rented_job_cost_usd: float | None    # the same GPU-hours at the on-demand median
    # A rented option's rent as the TCO stage read it (value, note, source, date); None: owned.
    rent: Mapping[str, Any] | None = None
    availability: float = 1.0            # as the stage read them (default 1: never down)
    goodput: float = 1.0
    utilisation: float = 1.0             # the share of the year in paid work (default 1)
    upfront_capex_usd: float | None = None  # the capex items' purchase cost (None: rented)
    annual_opex_usd: float | None = None
    # Capex categories (models.tco.plans.CAPEX_CATEGORIES) no capex item covers: printed
    # "not in the ledger", never zero; empty for a rented option or an older result.
    capex_missing: tuple[str, ...] = ()
    # Its capex items as stored: (name, the categories it covers, cost in USD); and whether
    # the facility is rented as colocation (then no facility capex is owed).
    capex_items: tuple[tuple[str, tuple[str, ...], float], ...] = ()
    facility_in_colocation: bool = False
    # Where its goodput comes from when the ledger gives it: "item (source, date)"; None when
    # the scenario writes it or leaves the default (1).
    goodput_source: str | None = None

    @property
    def basis(self) -> str:
        """How the option is priced: "owned" or "rented"."""
        return "owned" if self.rent is None else "rented"

    @property
    def on_demand(self) -> Rent | None:
        return self.rents.get(ON_DEMAND)


@dataclass(frozen=True)
class Verdict:
    """A comparison's call as the TCO stage stored it (models.tco.decision's rule)."""

    call: str | None                     # the cheaper option, "too close to call", or None
    settle_with: str | None
    margin: Margin | None

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> Verdict:
        data = data or {}
        margin = (Margin(data["cheaper"], data["dearer"], float(data["saving"]),
                         float(data["saving_p10"]), float(data["saving_p90"]))
                  if data.get("saving") is not None else None)
        return cls(data.get("call"), data.get("settle_with"), margin)


@dataclass(frozen=True)
class TcoRecord:
    """A TCO scenario's stored result on a dataset version."""

    scenario: str
    mode: str                            # comparison | training-run
    scale_up: str | None
    scale_out: str | None
    options: tuple[TcoOption, ...]
    break_even: Band | None              # s*, with its P10-P90 when inputs were ranges
    speedup: Band | None                 # s = JCT_out / JCT_up
    cheaper_option: str | None
    verdict: Verdict
    tornado: tuple[Mapping[str, Any], ...]
    inputs: tuple[Mapping[str, Any], ...]  # every input with its origin, source and date
    c2c_links: Mapping[str, str]         # option -> the C2C scenario its job time is from
    # The P10/P50/P90 of each output the Monte Carlo sampled (empty: no input was a range).
    ranges: Mapping[str, Mapping[str, float]]

    @classmethod
    def from_json(cls, result: Mapping[str, Any],
                  definition: Mapping[str, Any] | None = None) -> TcoRecord:
        """The stored result JSON (and the scenario definition it was computed from)."""
        ranges = result.get("ranges") or {}
        market = result.get("market") or {}
        c2c = result.get("c2c") or {}
        inputs = {str(i.get("name")): i for i in result.get("inputs") or ()
                  if isinstance(i, Mapping)}
        options = tuple(_option(o, market.get(o["name"]), c2c.get(o["name"]), inputs)
                        for o in result.get("options", []))
        links = {str(o["name"]): str(o["c2c_scenario"])
                 for o in (definition or {}).get("options", [])
                 if isinstance(o, Mapping) and o.get("c2c_scenario")}
        return cls(
            scenario=str(result["scenario"]), mode=str(result["mode"]),
            scale_up=result.get("scale_up"), scale_out=result.get("scale_out"),
            options=options,
            break_even=_band(result.get("break_even_speedup"), ranges.get("break_even_speedup")),
            speedup=_band(result.get("speedup"), ranges.get("speedup")),
            cheaper_option=result.get("cheaper_option"),
            verdict=Verdict.from_json(result.get("verdict")),
            tornado=tuple(result.get("tornado") or ()), inputs=tuple(result.get("inputs") or ()),
            c2c_links=links, ranges=ranges)

    def option(self, name: str) -> TcoOption | None:
        return next((o for o in self.options if o.name == name), None)


def _band(value: float | None, ranges: Mapping[str, float] | None) -> Band | None:
    return None if value is None else Band.of(float(value), ranges)


def _option(option: Mapping[str, Any], market: Mapping[str, Any] | None,
            c2c: Mapping[str, Any] | None, inputs: Mapping[str, Mapping[str, Any]]) -> TcoOption:
    market = market or {}
    name = str(option["name"])

    def read(key: str) -> float:
        value = (inputs.get(f"options.{name}.{key}") or {}).get("value")
        return 1.0 if value is None else float(value)
    rents = {term: Rent.from_json(term, data)
             for term, data in (market.get("usd_per_gpu_hour") or {}).items()}
    gpu = market.get("gpu") or (c2c or {}).get("gpu")
    return TcoOption(name=name, gpus=option.get("gpus"), gpu=gpu,
                     jct_days=option.get("jct_days"),
                     usd_per_gpu_hour=option.get("usd_per_gpu_hour"),
                     job_cost_usd=option.get("job_cost_usd"), rents=rents,
                     rented_job_cost_usd=market.get("on_demand_job_cost_usd"),
                     rent=inputs.get(f"options.{name}.rent"),
                     availability=read("availability"), goodput=read("goodput"),
                     utilisation=read("utilisation"),
                     upfront_capex_usd=_upfront(name, inputs),
                     annual_opex_usd=option.get("annual_opex_usd"),
                     capex_missing=tuple((option.get("capex") or {}).get("missing") or ()),
                     capex_items=tuple(
                         (str(i.get("name")), tuple(i.get("categories") or ()),
                          float(i.get("cost_usd") or 0.0))
                         for i in (option.get("capex") or {}).get("items") or ()),
                     facility_in_colocation=bool(
                         (option.get("capex") or {}).get("facility_in_colocation")),
                     goodput_source=_ledger_source(inputs.get(f"options.{name}.goodput")))


def _ledger_source(figure: Mapping[str, Any] | None) -> str | None:
    """"item (source, date)" of an input the ledger gave, None otherwise."""
    if not figure or figure.get("origin") != "ledger":
        return None
    return (f"{figure.get('item')} ({figure.get('source')}, "
            f"{shown(figure.get('as_of'), figure.get('as_of_precision'))})")


def _upfront(option: str, inputs: Mapping[str, Mapping[str, Any]]) -> float | None:
    """What buying the option costs up front: its capex items' costs (None: it buys none)."""
    prefix = f"options.{option}.capex."
    costs = [float(i["value"]) for name, i in inputs.items()
             if name.startswith(prefix) and name.endswith(".cost") and i.get("value") is not None]
    return sum(costs) if costs else None


@dataclass(frozen=True)
class CurvePoint:
    """A point of a serving curve: throughput per GPU at a concurrency, and per user."""

    concurrency: float
    tok_s_per_gpu: float
    tok_s_per_user: float
    usd_per_mtok_out: float | None = None


@dataclass(frozen=True)
class ServingOption:
    """One option of a serving answer: its curve (measured or modelled), its price per
    GPU-hour and where it came from, and its point at the target interactivity."""

    name: str
    source: str                          # measured | model
    usd_per_gpu_hour: float
    price_source: str
    curve: tuple[CurvePoint, ...]
    at_target: CurvePoint | None
    band_basis: str
    hardware: tuple[Mapping[str, Any], ...]  # every hardware figure with its source
    rent_beside: Mapping[str, Any] | None = None  # the same option rented on demand
    # Owned, neocloud and hyperscaler: price, source, cost per million input/output tokens.
    price_tiers: tuple[Mapping[str, Any], ...] = ()
    prefill_share: float | None = None   # of the GPU-time at the target (input tokens' share)
    # The layout it runs at ("DP8 x EP8") and how it was chosen ("best of 13", "pinned by the
    # scenario"); empty for an answer stored before serving layouts were searched.
    layout: str = ""
    layout_note: str = ""
    # The dated figures its price rests on (a TCO option's inputs); empty for a price the
    # scenario gives, or one the market's index gives (its source names the index's date).
    price_inputs: tuple[Mapping[str, Any], ...] = ()
    gpu: str | None = None               # the GPU's item key (None: stored without it)
    engine: str | None = None            # the serving engine it runs on (None: not stored)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ServingOption:
        at = data.get("at_target")
        share = data.get("prefill_share")
        chosen = data.get("layout") or {}
        return cls(str(data["name"]), str(data["source"]), float(data["usd_per_gpu_hour"]),
                   str(data["price_source"]), tuple(_point(p) for p in data["curve"]),
                   None if at is None else _point(at), str(data["band"]["basis"]),
                   tuple(data.get("hardware") or ()), data.get("rent_beside"),
                   tuple(data.get("price_tiers") or ()),
                   None if share is None else float(share),
                   str(chosen.get("label", "")), str(chosen.get("note", "")),
                   tuple(data.get("price_inputs") or ()),
                   None if data.get("gpu") is None else str(data["gpu"]),
                   _engine_of(data.get("deployment")))


def _engine_of(deployment: Any) -> str | None:
    """The engine a stored answer's deployment names (None for one stored without it)."""
    engine = deployment.get("engine") if isinstance(deployment, Mapping) else None
    return None if engine is None else str(engine)


@dataclass(frozen=True)
class ServingRecord:
    """A serving scenario's stored answer on a dataset version: the cheaper option per
    million output tokens at the target interactivity, its margin and P10-P90."""

    scenario: str
    model: str
    precision: str
    input_tokens: int
    output_tokens: int
    target_tok_s_per_user: float
    options: tuple[ServingOption, ...]
    cheaper_option: str | None
    dearer_option: str | None
    margin: float | None
    margin_p10: float | None
    margin_p90: float | None
    call: str | None
    price_basis: str = "owned"
    not_compared: str | None = None
    margin_basis: str | None = None    # "paired" | "widest" (models.serving.cost)
    margin_note: str | None = None     # what the margin's band rests on
    # Whether the scenario's model is among those the serving constants are fitted on (an
    # answer stored before this was kept: taken as measured, as it was then printed).
    model_measured: bool = True
    # The compared model estimates' families short of the calibration targets, (family,
    # figure, target) each: the call is then "no verdict" (empty for an answer stored before).
    short_of_targets: tuple[tuple[str, str, str], ...] = ()

    @classmethod
    def from_json(cls, result: Mapping[str, Any]) -> ServingRecord:
        band = result.get("band") or {}
        request = result["request"]
        return cls(str(result["scenario"]), str(result["model"]), str(result["precision"]),
                   int(request["input_tokens"]), int(request["output_tokens"]),
                   float(result["target_tok_s_per_user"]),
                   tuple(ServingOption.from_json(o) for o in result["options"]),
                   result.get("cheaper_option"), result.get("dearer_option"),
                   result.get("margin"), band.get("p10"), band.get("p90"), result.get("call"),
                   str(result.get("price_basis") or "owned"), result.get("not_compared"),
                   band.get("basis"), band.get("note"), bool(band.get("model_measured", True)),
                   tuple((str(f), str(v), str(t))
                         for f, v, t in result.get("short_of_targets") or ()))


def _point(data: Mapping[str, Any]) -> CurvePoint:
    return CurvePoint(float(data["concurrency"]), float(data["tok_s_per_gpu"]),
                      float(data["tok_s_per_user"]), data.get("usd_per_mtok_out"))
