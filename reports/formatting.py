"""How numbers, ranges and dates print in the briefing (Jinja2 filters and chart labels).

One place, so a figure reads the same in a table, in a chart label and in the summary.
"""

from __future__ import annotations

from datetime import date, datetime

from reports.context import SpecLine

SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def format_number(value: float, digits: int = 3) -> str:
    """`digits` significant digits (the briefing prints three), thousands separated, no float
    noise (1800.0000001 -> 1,800); very large or small magnitudes as a power of ten
    (2.25e15 -> 2.25 × 10¹⁵)."""
    if value == 0:
        return "0"
    if abs(value) >= 1e9 or abs(value) < 1e-3:
        mantissa, exponent = f"{value:.{digits - 1}e}".split("e")
        mantissa = mantissa.rstrip("0").rstrip(".")
        return f"{mantissa} × 10{str(int(exponent)).translate(SUPERSCRIPT)}"
    text = f"{value:,.{digits}g}"
    return f"{value:,.0f}" if "e" in text else text


def format_range(low: float, high: float | None = None, digits: int = 3) -> str:
    """A value, or a low–high range when the ledger holds one."""
    if high is None or low == high:
        return format_number(low, digits)
    low_text, high_text = format_number(low, digits), format_number(high, digits)
    # Ends that print alike at this precision are one figure, not "1.07–1.07".
    return low_text if low_text == high_text else f"{low_text}–{high_text}"


def format_value(line: SpecLine) -> str:
    return format_range(line.low, line.high)


def format_date(day: date | None, precision: str = "day") -> str:
    """ISO date cut to the precision the source gives (a year-only figure prints as 2024);
    "undated" where it gives none (precision "none": the date is only where its valid time
    starts)."""
    if day is None or precision == "none":
        return "undated"
    return {"year": f"{day:%Y}", "month": f"{day:%Y-%m}"}.get(precision, day.isoformat())


def format_day_span(first: date, last: date | None) -> str:
    """Two price dates on one line, the year said once when they share it: "2026-08-19 to
    11-16"; one date when they are the same."""
    if last is None or last == first:
        return first.isoformat()
    return f"{first.isoformat()} to {last:%m-%d}" if last.year == first.year else (
        f"{first.isoformat()} to {last.isoformat()}")


def format_time(moment: datetime, pattern: str = "%Y-%m-%d %H:%M UTC") -> str:
    """A moment as the briefing prints it: 2026-11-22 06:00 UTC (the ledger keeps UTC)."""
    return moment.strftime(pattern)


def format_percent(fraction: float | None, digits: int = 3, signed: bool = False) -> str:
    """0.412 -> "41.2 %"; None -> "n/a"."""
    if fraction is None:
        return "n/a"
    text = format_number(fraction * 100, digits)
    sign = "+" if signed and fraction > 0 else ""
    return f"{sign}{text} %"


def format_usd(value: float | None, digits: int = 3) -> str:
    """US dollars at `digits` significant figures, large sums in k / M / B:
    1906306.8 -> "$1.91 M", 0.7571 -> "$0.757", 0.09998 -> "$0.100"; None -> "n/a". From $1
    to $100 in dollars and cents, as price lists write them (2.4 -> "$2.40", 10.6 ->
    "$10.60"), so the prices set side by side in a column read alike."""
    if value is None:
        return "n/a"
    sign, value = ("−" if value < 0 else ""), abs(value)
    for scale, suffix in ((1e9, " B"), (1e6, " M"), (1e3, " k")):
        if value >= scale:
            return f"{sign}${format_number(value / scale, digits)}{suffix}"
    if 1 <= value < 100:  # a price as price lists write it: dollars and cents
        return f"{sign}${value:.2f}"
    if 0.001 <= value < 1:  # cents and below, every significant figure: $0.100, not $0.1
        return f"{sign}${value:#.{digits}g}"
    return f"{sign}${format_number(value, digits)}"


def format_years(years: float | None) -> str:
    """A doubling time: 2.07 -> "2.07 years"; None (no growth) -> "does not double"."""
    if years is None:
        return "does not double"
    return f"{format_number(years, 3)} years"


def format_number_list(numbers: list[int]) -> str:
    """Runs of consecutive numbers as ranges: [1, 2, 3, 5] -> "1–3, 5"; [] -> "none"."""
    runs: list[list[int]] = []
    for number in sorted(set(numbers)):
        if runs and number == runs[-1][-1] + 1:
            runs[-1].append(number)
        else:
            runs.append([number])
    parts = [f"{run[0]}–{run[-1]}" if len(run) > 2 else ", ".join(map(str, run)) for run in runs]
    return ", ".join(parts) or "none"


def format_count(count: int) -> str:
    """A count, thousands separated: 199,873."""
    return f"{count:,}"


FILTERS = {
    "count": format_count,
    "number": format_number,
    "range": format_range,
    "value": format_value,
    "day": format_date,
    "day_span": format_day_span,
    "time": format_time,
    "percent": format_percent,
    "usd": format_usd,
    "years": format_years,
    "numbers": format_number_list,
}
