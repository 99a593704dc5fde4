"""What the typed scenario readers share: a pydantic section model that knows its lines, field
checks with the C2C reader's messages, and the map from a ValidationError back to a
ScenarioError naming the file, the line and the field.

A scenario is validated as the line-mapped document (`yaml_lines.with_line_maps`): every
mapping carries its key lines under LINES, which each section model takes as `lines`. A check
raises `fail(reason, ...)`; `scenario_error` walks the error's `loc` through the document to the
line of the key it names (the mapping's own line when the key is absent), and joins the loc into
the dotted field name the readers have always printed (`options[0].price.usd_per_gpu_hour`); a
reader whose names differ (TCO: `options.nvl72.pue`) gives the root model its own `name_of`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from pipelines.inputs.limits import DEFAULT_LIMITS, InputLimits
from pipelines.inputs.scenarios import FieldReader, ScenarioError, refuse_repeated_keys
from pipelines.inputs.yaml_lines import (
    LINES,
    YamlError,
    load_yaml,
    read_bounded_text,
    with_line_maps,
)

ERROR_TYPE = "scenario"
TAG = "<"  # a loc part starting with it is a union's tag, not a key of the document
T = TypeVar("T")
S = TypeVar("S", bound="Section")
Loc = tuple[str | int, ...]


def fail(reason: str, *at: str | int, line_at: str | Loc | None = None, whole: bool = False,
         field: str | None = None, line: int | None = None,
         named: bool = False) -> PydanticCustomError:
    """The error a check raises. `at`: keys below the failing value that the error names;
    `line_at`: the key (or keys) below the failing value whose line to give instead; `whole`:
    the mapping itself is at fault (its own line, not its key's); `field`/`line`: a name and
    line already worked out (an error of the C2C reader's cluster block, below the failing
    value); `named`: "{field}" in the reason stands for the field's dotted name."""
    return PydanticCustomError(ERROR_TYPE, "{reason}", {
        "reason": reason, "at": at,
        "line_at": (line_at,) if isinstance(line_at, str) else line_at, "whole": whole,
        "field": field, "line": line, "named": named})


class Section(BaseModel):
    """One mapping of a scenario: unknown keys refused first (as the readers always did), a
    value that is no mapping refused with `expected`, and the line of each key kept."""

    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True,
                              arbitrary_types_allowed=True, populate_by_name=True)
    expected: ClassVar[str] = "expected a mapping"  # when the value is not a mapping
    lines: dict[str, int] = Field(default_factory=dict, alias=LINES, repr=False)

    @classmethod
    def keys(cls) -> set[str]:
        return {f.alias or name for name, f in cls.model_fields.items() if name != "lines"}

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            raise fail(cls.expected)
        allowed = cls.keys()
        for key in data:
            if key != LINES and key not in allowed:
                raise fail(f"unknown key; expected one of {', '.join(sorted(allowed))}",
                           str(key))
        return cls.precheck(data)

    @classmethod
    def precheck(cls, data: dict[str, Any]) -> dict[str, Any]:
        """Checks of the raw mapping that come before its fields' own (a subclass's)."""
        return data

    def line_of(self, key: str) -> int | None:
        return self.lines.get(key) or self.lines.get("")

    @classmethod
    def name_of(cls, document: dict[str, Any], loc: Loc) -> str:
        """The dotted field name of `loc` in `document` (the root model's: how its reader
        names fields)."""
        return field_name(loc)


def within(model: type[S], value: Any, context: dict[str, Any] | None = None) -> S:
    """`model` validated from `value` inside another field's check: its first error raised
    again as that field's, with the keys below it."""
    try:
        return model.model_validate(value, context=context)
    except ValidationError as exc:
        error = exc.errors()[0]
        ctx = error.get("ctx") or {}
        custom = error["type"] == ERROR_TYPE
        inner = tuple(p for p in error["loc"] if not str(p).startswith(TAG))
        raise fail(ctx["reason"] if custom else _reason(error),
                   *inner, *(ctx.get("at", ()) if custom else ()),
                   line_at=(*inner, *ctx["line_at"]) if custom and ctx.get("line_at") else None,
                   whole=bool(ctx.get("whole")), named=bool(ctx.get("named"))) from None


# -- field checks with the C2C reader's rules and messages -------------------------------------

def _c2c(check: Callable[[FieldReader, dict[str, Any]], T], value: Any) -> T:
    """Run one of the C2C reader's field checks on `value`; its reason as a pydantic error."""
    try:
        return check(FieldReader("", {LINES: {}}), {"v": value, LINES: {}})
    except ScenarioError as exc:
        raise fail(exc.reason) from None


def number(value: Any) -> float:
    """A finite, non-negative number (300e9 written as text too)."""
    return _c2c(lambda r, s: r.number(s, "v", "", float), value)


def count(value: Any, smallest: int = 1) -> int:
    """A whole number from `smallest` to the model's MAX_COUNT."""
    return _c2c(lambda r, s: r.count(s, "v", "", smallest), value)


def item(value: Any) -> str:
    """A ledger item's key: one name, not a list or a mapping."""
    return _c2c(lambda r, s: r.item(s, "v", ""), value)


def positive(value: Any) -> float:
    """A number above zero."""
    found = number(value)
    if found <= 0:
        raise fail("must be positive")
    return found


def cluster(option: dict[str, Any]) -> Any:
    """The C2C reader's cluster block of `option`, its error named below this field."""
    try:
        return FieldReader("", option).cluster()
    except ScenarioError as exc:
        raise fail(exc.reason, field=exc.field, line=exc.line) from None


# -- reading a file, and a ValidationError back to a ScenarioError -----------------------------

def read_scenario(path: Path, expected: str,
                  limits: InputLimits = DEFAULT_LIMITS) -> tuple[str, dict[str, Any]]:
    """A scenario file's mapping with the line of every key (LINES). A key written twice in
    one mapping is an error naming it and the line of its second writing: which value was
    meant cannot be told."""
    shown = str(path)
    try:
        document = load_yaml(read_bounded_text(path, limits), limits)
    except YamlError as exc:
        raise ScenarioError(shown, exc.line, "(file)", exc.reason.replace(
            "malformed YAML", "not valid YAML", 1)) from exc
    except (OSError, ValueError) as exc:  # UnicodeDecodeError
        raise ScenarioError(shown, None, "(file)", str(exc)) from exc
    refuse_repeated_keys(shown, document)
    if not isinstance(document, dict):
        raise ScenarioError(shown, None, "(file)", f"expected a mapping with {expected}")
    return shown, with_line_maps(document)


def validate(model: type[S], path: str, document: dict[str, Any],
             context: dict[str, Any] | None = None) -> S:
    """`model` validated from the document, or the ScenarioError of its first error."""
    try:
        return model.model_validate(document, context=context)
    except ValidationError as exc:
        raise scenario_error(path, document, exc.errors()[0], model.name_of) from None


def scenario_error(path: str, document: dict[str, Any], error: Any,
                   naming: Callable[[dict[str, Any], Loc], str] | None = None) -> ScenarioError:
    """One pydantic error as the readers report it: file, line, dotted field, reason."""
    ctx = error.get("ctx") or {}
    custom = error["type"] == ERROR_TYPE
    base: Loc = tuple(p for p in error["loc"] if not str(p).startswith(TAG))
    loc: Loc = (*base, *(ctx.get("at", ()) if custom else ()))
    reason = ctx["reason"] if custom else _reason(error)
    line_at = ctx.get("line_at") if custom else None
    line = _line(document, (*base, *line_at) if line_at else loc, bool(ctx.get("whole")))
    name = (naming or (lambda _, at: field_name(at)))(document, loc)
    if custom and ctx.get("field"):  # the C2C cluster block's own name and line
        name = ".".join(p for p in (field_name(loc[:-1]), ctx["field"]) if p)
        line = ctx.get("line") or line
    if custom and ctx.get("named"):
        reason = reason.replace("{field}", name)
    return ScenarioError(path, line, name or "(file)", reason)


def _reason(error: Any) -> str:
    return "missing" if error["type"] == "missing" else str(error["msg"])


def field_name(loc: Loc) -> str:
    """("options", 0, "price") -> "options[0].price"."""
    name = ""
    for part in loc:
        name += f"[{part}]" if isinstance(part, int) else (f".{part}" if name else str(part))
    return name


def _line(document: dict[str, Any], loc: Loc, whole: bool) -> int | None:
    """The line of the key `loc` ends on; the mapping's own line when that key is absent or
    `whole` says the mapping itself is at fault."""
    node: Any = document
    line = document[LINES].get("")
    for part in loc:
        if isinstance(node, dict):
            line = node[LINES].get(str(part)) or node[LINES].get("")
            if part not in node:
                return line
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
            if isinstance(node, dict):
                line = node[LINES].get("") or line
        else:
            break
    if whole and isinstance(node, dict):
        line = node[LINES].get("") or line
    return line
