"""TCO scenario files (data/scenarios/*.yaml with `kind: tco`).

Two modes: `options:` compares ways to build a cluster (scale-up U vs scale-out O, cost per
year, per GPU-hour, per job, break-even speed-up); `training_run:` costs one run by Epoch AI's
method. Every number may be written
  - inline with its unit: "218.4e6 USD", "7.39 MW", "30 day" (a bare number where a unit is
    needed is an error naming the field);
  - as a range: ["150e3 USD", "290e3 USD"], sampled by the Monte Carlo;
  - as a ledger reference: {item: gb200-nvl72-allin, metric: system_price, times: 56}, read as
    of the dataset version (`times` may be a quantity: {..., metric: cooling_cost_per_mw,
    times: "7.39 MW"}; `per: 8` divides; `as_of: 2023-03-14` reads the value valid that day).
Fields left out take the documented default, from the ledger where one exists.

Each section is a pydantic model (pipelines/inputs/scenario_models.py maps its errors back to
file, line and field); the inputs of a section are the tables of models/tco/inputs.py, each
read by `_read` against its Field (unit, bounds, default). Errors name an option's and a capex
item's fields by its name (`options.nvl72.pue`, `options.nvl72.capex.racks.cost`), the item
itself, its name and a key it does not know by its place (`options[1].speed`).
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass, field, replace
from datetime import date
from functools import partial
from pathlib import Path
from typing import Annotated, Any, ClassVar

from pydantic import (
    BeforeValidator,
    PlainValidator,
    ValidationInfo,
    create_model,
    field_validator,
    model_validator,
)
from pydantic import Field as Pydantic

from models.dates import out_of_range
from models.observations import OFFER_TERMS
from models.tco.inputs import (
    CAPEX_FIELDS,
    FINANCE_FIELDS,
    MARKET_STATISTICS,
    OPTION_FIELDS,
    RENTED_OPTION_FIELDS,
    TRAINING_RUN_FIELDS,
    Field,
    LedgerRef,
    MarketRef,
)
from models.tco.ownership import DEPRECIATION_MODES
from models.tco.plans import (
    CAPEX_CATEGORIES,
    CapexPlan,
    ComparisonPlan,
    OptionPlan,
    TrainingRunPlan,
)
from models.units import UnitError, conversion_factor
from pipelines.inputs.limits import DEFAULT_LIMITS, MAX_KEY_LENGTH, InputLimits
from pipelines.inputs.scenario_models import (
    Loc,
    Section,
    fail,
    field_name,
    read_scenario,
    validate,
    within,
)
from pipelines.inputs.scenarios import (
    LINES,
    NON_FINITE,
    QUANTITY_TEXT,
    canonical_json,
    finite_number,
    is_numeric,
    shown,
    strip_lines,
)

DEFAULT_SAMPLES = 10_000
# Measured (tracemalloc) on the worked illustration with 24 ranged inputs: about 360 bytes of
# arrays per Monte Carlo sample (8 bytes per ranged input, output and intermediate).
BYTES_PER_SAMPLE = 400
_NUMBER_TEXT = re.compile(r"^\s*[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?\s*$")
_SIMPLE_NAME = re.compile(r"[A-Za-z0-9_-]+")


@dataclass(frozen=True)
class InputSpec:
    """One input as the file gives it (or its default): a point, a range or a reference."""

    name: str
    field: Field
    line: int | None
    value: float | None = None
    low: float | None = None
    high: float | None = None
    ref: LedgerRef | None = None
    written: str = ""
    origin: str = "inline"  # inline | default
    market: MarketRef | None = None  # a rent from the market's price index


@dataclass(frozen=True)
class C2CLink:
    """An option whose JCT comes from a C2C scenario's modelled time to train."""

    option: str
    scenario: str
    tokens: float | None
    line: int | None


@dataclass(frozen=True)
class TcoScenario:
    name: str
    path: str
    mode: str
    inputs: dict[str, InputSpec]
    plan: ComparisonPlan | TrainingRunPlan
    c2c_links: tuple[C2CLink, ...] = ()
    samples: int = DEFAULT_SAMPLES
    seed: int = 0
    price_date_from_ledger: bool = False  # training run: price date = the price's as_of
    definition: dict[str, Any] = field(default_factory=dict)

    @property
    def content_sha256(self) -> str:
        return hashlib.sha256(canonical_json(self.definition).encode()).hexdigest()


def load_tco_scenario(path: Path, limits: InputLimits = DEFAULT_LIMITS) -> TcoScenario:
    """Read and validate one TCO scenario file; more Monte Carlo samples than
    `limits.max_samples` is an error naming uncertainty.samples."""
    where, document = read_scenario(path, "name, kind: tco, options, ...", limits)
    model = _TrainingRunFile if "training_run" in document else _ComparisonFile
    read = validate(model, where, document, context={"max_samples": limits.max_samples})
    return read.scenario(where, document)


# -- one input: a point, a range, a ledger reference or a market rent --------------------------

def _read(spec: Field, raw: Any, market: bool = False) -> InputSpec:
    """The input as written, or its default (name and line are the section's to give)."""
    if raw is None:
        if spec.default is None:
            raise fail("missing")
        ref, value = ((spec.default, None) if isinstance(spec.default, LedgerRef)
                      else (None, spec.default))
        return InputSpec("", spec, None, value=value, ref=ref, written=spec.default_note,
                         origin="default")
    if isinstance(raw, dict):
        written = canonical_json(strip_lines(raw))
        if market and "gpu" in raw:
            return InputSpec("", spec, None, market=within(_Market, raw).market(written),
                             written=written)
        return InputSpec("", spec, None, ref=within(_Ref, raw).ref(written), written=written)
    if isinstance(raw, list):
        if len(raw) != 2:
            raise fail("a range is [low, high]")
        low, high = (_number(spec, v) for v in raw)
        if low > high:
            raise fail(f"contradictory range: low {raw[0]} > high {raw[1]}")
        # Halves first: low + high may overflow where each is finite.
        return InputSpec("", spec, None, value=low / 2 + high / 2, low=low, high=high,
                         written=str(raw))
    return InputSpec("", spec, None, value=_number(spec, raw), written=str(raw))


def _number(spec: Field, raw: Any) -> float:
    """One number in the field's unit, checked against its bounds."""
    if isinstance(raw, bool):
        raise fail(f"expected a number, got {raw!r}")
    if isinstance(raw, int | float) or (isinstance(raw, str) and _NUMBER_TEXT.match(raw)):
        number = float(raw) if finite_number(raw) is not None else math.inf
        if spec.unit and spec.unit != "year":  # a life may be a bare number of years
            raise fail(f"expected a quantity with a unit, e.g. \"{shown(raw)} {spec.unit}\", "
                       f"got {shown(raw)}")
    else:
        match = QUANTITY_TEXT.match(raw) if isinstance(raw, str) else None
        if match is None:
            raise fail(f"expected a number or a quantity, got {shown(raw)}")
        try:
            number = float(match.group(1)) * unit_factor(match.group(2), spec)
        except UnitError as exc:
            raise fail(str(exc)) from None
    if not math.isfinite(number):  # .inf, .nan, or "1e400 USD" after its unit
        raise fail(f"expected a {NON_FINITE}number, got {shown(raw)}")
    problem = check_bounds(number, spec)
    if problem:
        raise fail(problem)
    return number


def _input(spec: Field, market: bool = False) -> Any:
    """A field of a section holding one input read against `spec` (None when absent and
    optional: jct)."""
    return Annotated[InputSpec | None, PlainValidator(partial(_read, spec, market=market))]


def _inputs(table: dict[str, Field], prefix: str = "", **optional: bool) -> dict[str, Any]:
    """The pydantic fields of a table of inputs; `optional`: keys read only when given."""
    return {key.removeprefix(prefix): (_input(spec), Pydantic(
        None, validate_default=not optional.get(key.removeprefix(prefix))))
        for key, spec in table.items()}


def _plain_number(value: Any) -> float:
    """A finite, non-negative number, without a unit: tokens, times, per."""
    number = finite_number(value)
    if number is None or (isinstance(value, str) and not _NUMBER_TEXT.match(value)):
        raise fail(f"expected a {NON_FINITE if is_numeric(value) else ''}number, got "
                   f"{shown(value)}")
    if number < 0:
        raise fail(f"expected a non-negative number, got {shown(value)}")
    return number


def _times(value: Any) -> tuple[float, str | None]:
    """A count, or a quantity ("5.68 MW") that the ledger value's unit multiplies."""
    match = (QUANTITY_TEXT.match(value) if isinstance(value, str)
             and not _NUMBER_TEXT.match(value) else None)  # "1e400" is no "1 e400"
    if match and finite_number(match.group(1)) is not None:
        return float(match.group(1)), match.group(2).strip()
    if match:
        raise fail(f"expected a {NON_FINITE}number, got {shown(value)}")
    return _plain_number(value), None


def _date(value: Any) -> date:
    """A YYYY-MM-DD date within what pandas holds (models.dates)."""
    day = as_date(value)
    if day is None:
        raise fail("missing" if value is None else
                   f"expected a date (YYYY-MM-DD), got {_quoted(value)}")
    problem = out_of_range(day, "{field}")
    if problem:
        raise fail(problem, named=True)
    return day


def _quoted(value: Any) -> str:
    """repr, but a mapping as "a mapping" (not its line table)."""
    return shown(value) if isinstance(value, dict) else repr(value)


def _text(check: Any, reason: str) -> Any:
    """A validator refusing what `check` does not accept, with `reason`."""
    def validate_(value: Any) -> Any:
        if not check(value):
            raise fail(reason.format(value=_quoted(value)))
        return value
    return BeforeValidator(validate_)


def _absent_is_empty(value: Any) -> Any:
    return {} if value is None else value


Present = partial(Pydantic, None, validate_default=False)  # checked only when written
Item = Annotated[str, _text(lambda v: isinstance(v, str),
                            "a ledger reference needs item and metric")]
OrEmpty = BeforeValidator(_absent_is_empty)  # a section written as null or left out


class _Ref(Section):
    """{item, metric, times, per, as_of}: a ledger value x times / per, valid on as_of."""

    item: Item = None  # type: ignore[assignment]
    metric: Item = None  # type: ignore[assignment]
    times: Annotated[tuple[float, str | None], BeforeValidator(_times)] = Present()
    per: Annotated[float, BeforeValidator(_plain_number)] = Present()
    as_of: Annotated[date, BeforeValidator(_date)] = Present()

    @field_validator("per")
    @classmethod
    def _not_zero(cls, per: float) -> float:
        if per == 0:
            raise fail("must not be zero")
        return per

    def ref(self, written: str) -> LedgerRef:
        times, unit = self.times or (1.0, None)
        return LedgerRef(self.item, self.metric, times, unit,
                         1.0 if self.per is None else self.per, self.as_of, written)


class _Market(Section):
    """{gpu, term, statistic}: a rent from the market's GPU-hour price index."""

    gpu: Annotated[str, _text(lambda v: isinstance(v, str) and v.strip(),
                              "expected a GPU item key, e.g. h100-sxm5")] = None  # type: ignore[assignment]
    term: Annotated[str, _text(lambda v: v in OFFER_TERMS and v != "quote", "expected one of "
                               + ", ".join(t for t in OFFER_TERMS if t != "quote"))] = "on_demand"
    statistic: Annotated[str, _text(lambda v: v in MARKET_STATISTICS,
                                    f"expected one of {', '.join(MARKET_STATISTICS)}")] = "median"

    def market(self, written: str) -> MarketRef:
        return MarketRef(self.gpu.strip(), self.term, self.statistic, written)


# -- sections -----------------------------------------------------------------------------------

class _Inputs(Section):
    """A section some of whose fields are inputs of a table."""

    table: ClassVar[dict[str, Field]] = {}
    prefix: ClassVar[str] = ""

    def inputs(self, name: str, fallback: int | None = None,
               table: dict[str, Field] | None = None) -> dict[str, InputSpec]:
        """Its inputs (of `table`, else its own) named `name.key` in the table's order, each
        with its line (the section's, else `fallback`, for a default)."""
        found = {}
        for key in table or self.table:
            key = key.removeprefix(self.prefix)
            read: InputSpec | None = getattr(self, key)
            if read is not None:
                found[f"{name}.{key}"] = replace(read, name=f"{name}.{key}",
                                                 line=self.line_of(key) or fallback)
        return found


class _Uncertainty(Section):
    samples: int = DEFAULT_SAMPLES
    seed: int = 0

    @field_validator("samples", "seed", mode="before")
    @classmethod
    def _whole(cls, value: Any, info: ValidationInfo) -> int:
        smallest = 1 if info.field_name == "samples" else 0
        number = finite_number(value)  # 1e4 is text in YAML
        if number is None or number != int(number) or number < smallest:
            raise fail(f"expected a whole number >= {smallest}, got {shown(value)}")
        return value if isinstance(value, int) else int(number)

    @model_validator(mode="after")
    def _within_limit(self, info: ValidationInfo) -> _Uncertainty:
        limit = (info.context or {}).get("max_samples", DEFAULT_LIMITS.max_samples)
        if self.samples > limit:  # memory grows with samples x (ranged inputs + outputs)
            raise fail(f"{self.samples:,} samples is more than the limit of {limit:,} (about "
                       f"{BYTES_PER_SAMPLE} bytes each); use fewer samples, or raise the "
                       "limit: SPECLEDGER_MAX_SAMPLES", "samples")
        return self


def _categories(value: Any) -> tuple[str, ...]:
    """A capex item's category: one of CAPEX_CATEGORIES, or a list of them (an all-in rack
    is [compute, network])."""
    if value == ():   # absent: the item names no category
        return ()
    values = value if isinstance(value, list) else [value]
    if not values or not all(isinstance(v, str) and v in CAPEX_CATEGORIES for v in values):
        raise fail(f"expected one of {', '.join(CAPEX_CATEGORIES)} or a list of them, "
                   f"got {_quoted(value)}")
    return tuple(dict.fromkeys(values))


class _Capex(_Inputs):
    expected: ClassVar[str] = "expected a mapping {name, cost, life_years}"
    table: ClassVar[dict[str, Field]] = CAPEX_FIELDS
    name: Annotated[str, _text(lambda v: isinstance(v, str) and _SIMPLE_NAME.fullmatch(v),
                               "missing or not a simple name: {value}")] = None  # type: ignore[assignment]
    it: Annotated[bool, _text(lambda v: isinstance(v, bool), "expected true or false")] = False
    category: Annotated[tuple[str, ...], BeforeValidator(_categories)] = ()


_Capex = create_model("_Capex", __base__=_Capex, **_inputs(CAPEX_FIELDS))  # type: ignore[misc,call-overload]


def _named_list(what: str, smallest: int, missing: str) -> BeforeValidator:
    """A list of `smallest` or more mappings whose names are distinct."""
    def check(value: Any) -> Any:
        if not isinstance(value, list) or len(value) < smallest:
            raise fail(missing)
        taken: list[str] = []
        for index, raw in enumerate(value):
            name = raw.get("name") if isinstance(raw, dict) else None
            if isinstance(name, str) and _SIMPLE_NAME.fullmatch(name):
                if name in taken:
                    raise fail(f"contradictory: two {what} are named {name!r}", index, "name")
                taken.append(name)
        return value
    return BeforeValidator(check)


class _Option(_Inputs):
    """A way to build the cluster: owned (capex, power, facility) or, with `rent` per GPU-hour
    (inline, a range, a ledger reference, or {gpu, term, statistic} from the market's price
    index), rented: then it owns nothing and only RENTED_OPTION_FIELDS apply."""

    table: ClassVar[dict[str, Field]] = OPTION_FIELDS
    name: Annotated[str, _text(
        lambda v: isinstance(v, str) and _SIMPLE_NAME.fullmatch(v),
        "missing or not a simple name (letters, digits, - and _): {value}")] = None  # type: ignore[assignment]
    depreciation: Annotated[str, _text(lambda v: v in DEPRECIATION_MODES, "expected one of "
                                       f"{', '.join(DEPRECIATION_MODES)}, got {{value}}")] = "crf"
    c2c_scenario: Annotated[str, _text(lambda v: isinstance(v, str) and v.strip(),
                                       "expected the name of a C2C scenario")] = Present()
    tokens: Annotated[float, BeforeValidator(_plain_number)] = Present()
    rent: _input(RENTED_OPTION_FIELDS["rent"], market=True) = Present()  # type: ignore[valid-type]

    @classmethod
    def precheck(cls, data: dict[str, Any]) -> dict[str, Any]:
        owned = sorted(k for k in data if k in (*OPTION_FIELDS, "capex", "depreciation")
                       and k not in RENTED_OPTION_FIELDS)
        if "rent" in data and owned:
            raise fail("contradictory: a rented option owns nothing (no capex, power or "
                       "facility); drop it or drop rent", owned[0])
        if "c2c_scenario" not in data and "tokens" in data:
            raise fail("tokens only apply with c2c_scenario (the model's time to train)",
                       "tokens")
        if "c2c_scenario" in data and "jct" in data:
            raise fail("contradictory: give jct or c2c_scenario, not both", "c2c_scenario")
        return data

    @field_validator("it_power", "capex", mode="wrap", check_fields=False)
    @classmethod
    def _owned(cls, value: Any, handler: Any, info: ValidationInfo) -> Any:
        return None if info.data.get("rent") else handler(value)  # a rented option's: absent

    def option(self, prefix: str, inputs: dict[str, InputSpec]) -> tuple[OptionPlan,
                                                                          C2CLink | None]:
        link = None if self.c2c_scenario is None else C2CLink(
            self.name, self.c2c_scenario, self.tokens, self.lines.get("c2c_scenario"))
        rented = "rent" in self.model_fields_set
        inputs.update(self.inputs(prefix, table=RENTED_OPTION_FIELDS if rented else None))
        capex: list[Any] = getattr(self, "capex", None) or []
        for item in capex:
            inputs.update(item.inputs(f"{prefix}.capex.{item.name}"))
        return OptionPlan(self.name, tuple(CapexPlan(i.name, i.it, i.category) for i in capex),
                          has_jct="jct" in self.model_fields_set or link is not None,
                          depreciation=self.depreciation, modelled_jct=link is not None,
                          rented=rented), link


_Option = create_model(  # type: ignore[misc,call-overload]
    "_Option", __base__=_Option, **_inputs(OPTION_FIELDS, jct=True),
    capex=(Annotated[list[_Capex], _named_list(  # type: ignore[valid-type]
        "capex items", 1, "missing: list the capital items ({name, cost, life_years})")], None))


class _Compare(Section):
    scale_up: Any = None
    scale_out: Any = None

    @model_validator(mode="after")
    def _named(self, info: ValidationInfo) -> _Compare:
        names = (info.context or {}).get("options")
        if names is None:  # the options had an error: it is the one reported
            return self
        for key in ("scale_up", "scale_out"):
            if key in self.model_fields_set and getattr(self, key) not in names:
                raise fail(f"no option named {_quoted(getattr(self, key))}; options: "
                           f"{', '.join(names)}", key)
        up, out = self.pair(names)
        if up == out:
            raise fail("contradictory: scale_up and scale_out name the same option",
                       line_at="scale_out")
        return self

    def pair(self, names: list[str]) -> tuple[str, str]:
        return (self.scale_up if "scale_up" in self.model_fields_set else names[0],
                self.scale_out if "scale_out" in self.model_fields_set else names[1])


class _Finance(_Inputs):
    table: ClassVar[dict[str, Field]] = {
        k: v for k, v in FINANCE_FIELDS.items() if k.startswith("finance.")}
    prefix: ClassVar[str] = "finance."


_Finance = create_model(  # type: ignore[misc,call-overload]
    "_Finance", __base__=_Finance, **_inputs(_Finance.table, "finance."))


class _TrainingRun(_Inputs):
    table: ClassVar[dict[str, Field]] = TRAINING_RUN_FIELDS

    @field_validator("released", "price_date", "training_start", mode="before", check_fields=False)
    @classmethod
    def _dates(cls, value: Any, info: ValidationInfo) -> date | None:
        price = info.data.get("price_per_chip")
        if value is None and info.field_name == "price_date" and price and price.ref:
            return None  # the price observation's as_of, once it is read
        return _date(value)

    @model_validator(mode="after")
    def _in_order(self) -> _TrainingRun:
        if self.training_start < self.released:  # type: ignore[attr-defined]
            raise fail("contradictory: training starts before the hardware was released",
                       "training_start")
        return self

    def plan(self) -> TrainingRunPlan:
        run: Any = self
        return TrainingRunPlan(run.released, run.price_date or run.released,
                               run.training_start)


_TrainingRun = create_model(  # type: ignore[misc,call-overload]
    "_TrainingRun", __base__=_TrainingRun, **_inputs(TRAINING_RUN_FIELDS),
    **dict.fromkeys(("released", "price_date", "training_start"), (date | None, None)))


def _scenario_name(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise fail("missing: every scenario needs a name")
    if len(value) > MAX_KEY_LENGTH:
        raise fail(f"{len(value):,} characters; a name has at most {MAX_KEY_LENGTH}")
    return value


def _kind(value: Any) -> str:
    if value != "tco":
        raise fail("a TCO scenario says kind: tco")
    return value


class _TcoFile(Section):
    """The whole file; fields in the order they are checked (the first error is reported).
    What the other mode reads is allowed and not read."""

    name: Annotated[str, BeforeValidator(_scenario_name)] = None  # type: ignore[assignment]
    kind: Annotated[str, BeforeValidator(_kind)] = None  # type: ignore[assignment]
    description: Any = None
    uncertainty: Annotated[_Uncertainty, OrEmpty] = None  # type: ignore[assignment]
    finance: Any = None
    time_cost_per_year: Any = None
    options: Any = None
    compare: Any = None
    training_run: Any = None

    @classmethod
    def precheck(cls, data: dict[str, Any]) -> dict[str, Any]:
        has_options, has_run = "options" in data, "training_run" in data
        if has_options == has_run:
            raise fail("contradictory: give options (a comparison) or training_run, not both"
                       if has_run else "missing: give options (a comparison) or training_run",
                       "options", line_at="training_run" if has_run else "options")
        return data

    @classmethod
    def name_of(cls, document: dict[str, Any], loc: Loc) -> str:
        """options[0].pue -> options.nvl72.pue: a field of an option or capex item is named
        by the item's name; the item, its name or a key it does not know by its place."""
        named: list[str | int] = []
        node: Any = document
        for n, part in enumerate(loc):
            below = loc[n + 1] if n + 1 < len(loc) else None
            item = node[part] if isinstance(node, list) and isinstance(part, int) \
                and 0 <= part < len(node) else None
            fields = {"options": _Option.keys(), "capex": _Capex.keys()}.get(str(named[-1])) \
                if named else None
            if (isinstance(item, dict) and fields and below != "name" and below in fields
                    and isinstance(item.get("name"), str)
                    and _SIMPLE_NAME.fullmatch(item["name"])):
                named.append(item["name"])
            else:
                named.append(part)
            node = node.get(part) if isinstance(node, dict) else item
        return field_name(tuple(named))

    def common(self, path: str, document: dict[str, Any]) -> dict[str, Any]:
        return {"name": self.name, "path": path, "samples": self.uncertainty.samples,
                "seed": self.uncertainty.seed, "definition": strip_lines(document)}


TimeCost = _input(FINANCE_FIELDS["time_cost_per_year"])


class _ComparisonFile(_TcoFile):
    finance: Annotated[_Finance, OrEmpty] = None  # type: ignore[valid-type]
    time_cost_per_year: TimeCost = None
    options: Annotated[list[_Option], _named_list(  # type: ignore[valid-type]
        "options", 2, "a comparison needs at least two options")] = None  # type: ignore[assignment]
    compare: Annotated[_Compare, OrEmpty] = None  # type: ignore[assignment]

    @field_validator("options")
    @classmethod
    def _names(cls, options: list[Any], info: ValidationInfo) -> list[Any]:
        if info.context is not None:  # for compare
            info.context["options"] = [option.name for option in options]
        return options

    def scenario(self, path: str, document: dict[str, Any]) -> TcoScenario:
        inputs = self.finance.inputs("finance", document[LINES].get("finance"))
        inputs["time_cost_per_year"] = replace(self.time_cost_per_year,  # type: ignore[type-var]
                                               name="time_cost_per_year",
                                               line=self.line_of("time_cost_per_year"))
        plans, links = [], []
        for option in self.options:
            plan, link = option.option(f"options.{option.name}", inputs)
            plans.append(plan)
            links += [link] if link else []
        up, out = self.compare.pair([p.name for p in plans])
        return TcoScenario(**self.common(path, document), mode="comparison", inputs=inputs,
                           plan=ComparisonPlan(tuple(plans), up, out), c2c_links=tuple(links))


class _TrainingRunFile(_TcoFile):
    training_run: Annotated[_TrainingRun, OrEmpty] = None  # type: ignore[valid-type]

    def scenario(self, path: str, document: dict[str, Any]) -> TcoScenario:
        run: Any = self.training_run
        inputs = run.inputs("training_run", document[LINES].get("training_run"))
        return TcoScenario(**self.common(path, document), mode="training-run", inputs=inputs,
                           plan=run.plan(), price_date_from_ledger=run.price_date is None)


def unit_factor(written: str, spec: Field) -> float:
    """Factor from `written` to the field's unit; "USD" for a per-year field means USD/year."""
    written = written.strip()
    if spec.per_year:
        try:
            return conversion_factor(written, spec.unit, None)
        except UnitError:
            return conversion_factor(f"({written})/year", spec.unit, None)
    return conversion_factor(written, spec.unit or "dimensionless", None)


def check_bounds(number: float, spec: Field) -> str | None:
    """Why `number` is not allowed in the field, or None."""
    if not math.isfinite(number):
        return f"expected a {NON_FINITE}number, got {number:g}"
    if spec.low is not None and (number < spec.low or (spec.low_open and number == spec.low)):
        return f"must be {'above' if spec.low_open else 'at least'} {spec.low:g}, got {number:g}"
    if spec.high is not None and number > spec.high:
        return f"must be at most {spec.high:g}, got {number:g}"
    if spec.integer and number != int(number):
        return f"expected a whole number, got {number:g}"
    return None


def as_date(value: Any) -> date | None:
    """A YYYY-MM-DD date as the file wrote it, or None (the caller says what it expected)."""
    if isinstance(value, date):
        return value
    if isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value.strip()):
        try:
            return date.fromisoformat(value.strip())
        except ValueError:
            return None
    return None
