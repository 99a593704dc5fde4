"""Groupings, counts, summaries and queries over the context's values: the pieces
reports.view_model composes into the one view the templates read.

Plain functions; no formatting here (that is reports.formatting) and no layout (that is the
template).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import TypeVar

from models.trends.types import (
    FLAG_KINDS,
    Changes,
    DensityTrend,
    Flag,
    Series,
    TrendPoint,
    by_severity,
)
from reports.context import (
    BriefingContext,
    ChangeCount,
    Cited,
    DecisionLine,
    OptionLine,
    ScenarioLine,
    SpecLine,
    ValidationLine,
)
from reports.formatting import format_range

CHANGE_KINDS: tuple[str, ...] = ("added", "changed", "superseded")
K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True)
class FlagSummary:
    """The flags the executive summary prints, and how many of each kind it leaves out."""

    shown: list[Flag]
    rest_by_kind: list[tuple[str, int]]   # in FLAG_KINDS order
    total: int

    @property
    def rest(self) -> int:
        return sum(count for _, count in self.rest_by_kind)

    @property
    def groups(self) -> list[FlagGroup]:
        """The shown flags, one row per kind and severity: three racks above every
        air-cooling threshold are one finding about three racks, not three findings."""
        grouped: dict[tuple[str, str], list[Flag]] = {}
        for flag in self.shown:
            grouped.setdefault((flag.kind, flag.severity), []).append(flag)
        return [FlagGroup(kind, severity, flags) for (kind, severity), flags in grouped.items()]


@dataclass(frozen=True)
class FlagGroup:
    """Flags of one kind and severity, printed as one row: the subjects, the first message."""

    kind: str
    severity: str
    flags: list[Flag]

    @property
    def subjects(self) -> str:
        return ", ".join(flag.subject for flag in self.flags)

    @property
    def finding(self) -> str:
        first = self.flags[0].message
        others = len(self.flags) - 1
        return first if not others else f"{first} (and {others} more like it: see the subjects)"


def summarise_flags(flags: Sequence[Flag], limit: int = 10, per_kind: int = 3,
                    totals: Mapping[str, int] | None = None) -> FlagSummary:
    """The `limit` most severe flags, at most `per_kind` of one kind (so ten "unconfirmed"
    warnings cannot hide the conflicting sources), and a count per kind of the rest.
    `totals` counts every flag per kind when `flags` holds only each kind's most severe."""
    ordered = by_severity(list(flags))
    taken: Counter[str] = Counter()
    shown: list[Flag] = []
    for flag in ordered:
        if len(shown) < limit and taken[flag.kind] < per_kind:
            shown.append(flag)
            taken[flag.kind] += 1
    counts = Counter(totals or Counter(flag.kind for flag in ordered))
    rest = [(kind, counts[kind] - taken[kind]) for kind in FLAG_KINDS
            if counts[kind] > taken[kind]]
    return FlagSummary(shown=by_severity(shown), rest_by_kind=rest, total=sum(counts.values()))


def flag_totals(context: BriefingContext) -> dict[str, int]:
    """Flags of the version per kind, the ones the context leaves out included."""
    return dict(context.flag_counts) or dict(Counter(flag.kind for flag in context.flags))


# A kind with more info-only flags than this prints as a list of subjects, not of messages:
# 200 "single source" sentences would take pages and say the same thing each time.
COMPACT_FLAG_GROUP = 20


def flags_by_kind(flags: Sequence[Flag], totals: Mapping[str, int] | None = None
                  ) -> list[tuple[str, list[Flag], bool]]:
    """Flags grouped by kind, most severe first (the kind of the most severe flag leads),
    each with whether to print it compactly (subjects only). `totals`: every flag per kind,
    when `flags` holds only each kind's most severe (their severities decide for the rest)."""
    groups: dict[str, list[Flag]] = {}
    for flag in by_severity(list(flags)):
        groups.setdefault(flag.kind, []).append(flag)
    return [(kind, group, max(len(group), (totals or {}).get(kind, 0)) > COMPACT_FLAG_GROUP
             and all(f.severity == "info" for f in group)) for kind, group in groups.items()]


def compact_flags(severities: Mapping[str, int]) -> bool:
    """Whether a kind with these flags per severity prints compactly (see flags_by_kind)."""
    return sum(severities.values()) > COMPACT_FLAG_GROUP and set(severities) <= {"info"}


def spec_sections(specs: Iterable[SpecLine]) -> dict[str, list[SpecLine]]:
    """Spec lines grouped by section, in the order the context lists them."""
    sections: dict[str, list[SpecLine]] = {}
    for line in specs:
        sections.setdefault(line.section, []).append(line)
    return sections


def change_counts(changes: Changes) -> dict[str, int]:
    """Observation changes per kind: added, changed, superseded (zeros included)."""
    counts = Counter(change.kind for change in changes.observations)
    return {kind: counts[kind] for kind in CHANGE_KINDS}


def change_totals(context: BriefingContext) -> dict[str, ChangeCount]:
    """Every observation change per kind (zeros included), the ones the context's list
    leaves out included, with the items and metrics they touch."""
    if context.change_counts:
        return {kind: context.change_counts.get(kind, ChangeCount(0, 0, 0))
                for kind in CHANGE_KINDS}
    totals = {}
    for kind in CHANGE_KINDS:
        rows = [c for c in context.changes.observations if c.kind == kind]
        totals[kind] = ChangeCount(len(rows), len({c.item for c in rows}),
                                   len({c.metric for c in rows}))
    return totals


@dataclass(frozen=True)
class LeftOut:
    """Rows of one kind a bounded list does not print: how many, of how many in all."""

    kind: str
    count: int
    total: ChangeCount


def changes_left_out(context: BriefingContext) -> list[LeftOut]:
    """Per kind of change, the observations the changes table does not list."""
    shown = Counter(change.kind for change in context.changes.observations)
    return [LeftOut(kind, total.observations - shown[kind], total)
            for kind, total in change_totals(context).items()
            if total.observations > shown[kind]]


def value_totals(context: BriefingContext, sections: Mapping[str, Sequence[SpecLine]]
                 ) -> dict[str, int]:
    """Resolved values per section, the ones the appendix leaves out included."""
    return {section: context.section_counts.get(section, len(lines))
            for section, lines in sections.items()}


def _instant(moment: datetime) -> str:
    utc = moment.astimezone(UTC) if moment.tzinfo else moment   # naive: UTC already
    return f"TIMESTAMPTZ '{utc.strftime('%Y-%m-%d %H:%M:%S.%f')}+00'"


def changes_query(context: BriefingContext) -> str:
    """The warehouse query that lists every observation recorded or superseded between the
    previous version's cut-off and this one's (the changes the briefing counts)."""
    if context.previous_cutoff_at is None:
        return ""
    start, end = _instant(context.previous_cutoff_at), _instant(context.cutoff_at)
    return ("select item, metric, source, value, unit, as_of, recorded_at, superseded_at "
            f"from observation where recorded_at > {start} and recorded_at <= {end} "
            f"or superseded_at > {start} and superseded_at <= {end} "
            "order by item, metric, source, as_of")


def flags_query(context: BriefingContext, kind: str) -> str:
    """The warehouse query that lists every flag of one kind of this dataset version."""
    return ("select severity, subject, message from flag "
            f"where dataset_version_id = {context.dataset_version} and kind = '{kind}' "
            "order by id")


def values_query(context: BriefingContext) -> str:
    """The warehouse query that lists every value the appendix would print."""
    return (f"select * from value_as_of(DATE '{context.as_of.isoformat()}', "
            f"{_instant(context.cutoff_at)}) order by item, metric")


@dataclass(frozen=True)
class ValidationSummary:
    """The model's error over one published dataset."""

    dataset: str
    quantity: str
    error_unit: str
    points: int
    mean_abs_error: float
    max_abs_error: float
    sources: tuple[str, ...]

    @property
    def title(self) -> str:
        """The set's name: its title up to the first ": " (what follows describes the set,
        its fit and band, and is printed in the appendix beside its points)."""
        return self.dataset.split(": ", 1)[0]


def summarise_validation(lines: Sequence[ValidationLine]) -> list[ValidationSummary]:
    """Mean and max absolute error per (dataset, quantity, error unit), in first-seen order."""
    groups = _first_seen_groups(lines, lambda v: (v.dataset, v.quantity, v.error_unit))
    return [ValidationSummary(dataset=dataset, quantity=quantity, error_unit=unit,
                              points=len(group),
                              mean_abs_error=sum(abs(g.error) for g in group) / len(group),
                              max_abs_error=max(abs(g.error) for g in group),
                              sources=tuple(dict.fromkeys(g.source for g in group)))
            for (dataset, quantity, unit), group in groups.items()]


@dataclass(frozen=True)
class ValidationSet:
    """The points of one published set that share a quantity and a source: the appendix
    names the set, the quantity and the source once, above them, so a point takes one line."""

    dataset: str
    quantity: str
    error_unit: str
    source: str
    source_date: date
    lines: tuple[ValidationLine, ...]


def validation_sets(lines: Sequence[ValidationLine]) -> list[ValidationSet]:
    """The points grouped by (dataset, quantity, error unit, source, date), in first-seen
    order; within a group, in the order given."""
    groups = _first_seen_groups(lines, lambda v: (v.dataset, v.quantity, v.error_unit,
                                                  v.source, v.source_date))
    return [ValidationSet(*key, lines=tuple(group)) for key, group in groups.items()]


def _first_seen_groups(lines: Sequence[ValidationLine], key: Callable[[ValidationLine], K]
                       ) -> dict[K, list[ValidationLine]]:
    """The lines grouped by `key`, groups in first-seen order, lines in the order given."""
    groups: dict[K, list[ValidationLine]] = {}
    for line in lines:
        groups.setdefault(key(line), []).append(line)
    return groups


@dataclass(frozen=True)
class InputIndex:
    """Distinct input figures, numbered from 1, and the numbers each result read."""

    figures: list[Cited]
    numbers: dict[str, list[int]]   # result name -> input numbers


def number_inputs(results: Iterable[tuple[str, Sequence[Cited]]]) -> InputIndex:
    """Number each distinct cited input once, so a table row can point at [1, 4] instead
    of repeating the same sourced figure for every scenario that read it."""
    figures: list[Cited] = []
    position: dict[Cited, int] = {}
    numbers: dict[str, list[int]] = {}
    for name, inputs in results:
        for figure in inputs:
            if figure not in position:
                figures.append(figure)
                position[figure] = len(figures)
        numbers[name] = sorted({position[figure] for figure in inputs})
    return InputIndex(figures=figures, numbers=numbers)


def numbered_points(series: Iterable[Series]) -> list[tuple[int, Series, TrendPoint]]:
    """Every point of the series, numbered from 1 in series then date order: the chart marks
    a point with its number where its name does not fit, and the table lists the numbers."""
    points = [(line, point) for line in series for point in line.points]
    return [(n, line, point) for n, (line, point) in enumerate(points, start=1)]


def scale_up_share(scenario: ScenarioLine) -> float | None:
    """The scale-up tier's share of the scenario's C2C; None when there is no communication."""
    total = scenario.c2c_scale_up + scenario.c2c_scale_out
    return scenario.c2c_scale_up / total if total > 0 else None


def crossing_groups(trend: DensityTrend) -> list[str]:
    """The density findings: the racks and systems above (or within) each threshold, one
    sentence per threshold and position, the most crossings first."""
    labels = {t.key: (t.label, format_range(t.low, t.high, 3), t.unit) for t in trend.thresholds}
    groups: dict[tuple[str, str], list[str]] = {}
    for crossing in trend.crossings:
        names = groups.setdefault((crossing.threshold, crossing.position), [])
        if crossing.point.label not in names:
            names.append(crossing.point.label)
    sentences = []
    for (key, position), names in sorted(groups.items(), key=lambda g: (-len(g[1]), g[0])):
        label, band, unit = labels.get(key, (key, "", ""))
        verb = "is" if len(names) == 1 else "are"
        where = "above" if position == "above" else "within"
        what = "rack or system" if len(names) == 1 else "racks or systems"
        sentences.append(f"{len(names)} {what} {verb} {where} {label} ({band} {unit}): "
                         f"{', '.join(names)}.")
    return sentences


def rented_options(decisions: Sequence[DecisionLine]) -> list[tuple[DecisionLine, OptionLine]]:
    """Each option of a modelled comparison that the market prices, once per option name."""
    seen: set[str] = set()
    rented = []
    for line in decisions:
        for option in line.options:
            if (not line.illustrative and option.market_job_cost_usd is not None
                    and option.name not in seen):
                seen.add(option.name)
                rented.append((line, option))
    return rented


@dataclass(frozen=True)
class SubjectGroup:
    """Flags of one kind about one metric: how many, and the items they name."""

    metric: str
    count: int
    items: tuple[str, ...]


def subjects_by_metric(flags: Sequence[Flag]) -> list[SubjectGroup]:
    """A long list of flags of one kind as one row per metric, the most flagged first, so a
    reader sees where the weak values cluster instead of a wall of subjects."""
    groups: dict[str, list[str]] = {}
    for flag in flags:
        item, metric = (flag.item, flag.metric) if flag.item and flag.metric else (
            flag.subject, "other subjects")
        groups.setdefault(metric, []).append(item)
    return sorted((SubjectGroup(metric, len(items), tuple(sorted(set(items))))
                   for metric, items in groups.items()), key=lambda g: (-g.count, g.metric))
