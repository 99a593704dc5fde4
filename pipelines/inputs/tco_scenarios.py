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
Errors name the file, the line and the field.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

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
from models.tco.plans import CapexPlan, ComparisonPlan, OptionPlan, TrainingRunPlan
from models.units import UnitError, conversion_factor
from pipelines.inputs.limits import DEFAULT_LIMITS, MAX_KEY_LENGTH, InputLimits
from pipelines.inputs.scenario_models import read_scenario
from pipelines.inputs.scenarios import (
    LINES,
    NON_FINITE,
    QUANTITY_TEXT,
    DocumentReader,
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


_TOP = {"name", "kind", "description", "finance", "time_cost_per_year", "options", "compare",
        "training_run", "uncertainty"}


def load_tco_scenario(path: Path, limits: InputLimits = DEFAULT_LIMITS) -> TcoScenario:
    """Read and validate one TCO scenario file; more Monte Carlo samples than
    `limits.max_samples` is an error naming uncertainty.samples."""
    path_shown, document = read_scenario(path, "name, kind: tco, options, ...", limits)
    return _Reader(path_shown, document, limits.max_samples).scenario()


class _Reader(DocumentReader):
    """Turns each field of a TCO scenario into an InputSpec or a ScenarioError."""

    def __init__(self, path: str, document: dict[str, Any],
                 max_samples: int = DEFAULT_LIMITS.max_samples) -> None:
        super().__init__(path, document)
        self.inputs: dict[str, InputSpec] = {}
        self.max_samples = max_samples

    def mapping(self, parent: dict[str, Any], key: str, name: str) -> dict[str, Any]:
        value = parent.get(key)
        if value is None:
            return {LINES: {"": parent.get(LINES, {}).get(key)}}
        if not isinstance(value, dict):
            self.fail(parent, key, name, "expected a mapping")
        return value  # type: ignore[return-value]

    def scenario(self) -> TcoScenario:
        doc = self.doc
        self.unknown_keys(doc, _TOP, "")
        name = doc.get("name")
        if not isinstance(name, str) or not name.strip():
            self.fail(None, "name", "name", "missing: every scenario needs a name")
        if len(name) > MAX_KEY_LENGTH:
            self.fail(None, "name", "name", f"{len(name):,} characters; a name has at most "
                                            f"{MAX_KEY_LENGTH}")
        if doc.get("kind") != "tco":
            self.fail(None, "kind", "kind", "a TCO scenario says kind: tco")
        has_options, has_run = "options" in doc, "training_run" in doc
        if has_options == has_run:
            self.fail(None, "training_run" if has_run else "options", "options",
                      "contradictory: give options (a comparison) or training_run, not both"
                      if has_run else "missing: give options (a comparison) or training_run")
        samples, seed = self.uncertainty()
        links: tuple[C2CLink, ...] = ()
        price_from_ledger = False
        if has_options:
            plan, links = self.comparison()
            mode = "comparison"
        else:
            plan, price_from_ledger = self.training_run()
            mode = "training-run"
        return TcoScenario(name=str(name), path=self.path, mode=mode, inputs=self.inputs,
                           plan=plan, c2c_links=links, samples=samples, seed=seed,
                           price_date_from_ledger=price_from_ledger,
                           definition=strip_lines(doc))

    def uncertainty(self) -> tuple[int, int]:
        raw = self.mapping(self.doc, "uncertainty", "uncertainty")
        self.unknown_keys(raw, {"samples", "seed"}, "uncertainty")
        found = {"samples": raw.get("samples", DEFAULT_SAMPLES), "seed": raw.get("seed", 0)}
        for key, smallest in (("samples", 1), ("seed", 0)):
            value, number = found[key], finite_number(found[key])  # 1e4 is text in YAML
            if number is None or number != int(number) or number < smallest:
                self.fail(raw, key, f"uncertainty.{key}",
                          f"expected a whole number >= {smallest}, got {shown(value)}")
            found[key] = value if isinstance(value, int) else int(number)  # type: ignore[arg-type]
        samples, seed = found["samples"], found["seed"]
        if samples > self.max_samples:  # memory grows with samples x (ranged inputs + outputs)
            self.fail(raw, "samples", "uncertainty.samples",
                      f"{samples:,} samples is more than the limit of {self.max_samples:,} "
                      f"(about {BYTES_PER_SAMPLE} bytes each); use fewer samples, or raise "
                      "the limit: SPECLEDGER_MAX_SAMPLES")
        return samples, seed

    # -- comparison -------------------------------------------------------------------------

    def comparison(self) -> tuple[ComparisonPlan, tuple[C2CLink, ...]]:
        finance = self.mapping(self.doc, "finance", "finance")
        self.unknown_keys(finance, {"cost_of_capital", "electricity"}, "finance")
        for key in ("cost_of_capital", "electricity"):
            self.read(finance, key, f"finance.{key}", FINANCE_FIELDS[f"finance.{key}"])
        self.read(self.doc, "time_cost_per_year", "time_cost_per_year",
                  FINANCE_FIELDS["time_cost_per_year"])
        options = self.doc["options"]
        if not isinstance(options, list) or len(options) < 2:
            self.fail(None, "options", "options", "a comparison needs at least two options")
        plans, links, names = [], [], []
        for index, raw in enumerate(options):
            if not isinstance(raw, dict):
                self.fail(None, "options", f"options[{index}]", "expected a mapping")
            plan, link = self.option(raw, index, names)
            plans.append(plan)
            names.append(plan.name)
            if link is not None:
                links.append(link)
        up, out = self.compare(names)
        return ComparisonPlan(tuple(plans), up, out), tuple(links)

    def compare(self, names: list[str]) -> tuple[str, str]:
        raw = self.mapping(self.doc, "compare", "compare")
        self.unknown_keys(raw, {"scale_up", "scale_out"}, "compare")
        chosen = {"scale_up": names[0], "scale_out": names[1]}
        for key in chosen:
            if key in raw:
                if raw[key] not in names:
                    self.fail(raw, key, f"compare.{key}",
                              f"no option named {raw[key]!r}; options: {', '.join(names)}")
                chosen[key] = str(raw[key])
        if chosen["scale_up"] == chosen["scale_out"]:
            self.fail(raw, "scale_out", "compare",
                      "contradictory: scale_up and scale_out name the same option")
        return chosen["scale_up"], chosen["scale_out"]

    def option(self, raw: dict[str, Any], index: int,
               taken: list[str]) -> tuple[OptionPlan, C2CLink | None]:
        allowed = set(OPTION_FIELDS) | {"name", "capex", "c2c_scenario", "tokens",
                                        "depreciation", "rent"}
        self.unknown_keys(raw, allowed, f"options[{index}]")
        name = raw.get("name")
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_-]+", name):
            self.fail(raw, "name", f"options[{index}].name",
                      f"missing or not a simple name (letters, digits, - and _): {name!r}")
        if name in taken:
            self.fail(raw, "name", f"options[{index}].name",
                      f"contradictory: two options are named {name!r}")
        prefix = f"options.{name}"
        if "rent" in raw:
            return self.rented_option(raw, str(name), prefix)
        depreciation = raw.get("depreciation", "crf")
        if depreciation not in DEPRECIATION_MODES:
            self.fail(raw, "depreciation", f"{prefix}.depreciation",
                      f"expected one of {', '.join(DEPRECIATION_MODES)}, got {depreciation!r}")
        link = self.jct_link(raw, prefix, str(name))
        for key, spec in OPTION_FIELDS.items():
            if key == "jct" and link is not None:
                continue
            if key != "jct" or "jct" in raw:
                self.read(raw, key, f"{prefix}.{key}", spec)
        capex = self.capex(raw, prefix)
        return OptionPlan(str(name), capex, has_jct="jct" in raw or link is not None,
                          depreciation=str(depreciation),
                          modelled_jct=link is not None), link

    def rented_option(self, raw: dict[str, Any], name: str,
                      prefix: str) -> tuple[OptionPlan, C2CLink | None]:
        """An option that rents its GPUs: `rent` per GPU-hour (inline, a range, a ledger
        reference, or {gpu, term, statistic} from the market's price index); it owns nothing,
        so capex, power and facility fields do not apply."""
        owned = sorted(k for k in raw if k in (*OPTION_FIELDS, "capex", "depreciation")
                       and k not in RENTED_OPTION_FIELDS)
        if owned:
            self.fail(raw, owned[0], f"{prefix}.{owned[0]}",
                      "contradictory: a rented option owns nothing (no capex, power or "
                      "facility); drop it or drop rent")
        link = self.jct_link(raw, prefix, name)
        rent = raw["rent"]
        if isinstance(rent, dict) and "gpu" in rent:
            self.inputs[f"{prefix}.rent"] = InputSpec(
                f"{prefix}.rent", RENTED_OPTION_FIELDS["rent"], raw.get(LINES, {}).get("rent"),
                market=self.market(rent, f"{prefix}.rent"),
                written=canonical_json(strip_lines(rent)))
        else:
            self.read(raw, "rent", f"{prefix}.rent", RENTED_OPTION_FIELDS["rent"])
        for key, spec in RENTED_OPTION_FIELDS.items():
            if key == "rent" or (key == "jct" and (link is not None or "jct" not in raw)):
                continue
            self.read(raw, key, f"{prefix}.{key}", spec)
        return OptionPlan(name, (), has_jct="jct" in raw or link is not None,
                          modelled_jct=link is not None, rented=True), link

    def market(self, raw: dict[str, Any], name: str) -> MarketRef:
        self.unknown_keys(raw, {"gpu", "term", "statistic"}, name)
        gpu, term = raw.get("gpu"), raw.get("term", "on_demand")
        statistic = raw.get("statistic", "median")
        if not isinstance(gpu, str) or not gpu.strip():
            self.fail(raw, "gpu", f"{name}.gpu", "expected a GPU item key, e.g. h100-sxm5")
        terms = [t for t in OFFER_TERMS if t != "quote"]
        if term not in terms:
            self.fail(raw, "term", f"{name}.term", f"expected one of {', '.join(terms)}")
        if statistic not in MARKET_STATISTICS:
            self.fail(raw, "statistic", f"{name}.statistic",
                      f"expected one of {', '.join(MARKET_STATISTICS)}")
        return MarketRef(str(gpu).strip(), str(term), str(statistic),
                         canonical_json(strip_lines(raw)))

    def jct_link(self, raw: dict[str, Any], prefix: str, option: str) -> C2CLink | None:
        if "c2c_scenario" not in raw:
            if "tokens" in raw:
                self.fail(raw, "tokens", f"{prefix}.tokens",
                          "tokens only apply with c2c_scenario (the model's time to train)")
            return None
        if "jct" in raw:
            self.fail(raw, "c2c_scenario", f"{prefix}.c2c_scenario",
                      "contradictory: give jct or c2c_scenario, not both")
        scenario = raw["c2c_scenario"]
        if not isinstance(scenario, str) or not scenario.strip():
            self.fail(raw, "c2c_scenario", f"{prefix}.c2c_scenario",
                      "expected the name of a C2C scenario")
        tokens = None
        if "tokens" in raw:
            tokens = self.plain_number(raw, "tokens", f"{prefix}.tokens")
        return C2CLink(option, str(scenario), tokens, raw.get(LINES, {}).get("c2c_scenario"))

    def capex(self, raw: dict[str, Any], prefix: str) -> tuple[CapexPlan, ...]:
        items = raw.get("capex")
        if not isinstance(items, list) or not items:
            self.fail(raw, "capex", f"{prefix}.capex",
                      "missing: list the capital items ({name, cost, life_years})")
        plans: list[CapexPlan] = []
        for index, item in enumerate(items):  # type: ignore[arg-type]
            where = f"{prefix}.capex[{index}]"
            if not isinstance(item, dict):
                self.fail(raw, "capex", where, "expected a mapping {name, cost, life_years}")
            self.unknown_keys(item, {*CAPEX_FIELDS, "name", "it"}, where)
            name = item.get("name")
            if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_-]+", name):
                self.fail(item, "name", f"{where}.name",
                          f"missing or not a simple name: {name!r}")
            if any(p.name == name for p in plans):
                self.fail(item, "name", f"{where}.name",
                          f"contradictory: two capex items are named {name!r}")
            it = item.get("it", False)
            if not isinstance(it, bool):
                self.fail(item, "it", f"{prefix}.capex.{name}.it", "expected true or false")
            for key, spec in CAPEX_FIELDS.items():
                self.read(item, key, f"{prefix}.capex.{name}.{key}", spec)
            plans.append(CapexPlan(str(name), bool(it)))
        return tuple(plans)

    # -- training run -----------------------------------------------------------------------

    def training_run(self) -> tuple[TrainingRunPlan, bool]:
        raw = self.mapping(self.doc, "training_run", "training_run")
        dates = ("released", "price_date", "training_start")
        self.unknown_keys(raw, {*TRAINING_RUN_FIELDS, *dates}, "training_run")
        for key, spec in TRAINING_RUN_FIELDS.items():
            self.read(raw, key, f"training_run.{key}", spec)
        price_from_ledger = self.inputs["training_run.price_per_chip"].ref is not None
        found: dict[str, date] = {}
        for key in dates:
            value = as_date(raw.get(key))
            if raw.get(key) is None and key == "price_date" and price_from_ledger:
                continue  # the price observation's as_of, once it is read
            if value is None:
                value = raw.get(key)
                self.fail(raw, key, f"training_run.{key}",
                          f"expected a date (YYYY-MM-DD), got {value!r}" if value is not None
                          else "missing")
            self._in_range(raw, key, f"training_run.{key}", value)  # type: ignore[arg-type]
            found[key] = value  # type: ignore[assignment]
        if found["training_start"] < found["released"]:
            self.fail(raw, "training_start", "training_run.training_start",
                      "contradictory: training starts before the hardware was released")
        # Without a price date, a ledger price brings its own (its observation's as_of).
        price_date_from_ledger = "price_date" not in found
        return TrainingRunPlan(found["released"], found.get("price_date", found["released"]),
                               found["training_start"]), price_date_from_ledger

    def _in_range(self, raw: Any, key: str, name: str, day: date) -> None:
        problem = out_of_range(day, name)
        if problem:
            self.fail(raw, key, name, problem)

    # -- values -----------------------------------------------------------------------------

    def read(self, section: dict[str, Any], key: str, name: str, spec: Field) -> None:
        """Record input `name` from section[key], or its default; fail if required."""
        line = section.get(LINES, {}).get(key) or section.get(LINES, {}).get("")
        if key not in section or section[key] is None:
            if spec.default is None:
                self.fail(section, key, name, "missing")
            if isinstance(spec.default, LedgerRef):
                self.inputs[name] = InputSpec(name, spec, line, ref=spec.default,
                                              written=spec.default_note, origin="default")
            else:
                self.inputs[name] = InputSpec(name, spec, line, value=spec.default,
                                              written=spec.default_note, origin="default")
            return
        raw = section[key]
        if isinstance(raw, dict):
            self.inputs[name] = InputSpec(name, spec, line, ref=self.reference(raw, name),
                                          written=canonical_json(strip_lines(raw)))
            return
        if isinstance(raw, list):
            if len(raw) != 2:
                self.fail(section, key, name, "a range is [low, high]")
            low, high = (self.value(section, key, name, spec, v) for v in raw)
            if low > high:
                self.fail(section, key, name, f"contradictory range: low {raw[0]} > high "
                                              f"{raw[1]}")
            # Halves first: low + high may overflow where each is finite.
            self.inputs[name] = InputSpec(name, spec, line, value=low / 2 + high / 2, low=low,
                                          high=high, written=str(raw))
            return
        self.inputs[name] = InputSpec(name, spec, line,
                                      value=self.value(section, key, name, spec, raw),
                                      written=str(raw))

    def value(self, section: dict[str, Any], key: str, name: str, spec: Field,
              raw: Any) -> float:
        """One number in the field's unit, checked against its bounds."""
        if isinstance(raw, bool):
            self.fail(section, key, name, f"expected a number, got {raw!r}")
        if isinstance(raw, int | float) or (isinstance(raw, str) and _NUMBER_TEXT.match(raw)):
            number = float(raw) if finite_number(raw) is not None else math.inf
            if spec.unit and spec.unit != "year":  # a life may be a bare number of years
                self.fail(section, key, name, f"expected a quantity with a unit, e.g. "
                                              f"\"{shown(raw)} {spec.unit}\", got {shown(raw)}")
        else:
            match = QUANTITY_TEXT.match(raw) if isinstance(raw, str) else None
            if match is None:
                self.fail(section, key, name, f"expected a number or a quantity, got "
                                              f"{shown(raw)}")
            assert match is not None
            try:
                number = float(match.group(1)) * unit_factor(match.group(2), spec)
            except UnitError as exc:
                self.fail(section, key, name, str(exc))
        if not math.isfinite(number):  # .inf, .nan, or "1e400 USD" after its unit
            self.fail(section, key, name, f"expected a {NON_FINITE}number, got {shown(raw)}")
        problem = check_bounds(number, spec)
        if problem:
            self.fail(section, key, name, problem)
        return number

    def reference(self, raw: dict[str, Any], name: str) -> LedgerRef:
        self.unknown_keys(raw, {"item", "metric", "times", "per", "as_of"}, name)
        for key in ("item", "metric"):
            if not isinstance(raw.get(key), str):
                self.fail(raw, key, f"{name}.{key}", "a ledger reference needs item and metric")
        times, times_unit = 1.0, None
        if "times" in raw:
            text = raw["times"]
            match = (QUANTITY_TEXT.match(text) if isinstance(text, str)
                     and not _NUMBER_TEXT.match(text) else None)  # "1e400" is no "1 e400"
            if match and finite_number(match.group(1)) is not None:
                times, times_unit = float(match.group(1)), match.group(2).strip()
            elif match:
                self.fail(raw, "times", f"{name}.times",
                          f"expected a {NON_FINITE}number, got {shown(text)}")
            else:
                times = self.plain_number(raw, "times", f"{name}.times")
        per = self.plain_number(raw, "per", f"{name}.per") if "per" in raw else 1.0
        if per == 0:
            self.fail(raw, "per", f"{name}.per", "must not be zero")
        on = as_date(raw.get("as_of"))
        if raw.get("as_of") is not None and on is None:
            self.fail(raw, "as_of", f"{name}.as_of",
                      f"expected a date (YYYY-MM-DD), got {raw.get('as_of')!r}")
        if on is not None:
            self._in_range(raw, "as_of", f"{name}.as_of", on)
        return LedgerRef(str(raw["item"]), str(raw["metric"]), times, times_unit, per, on,
                         canonical_json(strip_lines(raw)))

    def plain_number(self, section: dict[str, Any], key: str, name: str) -> float:
        value = section[key]
        number = finite_number(value)
        if number is None or (isinstance(value, str) and not _NUMBER_TEXT.match(value)):
            self.fail(section, key, name, f"expected a {NON_FINITE if is_numeric(value) else ''}"
                                          f"number, got {shown(value)}")
        assert number is not None
        if number < 0:
            self.fail(section, key, name, f"expected a non-negative number, got {shown(value)}")
        return number


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
