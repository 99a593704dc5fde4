"""Units: parse what sources write ("1.8 TB/s", "400 Gb/s", "USD/kW/month") with pint.

Two rules keep numbers honest:
- a data rate or size is converted only between units that count the same thing
  (bytes or bits); Gb/s vs GB/s is never guessed;
- the conversion factor for a (written unit, canonical unit) pair is computed once and cached,
  so ingesting a large pack costs one pint parse per distinct unit, not per row.
"""

from __future__ import annotations

import re
import tokenize
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import pint

Counts = Literal["bits", "bytes"]

_REGISTRY = pint.UnitRegistry(autoconvert_offset_to_baseunit=True)
for _definition in (
    "FLOP = [computation] = flop",
    "OP = [operation] = op",  # integer operations (INT8 TOP/s): not FLOPs, never converted
    "USD = [currency] = usd",
    # pint has `count` (dimensionless) already: redefining it warned on every run.
    "@alias count = ports = GPUs = links = lanes = racks = rack",
    "transfer = [transfer]",
    "GT = 1e9 * transfer",
):
    _REGISTRY.define(_definition)

# pint reads "Gb" as gilbert, "Tb" as terabarn and "Gbps" as gigabaud: spell bits out first.
_SPELL_OUT = (
    (re.compile(r"(?<![A-Za-z])([kMGTPE]?)bps(?![A-Za-z])"), r"\1bit/s"),
    (re.compile(r"(?<![A-Za-z])([kMGTPE]?)Bps(?![A-Za-z])"), r"\1byte/s"),
    (re.compile(r"(?<![A-Za-z])([kMGTPE]?)b(?![A-Za-z])"), r"\1bit"),
)
_DIMENSIONLESS = {"", "dimensionless", "ratio", "x", "×"}


class UnitError(ValueError):
    """A unit that is unknown or does not fit the metric it is given for."""


@dataclass(frozen=True)
class ParsedUnit:
    unit: pint.Unit
    counts: Counts | None  # what a data rate or size counts, None if neither


def parse_unit(written: str) -> ParsedUnit:
    """Parse a unit as a source writes it; raise UnitError naming it when unknown."""
    return _parse_unit(written.strip())


_MAX_UNIT_CHARS = 64  # "GB/s per direction per GPU" fits; an essay is not a unit
_HUGE_POWER = re.compile(r"(\*\*|\^)\s*[-+(]*\s*\d{3,}|(\*\*|\^)[^*^]*(\*\*|\^)")


@lru_cache(maxsize=1024)
def _parse_unit(written: str) -> ParsedUnit:
    if written.lower() in _DIMENSIONLESS:
        return ParsedUnit(_REGISTRY.dimensionless, None)
    if len(written) > _MAX_UNIT_CHARS or _HUGE_POWER.search(written):
        # pint evaluates what it parses: "9^9^9" would compute a number of 370 million digits
        raise UnitError(f"unknown unit {written[:_MAX_UNIT_CHARS]!r}")
    spelled = written
    for pattern, replacement in _SPELL_OUT:
        spelled = pattern.sub(replacement, spelled)
    try:
        unit = _REGISTRY.Unit(spelled)
    except (pint.UndefinedUnitError, pint.DefinitionSyntaxError, AttributeError,
            ValueError, TypeError, AssertionError, SyntaxError, tokenize.TokenError,
            ArithmeticError, RecursionError) as exc:  # pint tokenizes and evaluates what it reads
        raise UnitError(f"unknown unit {written!r}") from exc
    names = [str(name) for name in unit._units]  # noqa: SLF001 - pint exposes no public accessor
    counts: Counts | None = None
    if any(name.endswith("byte") for name in names):
        counts = "bytes"
    elif any(name.endswith("bit") for name in names):
        counts = "bits"
    return ParsedUnit(unit, counts)


@lru_cache(maxsize=4096)
def conversion_factor(written: str, canonical: str, counts: Counts | None) -> float:
    """Factor that turns a value in `written` units into `canonical` units.

    Raises UnitError when the unit is unknown, has the wrong dimension, or counts bits where
    the metric counts bytes (or the reverse).
    """
    source, target = parse_unit(written), parse_unit(canonical)
    if counts is not None and source.counts is None:
        raise UnitError(f"unit {written!r} is not a data unit; the metric is in {canonical!r}")
    if counts is not None and source.counts != counts:
        raise UnitError(
            f"unit {written!r} counts {source.counts} but the metric is defined in {counts} "
            f"({canonical}); Gb/s vs GB/s is never converted, check the source"
        )
    if counts is None and source.counts is not None:
        raise UnitError(f"unit {written!r} is a data unit but the metric is in {canonical!r}")
    try:
        factor = _REGISTRY.Quantity(1.0, source.unit).to(target.unit).magnitude
        return float(f"{factor:.15g}")  # 1000.0000000000001 is pint's float noise
    except pint.DimensionalityError as exc:
        raise UnitError(
            f"unit {written!r} ({source.unit.dimensionality}) does not fit the metric's "
            f"unit {canonical!r} ({target.unit.dimensionality})"
        ) from exc


def si_factor(unit: str, si_unit: str) -> float:
    """Factor from a canonical `unit` to the SI unit a model computes in ("TB/s" -> "B/s"
    is 1e12, "Gb/s" -> "B/s" is 1.25e8: here 8 bits make a byte on purpose, as a NIC's line
    rate in bits feeds a model in bytes). Not for ingest, where Gb/s for GB/s is refused."""
    source, target = parse_unit(unit), parse_unit(si_unit)
    try:
        factor = _REGISTRY.Quantity(1.0, source.unit).to(target.unit).magnitude
    except pint.DimensionalityError as exc:
        raise UnitError(f"unit {unit!r} cannot be expressed in {si_unit!r}") from exc
    return float(f"{factor:.15g}")
